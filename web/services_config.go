package web

import (
	"context"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// The configuration pages (Outbound web access, Settings, HTTP
// integrations) change nothing themselves: they parse the form, call one
// of these operations and render its typed answer. *app.App implements
// them; validation, the audit record, the transaction and the reload of
// the running guard all happen there, the same way for the command line.

// AllowlistService reads and changes the allowlist.
type AllowlistService interface {
	Allowlist(ctx context.Context) (app.AllowlistState, error)
	AddEntries(ctx context.Context, req app.AddEntries) (app.EntriesAdded, error)
	RemoveEntries(ctx context.Context, req app.RemoveEntries) (app.EntriesRemoved, error)
	SetEntryNote(ctx context.Context, req app.SetEntryNote) (int64, error)
}

// SettingsService reads and changes the settings.
type SettingsService interface {
	StoredSettings(ctx context.Context) (app.SettingsState, error)
	SetSettings(ctx context.Context, req app.SetSettings) (app.SettingsSaved, error)
}

// IntegrationService reads, changes and tests the HTTP integrations.
type IntegrationService interface {
	ListIntegrations(ctx context.Context) (app.IntegrationList, error)
	Integration(ctx context.Context, name string) (app.IntegrationState, error)
	CreateIntegration(ctx context.Context, req app.SaveIntegration) (app.IntegrationSaved, error)
	UpdateIntegration(ctx context.Context, name string, req app.SaveIntegration) (app.IntegrationSaved, error)
	DeleteIntegration(ctx context.Context, name, actor string, version int64) error
	TestIntegration(ctx context.Context, req app.TestIntegration) (tools.IntegrationResult, error)
}

// ConfigService is every configuration operation the console offers.
type ConfigService interface {
	AllowlistService
	SettingsService
	IntegrationService
}
