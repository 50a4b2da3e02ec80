package app

import (
	"fmt"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// OpenIntegration turns a stored integration into the tool's definition,
// opening its sealed header values with box. The console's Test button
// and the process that serves the tools both run what this returns.
func OpenIntegration(row models.Integration, box *tools.SecretBox) (tools.Integration, error) {
	in := tools.Integration{Name: row.Name, Description: row.Description, Method: row.Method, URL: row.URLTemplate, Body: row.BodyTemplate}
	for _, h := range row.Headers {
		value := h.Value
		if h.Secret {
			v, err := box.Open(h.Value)
			if err != nil {
				return tools.Integration{}, fmt.Errorf("integration %s, header %s: %w", row.Name, h.Name, err)
			}
			value = v
		}
		in.Headers = append(in.Headers, tools.IntegrationHeader{Name: h.Name, Value: value, Secret: h.Secret})
	}
	for _, p := range row.Params {
		in.Params = append(in.Params, tools.IntegrationParam{Name: p.Name, Type: tools.ParamType(p.Type), Required: p.Required, Description: p.Description})
	}
	return in, nil
}
