package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// usageError is a mistake in how a command was called. It exits with code
// 2 and tells the user the right form.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// newFlags returns a flag set that takes --db (env CONSOLE_DB, default
// console.db) like every command. parseArgs does the parsing, so the set
// never prints or exits on its own.
func newFlags(name string, db *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def := os.Getenv("CONSOLE_DB")
	if def == "" {
		def = "console.db"
	}
	if db != nil {
		fs.StringVar(db, "db", def, "the database: a SQLite `file`, or a postgres:// URL; CONSOLE_DB sets the default")
	}
	return fs
}

// parseArgs parses flags wherever they stand among the arguments, so that
// `console allow add a.example.com --note "why"` works as people type it.
// A "--" ends the flags, and a negative number such as -1 is a value, not
// a flag, so `console settings set reads_per_turn -1` gets the setting's
// own message about the range. It sets each flag itself rather than
// through fs.Parse, whose errors ("flag provided but not defined",
// "invalid value … parse error") speak Go rather than the command line.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(positional, args[i+1:]...), nil
		}
		if negativeNumber.MatchString(a) || !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && isHelpArg(a):
			return nil, &helpRequest{sets: []*flag.FlagSet{fs}}
		case f == nil:
			return nil, usagef("--%s is not a flag of console %s\n%s", name, fs.Name(), flagHelp(fs, "flags"))
		case isBoolFlag(f) && !hasValue:
			value = "true"
		case !hasValue && (i+1 >= len(args) || namesFlag(fs, args[i+1])):
			// "--limit --json" is a forgotten value, not a limit of "--json".
			return nil, usagef("--%s needs a value: %s", name, flagForm(f))
		case !hasValue:
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, flagValueError(f, value, err)
		}
	}
	return positional, nil
}

// namesFlag reports whether a is one of fs's flags, as --name or --name=….
func namesFlag(fs *flag.FlagSet, a string) bool {
	if !strings.HasPrefix(a, "-") || negativeNumber.MatchString(a) {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return fs.Lookup(name) != nil
}

var negativeNumber = regexp.MustCompile(`^-[0-9]`)

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagValueError words a value the flag refused. Our own flag types
// already say what is wrong; the standard ones only say "parse error".
func flagValueError(f *flag.Flag, value string, err error) error {
	if ue, ok := err.(*usageError); ok {
		return ue
	}
	if isBoolFlag(f) {
		return usagef("--%s takes no value, or =true or =false (e.g. --%s=false); %q is neither", f.Name, f.Name, value)
	}
	return usagef("--%s %q is not valid (%v); write it as %s", f.Name, value, err, flagForm(f))
}

// flagForm is how a flag is written, with an example when it has a
// default: "--db FILE, e.g. --db console.db".
func flagForm(f *flag.Flag) string {
	form := "--" + f.Name + " " + valueName(f)
	if f.DefValue != "" {
		form += ", e.g. --" + f.Name + " " + f.DefValue
	}
	return form
}

// valueName is the placeholder for a flag's value: the word in
// `backquotes` in its usage text, upper-cased, or a plain one by type.
func valueName(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "":
		return ""
	case "string":
		return "TEXT"
	case "int", "value":
		return "N"
	}
	return strings.ToUpper(name)
}

// flagHelp lists a set's flags under title, one a line. A default is
// shown only when it says something: never "false" for a switch, never
// an empty string.
func flagHelp(fs *flag.FlagSet, title string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && !(isBoolFlag(f) && f.DefValue == "false") {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(tw, "  --%s %s\t%s\n", f.Name, valueName(f), usage)
	})
	tw.Flush()
	if b.Len() == 0 {
		return ""
	}
	return title + ":\n" + b.String()
}

// boundedInt is a whole-number flag with a lower bound, refusing anything
// else with a message naming the flag and, in hint, what to give instead.
type boundedInt struct {
	n    *int
	name string
	min  int
	hint string
}

func (p boundedInt) String() string {
	if p.n == nil {
		return ""
	}
	return strconv.Itoa(*p.n)
}

func (p boundedInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return usagef("--%s %q is not a whole number; %s", p.name, s, p.hint)
	case n < p.min && p.min == 0:
		return usagef("--%s %d is negative; %s", p.name, n, p.hint)
	case n < p.min && p.min == 1:
		return usagef("--%s %d is not a positive whole number; %s", p.name, n, p.hint)
	case n < p.min:
		return usagef("--%s %d is below %d; %s", p.name, n, p.min, p.hint)
	}
	*p.n = n
	return nil
}
