package tools

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSettingsRoundTrip(t *testing.T) {
	d := DefaultSettings()
	got, err := ParseSettings(d.Values())
	if err != nil {
		t.Fatal(err)
	}
	if got.Guard.Timeout != d.Guard.Timeout || got.Guard.MaxBytes != d.Guard.MaxBytes || got.PageChars != d.PageChars ||
		got.ReadsPerTurn != d.ReadsPerTurn || got.CacheTTL != d.CacheTTL || got.Guard.UserAgent != d.Guard.UserAgent {
		t.Fatalf("round trip changed settings: %+v vs %+v", got, d)
	}
	if v := d.Values(); v["max_bytes"] != "2MB" || v["timeout"] != "15s" || v["ports"] != "" || v["page_chars"] != "6000" || v["cache_ttl"] != "5m" {
		t.Fatalf("default values: %v", v)
	}
}

func TestNormalizeSetting(t *testing.T) {
	tests := []struct{ key, in, want string }{
		{"timeout", "30s", "30s"},
		{"timeout", " 1m ", "1m"},
		{"timeout", "90s", "90s"},
		{"timeout", "1m30s", "90s"},
		{"cache_ttl", "60m", "1h"},
		{"cache_ttl", "10m0s", "10m"},
		{"Max_Bytes", "2mb", "2MB"},
		{" TIMEOUT ", "15s", "15s"},
		{"cache_ttl", "1h", "1h"},
		{"max_bytes", "1GB", "1GB"},
		{"max_bytes", "512kb", "512KB"},
		{"max_bytes", "3145728", "3MB"},
		{"max_bytes", "5000", "5000"},
		{"ports", "8443, 8080", "8080, 8443"},
		{"ports", "", ""},
		{"reads_per_turn", "3", "3"},
		{"cache_ttl", "0s", "0s"},
		{"user_agent", "AcmeSupportBot/2 (+https://acme.example/bot)", "AcmeSupportBot/2 (+https://acme.example/bot)"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.in, func(t *testing.T) {
			got, err := NormalizeSetting(tt.key, tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeSetting(%s, %q) = %q, %v; want %q", tt.key, tt.in, got, err, tt.want)
			}
		})
	}
}

func TestSettingErrorsNameTheProblemAndTheFix(t *testing.T) {
	tests := []struct{ key, in, want string }{
		{"timeout", "fast", `"fast" is not a duration; write it like 15s`},
		{"timeout", "15", "15 has no unit; write 15s for seconds"},
		{"timeout", "10m", "10m is outside 1s–5m; choose a value such as 15s"},
		{"cache_ttl", "2h", "2h is outside 0s–1h"},
		{"max_bytes", "lots", "not a size; write bytes, or a size like 2MB"},
		{"max_bytes", "10", "outside 1KB–1GB"},
		{"max_bytes", "2GB", "outside 1KB–1GB"},
		{"max_bytes", "17592186044418MB", "far over the 1GB limit"},
		{"page_chars", "many", "not a whole number"},
		{"page_chars", "10", "outside 500–100000"},
		{"redirects", "50", "outside 0–20"},
		{"reads_per_turn", "0", "outside 1–100"},
		{"ports", "80", "port 80 is always open"},
		{"ports", "8080, 8080", "port 8080 is listed twice"},
		{"ports", "70000", "outside 1–65535"},
		{"ports", "http", "not a port number"},
		{"user_agent", " ", "the user agent is empty"},
		{"user_agent", "bot\x01", "printable ASCII"},
		{"retention_days", "0", "outside 1–3650"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.in, func(t *testing.T) {
			_, err := NormalizeSetting(tt.key, tt.in)
			var se *SettingError
			if !errors.As(err, &se) || se.Key != tt.key || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NormalizeSetting(%s, %q) = %v, want a SettingError containing %q", tt.key, tt.in, err, tt.want)
			}
		})
	}
	if _, err := NormalizeSetting("speed", "1"); err == nil || !strings.Contains(err.Error(), "the settings are timeout, max_bytes") {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestParseSettingsAppliesStoredValues(t *testing.T) {
	s, err := ParseSettings(map[string]string{"timeout": "3s", "ports": "8080", "reads_per_turn": "2", "unknown_future_key": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Guard.Timeout != 3*time.Second || len(s.Guard.ExtraPorts) != 1 || s.Guard.ExtraPorts[0] != 8080 || s.ReadsPerTurn != 2 {
		t.Fatalf("got %+v", s)
	}
	if _, err := ParseSettings(map[string]string{"timeout": "soon"}); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("a bad stored value must name its key: %v", err)
	}
}

func TestSettingKeysIgnoreCase(t *testing.T) {
	for _, key := range []string{"max_bytes", "MAX_BYTES", "Max_Bytes", " max_bytes "} {
		t.Run(key, func(t *testing.T) {
			d, err := LookupSetting(key)
			if err != nil || d.Key != "max_bytes" {
				t.Fatalf("LookupSetting(%q) = %q, %v", key, d.Key, err)
			}
		})
	}
	var se *SettingError
	if _, err := NormalizeSetting("MAX_BYTES", "lots"); !errors.As(err, &se) || se.Key != "max_bytes" {
		t.Fatalf("the error names the key as typed, not as stored: %v", err)
	}
}
