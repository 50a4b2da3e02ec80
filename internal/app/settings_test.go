package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

func TestSetSettings(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)

	saved, err := ta.SetSettings(ctx, SetSettings{Values: map[string]string{"MAX_BYTES": "4mb", " Timeout ": "90s", "page_chars": "6000"}, Actor: "ada", Version: 0})
	if err != nil {
		t.Fatal(err)
	}
	want := []SettingChange{{"timeout", "15s", "90s"}, {"max_bytes", "2MB", "4MB"}} // page_chars is already 6000
	if len(saved.Changes) != len(want) || saved.Changes[0] != want[0] || saved.Changes[1] != want[1] {
		t.Fatalf("changes %+v, want %+v", saved.Changes, want)
	}
	if s := ta.Settings(); s.Guard.MaxBytes != 4<<20 || s.Guard.Timeout != 90*time.Second || ta.reloads.Load() != 1 {
		t.Fatalf("not in force: %+v (reloads %d)", s.Guard, ta.reloads.Load())
	}
	audits := ta.audits(t)
	if len(audits) != 2 || audits[0].Action != ActionSettingsSet || audits[0].Target != "timeout" || audits[0].Before != "15s" || audits[0].After != "90s" {
		t.Fatalf("audit: %+v", audits)
	}

	tests := []struct {
		name  string
		req   SetSettings
		check func(t *testing.T, res SettingsSaved, err error)
	}{
		{"nothing changes: nothing is stored", SetSettings{Values: map[string]string{"max_bytes": "4194304", "TIMEOUT": "1m30s"}, Version: models.AnyRevision}, func(t *testing.T, res SettingsSaved, err error) {
			if err != nil || len(res.Changes) != 0 {
				t.Fatalf("got %+v, %v", res, err)
			}
		}},
		{"each bad value names its key and fix", SetSettings{Values: map[string]string{"timeout": "fast", "Reads_Per_Turn": "0", "page_chars": "7000"}, Version: models.AnyRevision}, func(t *testing.T, _ SettingsSaved, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 2 || ve.Problems[0].Field != "timeout" || ve.Problems[1].Field != "reads_per_turn" ||
				ve.Problems[0].Text() != `"fast" is not a duration; write it like 15s.` {
				t.Fatalf("got %#v", err)
			}
		}},
		{"an unknown key lists the keys", SetSettings{Values: map[string]string{"speed": "1"}, Version: models.AnyRevision}, func(t *testing.T, _ SettingsSaved, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Problems[0].Fix, "the settings are timeout, max_bytes") {
				t.Fatalf("got %v", err)
			}
		}},
		{"one key in two spellings", SetSettings{Values: map[string]string{"max_bytes": "1MB", "MAX_BYTES": "3MB"}, Version: models.AnyRevision}, func(t *testing.T, _ SettingsSaved, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Problems[0].Problem, "given twice") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a stale version is a conflict", SetSettings{Values: map[string]string{"page_chars": "7000"}, Version: 0}, func(t *testing.T, _ SettingsSaved, err error) {
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Current != 1 || ce.Section != models.SectionSettings {
				t.Fatalf("got %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev, n, reloads := ta.snapshot(t)
			res, err := ta.SetSettings(ctx, tt.req)
			tt.check(t, res, err)
			ta.unchanged(t, rev, n, reloads)
		})
	}
}

// TestSetSettingsFixesABadStoredValue: a value written behind the app's
// back that does not parse is replaced, and the audit trail keeps the
// text it replaced.
func TestSetSettingsFixesABadStoredValue(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	if _, err := ta.store.SetSettings(ctx, models.AnyRevision, "hand", map[string]string{"timeout": "soon"}); err != nil {
		t.Fatal(err)
	}
	st, err := ta.StoredSettings(ctx)
	if err != nil || st.Invalid == nil {
		t.Fatalf("the bad stored value was not reported: %v", err)
	}
	saved, err := ta.SetSettings(ctx, SetSettings{Values: map[string]string{"timeout": "15s"}, Actor: "ada", Version: models.AnyRevision})
	if err != nil || len(saved.Changes) != 1 || saved.Changes[0].Before != "soon" {
		t.Fatalf("got %+v, %v", saved, err)
	}
	if ta.Settings().Guard.Timeout != 15*time.Second {
		t.Fatal("the fixed settings are not in force")
	}
}
