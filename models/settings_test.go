package models

import (
	"maps"
	"testing"
)

func TestSettingsSetAndRead(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		got, err := s.Settings(ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("fresh Settings = %v, %v; want empty", got, err)
		}
		rev, err := s.SetSettings(ctx, 0, "ana", map[string]string{"max_redirects": "5", "screenshot": "on"})
		if err != nil || rev != 1 {
			t.Fatalf("SetSettings = %d, %v; want revision 1", rev, err)
		}
		rev, err = s.SetSettings(ctx, rev, "bo", map[string]string{"max_redirects": "3"})
		if err != nil || rev != 2 {
			t.Fatalf("overwrite SetSettings = %d, %v; want revision 2", rev, err)
		}
		got, err = s.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"max_redirects": "3", "screenshot": "on"}; !maps.Equal(got, want) {
			t.Errorf("Settings = %v, want %v", got, want)
		}
		var row Setting
		if err := s.r.Where("key = ?", "max_redirects").First(&row).Error; err != nil {
			t.Fatal(err)
		}
		if row.UpdatedBy != "bo" || row.UpdatedAt.IsZero() {
			t.Errorf("overwritten row = %+v, want UpdatedBy bo and an UpdatedAt", row)
		}
	})
}

func TestSettingsRejectEmptyInput(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		tests := []struct {
			name   string
			values map[string]string
		}{
			{"no keys", nil},
			{"empty key", map[string]string{"": "v", "ok": "1"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := s.SetSettings(ctx, AnyRevision, "ana", tt.values); err == nil {
					t.Fatal("want an error")
				}
			})
		}
		if got, _ := s.Settings(ctx); len(got) != 0 {
			t.Errorf("rejected calls stored %v", got)
		}
	})
}
