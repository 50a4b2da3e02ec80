package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestParseColor(t *testing.T) {
	white := rgba{255, 255, 255, 1}
	tests := []struct {
		in   string
		want rgba
		ok   bool
	}{
		{"#fff", white, true},
		{"#ffffff", white, true},
		{"white", white, true},
		{"rgb(255,255,255)", white, true},
		{"rgb(255 255 255)", white, true},
		{"rgb(100%, 100%, 100%)", white, true},
		{"rgba(255, 255, 255, 0.5)", rgba{255, 255, 255, 0.5}, true},
		{"rgb(0 0 0 / 0%)", rgba{0, 0, 0, 0}, true},
		{"#ffffff00", rgba{255, 255, 255, 0}, true},
		{"transparent", rgba{0, 0, 0, 0}, true},
		{"currentcolor", rgba{}, false},
		{"var(--fg)", rgba{}, false},
		{"#ggg", rgba{}, false},
		{"rgb(1,2)", rgba{}, false},
	}
	for _, tt := range tests {
		got, ok := parseColor(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseColor(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackgroundColor(t *testing.T) {
	tests := []struct {
		in    string
		known bool
	}{
		{"#fff no-repeat", true},
		{"rgb(0, 0, 0) none", true},
		{"url(/bg.png) #fff", false},
		{"linear-gradient(#fff, #000)", false},
		{"none", false},
	}
	for _, tt := range tests {
		if _, known := backgroundColor(tt.in); known != tt.known {
			t.Errorf("backgroundColor(%q) known = %v, want %v", tt.in, known, tt.known)
		}
	}
}

func TestParseSimpleSelector(t *testing.T) {
	accepted := []string{".x", "#id", "p.note", "div#main.a.b", " .sr-only "}
	refused := []string{"p", "*", ".a .b", ".a>.b", ".a:hover", "[hidden]", "a.b::before", ".a + .b", "#a#b", ".", "#"}
	for _, s := range accepted {
		if _, ok := parseSimpleSelector(s); !ok {
			t.Errorf("parseSimpleSelector(%q) refused", s)
		}
	}
	for _, s := range refused {
		if _, ok := parseSimpleSelector(s); ok {
			t.Errorf("parseSimpleSelector(%q) accepted", s)
		}
	}
}

// The cascade picks what a browser would: !important, then specificity,
// then source order; the style attribute beats rules that are not
// !important; conditional (@media) rules only reveal.
func TestComputeStyleCascade(t *testing.T) {
	css := `
/* comment { display: none } */
.a { display: none }
.a.b { display: block }
#i { display: none }
.c { display: block !important }
.d { display: none } .d { display: inline }
@media (min-width: 700px) { .e { display: block } .f { display: none } }
@font-face { font-family: x; src: url(x.woff) }
.e { display: none }
`
	tests := []struct {
		element string
		want    string
	}{
		{`<p class="a">`, "none"},
		{`<p class="a b">`, "block"},
		{`<p id="i" class="a b">`, "none"},
		{`<p id="i" class="c">`, "block"},
		{`<p class="a" style="display:block">`, "block"},
		{`<p class="c" style="display:none">`, "block"},
		{`<p class="d">`, "inline"},
		{`<p class="e">`, "none"}, // the later plain rule wins over the earlier @media one
		{`<p class="f">`, ""},
	}
	sheet := newStyleSheet()
	sheet.add(css, false)
	for _, tt := range tests {
		doc, err := html.Parse(strings.NewReader(tt.element))
		if err != nil {
			t.Fatal(err)
		}
		p := findElement(doc, atom.P, always)
		if got := computeStyle(p, sheet)["display"]; got != tt.want {
			t.Errorf("%s: display = %q, want %q", tt.element, got, tt.want)
		}
	}
}

func TestClipsAll(t *testing.T) {
	tests := []struct {
		clip, clipPath string
		want           bool
	}{
		{"rect(0 0 0 0)", "", true},
		{"rect(1px, 1px, 1px, 1px)", "", true},
		{"rect(0px, 100px, 50px, 0px)", "", false},
		{"auto", "", false},
		{"", "inset(50%)", true},
		{"", "inset(100%)", true},
		{"", "inset(10px)", false},
		{"", "circle(0)", true},
		{"", "circle(40%)", false},
	}
	for _, tt := range tests {
		if got := clipsAll(tt.clip, tt.clipPath); got != tt.want {
			t.Errorf("clipsAll(%q, %q) = %v, want %v", tt.clip, tt.clipPath, got, tt.want)
		}
	}
}
