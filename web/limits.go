package web

// Request limits. Every body is capped before anything reads it: the CSRF
// check parses the form of every browser route, so without a cap an
// unauthenticated upload to /login was read (and a multipart one spooled
// to disk) before anyone was asked who they are. And the HTTP server's
// timeouts end connections that trickle their request or idle forever.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
)

// Body limits, by what a route takes. A form is a few fields; the tool
// API's JSON is capped at the same 64 KB by the registry (tools/api.go).
const (
	formBodyLimit = 64 << 10
	// mcpBodyLimit: a JSON-RPC message carries one tool call's arguments
	// (a URL, an integration's parameters), with room for a batch.
	mcpBodyLimit = 256 << 10
	// integrationBodyLimit: the integration form holds a request body
	// template, headers and a description, each a few KB at most.
	integrationBodyLimit = 256 << 10
	// allowlistBodyLimit: the paste box must take 10,000 lines at once (a
	// whole exported list). A line of a long host name and port is about
	// 70 characters, and percent-encoding grows ':' and each line break
	// to three bytes: 10,000 such lines are about 1 MB; 2 MB leaves room.
	allowlistBodyLimit = 2 << 20
)

// bodyLimit is the largest body the route at path takes.
func bodyLimit(path string) int64 {
	switch {
	case path == "/integrations/allowlist":
		return allowlistBodyLimit
	case strings.HasPrefix(path, "/integrations/http/"):
		return integrationBodyLimit
	case path == "/mcp":
		return mcpBodyLimit
	}
	return formBodyLimit
}

// limitBody refuses multipart bodies and caps every other body at its
// route's limit, before the CSRF check or a handler reads it. A declared
// length over the limit is refused unread; a body that turns out longer
// (chunked) stops at the limit, and whatever the handler made of the cut
// form becomes 413.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if isMultipart(r.Header.Get("Content-Type")) {
			c.Response().Header().Set("Connection", "close")
			return echo.NewHTTPError(http.StatusUnsupportedMediaType,
				"The console does not take multipart/form-data uploads: its forms send application/x-www-form-urlencoded and its API takes JSON. Submit the console's own form, or send the tool's input as application/json.")
		}
		limit := bodyLimit(r.URL.Path)
		if r.ContentLength > limit {
			c.Response().Header().Set("Connection", "close") // do not drain the rest
			return tooLarge(limit)
		}
		body := &cappedBody{ReadCloser: http.MaxBytesReader(c.Response(), r.Body, limit)}
		r.Body = body
		err := next(c)
		if body.over && !c.Response().Committed {
			return tooLarge(limit)
		}
		return err
	}
}

// isMultipart reports whether a Content-Type is multipart/anything, in
// any case: the type alone, without parsing the parameters (and making a
// map of them) on every request as mime.ParseMediaType does.
func isMultipart(contentType string) bool {
	ct := strings.TrimSpace(contentType) // as mime.ParseMediaType trims it
	return len(ct) >= len("multipart/") && strings.EqualFold(ct[:len("multipart/")], "multipart/")
}

func tooLarge(limit int64) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf(
		"The request was larger than the %s this address takes, so it was refused. Send less at once: split a long allowlist paste into several, or shorten the fields.", sizeText(limit)))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// cappedBody notes that the cap was hit, whoever read the body.
type cappedBody struct {
	io.ReadCloser
	over bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		b.over = true
	}
	return n, err
}

// Timeouts are the limits of the console's HTTP server.
type Timeouts struct {
	// ReadHeader bounds the request line and headers, Read the whole
	// request with its body (a trickled body is cut off), Write the
	// answer, Idle a kept-alive connection between requests.
	ReadHeader, Read, Write, Idle time.Duration
	MaxHeaderBytes                int
}

// DefaultTimeouts are console serve's limits. Write outlasts the longest
// tool call (the timeout setting is at most guard.MaxTimeout, a
// screenshot's included) by a minute to render and send the answer; the
// one answer that may last longer, MCP's event stream (GET /mcp), lifts
// its own write deadline (see streamMCP).
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader:     10 * time.Second,
		Read:           time.Minute, // the largest body, 2 MB, at 35 KB/s
		Write:          guard.MaxTimeout + time.Minute,
		Idle:           2 * time.Minute,
		MaxHeaderBytes: 64 << 10, // cookies and a bearer token, with room
	}
}

// HTTPServer is an http.Server for the console with the limits t.
func (s *Server) HTTPServer(t Timeouts) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
	}
}

// streamMCP lifts the write deadline for MCP's standalone event stream
// (GET /mcp): the SDK holds it open for the whole session to send the
// server's notifications, so the server's WriteTimeout would cut it. A
// POST's answer (a tool call's result, streamed or not) keeps the
// deadline: no tool call outlasts it.
func streamMCP(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodGet {
			_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Time{})
		}
		return next(c)
	}
}
