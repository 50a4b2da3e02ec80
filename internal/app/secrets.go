package app

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// secretKeyEnv holds the key that seals integration secrets, base64.
const secretKeyEnv = "CONSOLE_SECRET_KEY"

// secretKeyFileEnv names a file holding that key (base64), for replicas
// that mount it as a secret rather than set it in the environment.
const secretKeyFileEnv = "CONSOLE_SECRET_KEY_FILE"

// OpenSecretBox returns the box that seals integration secrets. Its key
// comes from CONSOLE_SECRET_KEY when set; else from the file
// CONSOLE_SECRET_KEY_FILE names; else, for a SQLite database, from <db>.key
// beside it, created with a fresh random key on first run. Keeping the key
// out of the database means a copy of the database (or of its backups)
// alone opens no secret.
//
// A PostgreSQL database has no "beside": its replicas run on several
// machines and must all hold the same key, so it comes from the variable
// or the key file only, never from the database or its URL, and a missing
// one is an error rather than a new key that the other replicas lack.
func OpenSecretBox(dbPath string, getenv func(string) string) (*tools.SecretBox, error) {
	if v := strings.TrimSpace(getenv(secretKeyEnv)); v != "" {
		key, err := decodeKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s is not a base64 key of 32 bytes (%v); generate one with `head -c 32 /dev/urandom | base64`, or unset it to use %s", secretKeyEnv, err, keySource(dbPath))
		}
		return tools.NewSecretBox(key, secretKeyEnv)
	}
	if file := strings.TrimSpace(getenv(secretKeyFileEnv)); file != "" {
		key, err := readKey(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s names %s, which does not exist; create it with `head -c 32 /dev/urandom | base64 > %s` (the same file on every replica)", secretKeyFileEnv, file, file)
		}
		if err != nil {
			return nil, err
		}
		return tools.NewSecretBox(key, file)
	}
	if models.IsPostgres(dbPath) {
		return nil, &NoSecretKeyError{}
	}
	path := KeyPath(dbPath)
	key, err := readOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	return tools.NewSecretBox(key, path)
}

// KeyPath is the key file beside a SQLite database.
func KeyPath(dbPath string) string { return dbPath + ".key" }

// keySource says where the key comes from when CONSOLE_SECRET_KEY is unset.
func keySource(dbPath string) string {
	if models.IsPostgres(dbPath) {
		return secretKeyFileEnv
	}
	return "the key file " + KeyPath(dbPath)
}

// NoSecretKeyError is a PostgreSQL database opened without a key: the
// process cannot seal or open integration secrets.
type NoSecretKeyError struct{}

func (e *NoSecretKeyError) Error() string {
	return fmt.Sprintf("with a PostgreSQL database, the key that seals integration secrets must be given, the same to every replica: set %s to a file holding it, or %s to the key itself (make one with `head -c 32 /dev/urandom | base64`); it is never kept in the database", secretKeyFileEnv, secretKeyEnv)
}

func decodeKey(text string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(text); err == nil {
			if len(key) != tools.SecretKeySize {
				return nil, fmt.Errorf("it decodes to %d bytes", len(key))
			}
			return key, nil
		}
	}
	return nil, errors.New("it is not base64")
}

// readOrCreateKey reads the key file, or creates it when absent. The new
// key is written to a temporary file and linked into place, so a second
// process starting at the same moment either wins or reads the winner's
// key, and nobody ever reads half a file.
func readOrCreateKey(path string) ([]byte, error) {
	if key, err := readKey(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key := make([]byte, tools.SecretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cannot create the secret key file %s: %w; make its directory writable, or set %s", path, err, secretKeyEnv)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("cannot write the secret key file %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("cannot create the secret key file %s: %w; set %s instead", path, err, secretKeyEnv)
	}
	return key, nil
}

func readKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot read the secret key file %s: %w; fix its permissions, or set %s", path, err, secretKeyEnv)
	}
	key, err := decodeKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("the secret key file %s is damaged (%v); restore it from a backup, or set %s to the key the secrets were saved with", path, err, secretKeyEnv)
	}
	return key, nil
}
