package web

import (
	"context"
	"time"

	"github.com/outboundhq/outbound/models"
)

// Store is all the console reads or writes in the database directly, and
// no more: the refusal log and the audit trail (read-only views), the
// revision /healthz reports, and the session rows sign-in keeps. Every
// change to the configuration, tokens, users and reviews goes through the
// application layer's services (services_*.go) instead. *models.Store
// implements it; a page's test can implement only what it reads.
type Store interface {
	Revision(ctx context.Context) (int64, error)

	// The refusal log.
	ListRefusals(ctx context.Context, q models.RefusalQuery) ([]models.Refusal, int64, error)
	ListRefusalsAfter(ctx context.Context, q models.RefusalQuery, afterID int64) (rows []models.Refusal, newer bool, err error)
	NewerWindow(q models.RefusalQuery) int64
	EachRefusal(ctx context.Context, q models.RefusalQuery, fn func(*models.Refusal) error) error
	RefusalByID(ctx context.Context, id int64) (models.Refusal, error)
	RefusalValues(ctx context.Context) (models.RefusalFacets, error)
	CountRefusalsSince(ctx context.Context, since time.Time) (int64, error)
	TopRefusedHosts(ctx context.Context, since time.Time, n int) ([]models.HostCount, error)
	RefusalOverview(ctx context.Context, q models.OverviewQuery) (models.RefusalOverview, error)

	// The log's would-refuse outcome: requests report-only entries would
	// have refused.
	ListWouldRefusals(ctx context.Context, q models.RefusalQuery) ([]models.WouldRefusal, int64, error)
	EachWouldRefusal(ctx context.Context, q models.RefusalQuery, fn func(*models.WouldRefusal) error) error
	CountWouldRefusals(ctx context.Context, since time.Time) (models.WouldRefusalCounts, error)
	WouldRefusalValues(ctx context.Context) (models.RefusalFacets, error)

	// The audit trail.
	ListAudit(ctx context.Context, beforeID int64, limit int) ([]models.Audit, int64, error)
	ListAuditWhere(ctx context.Context, q models.AuditQuery) ([]models.Audit, int64, error)
	AuditFacets(ctx context.Context) (actors, actions []string, err error)

	// Sign-in and sessions.
	UserByName(ctx context.Context, name string) (models.User, error)
	CreateSession(ctx context.Context, userID int64, tokenHash, clientIP, userAgent string, now time.Time) error
	SessionUser(ctx context.Context, tokenHash string, now time.Time, idle, maxAge time.Duration) (models.Session, models.User, error)
	TouchSession(ctx context.Context, id int64, now time.Time) error
	DeleteSession(ctx context.Context, tokenHash string) error
}
