package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
)

// ReadAll reads the body up to the MaxBytes setting and closes it. A
// declared Content-Length over the limit is refused before reading; a body
// that grows past it while streaming is refused rather than cut short,
// because half a page read as if it were whole misleads the agent.
func (r *Response) ReadAll() ([]byte, error) {
	defer r.Body.Close()
	if r.Header != nil && r.declaredLength() > r.maxBytes {
		return nil, r.tooLarge(ReasonDeclaredSize, fmt.Sprintf("%s declares a body of %d bytes, over the %d-byte limit.", r.Decision.Host, r.declaredLength(), r.maxBytes))
	}
	buf := make([]byte, 0, min(r.maxBytes+1, 64<<10))
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if int64(len(buf)) > r.maxBytes {
			return nil, r.tooLarge(ReasonStreamedSize, fmt.Sprintf("The body from %s grew past the %d-byte limit.", r.Decision.Host, r.maxBytes))
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, r.readFailed(err)
		}
	}
}

func (r *Response) declaredLength() int64 {
	var n int64 = -1
	if _, err := fmt.Sscan(r.Header.Get("Content-Length"), &n); err != nil {
		return -1
	}
	return n
}

func (r *Response) tooLarge(reason Reason, msg string) *Refusal {
	return r.settle(&Refusal{Code: CodeTooLarge, Reason: reason, Message: msg,
		Fix: "Raise " + r.g.wording.setting(SettingMaxBytes) + " if pages this large should be read.", Remedy: ChangeSetting(SettingMaxBytes),
		URL: r.URL.String(), Host: r.Decision.Host, Entry: r.Decision.Entry.String(), Addresses: r.Decision.Addresses()})
}

func (r *Response) readFailed(err error) *Refusal {
	ref := &Refusal{Code: CodeUnreachable, Reason: ReasonConnect, Kind: KindNetwork,
		Message: fmt.Sprintf("Reading the body from %s failed: %s.", r.Decision.Host, rootCause(err)),
		Fix:     "Try again later.",
		URL:     r.URL.String(), Host: r.Decision.Host, Entry: r.Decision.Entry.String(), Addresses: r.Decision.Addresses()}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		p := r.g.Policy()
		ref.Code, ref.Reason = CodeTimeout, ReasonTimeout
		ref.Message = fmt.Sprintf("%s did not send the whole page within %s.", r.Decision.Host, FormatDuration(p.settings.Timeout))
		ref.Fix, ref.Remedy = "Try again later, or "+r.g.wording.raise(SettingTimeout)+".", ChangeSetting(SettingTimeout)
	}
	return r.settle(ref)
}

// Refuse makes ref this request's Record, for a refusal that depends on
// the response, such as a content type the caller cannot read. Call it
// before closing the body; the request then counts as refused, not also
// as allowed.
func (r *Response) Refuse(ref *Refusal) {
	if ref.URL == "" {
		ref.URL = r.URL.String()
	}
	if ref.Host == "" {
		ref.Host = r.Decision.Host
	}
	r.settle(ref)
}

// settle makes the request's one Record, with ref as its refusal (nil for
// allowed), unless it was already made, and returns ref.
func (r *Response) settle(ref *Refusal) *Refusal {
	if !r.settled.CompareAndSwap(false, true) {
		return ref
	}
	rec := Record{Refusal: ref, URL: r.URL.String(), Host: r.Decision.Host, Port: r.Decision.Port, Redirects: r.Redirects, Elapsed: r.elapsed, WouldRefuse: r.Decision.WouldRefuse}
	if ref != nil && ref.URL != "" {
		rec.URL = ref.URL
	}
	r.g.record(r.ctx, rec)
	return ref
}
