package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// WebReads is the database's record of the conversations that have read
// the web, for the tool registry of a process whose conversations (the
// JSON API's threads, MCP sessions over HTTP) may go on through another
// replica: a mark made on one replica counts on every replica
// (tools/taint.go).
func (a *App) WebReads() tools.WebReadStore { return webReadStore{store: a.store, log: a.log} }

// webReadStore logs its failures, which the registry acts on: a mark not
// written withholds the answer that brought the web in (and still counts
// on this replica), and a mark that cannot be read counts as a web read.
type webReadStore struct {
	store *models.Store
	log   *slog.Logger
}

func (s webReadStore) MarkWebRead(ctx context.Context, thread string, until time.Time) error {
	err := s.store.MarkWebRead(ctx, thread, until)
	if err != nil {
		s.log.Error("a conversation read the web and the database did not record it: the answer was withheld from the agent (refused as unrecorded), and its next web read tries again",
			"thread", thread, "err", err)
	}
	return err
}

func (s webReadStore) WebReadUntil(ctx context.Context, thread string) (time.Time, error) {
	until, err := s.store.WebReadUntil(ctx, thread)
	if err != nil {
		s.log.Error("whether a conversation read the web could not be read from the database: its side effect is treated as after a web read and needs a person's confirmation",
			"thread", thread, "err", err)
	}
	return until, err
}
