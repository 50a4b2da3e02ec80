package guard

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// refuse records r under the caller in ctx, files it for req's credential
// and answers it. The answer is the guard's own sentence and the fix as an
// agent may read it (AgentFix: no entry for an internal target), since an
// agent reading curl's output is the usual client; the record keeps the
// exact fix for the admin, and a program that holds the credential reads
// the value itself (CallCredential.Refusal).
func (p *Proxy) refuse(ctx context.Context, w http.ResponseWriter, req *http.Request, r *Refusal, port uint16) {
	p.recordProxied(ctx, req, Record{Refusal: r, URL: r.URL, Host: r.Host, Port: port, Proxied: true})
	p.answer(w, r)
}

// answer writes the refusal r as the proxy's answer.
func (p *Proxy) answer(w http.ResponseWriter, r *Refusal) {
	h := w.Header()
	h.Set("X-Outbound-Code", string(r.Code))
	h.Set("X-Outbound-Reason", string(r.Reason))
	writeText(w, refusalStatus(r.Code), refusalText(r))
}

func refusalText(r *Refusal) string {
	return "Outbound refused " + r.URL + " (" + string(r.Code) + ", " + string(r.Reason) + "): " + r.Message + "\nFix: " + r.AgentFix() + "\n"
}

// answerConn writes the refusal r as answer does, on a connection taken
// over from the server (a CONNECT's, refused before its 200), within
// timeout, and says the connection closes after it.
func answerConn(c net.Conn, r *Refusal, timeout time.Duration) {
	body := refusalText(r)
	status := refusalStatus(r.Code)
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "close")
	h.Set("X-Outbound-Code", string(r.Code))
	h.Set("X-Outbound-Reason", string(r.Reason))
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n" + body)
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	_, _ = c.Write(b.Bytes())
}

// refusalStatus is the proxy's status for a refusal: a gateway error when
// the target could not be reached or did not answer, 403 otherwise.
func refusalStatus(c Code) int {
	switch c {
	case CodeUnreachable:
		return http.StatusBadGateway
	case CodeTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusForbidden
}

// writeText answers with a short plain-text body that no cache keeps.
func writeText(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
