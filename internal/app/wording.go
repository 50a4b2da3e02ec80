package app

import (
	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools"
)

// ConsoleWording is how the console names its controls in a refusal's
// fix: the menu path of the allowlist, and each setting by its label and
// key as the Settings page shows them. The guard speaks neutrally on its
// own; the product passes these words in, so a fix leads to the control.
var ConsoleWording = guard.Wording{
	Allowlist: "under Integrations → Outbound web access",
	Setting:   settingPlace,
}

// settingPlace is "Settings → Max bytes (max_bytes)" for a known key.
func settingPlace(key string) string {
	def, err := tools.LookupSetting(key)
	if err != nil {
		return ""
	}
	return "Settings → " + def.Label + " (" + def.Key + ")"
}
