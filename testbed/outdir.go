package testbed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// OutKind is what a command's -o DIR finds at DIR (ClassifyOut). Every
// command's -o names the directory the command itself writes: testbed run's
// the run's own directory, testbed sweep's the sweep's, compare's the
// plots', collect's the merged run's, export-flows' the one flow.txt goes
// in (docs/results.md, "-o: one meaning"). Before, run's and sweep's -o named
// the results' root, DIR/<name>/<run id>/; that meaning is kept for one
// release, with a deprecation warning, where the new one cannot hold: when
// DIR is a directory that holds something other than what the command
// writes (OutLegacy).
type OutKind int

const (
	// OutNew: DIR does not exist or is empty: the command writes DIR.
	OutNew OutKind = iota
	// OutSame: DIR is what the command writes (it holds the marker file,
	// summary.json for a run, plan.json for a sweep): a run replaces it,
	// as a rerun with -run-dir does; a sweep refuses it.
	OutSame
	// OutLegacy: DIR is a directory holding other things: the deprecated
	// meaning, the results' root (what -results DIR names now).
	OutLegacy
)

// ClassifyOut says what -o dir names for a command whose output directory
// holds marker (report.SummaryFile for a run, SweepPlanFile for a sweep).
// A path that exists and is not a directory is an error.
func ClassifyOut(dir, marker string) (OutKind, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return OutNew, nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return 0, fmt.Errorf("-o %s: exists and is not a directory", dir)
		}
		return 0, fmt.Errorf("-o %s: %w", dir, err)
	case len(ents) == 0:
		return OutNew, nil
	}
	if st, err := os.Stat(filepath.Join(dir, marker)); err == nil && st.Mode().IsRegular() {
		return OutSame, nil
	}
	return OutLegacy, nil
}

// OutLegacyWarning is the deprecation warning of -o DIR taken in its old
// meaning by command (run, sweep): where the output went and how to say so
// from now on.
func OutLegacyWarning(command, dir, name string) string {
	what := "<run id>"
	if command == "sweep" {
		name += "-sweep"
		what = "<sweep id>"
	}
	return fmt.Sprintf("-o %s holds other files, so it is read in its deprecated meaning, the results' root: the %s goes to %s; "+
		"write -results %s for this (-o names the %s's own directory from now on, and will only mean that in the next release)",
		dir, command, filepath.Join(dir, name, what), dir, command)
}

// ExportFlowsFile is the file testbed export-flows -o DIR writes in DIR.
const ExportFlowsFile = "flow.txt"

// ExportFlowsPath is the file testbed export-flows writes for -o out: ""
// (standard output) for "" or "-"; DIR/flow.txt for a directory DIR,
// made if missing; out itself, legacy true, for the deprecated meaning:
// out ends in .txt, or names a file that exists and is not a directory.
func ExportFlowsPath(out string) (path string, legacy bool, err error) {
	if out == "" || out == "-" {
		return "", false, nil
	}
	st, err := os.Stat(out)
	switch {
	case err == nil && !st.IsDir(), err != nil && filepath.Ext(out) == ".txt":
		return out, true, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("-o %s: %w", out, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", false, fmt.Errorf("-o %s: %w", out, err)
	}
	return filepath.Join(out, ExportFlowsFile), false, nil
}
