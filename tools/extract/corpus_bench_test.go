package extract

import (
	"bytes"
	"net/url"
	"slices"
	"testing"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
)

// BenchmarkCorpusCompare times, page by page and in the same run, three
// ways of reading each corpus page:
//
//   - ours: Extract (charset, hidden text, Readability, rendering, links);
//   - readeck: html.Parse and readeck's go-readability v2 on the parsed
//     tree through ParseAndMutate, its cheapest path (no copy of the
//     tree, no charset detection, no rendering of the article);
//   - parse: html.Parse alone, the floor any extractor stands on.
//
// The three run back to back on the same page, in turns, and each page's figure is
// its fastest of the iterations, so that other work on a busy machine
// does not decide the comparison. It reports the median and 95th
// percentile over the pages of each; the goals are a p95 no worse than
// readeck's and a median within 1.5× html.Parse's. Run it with
// -benchtime=10x or more for stable figures.
func BenchmarkCorpusCompare(b *testing.B) {
	pages := loadCorpus(b)
	base, _ := url.Parse(corpusPageURL)
	methods := []struct {
		name string
		run  func(src []byte) error
	}{
		{"ours", func(src []byte) error {
			_, err := Extract(src, corpusContentType, base)
			return err
		}},
		{"readeck", func(src []byte) error {
			doc, err := html.Parse(bytes.NewReader(src))
			if err != nil {
				return err
			}
			parser := readability.NewParser()
			_, err = parser.ParseAndMutate(doc, base)
			return err
		}},
		{"parse", func(src []byte) error {
			_, err := html.Parse(bytes.NewReader(src))
			return err
		}},
	}
	// fastest[m][p] is method m's best time on page p.
	fastest := make([][]time.Duration, len(methods))
	for m := range fastest {
		fastest[m] = make([]time.Duration, len(pages))
	}
	for b.Loop() {
		for p, page := range pages {
			for i := range methods {
				// Each method goes first on a third of the pages, so
				// that none always pays for the garbage of another.
				m := (p + i) % len(methods)
				method := methods[m]
				start := time.Now()
				if err := method.run(page.source); err != nil {
					b.Fatalf("%s: %s: %v", page.name, method.name, err)
				}
				if d := time.Since(start); fastest[m][p] == 0 || d < fastest[m][p] {
					fastest[m][p] = d
				}
			}
		}
	}
	for m, method := range methods {
		p50, p95 := percentiles(fastest[m])
		b.ReportMetric(p50, method.name+"-p50-ms")
		b.ReportMetric(p95, method.name+"-p95-ms")
	}
}

// percentiles returns the median and 95th percentile of d in milliseconds.
func percentiles(d []time.Duration) (p50, p95 float64) {
	d = slices.Sorted(slices.Values(d))
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	return ms(d[len(d)/2]), ms(d[len(d)*95/100])
}
