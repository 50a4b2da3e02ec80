package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

const settingsUsage = "settings list [--json]\nsettings set KEY VALUE"

func runSettings(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("settings", &db)
	fs.BoolVar(&asJSON, "json", false, "settings list only: print the settings as JSON, values in full")
	sub, rest, err := parseSubcommand(fs, args, settingsUsage)
	if err != nil {
		return err
	}
	switch sub {
	case "list", "ls":
		if len(rest) != 0 {
			return usagef("settings list takes no arguments")
		}
		return settingsList(ctx, e, db, asJSON)
	case "set":
		switch {
		case len(rest) > 2:
			return usagef("settings set takes one key and one value, but got %d arguments (%s); quote a value containing spaces or commas, e.g. console settings set ports \"8080, 8443\"", len(rest), strings.Join(rest, " "))
		case len(rest) != 2:
			return usagef("give a key and a value: console settings set timeout 30s (keys: see console settings list)")
		}
		return settingsSet(ctx, e, db, rest[0], rest[1])
	}
	return usagef("unknown subcommand %q: %s", sub, oneLineUsage(settingsUsage))
}

// settingJSON is one setting as `settings list --json` prints it.
type settingJSON struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Default string `json:"default"`
	Label   string `json:"label"`
	Help    string `json:"help"`
}

func settingsList(ctx context.Context, e env, db string, asJSON bool) error {
	a, err := openToRead(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.StoredSettings(ctx)
	if err != nil {
		return err
	}
	if st.Invalid != nil {
		return fmt.Errorf("the stored settings are invalid (%w); fix them with `console settings set`", st.Invalid)
	}
	s := st.Settings
	defaults := tools.DefaultSettings()
	rows := make([]settingJSON, len(tools.SettingDefs))
	for i, d := range tools.SettingDefs {
		rows[i] = settingJSON{Key: d.Key, Value: s.Value(d.Key), Default: defaults.Value(d.Key), Label: d.Label, Help: d.Help}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rows)
	}
	printSettings(e.stdout, rows)
	return nil
}

// settingCellWidth caps the value and default columns. Without it one long
// value (the user agent) would pad every row of the table to its width.
const settingCellWidth = 32

// printSettings prints one line per setting (key, value, default) with
// its label and help on an indented line below, where long text may run
// on without widening the table.
func printSettings(w io.Writer, rows []settingJSON) {
	keyW, valW := len("KEY"), len("VALUE")
	for _, r := range rows {
		keyW = max(keyW, utf8.RuneCountInString(r.Key))
		valW = max(valW, utf8.RuneCountInString(cell(r.Value)))
	}
	cut := false
	pad := func(s string, width int) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	fmt.Fprintf(w, "%s  %s  DEFAULT\n", pad("KEY", keyW), pad("VALUE", valW))
	for _, r := range rows {
		v, def := cell(r.Value), cell(r.Default)
		cut = cut || v != dash(r.Value) || def != dash(r.Default)
		fmt.Fprintf(w, "%s  %s  %s\n", pad(r.Key, keyW), pad(v, valW), def)
		fmt.Fprintf(w, "    %s: %s\n", r.Label, r.Help)
	}
	if cut {
		fmt.Fprintf(w, "\nValues longer than %d characters end in …; console settings list --json shows them in full.\n", settingCellWidth)
	}
}

// cell is a value as the table shows it: "-" when empty, cut short with
// an ellipsis when longer than settingCellWidth.
func cell(v string) string {
	if utf8.RuneCountInString(v) <= settingCellWidth {
		return dash(v)
	}
	return string([]rune(v)[:settingCellWidth-1]) + "…"
}

func settingsSet(ctx context.Context, e env, db, key, value string) error {
	a, err := openForChange(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	saved, err := a.SetSettings(ctx, app.SetSettings{Values: map[string]string{key: value}, Actor: actor(), Version: models.AnyRevision})
	var invalid *app.ValidationError
	if errors.As(err, &invalid) {
		p := invalid.Problems[0]
		if p.Code == app.ProblemSettingsTogether {
			return usagef("%s does not work with the other settings (%s); nothing was changed", key, p.Problem)
		}
		if p.Input != "" && p.Input != key {
			return usagef("setting %s = %q: %s; %s; nothing was changed", p.Field, p.Input, p.Problem, p.Fix)
		}
		return usagef("%s; %s; nothing was changed", p.Problem, p.Fix)
	}
	if err != nil && !isNotReloaded(err) {
		return err
	}
	if len(saved.Changes) == 0 {
		d, _ := tools.LookupSetting(key)
		st, serr := a.StoredSettings(ctx)
		if serr != nil {
			return serr
		}
		fmt.Fprintf(e.stdout, "%s is already %s; nothing changed\n", d.Key, st.Values[d.Key])
		return nil
	}
	for _, c := range saved.Changes {
		fmt.Fprintf(e.stdout, "%s = %s\n", c.Key, c.After)
	}
	return notReloadedWarning(e, err)
}
