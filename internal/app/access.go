package app

import (
	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// These accessors hand the wired parts to the front ends that run them
// (the tool servers, the proxy, the web console's read paths). Changes go
// through the App's operations, never straight to the store.

// Store is the database, for reads.
func (a *App) Store() *models.Store { return a.store }

// Guard is the running guard.
func (a *App) Guard() *guard.Guard { return a.guard }

// Integrations runs the stored integrations; nil on a read-only App.
func (a *App) Integrations() *tools.Integrations { return a.integrations }

// Secrets seals integration secrets; nil on a read-only App.
func (a *App) Secrets() *tools.SecretBox { return a.secrets }
