package main

import "os/user"

// actor names who made a change from the command line, for the entry's
// "added by" and the audit trail.
func actor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}
