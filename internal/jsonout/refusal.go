package jsonout

import (
	"net/netip"
	"strconv"

	"github.com/outboundhq/outbound/guard"
)

// AppendRefusal appends r as encoding/json writes a *guard.Refusal: its
// fields in order under their tags, the empty ones left out as the tags
// say, null for a nil refusal.
func AppendRefusal(b []byte, r *guard.Refusal) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"code":`...)
	b = AppendString(b, string(r.Code))
	b = append(b, `,"reason":`...)
	b = AppendString(b, string(r.Reason))
	b = append(b, `,"message":`...)
	b = AppendString(b, r.Message)
	b = append(b, `,"fix":`...)
	b = AppendString(b, r.Fix)
	if r.Remedy != (guard.Remedy{}) {
		b = append(b, `,"remedy":`...)
		b = appendRemedy(b, r.Remedy)
	}
	b = appendNonEmpty(b, `,"kind":`, string(r.Kind))
	b = appendNonEmpty(b, `,"tool":`, r.Tool)
	b = appendNonEmpty(b, `,"agent":`, r.Agent)
	b = appendNonEmpty(b, `,"service":`, r.Service)
	b = appendNonEmpty(b, `,"url":`, r.URL)
	b = appendNonEmpty(b, `,"host":`, r.Host)
	if r.Port != 0 {
		b = append(b, `,"port":`...)
		b = strconv.AppendUint(b, uint64(r.Port), 10)
	}
	b = appendNonEmpty(b, `,"entry":`, r.Entry)
	if len(r.Addresses) > 0 {
		b = append(b, `,"addresses":`...)
		b = appendAddrs(b, r.Addresses)
	}
	if len(r.Redirects) > 0 {
		b = append(b, `,"redirects":`...)
		b = AppendStrings(b, r.Redirects)
	}
	b = appendNonEmpty(b, `,"range":`, r.Range)
	return append(b, '}')
}

func appendRemedy(b []byte, m guard.Remedy) []byte {
	b = append(b, `{"kind":`...)
	b = AppendString(b, string(m.Kind))
	b = appendNonEmpty(b, `,"entry":`, m.Entry)
	b = appendNonEmpty(b, `,"setting":`, m.Setting)
	if m.Internal {
		b = append(b, `,"internal":true`...)
	}
	return append(b, '}')
}

// appendNonEmpty appends key and s unless s is empty (omitempty).
func appendNonEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return AppendString(b, s)
}

// appendAddrs appends addresses as their text, as netip.Addr's
// MarshalText writes them.
func appendAddrs(b []byte, addrs []netip.Addr) []byte {
	b = append(b, '[')
	for i, a := range addrs {
		if i > 0 {
			b = append(b, ',')
		}
		if a.Zone() != "" { // a zone is any text, and may need escaping
			b = AppendString(b, a.String())
			continue
		}
		b = append(b, '"')
		b = a.AppendTo(b)
		b = append(b, '"')
	}
	return append(b, ']')
}
