package tools

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSecretBox(t *testing.T) {
	key := bytes.Repeat([]byte{7}, SecretKeySize)
	box, err := NewSecretBox(key, "CONSOLE_SECRET_KEY")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("round trip without the plaintext in the sealed value", func(t *testing.T) {
		if strings.Contains(sealed, testSecret) || !strings.HasPrefix(sealed, "v1:") {
			t.Fatalf("sealed %q", sealed)
		}
		again, _ := box.Seal(testSecret)
		if again == sealed {
			t.Fatal("two seals of one value are equal: the nonce is not fresh")
		}
		got, err := box.Open(sealed)
		if err != nil || got != testSecret {
			t.Fatalf("open: %q, %v", got, err)
		}
	})
	t.Run("wrong key names both key sources", func(t *testing.T) {
		other, _ := NewSecretBox(bytes.Repeat([]byte{8}, SecretKeySize), "/var/lib/outbound/console.db.key")
		_, err := other.Open(sealed)
		if !errors.Is(err, ErrSecretKey) {
			t.Fatalf("got %v, want ErrSecretKey", err)
		}
		for _, want := range []string{"/var/lib/outbound/console.db.key", "CONSOLE_SECRET_KEY", "<database>.key"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	})
	t.Run("tampered value", func(t *testing.T) {
		if _, err := box.Open(sealed[:len(sealed)-2] + "AA"); !errors.Is(err, ErrSecretKey) {
			t.Fatalf("a changed value opened: %v", err)
		}
		if _, err := box.Open("plaintext"); err == nil || !strings.Contains(err.Error(), "re-enter it") {
			t.Fatalf("unsealed value: %v", err)
		}
	})
	t.Run("short key", func(t *testing.T) {
		if _, err := NewSecretBox([]byte("short"), "CONSOLE_SECRET_KEY"); err == nil || !strings.Contains(err.Error(), "5 bytes, not 32") {
			t.Fatalf("got %v", err)
		}
	})
}
