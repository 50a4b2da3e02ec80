package web

// The JSON answer for an /api/ path that serves nothing. Without it, a
// POST to a tool that does not exist falls through to the console's
// CSRF check and an agent is told its "security token" is missing, which
// sends its developer looking in the wrong place.

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
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
	names := make([]string, 0, len(s.d.ToolAPIs))
	for name := range s.d.ToolAPIs {
		names = append(names, name)
	}
	if len(names) == 0 {
		return "This console serves no tool APIs; agents reach it over MCP at /mcp."
	}
	slices.Sort(names)
	return "Use one of: " + strings.Join(names, ", ") + "."
}
