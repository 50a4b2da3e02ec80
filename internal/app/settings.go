package app

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// SettingsState is the stored settings as read at one moment.
type SettingsState struct {
	Version int64
	// Settings are the parsed values over the defaults; all defaults when
	// Invalid is set, so a page can still show a form that fixes them.
	Settings tools.Settings
	// Values is every key's text as Settings holds it, in canonical form.
	Values map[string]string
	// Invalid is why the stored values do not parse, or nil.
	Invalid error
	stored  map[string]string
}

// current is key's value as a change compares with it and the audit
// trail records as "before": the canonical text in force, or, when the
// stored values do not parse, the text stored for key (the change may be
// its fix).
func (st SettingsState) current(key string) string {
	if st.Invalid == nil {
		return st.Values[key]
	}
	raw, ok := st.stored[key]
	if !ok {
		return st.Values[key]
	}
	if v, err := tools.NormalizeSetting(key, raw); err == nil {
		return v
	}
	return raw
}

// StoredSettings reads the settings and their version. Stored values that
// do not parse are reported in Invalid rather than as an error, so that
// the page and the command that fix them still work.
func (a *App) StoredSettings(ctx context.Context) (SettingsState, error) {
	// The version is read first: if a change lands between the two reads,
	// a save based on this state is refused as a conflict instead of
	// overwriting it unseen.
	v, err := a.store.Version(ctx, models.SectionSettings)
	if err != nil {
		return SettingsState{}, err
	}
	raw, err := a.store.Settings(ctx)
	if err != nil {
		return SettingsState{}, err
	}
	s, perr := tools.ParseSettings(raw)
	return SettingsState{Version: v, Settings: s, Values: s.Values(), Invalid: perr, stored: raw}, nil
}

// SetSettings asks for settings to change.
type SetSettings struct {
	// Values maps keys (any case: MAX_BYTES is max_bytes) to their new
	// text; a key whose value is already in force is left alone.
	Values  map[string]string
	Actor   string
	Version int64 // the settings version read, or models.AnyRevision
}

// SettingChange is one setting that changed, in canonical text.
type SettingChange struct {
	Key, Before, After string
}

// SettingsSaved is what a save changed, in the order settings are listed;
// empty when every value was already in force (nothing was stored).
type SettingsSaved struct {
	Changes []SettingChange
	Version int64
}

// SetSettings validates every value with the tools' settings parser, each
// alone and all together, stores those that differ with one audit record
// each in one transaction, and reloads the running guard. Errors:
// *ValidationError (one Problem per bad key, Field = the key; or one with
// ProblemSettingsTogether), *ConflictError, *NotReloadedError (saved,
// result valid).
func (a *App) SetSettings(ctx context.Context, req SetSettings) (SettingsSaved, error) {
	st, err := a.StoredSettings(ctx)
	if err != nil {
		return SettingsSaved{}, err
	}
	changed, verr := checkSettings(st, req.Values)
	if verr != nil {
		return SettingsSaved{}, verr
	}
	res := SettingsSaved{Version: st.Version}
	if len(changed) == 0 {
		return res, nil
	}
	values := make(map[string]string, len(changed))
	records := make([]models.Audit, len(changed))
	for i, c := range changed {
		values[c.Key] = c.After
		records[i] = models.Audit{Actor: req.Actor, Action: ActionSettingsSet, Target: c.Key, Before: c.Before, After: c.After}
	}
	v, err := a.store.SetSettings(ctx, req.Version, req.Actor, values, records...)
	if err != nil {
		return SettingsSaved{}, storeError(err)
	}
	res.Changes, res.Version = changed, v
	return res, a.reloadAfter(ctx, "settings")
}

// checkSettings validates the requested values against st and returns
// those that change, in SettingDefs order.
func checkSettings(st SettingsState, values map[string]string) ([]SettingChange, *ValidationError) {
	var problems []Problem
	canonical := map[string]string{}
	for key, value := range values {
		d, err := tools.LookupSetting(key)
		if err != nil {
			problems = append(problems, splitProblem(key, key, err))
			continue
		}
		if _, twice := canonical[d.Key]; twice {
			problems = append(problems, Problem{Field: d.Key, Input: key, Problem: "the setting " + d.Key + " is given twice", Fix: "give it once"})
			continue
		}
		v, err := tools.NormalizeSetting(d.Key, value)
		if err != nil {
			var se *tools.SettingError
			if errors.As(err, &se) {
				err = se.Err
			}
			problems = append(problems, splitProblem(d.Key, value, err))
			continue
		}
		canonical[d.Key] = v
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return nil, &ValidationError{Problems: problems}
	}
	var changed []SettingChange
	merged := map[string]string{}
	for _, d := range tools.SettingDefs {
		merged[d.Key] = st.current(d.Key)
		v, ok := canonical[d.Key]
		if !ok || v == st.current(d.Key) {
			continue
		}
		changed = append(changed, SettingChange{Key: d.Key, Before: st.current(d.Key), After: v})
		merged[d.Key] = v
	}
	if len(changed) == 0 {
		return nil, nil
	}
	// Each value is valid alone; check them together, as the guard will.
	if _, err := tools.ParseSettings(merged); err != nil {
		return nil, &ValidationError{Problems: []Problem{{Code: ProblemSettingsTogether, Problem: err.Error(),
			Fix: "change the values so that they fit together"}}}
	}
	return changed, nil
}

// splitProblem turns a parser's "what is wrong; how to fix it" into a
// Problem about field.
func splitProblem(field, input string, err error) Problem {
	problem, fix, _ := strings.Cut(err.Error(), "; ")
	return Problem{Field: field, Input: input, Problem: problem, Fix: fix}
}

// sortProblems puts settings problems in the order settings are listed,
// unknown keys last, so messages do not depend on map order.
func sortProblems(ps []Problem) {
	rank := func(p Problem) int {
		for i, d := range tools.SettingDefs {
			if d.Key == p.Field {
				return i
			}
		}
		return len(tools.SettingDefs)
	}
	slices.SortFunc(ps, func(x, y Problem) int {
		return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(x.Field, y.Field))
	})
}
