package tools

import (
	_ "embed"
	"fmt"
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
// order, as one array kept by the driver (not attributes in the page), so
// a page's script can neither see the refs nor move one onto another
// element. An element is fetched from the array only when acted on.
type snapshot struct {
	text     string
	elements playwright.JSHandle // the array; Dispose it when done
	count    int
}

// takeSnapshot renders page, numbering its elements from base.
func takeSnapshot(page playwright.Page, base int) (snapshot, error) {
	h, err := page.EvaluateHandle(snapshotJS, base)
	if err != nil {
		return snapshot{}, err
	}
	defer h.Dispose()
	v, err := h.Evaluate(`(s) => ({text: s.text, count: s.elements.length})`)
	if err != nil {
		return snapshot{}, err
	}
	m, _ := v.(map[string]any)
	text, _ := m["text"].(string)
	els, err := h.GetProperty("elements")
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{text: text, elements: els, count: toInt(m["count"])}, nil
}

// elementAt fetches element i of a snapshot's array. (It goes through
// the page: playwright-go's JSHandle.GetProperty cannot return an
// element.)
func elementAt(page playwright.Page, arr playwright.JSHandle, i int) (playwright.ElementHandle, error) {
	h, err := page.EvaluateHandle(`([a, i]) => a[i]`, []any{arr, i})
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("ref %d is gone", i)
	}
	el := h.AsElement()
	if el == nil {
		_ = h.Dispose()
		return nil, fmt.Errorf("ref %d is not an element", i)
	}
	return el, nil
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
