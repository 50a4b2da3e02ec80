package tools

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// snapshotJS renders the live page as text with element refs; see the
// file for the format.
//
//go:embed browser_snapshot.js
var snapshotJS string

// snapshot is the page as the agent reads it: its text, where each
// interactive element is marked with a ref, and those elements in ref
// order. The elements are handles held by the driver, not attributes in
// the page, so a page's script cannot move a ref onto another element.
type snapshot struct {
	text     string
	elements []playwright.ElementHandle
}

// takeSnapshot renders page, numbering its elements from base.
func takeSnapshot(page playwright.Page, base int) (snapshot, error) {
	h, err := page.EvaluateHandle(snapshotJS, base)
	if err != nil {
		return snapshot{}, err
	}
	defer h.Dispose()
	textH, err := h.GetProperty("text")
	if err != nil {
		return snapshot{}, err
	}
	v, err := textH.JSONValue()
	_ = textH.Dispose()
	if err != nil {
		return snapshot{}, err
	}
	text, _ := v.(string)
	elsH, err := h.GetProperty("elements")
	if err != nil {
		return snapshot{}, err
	}
	props, err := elsH.GetProperties()
	_ = elsH.Dispose()
	if err != nil {
		return snapshot{}, err
	}
	type indexed struct {
		i  int
		el playwright.ElementHandle
	}
	var found []indexed
	for k, p := range props {
		i, err := strconv.Atoi(k)
		el := p.AsElement()
		if err != nil || el == nil {
			_ = p.Dispose()
			continue
		}
		found = append(found, indexed{i, el})
	}
	sort.Slice(found, func(a, b int) bool { return found[a].i < found[b].i })
	s := snapshot{text: text, elements: make([]playwright.ElementHandle, 0, len(found))}
	for n, f := range found {
		if f.i != n {
			return snapshot{}, fmt.Errorf("the page's element list has a gap at %d", n)
		}
		s.elements = append(s.elements, f.el)
	}
	return s, nil
}

// findLines answers browser_find: the lines of text holding query (any
// case), each with the line before and after when they add context, and
// at most limit characters in all. It reports how many lines matched.
func findLines(text, query string, limit int) (string, int) {
	lines := strings.Split(text, "\n")
	q := strings.ToLower(strings.Join(strings.Fields(query), " "))
	var hits []int
	for i, l := range lines {
		if strings.Contains(strings.ToLower(strings.Join(strings.Fields(l), " ")), q) {
			hits = append(hits, i)
		}
	}
	var b strings.Builder
	shown := map[int]bool{}
	for _, i := range hits {
		var block []string
		for j := max(0, i-1); j <= min(len(lines)-1, i+1); j++ {
			if shown[j] || strings.TrimSpace(lines[j]) == "" {
				continue
			}
			shown[j] = true
			prefix := "  "
			if j == i {
				prefix = "> "
			}
			block = append(block, prefix+lines[j])
		}
		chunk := strings.Join(block, "\n")
		if chunk == "" {
			continue
		}
		if b.Len()+len(chunk)+5 > limit {
			b.WriteString("…\n")
			break
		}
		b.WriteString(chunk + "\n…\n")
	}
	return strings.TrimSuffix(b.String(), "…\n"), len(hits)
}
