package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Staged is a results directory being written. Files go into Path, a hidden
// directory beside the target named .<target>.partial-<pid>-<random>; Commit
// puts it in the target's place, Abort removes it. Until Commit the target
// is untouched, so a run that fails, crashes or is killed never leaves a
// directory that looks complete, and never mixes its files with an earlier
// run's.
type Staged struct {
	target, tmp string
	done        bool
}

// partialTag and oldTag name the staging and moved-aside directories:
// .<base>.partial-<pid>-<random> and .<base>.old-<pid>-<random>.
const (
	partialTag = ".partial-"
	oldTag     = ".old-"
)

// StageDir creates the staging directory for target (a results directory,
// created or replaced by Commit), creating target's parent if missing: the
// results path is made, and shown writable, before a run starts. It removes
// the staging directories that runs killed earlier left beside target (those
// whose process is gone). A target that exists and is not a directory is an
// error.
func StageDir(target string) (*Staged, error) {
	target = filepath.Clean(target)
	base := filepath.Base(target)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return nil, fmt.Errorf("report: results directory %q: want a directory name", target)
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("report: results directory: %w", err)
	}
	if st, err := os.Stat(target); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("report: results directory %s exists and is not a directory", target)
	}
	removeStale(parent, base)
	tmp, err := os.MkdirTemp(parent, "."+base+partialTag+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("report: results directory %s not writable: %w", parent, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("report: results directory: %w", err)
	}
	return &Staged{target: target, tmp: tmp}, nil
}

// Path is the staging directory: write the run's files here.
func (s *Staged) Path() string { return s.tmp }

// Target is the directory Commit fills.
func (s *Staged) Target() string { return s.target }

// Commit puts the staging directory in the target's place: an existing
// target is first moved aside (renamed to .<target>.old-...), the staging
// directory renamed to the target, and the old one removed. Renames are
// atomic: at every instant the target is either the old run whole, absent,
// or the new run whole.
func (s *Staged) Commit() error {
	if s.done {
		return fmt.Errorf("report: %s: committed or aborted already", s.target)
	}
	s.done = true
	old := ""
	if _, err := os.Lstat(s.target); err == nil {
		f, err := os.MkdirTemp(filepath.Dir(s.target), "."+filepath.Base(s.target)+oldTag+strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			return fmt.Errorf("report: move %s aside: %w", s.target, err)
		}
		os.Remove(f)
		if err := os.Rename(s.target, f); err != nil {
			return fmt.Errorf("report: move %s aside: %w (the new results are in %s)", s.target, err, s.tmp)
		}
		old = f
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("report: %w (the new results are in %s)", err, s.tmp)
	}
	if err := os.Rename(s.tmp, s.target); err != nil {
		if old != "" {
			os.Rename(old, s.target)
		}
		return fmt.Errorf("report: %w (the new results are in %s)", err, s.tmp)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("report: remove the replaced results: %w", err)
		}
	}
	return nil
}

// Abort removes the staging directory (after Commit it does nothing).
func (s *Staged) Abort() {
	if !s.done {
		s.done = true
		os.RemoveAll(s.tmp)
	}
}

// removeStale removes, in parent, the staging and moved-aside directories of
// base whose process no longer runs.
func removeStale(parent, base string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "."+base)
		if !ok || !e.IsDir() {
			continue
		}
		var tail string
		if tail, ok = strings.CutPrefix(rest, partialTag); !ok {
			if tail, ok = strings.CutPrefix(rest, oldTag); !ok {
				continue
			}
		}
		pidText, _, _ := strings.Cut(tail, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// processAlive reports whether a process with this id runs (or may run: any
// answer but "no such process").
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
