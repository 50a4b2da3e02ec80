package app

import (
	"context"

	"github.com/outboundhq/outbound/tools"
)

// readIntegrations reads the stored integrations for the tools (which
// Reload hands them to, updating every MCP server's tool list). An
// integration whose secret does not open (a changed key) is left out and
// logged, so that one bad secret never stops the policy or the other
// integrations from loading.
func (a *App) readIntegrations(ctx context.Context) ([]tools.Integration, error) {
	rows, err := a.store.ListIntegrations(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]tools.Integration, 0, len(rows))
	for _, row := range rows {
		in, err := OpenIntegration(row, a.secrets)
		if err != nil {
			a.log.Error("integration left out", "integration", row.Name, "err", err)
			continue
		}
		list = append(list, in)
	}
	return list, nil
}
