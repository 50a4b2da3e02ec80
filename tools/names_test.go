package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestToolNamesAreSpeltOnce: a tool's name is written as a literal in one
// place, its constant, so the MCP, API, CLI, log and metric spellings can
// never drift apart. The guard's own "proxy" caller is one constant too.
func TestToolNamesAreSpeltOnce(t *testing.T) {
	dirs := []struct {
		dir   string
		names []string
		// home is the file that holds the constants.
		home string
		// skip are files checked another way.
		skip map[string]bool
	}{
		{".", []string{FetchURLName, TakeScreenshotName, CallIntegrationName}, "registry.go", nil},
		{"../guard", []string{"proxy"}, "proxy.go", nil},
	}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			base := filepath.Base(path)
			if strings.HasSuffix(base, "_test.go") || d.skip[base] {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, name := range d.names {
					if s == name {
						seen++
						if base != d.home || seen > len(d.names) {
							t.Errorf("%s: the tool name %q is spelt as a literal; use its constant", fset.Position(lit.Pos()), s)
						}
					}
				}
				return true
			})
		}
	}
}
