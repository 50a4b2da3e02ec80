package extract

import (
	"strconv"
	"strings"
)

// rgba is a parsed CSS colour; a is 0 (transparent) to 1 (opaque).
type rgba struct {
	r, g, b, a float64
}

// namedColors are the colour keywords pages use to hide text: white and
// black and the greys near them, plus the common primaries. Unknown names
// parse as no colour, which never hides anything.
var namedColors = map[string]rgba{
	"white": {255, 255, 255, 1}, "black": {0, 0, 0, 1}, "transparent": {0, 0, 0, 0},
	"snow": {255, 250, 250, 1}, "ivory": {255, 255, 240, 1}, "whitesmoke": {245, 245, 245, 1},
	"gainsboro": {220, 220, 220, 1}, "lightgray": {211, 211, 211, 1}, "lightgrey": {211, 211, 211, 1},
	"silver": {192, 192, 192, 1}, "gray": {128, 128, 128, 1}, "grey": {128, 128, 128, 1},
	"red": {255, 0, 0, 1}, "green": {0, 128, 0, 1}, "blue": {0, 0, 255, 1},
	"yellow": {255, 255, 0, 1}, "navy": {0, 0, 128, 1},
}

// parseColor reads a hex, rgb()/rgba() or named colour.
func parseColor(s string) (rgba, bool) {
	s = strings.TrimSpace(s)
	if c, ok := namedColors[s]; ok {
		return c, true
	}
	if hex, ok := strings.CutPrefix(s, "#"); ok {
		return parseHexColor(hex)
	}
	for _, fn := range []string{"rgba(", "rgb("} {
		if args, ok := strings.CutPrefix(s, fn); ok {
			if args, ok = strings.CutSuffix(args, ")"); ok {
				return parseRGBArgs(args)
			}
		}
	}
	return rgba{}, false
}

func parseHexColor(hex string) (rgba, bool) {
	if len(hex) == 3 || len(hex) == 4 {
		var long strings.Builder
		for i := range len(hex) {
			long.WriteByte(hex[i])
			long.WriteByte(hex[i])
		}
		hex = long.String()
	}
	if len(hex) != 6 && len(hex) != 8 {
		return rgba{}, false
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return rgba{}, false
	}
	if len(hex) == 6 {
		return rgba{float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff), 1}, true
	}
	return rgba{float64(v >> 24 & 0xff), float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v&0xff) / 255}, true
}

// parseRGBArgs reads "255, 255, 255", "255 255 255 / 50%" and the like.
func parseRGBArgs(args string) (rgba, bool) {
	fields := strings.FieldsFunc(args, func(r rune) bool { return r == ',' || r == ' ' || r == '/' })
	if len(fields) != 3 && len(fields) != 4 {
		return rgba{}, false
	}
	var ch [4]float64
	ch[3] = 1
	for i, f := range fields {
		l, ok := parseLength(f)
		if !ok || (l.unit != "" && l.unit != "%") {
			return rgba{}, false
		}
		v := l.value
		switch {
		case i == 3 && l.unit == "%":
			v /= 100
		case i < 3 && l.unit == "%":
			v = v * 255 / 100
		}
		ch[i] = v
	}
	return rgba{ch[0], ch[1], ch[2], ch[3]}, true
}

// backgroundColor finds the colour in a background or background-color
// value. A background image or gradient makes the backdrop unknown: text
// over a picture cannot be judged by colours.
func backgroundColor(value string) (c rgba, known bool) {
	if strings.Contains(value, "url(") || strings.Contains(value, "gradient(") {
		return rgba{}, false
	}
	if c, ok := parseColor(value); ok {
		return c, true
	}
	for _, token := range cssTokens(value) {
		if c, ok := parseColor(token); ok {
			return c, true
		}
	}
	return rgba{}, false
}

// cssTokens splits a value at spaces outside parentheses.
func cssTokens(value string) []string {
	var out []string
	depth, start := 0, -1
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ' ' && depth == 0:
			if start >= 0 {
				out = append(out, value[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, value[start:])
	}
	return out
}

// indistinguishable reports whether text of colour fg cannot be told
// apart from an opaque backdrop bg: the same colour, or one so close that
// no reader sees the difference.
func indistinguishable(fg, bg rgba) bool {
	diff := func(a, b float64) float64 {
		if a > b {
			return a - b
		}
		return b - a
	}
	return diff(fg.r, bg.r)+diff(fg.g, bg.g)+diff(fg.b, bg.b) <= 24
}
