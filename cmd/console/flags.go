package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// usageError is a mistake in how a command was called. It exits with code
// 2 and tells the user the right form.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// newFlags returns a flag set that reports errors instead of exiting, and
// that takes --db (env CONSOLE_DB, default console.db) like every command.
func newFlags(name string, db *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def := os.Getenv("CONSOLE_DB")
	if def == "" {
		def = "console.db"
	}
	if db != nil {
		fs.StringVar(db, "db", def, "the SQLite database file (env CONSOLE_DB)")
	}
	return fs
}

// parseArgs parses flags wherever they stand among the arguments, so that
// `console allow add a.example.com --note "why"` works as people type it.
// A "--" ends the flags, and a negative number such as -1 is a value, not
// a flag, so `console settings set reads_per_turn -1` gets the setting's
// own message about the range.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional, flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case negativeNumber.MatchString(a) || !strings.HasPrefix(a, "-") || a == "-":
			positional = append(positional, a)
		default:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, usagef("%s", flagHelp(fs))
		}
		return nil, usagef("%v\n%s", err, flagHelp(fs))
	}
	return append(positional, fs.Args()...), nil
}

var negativeNumber = regexp.MustCompile(`^-[0-9]`)

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func flagHelp(fs *flag.FlagSet) string {
	var out string
	fs.VisitAll(func(f *flag.Flag) {
		out += fmt.Sprintf("  --%s\t%s (default %q)\n", f.Name, f.Usage, f.DefValue)
	})
	if out == "" {
		return ""
	}
	return "flags:\n" + out
}

// positiveInt is a flag value that refuses zero and negatives with a
// message naming the flag.
type positiveInt struct {
	n    *int
	name string
}

func (p positiveInt) String() string {
	if p.n == nil {
		return ""
	}
	return strconv.Itoa(*p.n)
}

func (p positiveInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("--%s %q is not a positive whole number", p.name, s)
	}
	*p.n = n
	return nil
}
