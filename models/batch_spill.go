package models

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// spillFile is a BatchWriter's overflow on the local disk: while the
// database stalls (another process holds SQLite's write lock, a VACUUM, a
// slow volume, PostgreSQL failing over) rows that no longer fit the
// in-memory bound are appended here, one JSON line each, instead of being
// dropped; the writer drains them, in order, once the database answers.
//
// Durability: every append is one write(2) straight to the file (no
// user-space buffer), so a killed process (kill -9, OOM) loses nothing it
// spilled; the file is fsync'd every flush interval while it holds rows
// (by the writer's watchdog, batch_watchdog.go) and on Close, so a power
// loss loses at most one flush interval of spilled rows. The drain position is kept in a sidecar file (.pos) after
// every committed batch: a crash between a batch's commit and the
// position's update replays that one batch at the next start (at most
// rowsPerTx duplicate rows, never a lost one).
//
// Several processes may log to one database (serve, proxy, mcp): each
// writer holds an exclusive flock on its own file, taking the first of
// path, path.1, path.2, … that no live process holds. A file left behind
// by a killed process is therefore adopted, and replayed, by the next
// writer that starts.
type spillFile struct {
	path    string
	f       *os.File
	readOff int64 // first byte not yet committed to the database
	size    int64 // end of the last complete line appended
	rows    int64 // lines between readOff and size
	scratch bytes.Buffer
	// failAppend, set by tests only, is asked before each append of rows
	// rows and fails it with the error it returns: a disk that fills up
	// between two appends.
	failAppend func(rows int) error
	// syncFile, set by tests only, replaces the fsync: a slow disk. It
	// is read outside the writer's lock, so it is set before the file
	// holds rows.
	syncFile func(*os.File) error
}

// maxSpillCandidates bounds how many spill files a database's writers use.
const maxSpillCandidates = 16

// openSpill takes the first spill file no other process holds, creating
// it 0600, and positions it after what an earlier process already drained.
func openSpill(path string) (*spillFile, error) {
	var lastErr error
	for i := range maxSpillCandidates {
		p := path
		if i > 0 {
			p = path + "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("models: opening spill file %q: %w; check that the database's directory is writable", p, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			lastErr = err
			continue // another live process writes this one
		}
		s := &spillFile{path: p, f: f}
		if err := s.recover(); err != nil {
			f.Close()
			return nil, err
		}
		if err := s.adoptOrphans(path); err != nil {
			f.Close()
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("models: all %d spill files next to %q are held by running processes (%v); stop one of them", maxSpillCandidates, path, lastErr)
}

// recover reads the drain position left by an earlier process and counts
// the rows still to replay. A torn last line (a power loss mid-append;
// kill -9 cannot tear a single write) is cut off: it cannot be decoded, and
// keeping it would wedge the drain.
func (s *spillFile) recover() error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("models: reading spill file %q: %w", s.path, err)
	}
	s.size = st.Size()
	if b, err := os.ReadFile(s.path + ".pos"); err == nil {
		if off, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && off >= 0 && off <= s.size {
			s.readOff = off
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("models: reading spill position %q: %w", s.path+".pos", err)
	}
	if s.size == s.readOff {
		return s.reset()
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, s.readOff, s.size-s.readOff), 1<<16)
	end := s.readOff
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // io.EOF: a final line without '\n' is torn
		}
		end += int64(len(line))
		s.rows++
	}
	if end != s.size {
		if err := s.f.Truncate(end); err != nil {
			return fmt.Errorf("models: cutting a torn line off spill file %q: %w", s.path, err)
		}
		s.size = end
	}
	return nil
}

// adoptOrphans moves into s the rows of every other spill file of the
// database that no live process holds (one a killed process left under a
// name no writer would otherwise take again), so nothing waits for a
// particular number of processes to run at once to be replayed.
func (s *spillFile) adoptOrphans(path string) error {
	for i := range maxSpillCandidates {
		p := path
		if i > 0 {
			p = path + "." + strconv.Itoa(i)
		}
		if p == s.path {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("models: opening spill file %q: %w", p, err)
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // a live process's
			continue
		}
		err = s.adopt(&spillFile{path: p, f: f})
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// adopt appends other's undrained lines to s and empties other.
func (s *spillFile) adopt(other *spillFile) error {
	if err := other.recover(); err != nil || other.rows == 0 {
		return err
	}
	n, err := io.Copy(s.f, io.NewSectionReader(other.f, other.readOff, other.pending()))
	if err != nil {
		_ = s.f.Truncate(s.size)
		return fmt.Errorf("models: taking over spill file %q: %w", other.path, err)
	}
	s.size += n
	s.rows += other.rows
	if err := s.f.Sync(); err != nil {
		return err
	}
	return other.reset()
}

// spillAppend writes rows as JSON lines in one write(2).
func spillAppend[T any](s *spillFile, rows ...T) error {
	return spillAppendBlocks(s, rows)
}

// spillAppendBlocks is spillAppend of the rows of blocks, in order, in one
// write: the writer's queue spills as it is kept (rowQueue), without a
// copy of it made first, when memory is at its bound.
func spillAppendBlocks[T any](s *spillFile, blocks ...[]T) error {
	s.scratch.Reset()
	enc := json.NewEncoder(&s.scratch)
	rows := 0
	for _, block := range blocks {
		for i := range block {
			if err := enc.Encode(&block[i]); err != nil {
				return fmt.Errorf("models: encoding a row for spill file %q: %w", s.path, err)
			}
		}
		rows += len(block)
	}
	var n int
	var err error
	if s.failAppend != nil {
		err = s.failAppend(rows)
	}
	if err == nil {
		n, err = s.f.Write(s.scratch.Bytes())
	}
	if err != nil {
		// A short write leaves a torn line; cut it so the file stays whole.
		_ = s.f.Truncate(s.size)
		return fmt.Errorf("models: appending to spill file %q: %w", s.path, err)
	}
	s.size += int64(n)
	s.rows += int64(rows)
	if s.scratch.Cap() > 1<<20 {
		s.scratch = bytes.Buffer{} // do not keep a huge burst's buffer
	}
	return nil
}

// spillRead decodes up to max rows from off, stopping at end (a size
// snapshot taken under the writer's lock, so only complete lines are
// read). It returns the rows and the offset after the last one. An
// undecodable line is never part of a batch: one after decoded rows ends
// the batch before it; one at off comes back alone with the undecodable
// lines right after it (at most max), as bad, with no rows and the
// offset after them, for the writer to move aside (batch_badline.go).
func spillRead[T any](s *spillFile, off, end int64, max int) (rows []T, next int64, bad int, err error) {
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, off, end-off), 1<<16)
	var badErr error
	for len(rows)+bad < max {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, off, 0, fmt.Errorf("models: reading spill file %q: %w", s.path, err)
		}
		var row T
		if err := json.Unmarshal(line, &row); err != nil {
			if len(rows) > 0 {
				break // written first; the line comes back at the next read
			}
			bad++
			badErr = err
		} else if bad > 0 {
			break // the run of undecodable lines ends here
		} else {
			rows = append(rows, row)
		}
		off += int64(len(line))
	}
	if bad > 0 {
		return nil, off, bad, badErr
	}
	return rows, off, 0, nil
}

// committed records that the rows up to off are in the database.
func (s *spillFile) committed(off int64, rows int) error {
	s.readOff = off
	s.rows -= int64(rows)
	tmp := s.path + ".pos.tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(off, 10)), 0o600); err != nil {
		return fmt.Errorf("models: saving spill position: %w", err)
	}
	return os.Rename(tmp, s.path+".pos")
}

// truncate takes back what was appended after the file held size bytes
// and rows rows.
func (s *spillFile) truncate(size, rows int64) error {
	if err := s.f.Truncate(size); err != nil {
		return fmt.Errorf("models: cutting spill file %q back to %d bytes: %w", s.path, size, err)
	}
	s.size, s.rows = size, rows
	return nil
}

// reset empties a fully drained file, so it never grows past one stall.
func (s *spillFile) reset() error {
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("models: emptying drained spill file %q: %w", s.path, err)
	}
	s.readOff, s.size, s.rows = 0, 0, 0
	if err := os.Remove(s.path + ".pos"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// pending is the bytes still to drain.
func (s *spillFile) pending() int64 { return s.size - s.readOff }

func (s *spillFile) sync() error {
	if s.syncFile != nil {
		return s.syncFile(s.f)
	}
	return s.f.Sync()
}

// close syncs and releases the file (and its lock). A file still holding
// rows stays for the next start. An empty one stays too, empty: removing
// it could race a process that opened the name just before and would then
// lock, and spill into, an unlinked file.
func (s *spillFile) close() error {
	return errors.Join(s.f.Sync(), s.f.Close())
}
