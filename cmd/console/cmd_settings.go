package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

func init() {
	commands["settings"] = command{"show and change limits: settings list, settings set KEY VALUE", runSettings}
}

func runSettings(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usagef("console settings list | console settings set KEY VALUE")
	}
	var db string
	fs := newFlags("settings", &db)
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "list", "ls":
		if len(rest) != 0 {
			return usagef("settings list takes no arguments")
		}
		return settingsList(ctx, e, db)
	case "set":
		if len(rest) != 2 {
			return usagef("give a key and a value: console settings set timeout 30s (keys: see console settings list)")
		}
		return settingsSet(ctx, e, db, rest[0], rest[1])
	}
	return usagef("unknown subcommand %q: console settings list | console settings set KEY VALUE", args[0])
}

func settingsList(ctx context.Context, e env, db string) error {
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	values, err := store.Settings(ctx)
	if err != nil {
		return err
	}
	s, err := tools.ParseSettings(values)
	if err != nil {
		return err
	}
	defaults := tools.DefaultSettings()
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tDEFAULT\tMEANING")
	for _, d := range tools.SettingDefs {
		v, def := s.Value(d.Key), defaults.Value(d.Key)
		if v == "" {
			v = "-"
		}
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Key, v, def, d.Help)
	}
	return tw.Flush()
}

func settingsSet(ctx context.Context, e env, db, key, value string) error {
	v, err := tools.NormalizeSetting(key, value)
	if err != nil {
		return usagef("%v; nothing was changed", err)
	}
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	values, err := store.Settings(ctx)
	if err != nil {
		return err
	}
	old, err := tools.ParseSettings(values)
	if err != nil {
		return err
	}
	if _, err := store.SetSettings(ctx, models.AnyRevision, actor(), map[string]string{key: v}); err != nil {
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "settings.set", Target: key, Before: old.Value(key), After: v}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s = %s\n", key, v)
	return nil
}
