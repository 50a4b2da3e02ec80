package models

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// MoveSpill moves the rows still to replay of the spill files at from
// (from, from.1, …) that no live process holds into a spill file at to,
// where the next writer replays them. It is for a spill file whose name
// changed between releases: left under the old name, its rows would wait
// for a writer that never opens it again. A file a live process holds is
// left alone (that process replays it); with no file at from, nothing
// is opened.
func MoveSpill(from, to string) error {
	if from == to || !anySpillAt(from) {
		return nil
	}
	s, err := openSpill(to)
	if err != nil {
		return err
	}
	return errors.Join(s.adoptOrphans(from), s.close())
}

// anySpillAt reports whether any spill file candidate at path exists.
func anySpillAt(path string) bool {
	for i := range maxSpillCandidates {
		p := path
		if i > 0 {
			p = path + "." + strconv.Itoa(i)
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
