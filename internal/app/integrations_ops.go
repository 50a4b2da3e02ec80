package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// errNoIntegrations is an integration change asked of an App opened
// read-only, which holds no secret box and runs no integration.
var errNoIntegrations = errors.New("integrations are not loaded in this process (it was opened read-only); run the change from `console serve` or a command that changes the configuration")

// IntegrationList is every stored integration, with the section version.
type IntegrationList struct {
	Version int64
	Rows    []models.Integration
}

// ListIntegrations reads the stored integrations. Secret header values
// are sealed in the rows; show them with DescribeHeader.
func (a *App) ListIntegrations(ctx context.Context) (IntegrationList, error) {
	v, err := a.store.Version(ctx, models.SectionIntegrations)
	if err != nil {
		return IntegrationList{}, err
	}
	rows, err := a.store.ListIntegrations(ctx)
	return IntegrationList{Version: v, Rows: rows}, err
}

// IntegrationState is one stored integration and the section version it
// was read at.
type IntegrationState struct {
	Version int64
	Row     models.Integration
}

// Integration reads the integration called name, or a *NotFoundError.
func (a *App) Integration(ctx context.Context, name string) (IntegrationState, error) {
	v, err := a.store.Version(ctx, models.SectionIntegrations)
	if err != nil {
		return IntegrationState{}, err
	}
	row, err := a.store.IntegrationByName(ctx, name)
	if err != nil {
		return IntegrationState{}, storeError(err)
	}
	return IntegrationState{Version: v, Row: row}, nil
}

// SaveIntegration asks for an integration to be created or replaced.
type SaveIntegration struct {
	Input   IntegrationInput
	Actor   string
	Version int64 // the integrations version read, or models.AnyRevision
	// ConfirmRename says the admin accepts that agents calling the old
	// name get an unknown-integration error (updates only).
	ConfirmRename bool
}

// IntegrationSaved is what a create or update stored.
type IntegrationSaved struct {
	Row     models.Integration // as stored: secrets sealed
	OldName string             // the name before an update
	Version int64
}

// Renamed reports whether an update changed the name.
func (s IntegrationSaved) Renamed() bool { return s.OldName != "" && s.OldName != s.Row.Name }

// CreateIntegration validates the input, seals its secrets, stores it
// with its audit record in one transaction and reloads, so agents can
// call it at once. Errors: *ValidationError, *DuplicateError (the name is
// taken), *ConflictError, *NotReloadedError (saved, result valid).
func (a *App) CreateIntegration(ctx context.Context, req SaveIntegration) (IntegrationSaved, error) {
	req.Input = req.Input.Normalized()
	if problems := CheckIntegration(req.Input, nil); len(problems) > 0 {
		return IntegrationSaved{}, &ValidationError{Problems: problems}
	}
	row, err := a.sealIntegration(req.Input, nil, req.Actor)
	if err != nil {
		return IntegrationSaved{}, err
	}
	rec := models.Audit{Actor: req.Actor, Action: ActionIntegrationAdd, Target: row.Name, After: DescribeIntegration(row)}
	v, err := a.store.CreateIntegration(ctx, req.Version, row, rec)
	if err != nil {
		return IntegrationSaved{}, storeError(err)
	}
	return IntegrationSaved{Row: row, Version: v}, a.reloadAfter(ctx, "integration")
}

// UpdateIntegration replaces the integration called name. A rename needs
// req.ConfirmRename; a kept secret never follows the URL to another
// origin. Errors: *NotFoundError, *ValidationError, *DuplicateError (the
// new name is taken), *ConflictError, *NotReloadedError.
func (a *App) UpdateIntegration(ctx context.Context, name string, req SaveIntegration) (IntegrationSaved, error) {
	req.Input = req.Input.Normalized()
	old, err := a.store.IntegrationByName(ctx, name)
	if err != nil {
		return IntegrationSaved{}, storeError(err)
	}
	problems := CheckIntegration(req.Input, &old)
	if req.Input.Name != old.Name && !req.ConfirmRename {
		if _, taken := (&ValidationError{Problems: problems}).Field("name"); !taken {
			problems = append(problems, Problem{Field: "name", Input: req.Input.Name, Code: ProblemRenameUnconfirmed,
				Problem: RenameWarning(old.Name), Fix: "confirm the rename"})
		}
	}
	if len(problems) > 0 {
		return IntegrationSaved{}, &ValidationError{Problems: problems}
	}
	row, err := a.sealIntegration(req.Input, &old, req.Actor)
	if err != nil {
		return IntegrationSaved{}, err
	}
	rec := models.Audit{Actor: req.Actor, Action: ActionIntegrationUpdate, Target: row.Name, Before: DescribeIntegration(old), After: DescribeIntegration(row)}
	v, err := a.store.UpdateIntegration(ctx, req.Version, old.Name, row, rec)
	if err != nil {
		return IntegrationSaved{}, storeError(err)
	}
	return IntegrationSaved{Row: row, OldName: old.Name, Version: v}, a.reloadAfter(ctx, "integration")
}

// RenameWarning is what a rename costs: agents know a tool by its name.
func RenameWarning(oldName string) string {
	return "agents calling " + oldName + " will get an unknown-integration error until they use the new name"
}

// DeleteIntegration removes the integration called name with its audit
// record and reloads, so agents no longer see it. Errors: *NotFoundError,
// *ConflictError, *NotReloadedError (deleted).
func (a *App) DeleteIntegration(ctx context.Context, name, actor string, version int64) error {
	old, err := a.store.IntegrationByName(ctx, name)
	if err != nil {
		return storeError(err)
	}
	rec := models.Audit{Actor: actor, Action: ActionIntegrationDelete, Target: old.Name, Before: DescribeIntegration(old)}
	if _, err := a.store.DeleteIntegration(ctx, version, old.Name, rec); err != nil {
		return storeError(err)
	}
	return a.reloadAfter(ctx, "integration")
}

// TestIntegration asks for a stored integration to be called once.
type TestIntegration struct {
	Name string
	// Samples are parameter values as typed; an empty one is absent.
	Samples map[string]string
	// Agent is who the call is recorded for in the refusal log, e.g.
	// console:ada or cli:ada.
	Agent string
}

// UnopenableError is an integration whose sealed secret does not open
// with this process's key, so it cannot be called.
type UnopenableError struct {
	Name string
	Err  error
}

func (e *UnopenableError) Error() string { return e.Err.Error() }
func (e *UnopenableError) Unwrap() error { return e.Err }

// TestIntegration calls the stored integration through the guard with the
// sample values, as an agent's call would go: the answer, or the refusal
// with its fix, is in the result. The Test is one call of call_integration
// by req.Agent in thread integration-test, recorded once (log line, metric
// and, if refused, refusal row) like an agent's call. Errors:
// *NotFoundError, *UnopenableError.
func (a *App) TestIntegration(ctx context.Context, req TestIntegration) (tools.IntegrationResult, error) {
	if a.integrations == nil {
		return tools.IntegrationResult{}, errNoIntegrations
	}
	row, err := a.store.IntegrationByName(ctx, req.Name)
	if err != nil {
		return tools.IntegrationResult{}, storeError(err)
	}
	def, err := OpenIntegration(row, a.secrets)
	if err != nil {
		return tools.IntegrationResult{}, &UnopenableError{Name: row.Name, Err: err}
	}
	samples := map[string]string{}
	for k, v := range req.Samples {
		if v != "" {
			samples[k] = v
		}
	}
	turn := tools.Turn{Agent: req.Agent, Thread: "integration-test", Trigger: "test " + row.Name}
	return a.integrations.Try(ctx, turn, def, samples), nil
}

// sealIntegration is the row to store: new secret values sealed, kept
// ones as they were stored.
func (a *App) sealIntegration(in IntegrationInput, old *models.Integration, actor string) (models.Integration, error) {
	if a.secrets == nil {
		return models.Integration{}, errNoIntegrations
	}
	def, kept, _ := definition(in, old)
	row := models.Integration{Name: def.Name, Description: def.Description, Method: def.Method, URLTemplate: def.URL, BodyTemplate: def.Body,
		UpdatedBy: actor, UpdatedAt: time.Now().UTC(), Headers: []models.IntegrationHeader{}, Params: []models.IntegrationParam{}}
	for _, h := range def.Headers {
		value := h.Value
		if h.Secret {
			sealed, ok := kept[h.Name]
			if !ok {
				var err error
				if sealed, err = a.secrets.Seal(h.Value); err != nil {
					return row, fmt.Errorf("sealing the secret header %s: %w", h.Name, err)
				}
			}
			value = sealed
		}
		row.Headers = append(row.Headers, models.IntegrationHeader{Name: h.Name, Value: value, Secret: h.Secret})
	}
	for _, p := range def.Params {
		row.Params = append(row.Params, models.IntegrationParam{Name: p.Name, Type: string(p.Type), Required: p.Required, Description: p.Description})
	}
	return row, nil
}
