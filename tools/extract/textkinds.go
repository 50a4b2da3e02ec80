package extract

import (
	"bytes"
	"encoding/json"
	"strings"
)

// extractText renders a decoded text body of the given kind. Only JSON is
// changed: minified JSON is one endless line, and indentation shows an
// agent its structure. Everything else is already text as its author wrote
// it.
func extractText(kind Kind, text string) string {
	if kind != JSON {
		return text
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(strings.TrimPrefix(text, "\uFEFF")), "", "  "); err != nil {
		// Broken JSON is still the server's answer; the agent may make
		// sense of it, so it is returned as is rather than refused.
		return text
	}
	return out.String()
}
