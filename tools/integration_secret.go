package tools

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretKeySize is the length of the key that seals integration secrets.
const SecretKeySize = 32

// SecretBox seals and opens integration secrets with AES-256-GCM. The
// database holds only sealed values, so a copy of the database without the
// key (a backup, a support bundle) leaks no credential.
type SecretBox struct {
	aead cipher.AEAD
	// where names the key's source for error messages.
	where string
}

// sealedPrefix versions the sealed format, so a later key or cipher
// change can tell old values apart.
const sealedPrefix = "v1:"

// secretContext binds a sealed value to its use: a value sealed for
// another purpose under the same key does not open as a header.
var secretContext = []byte("outbound integration header v1")

// NewSecretBox returns a box over key, which must be SecretKeySize bytes.
// where describes the key's source, for errors ("CONSOLE_SECRET_KEY" or
// the key file's path).
func NewSecretBox(key []byte, where string) (*SecretBox, error) {
	if len(key) != SecretKeySize {
		return nil, fmt.Errorf("the secret key from %s is %d bytes, not %d; generate one with `head -c 32 /dev/urandom | base64`", where, len(key), SecretKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SecretBox{aead: aead, where: where}, nil
}

// Seal encrypts plain under a fresh random nonce.
func (b *SecretBox) Seal(plain string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := b.aead.Seal(nonce, nonce, []byte(plain), secretContext)
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// ErrSecretKey is the cause of an Open that fails because the key is not
// the one the value was sealed with.
var ErrSecretKey = errors.New("wrong secret key")

// Open decrypts a value made by Seal. A value sealed under another key is
// an error that names both places a key comes from, since a changed or
// lost key is by far the likeliest cause.
func (b *SecretBox) Open(sealed string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, sealedPrefix)
	data, err := base64.RawStdEncoding.DecodeString(raw)
	if !ok || err != nil || len(data) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", fmt.Errorf("a stored integration secret is not in the sealed format; re-enter it on its integration's page")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, data[:n], data[n:], secretContext)
	if err != nil {
		return "", fmt.Errorf("%w: a stored integration secret does not open with the key from %s; "+
			"set CONSOLE_SECRET_KEY (base64 of 32 bytes) or restore the key file <database>.key to the key the secrets were saved with, "+
			"or re-enter the secret on its integration's page", ErrSecretKey, b.where)
	}
	return string(plain), nil
}
