package web

// The JSON answer for an /api/ path that serves nothing. Without it, a
// POST to a tool that does not exist falls through to the console's
// CSRF check and an agent is told its "security token" is missing, which
// sends its developer looking in the wrong place.

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/tools"
)

const toolsPrefix = "/api/v1/tools/"

// apiNotFound answers any method at an /api/ path no route serves, naming
// the tools that do exist.
func (s *Server) apiNotFound(c echo.Context) error {
	path := c.Request().URL.Path
	msg := "There is no API at " + path + "."
	if name, ok := strings.CutPrefix(path, toolsPrefix); ok && name != "" && !strings.Contains(name, "/") {
		msg = "There is no tool " + name + "."
	}
	return c.JSON(http.StatusNotFound, map[string]any{"error": map[string]string{
		"code": "not_found", "message": msg, "fix": s.toolsFix(),
	}})
}

// toolsFix lists the tool APIs this console serves, sorted, so the answer
// is the same on every request.
func (s *Server) toolsFix() string {
	if s.d.Tools == nil || len(s.d.Tools.Names()) == 0 {
		return "This console serves no tool APIs; agents reach it over MCP at /mcp."
	}
	return tools.UseOneOf(s.d.Tools.Names())
}

// ToolAPI is the tool registry's JSON API: it serves POST
// /api/v1/tools/{name} for every tool it names, checking agents' tokens.
type ToolAPI interface {
	http.Handler
	Names() []string
	// Serves reports whether the API answers a call of name (one of
	// Names, or a tool switched off, which answers with why), without
	// listing them: it runs on every API call.
	Serves(name string) bool
}

// toolAPI hands a request for a registered tool to the registry's API;
// any other name gets the JSON 404, and no tool runs.
func (s *Server) toolAPI(c echo.Context) error {
	if !s.d.Tools.Serves(c.Param("name")) {
		return s.apiNotFound(c)
	}
	s.d.Tools.ServeHTTP(c.Response(), c.Request())
	return nil
}
