package guard

import (
	"net/http"
	"net/textproto"
	"strings"
)

// copyEndToEnd copies the end-to-end headers of src into dst. Hop-by-hop
// headers (RFC 9110 section 7.6.1) belong to one connection and must not be
// forwarded, and neither must the client's proxy credential: the target
// would learn it. Value slices are shared, not copied; neither side
// changes them.
func copyEndToEnd(dst, src http.Header) {
	connection := src["Connection"]
	for k, v := range src {
		if isHopByHop(k) || (len(connection) > 0 && listedIn(connection, k)) {
			continue
		}
		dst[k] = v
	}
}

// dropHopByHop deletes from h the fields copyEndToEnd leaves behind.
func dropHopByHop(h http.Header) {
	connection := h["Connection"]
	for k := range h {
		if isHopByHop(k) || (len(connection) > 0 && listedIn(connection, k)) {
			delete(h, k)
		}
	}
}

// isHopByHop reports whether the canonical header key k is hop-by-hop or
// a proxy's own.
func isHopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// listedIn reports whether the Connection header values name the key k,
// which makes k hop-by-hop too.
func listedIn(connection []string, k string) bool {
	for _, v := range connection {
		for token := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(textproto.TrimString(token), k) {
				return true
			}
		}
	}
	return false
}
