package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// StringList is a list of strings kept in one TEXT column as a JSON array
// (a refusal's addresses, its redirect chain). The encoding is the store's
// business: callers read and write a []string and never join or split
// text, so a URL with a comma or an address list with one entry round-trips
// as it was. The empty list is stored as ”.
type StringList []string

// Value encodes l for the database.
func (l StringList) Value() (driver.Value, error) {
	if len(l) == 0 {
		return "", nil
	}
	b, err := json.Marshal([]string(l))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan decodes a column written by Value.
func (l *StringList) Scan(v any) error {
	var text string
	switch x := v.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		text = x
	case []byte:
		text = string(x)
	default:
		return fmt.Errorf("models: a list column holds %T, not text", v)
	}
	if text == "" {
		*l = nil
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return fmt.Errorf("models: a list column holds %q, not a JSON array of strings: %w", text, err)
	}
	*l = out
	return nil
}
