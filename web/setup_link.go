package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// SetupLinks is where the one-time setup links of every replica are kept
// (*models.Store): a load balancer may send the admin who opens the link
// one replica printed to another.
type SetupLinks interface {
	AddSetupLink(ctx context.Context, hash string) error
	SetupLinkExists(ctx context.Context, hash string) (bool, error)
	SetupLinkUsed(ctx context.Context, hash string) (bool, error)
	EndSetupLinks(ctx context.Context) error
}

// ServeSetupToken is the setup token `console serve` starts with: a
// fresh shared one (NewSharedSetupToken) while no user exists; once one
// does, a token of no link of its own that still knows the links other
// replicas printed, so a used link opened on a replica started after the
// setup says it was used and points to sign-in (410) rather than "not
// found", as it does on the replicas that printed it.
func ServeSetupToken(ctx context.Context, links SetupLinks, usersExist bool) (*SetupToken, error) {
	if usersExist {
		return &SetupToken{links: links}, nil
	}
	return NewSharedSetupToken(ctx, links)
}

// NewSharedSetupToken returns a fresh setup token whose hash is stored in
// links, so that every replica on the same database accepts it.
func NewSharedSetupToken(ctx context.Context, links SetupLinks) (*SetupToken, error) {
	t, err := NewSetupToken()
	if err != nil {
		return nil, err
	}
	if err := links.AddSetupLink(ctx, setupLinkHash(t.token)); err != nil {
		return nil, err
	}
	t.links = links
	return t, nil
}

// setupLinkHash is what the store keeps of a setup token: a copy of the
// database does not hold a working link.
func setupLinkHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
