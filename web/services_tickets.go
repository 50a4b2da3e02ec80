package web

import (
	"context"

	"github.com/outboundhq/outbound/internal/app"
)

// TicketTimelines reads a ticket's timeline: its refusals and allowed
// decisions, merged by time. A ticket no agent could have sent is a
// *guard.TicketError. *app.App implements it.
type TicketTimelines interface {
	TicketTimeline(ctx context.Context, ticket string) (app.Timeline, error)
}
