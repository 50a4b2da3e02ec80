package app

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/tools"
)

func noEnv(string) string { return "" }

func TestSecretKeyFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "console.db")
	box, err := OpenSecretBox(db, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(db + ".key")
	if err != nil {
		t.Fatalf("no key file on first run: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	leftovers, _ := filepath.Glob(db + ".key.tmp-*")
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	sealed, err := box.Seal("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	again, err := OpenSecretBox(db, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open(sealed); err != nil || got != "s3cret" {
		t.Fatalf("the second run did not reuse the key: %q, %v", got, err)
	}

	t.Run("the environment wins", func(t *testing.T) {
		key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
		env := func(k string) string {
			if k == secretKeyEnv {
				return key
			}
			return ""
		}
		other, err := OpenSecretBox(db, env)
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.Open(sealed)
		if !errors.Is(err, tools.ErrSecretKey) {
			t.Fatalf("a wrong key opened the secret: %v", err)
		}
		for _, want := range []string{"CONSOLE_SECRET_KEY", ".key"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("wrong-key error %q does not name %s", err, want)
			}
		}
	})
}

func TestSecretKeyErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		env   string
		file  string
		wants []string
	}{
		{"env not base64", "not base64!", "", []string{"CONSOLE_SECRET_KEY is not a base64 key of 32 bytes", "it is not base64", "console.db.key"}},
		{"env too short", base64.StdEncoding.EncodeToString([]byte("short")), "", []string{"decodes to 5 bytes", "head -c 32 /dev/urandom | base64"}},
		{"damaged key file", "", "garbage", []string{"console.db.key is damaged", "set CONSOLE_SECRET_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(dir, tt.name, "console.db")
			if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				if err := os.WriteFile(db+".key", []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := OpenSecretBox(db, func(string) string { return tt.env })
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.file == "" {
				if _, err := os.Stat(db + ".key"); err == nil {
					t.Error("a bad CONSOLE_SECRET_KEY still created a key file")
				}
			}
		})
	}
}
