package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ccbed/ccbed/config"
)

// Staged is a results directory being written. Files go into Path, a hidden
// directory beside the target named .<target>.partial-<pid>-<random>; Commit
// puts it in the target's place, Abort removes it. Until Commit the target
// is untouched, so a run that fails, crashes or is killed never leaves a
// directory that looks complete, and never mixes its files with an earlier
// run's.
type Staged struct {
	target, tmp string
	// fresh (StageRun): Commit never replaces anything; it takes the first
	// of target, target-2, target-3, ... that does not exist.
	fresh bool
	done  bool
}

// partialTag and oldTag name the staging and moved-aside directories:
// .<base>.partial-<pid>-<random> and .<base>.old-<pid>-<random>.
const (
	partialTag = ".partial-"
	oldTag     = ".old-"
)

// RunIDLayout is the time part of a run's directory name (RunID): UTC,
// sortable as text, no character a shell or a file system minds.
const RunIDLayout = "20060102-150405"

// RunID names a run's directory in its experiment's: the UTC time it
// started, to the second, and its seed ("20261127-172512-seed1"). Two runs
// that would share it (the same second and seed) are told apart by
// StageRun's Commit (-2, -3, ...).
func RunID(started time.Time, seed uint64) string {
	return started.UTC().Format(RunIDLayout) + "-seed" + strconv.FormatUint(seed, 10)
}

// StageRun stages a new run's directory in parent (an experiment's
// directory, made if missing; the staging directories that killed runs left
// in it are removed), to be named id by Commit: the first of id,
// id-2, id-3, ... that does not exist, taken by a rename that never replaces
// (renameat2 RENAME_NOREPLACE). So runs in sequence or at once, by one
// process or several, each keep their own directory, and nothing that was
// there is moved or removed. Target is the name taken, after Commit.
func StageRun(parent, id string) (*Staged, error) {
	if err := config.Name(id); err != nil {
		return nil, fmt.Errorf("report: run id %v", err)
	}
	// parent is the experiment's own directory: what killed runs left
	// there, under any run id, goes.
	removeStale(parent, "")
	st, err := StageDir(filepath.Join(parent, id))
	if err != nil {
		return nil, err
	}
	st.fresh = true
	return st, nil
}

// StageDir creates the staging directory for target (a results directory,
// created or replaced by Commit), creating target's parent if missing: the
// results path is made, and shown writable, before a run starts. It removes
// the staging directories that runs killed earlier left in target's parent
// (those whose process is gone). A target that exists and is not a
// directory is an error.
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

// Target is the directory Commit fills (for StageRun, the name it took
// once Commit has returned).
func (s *Staged) Target() string { return s.target }

// maxRunSuffix bounds the names StageRun's Commit tries (id-2 .. id-N).
const maxRunSuffix = 1000

// Commit puts the staging directory in the target's place. A StageRun
// target is never replaced: Commit takes the first free name. A StageDir
// target that exists is replaced only when it is empty, or a results
// directory (it holds a summary.json): it is moved aside (renamed to .<target>.old-...),
// the staging directory renamed to the target, and the old one removed.
// Renames are atomic: at every instant the target is either the old run
// whole, absent, or the new run whole. Any other directory in the way is an
// error, and is left as it is: a run never removes what it did not write.
func (s *Staged) Commit() error {
	if s.done {
		return fmt.Errorf("report: %s: committed or aborted already", s.target)
	}
	s.done = true
	if s.fresh {
		return s.commitFresh()
	}
	old := ""
	if _, err := os.Lstat(s.target); err == nil && isEmptyDir(s.target) {
		// Nothing to lose: os.Remove removes only an empty directory.
		if err := os.Remove(s.target); err != nil {
			return fmt.Errorf("report: %w (the new results are in %s)", err, s.tmp)
		}
	} else if err == nil {
		if _, err := os.Lstat(filepath.Join(s.target, SummaryFile)); err != nil {
			return fmt.Errorf("report: %s exists and is not a results directory (no %s): not replaced (the new results are in %s)", s.target, SummaryFile, s.tmp)
		}
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

// isEmptyDir reports whether dir is a directory with nothing in it.
func isEmptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		return false
	}
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// commitFresh renames the staging directory to the first free name of
// target, target-2, ...; a rename that would replace anything fails.
func (s *Staged) commitFresh() error {
	base := s.target
	for k := 1; k <= maxRunSuffix; k++ {
		name := base
		if k > 1 {
			name = base + "-" + strconv.Itoa(k)
		}
		err := renameNoReplace(s.tmp, name)
		if err == nil {
			s.target = name
			return nil
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			return fmt.Errorf("report: %w (the new results are in %s)", err, s.tmp)
		}
	}
	return fmt.Errorf("report: %s and %d more names after it are taken (the new results are in %s)", base, maxRunSuffix-1, s.tmp)
}

// renameNoReplace renames from to to, failing with an error that is
// fs.ErrExist when to exists. renameat2's RENAME_NOREPLACE makes it one
// atomic step; on a file system without it, an Lstat and a rename (which
// never replaces a directory that holds anything) stand in.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return os.Rename(from, to)
}

// Abort removes the staging directory (after Commit it does nothing).
func (s *Staged) Abort() {
	if !s.done {
		s.done = true
		os.RemoveAll(s.tmp)
	}
}

// removeStale removes, in parent, the staging and moved-aside directories of
// base (.<base>.partial-<pid>-<random>, .<base>.old-<pid>-<random>), or of
// any name when base is "", whose process no longer runs. A staging
// directory that holds a summary.json is a streaming run that was killed
// (its rows up to the last flush and a summary that says it did not finish):
// it is kept, made visible as <name>-killed (keepKilled).
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
		if base == "" { // .<name>.partial-...: the tag follows the name
			if i := strings.LastIndex(rest, partialTag); i > 0 {
				rest = rest[i:]
			} else if i := strings.LastIndex(rest, oldTag); i > 0 {
				rest = rest[i:]
			}
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
		dir := filepath.Join(parent, e.Name())
		if strings.HasPrefix(rest, partialTag) && keepKilled(parent, dir) {
			continue
		}
		os.RemoveAll(dir)
	}
}

// keepKilled renames the staging directory dir of a killed run that holds a
// summary.json to <name>-killed in parent (-killed-2, -3, ... when taken),
// name being the run id it was staged for, and reports whether it did.
func keepKilled(parent, dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil {
		return false
	}
	name := strings.TrimPrefix(filepath.Base(dir), ".")
	if i := strings.LastIndex(name, partialTag); i > 0 {
		name = name[:i]
	}
	for n := 1; n <= 100; n++ {
		to := filepath.Join(parent, name+"-killed")
		if n > 1 {
			to += "-" + strconv.Itoa(n)
		}
		if err := renameNoReplace(dir, to); err == nil {
			return true
		} else if !errors.Is(err, fs.ErrExist) {
			return false
		}
	}
	return false
}

// processAlive reports whether a process with this id runs (or may run: any
// answer but "no such process").
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// LatestLink is the symbolic link, in an experiment's directory and in the
// output directory above it, to the newest run's directory.
const LatestLink = "latest"

// ResolveRun returns dir when it is a run's directory (it holds
// summary.json), and the run its LatestLink names when dir is an
// experiment's directory (results/<experiment>/), so that a command reading
// a run takes either. Anything else comes back as it is, for the reader's
// own error.
func ResolveRun(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err == nil {
		return dir
	}
	latest := filepath.Join(dir, LatestLink)
	if _, err := os.Stat(filepath.Join(latest, SummaryFile)); err == nil {
		return latest
	}
	return dir
}
