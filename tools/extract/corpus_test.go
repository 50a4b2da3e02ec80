package extract

import (
	"encoding/json"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/net/html"
)

// The corpus is Mozilla Readability's test suite: real pages with the text
// Readability.js extracts from them. Agreement with it (token F1) is how we
// know the renderer neither drops article text nor lets furniture in.

// corpusF1Floor is the macro F1 this package reaches on the corpus, minus a
// small margin: a change that loses text or lets furniture in fails here.
const corpusF1Floor = 0.997

// corpusTitleFloor is the share of corpus pages whose title must match
// Readability's exactly (whitespace collapsed).
const corpusTitleFloor = 0.95

const corpusPageURL = "http://fakehost/test/page.html"

// corpusContentType is how the corpus pages are served: Readability's test
// suite stores every page as UTF-8, whatever its <meta> still declares.
const corpusContentType = "text/html; charset=utf-8"

type corpusPage struct {
	name     string
	source   []byte
	expected []string // words of Readability's expected article
	title    string
}

// corpusDir finds the corpus from $OUTBOUND_CORPUS, or as
// shared/corpus/readability next to the checkout or any folder above it
// (a git worktree sits deeper than the main checkout).
func corpusDir() string {
	if dir := os.Getenv("OUTBOUND_CORPUS"); dir != "" {
		return dir
	}
	fallback := filepath.Join("..", "..", "..", "shared", "corpus", "readability")
	dir, err := filepath.Abs(".")
	if err != nil {
		return fallback
	}
	for {
		candidate := filepath.Join(dir, "shared", "corpus", "readability")
		if info, err := os.Stat(candidate); err == nil && info.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fallback
		}
		dir = parent
	}
}

func loadCorpus(tb testing.TB) []corpusPage {
	tb.Helper()
	dir := corpusDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Skipf("corpus not available at %s (set OUTBOUND_CORPUS): %v", dir, err)
	}
	var pages []corpusPage
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		folder := filepath.Join(dir, e.Name())
		source, err := os.ReadFile(filepath.Join(folder, "source.html"))
		if err != nil {
			tb.Fatalf("corpus page %s: %v", e.Name(), err)
		}
		expected, err := os.ReadFile(filepath.Join(folder, "expected.html"))
		if err != nil {
			tb.Fatalf("corpus page %s: %v", e.Name(), err)
		}
		doc, err := html.Parse(strings.NewReader(string(expected)))
		if err != nil {
			tb.Fatalf("corpus page %s: expected.html: %v", e.Name(), err)
		}
		var meta struct{ Title string }
		if raw, err := os.ReadFile(filepath.Join(folder, "expected-metadata.json")); err == nil {
			if err := json.Unmarshal(raw, &meta); err != nil {
				tb.Fatalf("corpus page %s: expected-metadata.json: %v", e.Name(), err)
			}
		}
		pages = append(pages, corpusPage{
			name:     e.Name(),
			source:   source,
			expected: words(visibleText(doc)),
			title:    meta.Title,
		})
	}
	if len(pages) == 0 {
		tb.Skipf("corpus at %s holds no pages", dir)
	}
	return pages
}

var (
	// rxLinkMarker matches the " [3]" that follows a link's words.
	rxLinkMarker = regexp.MustCompile(` \[\d+\]`)
	// rxListNumber matches an ordered list marker at a line start.
	rxListNumber = regexp.MustCompile(`(?m)^[ >]*\d+\. `)
)

// renderedWords are the words of our text with our own syntax (link
// markers, list numbers) removed; punctuation such as "#", "-", "|" and
// "`" never forms a word.
func renderedWords(text string) []string {
	text = rxLinkMarker.ReplaceAllString(text, "")
	text = rxListNumber.ReplaceAllString(text, "")
	return words(text)
}

// words splits s into lower-cased runs of letters and digits; each Han,
// Hiragana or Katakana character is a word of its own, since those scripts
// do not separate words with spaces.
func words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		ideograph := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
		wordRune := unicode.IsLetter(r) || unicode.IsDigit(r)
		if start >= 0 && (!wordRune || ideograph) {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
		switch {
		case ideograph:
			out = append(out, string(r))
		case wordRune && start < 0:
			start = i
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// tokenF1 is the F1 of the bags of words got and want.
func tokenF1(got, want []string) float64 {
	if len(got) == 0 && len(want) == 0 {
		return 1
	}
	counts := make(map[string]int, len(want))
	for _, w := range want {
		counts[w]++
	}
	overlap := 0
	for _, g := range got {
		if counts[g] > 0 {
			counts[g]--
			overlap++
		}
	}
	if overlap == 0 {
		return 0
	}
	precision := float64(overlap) / float64(len(got))
	recall := float64(overlap) / float64(len(want))
	return 2 * precision * recall / (precision + recall)
}

func TestTokenF1(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
		f1        float64
	}{
		{"identical", "a b c", "a b c", 1},
		{"both empty", "", "", 1},
		{"disjoint", "a b", "c d", 0},
		{"half recall", "a b", "a b c d", 2 * 1 * 0.5 / 1.5},
		{"markdown ignored", "# Title\n\n- one [1] `two`\n1. three", "Title one two three", 1},
		{"case and punctuation", "Hello, World!", "hello world", 1},
		{"ideographs split", "日本語", "日 本 語", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokenF1(renderedWords(tt.got), words(tt.want))
			if math.Abs(got-tt.f1) > 1e-9 {
				t.Errorf("tokenF1(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.f1)
			}
		})
	}
}

type pageScore struct {
	name string
	f1   float64
	got  int
	want int
}

func TestCorpusF1(t *testing.T) {
	pages := loadCorpus(t)
	base, _ := url.Parse(corpusPageURL)
	scores := make([]pageScore, 0, len(pages))
	sum, sumAsReturned := 0.0, 0.0
	titles, withTitle := 0, 0
	for _, p := range pages {
		page, err := Extract(p.source, corpusContentType, base)
		if err != nil {
			t.Errorf("%s: Extract: %v", p.name, err)
			continue
		}
		got := renderedWords(page.Text)
		f1 := tokenF1(got, p.expected)
		sum += f1
		// As returned: the link markers and list numbers count against us.
		sumAsReturned += tokenF1(words(page.Text), p.expected)
		if p.title != "" {
			withTitle++
			if page.Title == collapse(p.title) {
				titles++
			} else {
				t.Logf("title: %-40s ours %q, want %q", p.name, page.Title, collapse(p.title))
			}
		}
		scores = append(scores, pageScore{p.name, f1, len(got), len(p.expected)})
	}
	macro := sum / float64(len(pages))
	slices.SortFunc(scores, func(a, b pageScore) int { return cmpFloat(a.f1, b.f1) })
	for _, s := range scores[:min(10, len(scores))] {
		t.Logf("worst: %-40s F1 %.3f (words: ours %d, expected %d)", s.name, s.f1, s.got, s.want)
	}
	t.Logf("macro F1 over %d pages: %.4f (%.4f with link markers and list numbers counted as words)",
		len(pages), macro, sumAsReturned/float64(len(pages)))
	if macro < corpusF1Floor {
		t.Errorf("macro F1 = %.4f, below the floor %.4f: the renderer lost text or let furniture in", macro, corpusF1Floor)
	}
	titleMatch := float64(titles) / float64(max(withTitle, 1))
	t.Logf("title exact match: %d of %d pages (%.3f)", titles, withTitle, titleMatch)
	if titleMatch < corpusTitleFloor {
		t.Errorf("title exact match = %.3f, below the floor %.3f", titleMatch, corpusTitleFloor)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkExtractCorpus extracts every corpus page per iteration and
// reports the per-page latency distribution and memory: the targets are a
// p95 of at most 30 ms per page.
func BenchmarkExtractCorpus(b *testing.B) {
	pages := loadCorpus(b)
	base, _ := url.Parse(corpusPageURL)
	var (
		durations    []time.Duration
		peakHeap     uint64
		maxPageAlloc uint64
		totalAlloc   uint64
		extractions  int
		ms           runtime.MemStats
	)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			b.StartTimer()
			start := time.Now()
			if _, err := Extract(p.source, corpusContentType, base); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			durations = append(durations, time.Since(start))
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapAlloc)
			maxPageAlloc = max(maxPageAlloc, ms.TotalAlloc-before)
			totalAlloc += ms.TotalAlloc - before
			extractions++
			b.StartTimer()
		}
	}
	slices.Sort(durations)
	perMS := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(perMS(durations[len(durations)/2]), "median-ms/page")
	b.ReportMetric(perMS(durations[len(durations)*95/100]), "p95-ms/page")
	b.ReportMetric(perMS(durations[len(durations)-1]), "max-ms/page")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(maxPageAlloc)/(1<<20), "max-alloc-MB/page")
	b.ReportMetric(float64(totalAlloc)/float64(extractions)/(1<<20), "alloc-MB/page")
}
