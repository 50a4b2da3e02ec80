package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/outboundhq/outbound/tools"
)

// A person runs `console tool` at a terminal, so a side effect that needs
// confirmation (tools.ConfirmSideEffect) is asked there: the action in
// full, then y/N, where anything but y or yes is no. Without a terminal
// on standard input nobody can answer, and the step is refused.

// terminalConfirmer asks on out and reads the answer from in, when tty
// says in is a person's terminal.
func terminalConfirmer(in io.Reader, out io.Writer, tty bool) tools.Confirmer {
	if !tty {
		return tools.NoPerson("Standard input is not a terminal, so nobody can be asked.",
			"Run the command in a terminal and answer y to confirm, or do this step yourself.")
	}
	lines := bufio.NewReader(in)
	return func(_ context.Context, a tools.SideEffect) tools.Confirmation {
		fmt.Fprintf(out, "%s\nAllow it? [y/N] ", safeText(tools.ConfirmationQuestion(a)))
		line, _ := lines.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return tools.Confirmation{Answer: tools.Accepted}
		}
		return tools.Confirmation{Answer: tools.Declined}
	}
}

// isTerminal reports whether r is a terminal (a character device such as
// /dev/tty, not a pipe or a file).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
