package testbed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbed/ccbed/internal/atomicfile"
	"github.com/ccbed/ccbed/testbed/report"
)

// SweepPlan is a sweep's plan.json: what every point runs, so that a point
// can be run again, on this machine or another (PlanSweep), and the index
// rebuilt from the runs that finished (MergeSweep).
type SweepPlan struct {
	// Experiment is experiment.name (the plots' title).
	Experiment string `json:"experiment"`
	// File is the experiment file as named to testbed sweep; Flags the run
	// flags every point shares, as words (["-duration", "10ms"]).
	File  string   `json:"file"`
	Flags []string `json:"flags"`
	// Keys are the swept keys, in the order given; Points each run's
	// overrides (SweepPoints), run i's being Points[i], and Seeds each
	// run's experiment.seed.
	Keys   []string   `json:"keys"`
	Points [][]string `json:"points"`
	Seeds  []uint64   `json:"seeds"`
}

// SweepProgram is the shell variable that names the testbed program in a
// plan's commands: ${TESTBED:-testbed}, the testbed on PATH unless set.
const SweepProgram = "TESTBED"

// PlanSweep writes a sweep to run elsewhere into dir, which must be new or
// empty, after loading and checking every point as Sweep does: plan.json
// (SweepPlan, with o's File and Flags), jobs.txt, one command a line, line
// i+1 running point i: the program ${TESTBED:-testbed} with the arguments
// args(sets, e, runDir): the point's overrides, its experiment, and
// dir/run-%03d, where the command must write its results; and
// slurm.sh, a Slurm array job (#SBATCH --array=0-<points-1>) whose task
// SLURM_ARRAY_TASK_ID runs that line of jobs.txt. jobs.txt is also a GNU
// parallel job list (parallel -j N < jobs.txt). The commands' paths are as
// given: relative ones are relative to the directory the commands run in,
// which for slurm.sh is the one it is submitted from. MergeSweep builds the
// index from what finished. It returns the files written.
func PlanSweep(dir string, points [][]string, load func(sets []string) (*Experiment, error), o SweepOptions, args func(sets []string, e *Experiment, runDir string) []string) ([]string, error) {
	exps, err := loadPoints(points, load)
	if err != nil {
		return nil, err
	}
	plan := newSweepPlan(exps, points, o)
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("testbed: plan: %s is not empty: a plan goes into a directory of its own", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("testbed: plan: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("testbed: plan: %w", err)
	}
	var jobs bytes.Buffer
	for i, e := range exps {
		words := []string{"${" + SweepProgram + ":-testbed}"}
		for _, w := range args(points[i], e, filepath.Join(dir, newSweepRun(i, nil).Dir)) {
			words = append(words, shellWord(w))
		}
		fmt.Fprintln(&jobs, strings.Join(words, " "))
	}
	files := []string{filepath.Join(dir, SweepPlanFile), filepath.Join(dir, SweepJobsFile), filepath.Join(dir, SweepSlurmFile)}
	if err := writeJSON(files[0], plan); err != nil {
		return nil, fmt.Errorf("testbed: plan: %w", err)
	}
	if err := atomicfile.Write(files[1], jobs.Bytes()); err != nil {
		return nil, fmt.Errorf("testbed: plan: %w", err)
	}
	if err := atomicfile.Write(files[2], slurmScript(dir, plan)); err != nil {
		return nil, fmt.Errorf("testbed: plan: %w", err)
	}
	return files, os.Chmod(files[2], 0o755)
}

// slurmScript is the Slurm array job that runs the plan in dir, one task a
// point.
func slurmScript(dir string, plan SweepPlan) []byte {
	var b strings.Builder
	jobs := filepath.Join(dir, SweepJobsFile)
	fmt.Fprintf(&b, `#!/bin/bash
# Slurm array job: the %d points of a sweep of %s, one task each
# (written by testbed sweep -plan). Submit it from the directory the plan was
# made in, where its paths start:
#   sbatch %s
# Task i runs line i+1 of %s with the testbed on PATH, or $%s:
#   %s=./testbed sbatch %[3]s
# Without Slurm, GNU parallel runs the same lines: parallel -j N < %[4]s
# When the tasks are done: testbed sweep -merge %[7]s
#SBATCH --job-name=%[8]s
#SBATCH --array=0-%[9]d
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
`, len(plan.Points), plan.Experiment, shellWord(filepath.Join(dir, SweepSlurmFile)), shellWord(jobs), SweepProgram, SweepProgram,
		shellWord(dir), "ccbed-"+plan.Experiment, len(plan.Points)-1)
	if shellWord(dir) == dir { // #SBATCH lines are not shell: no quoting
		fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(dir, "slurm-%A_%a.out"))
	}
	fmt.Fprintf(&b, `set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" %s)
exec bash -c "$line"
`, shellWord(jobs))
	return []byte(b.String())
}

// shellWord is s as one sh word: as it is when it holds nothing sh would
// read otherwise, else quoted (shellQuote).
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") == "" {
		return s
	}
	return shellQuote(s)
}

// ReadSweepPlan reads a sweep directory's plan.json.
func ReadSweepPlan(dir string) (SweepPlan, error) {
	var p SweepPlan
	b, err := os.ReadFile(filepath.Join(dir, SweepPlanFile))
	if err != nil {
		return p, fmt.Errorf("testbed: sweep: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("testbed: sweep: %s: %w", filepath.Join(dir, SweepPlanFile), err)
	}
	if len(p.Points) == 0 {
		return p, fmt.Errorf("testbed: sweep: %s: no points", filepath.Join(dir, SweepPlanFile))
	}
	return p, nil
}

// MergeSweep builds the index (index.csv, index.json) and the sweep plots
// of the sweep in dir (its plan.json: a PlanSweep or a Sweep) from the runs
// that finished there, replacing those it built before. A point whose
// directory has no summary.json is SweepMissing (its error says whether a
// run of it is staged, running or killed, and whether a killed run's files
// were kept as <dir>-killed: neither is merged); a point whose summary.json
// records other overrides than the plan's, or whose results cannot be read,
// is SweepFailed. It returns every point's entry.
func MergeSweep(dir string) ([]SweepRun, error) {
	plan, err := ReadSweepPlan(dir)
	if err != nil {
		return nil, err
	}
	runs := make([]SweepRun, len(plan.Points))
	for i, sets := range plan.Points {
		r := newSweepRun(i, sets)
		s, err := report.LoadSummary(filepath.Join(dir, r.Dir, report.SummaryFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.Error = "not finished: no " + filepath.Join(r.Dir, report.SummaryFile)
			if staged, _ := filepath.Glob(filepath.Join(dir, "."+r.Dir+".partial-*")); len(staged) > 0 {
				r.Error += fmt.Sprintf("; staged in %s (running, or killed)", filepath.Base(staged[0]))
			}
			if killed, _ := filepath.Glob(filepath.Join(dir, r.Dir+"-killed*")); len(killed) > 0 {
				r.Error += fmt.Sprintf("; a killed run's files kept in %s (not merged)", filepath.Base(killed[0]))
			}
		case err != nil:
			r.Status, r.Error = SweepFailed, err.Error()
		case s.Config == nil || !slices.Equal(s.Config.Overrides, sets):
			var got []string
			if s.Config != nil {
				got = s.Config.Overrides
			}
			r.Status, r.Error = SweepFailed, fmt.Sprintf("%s ran with -set %q, the plan's point is %q", r.Dir, got, sets)
		default:
			r = measureSweepRun(dir, r, s.Interrupted, s.Degraded)
		}
		runs[i] = r
	}
	old, _ := filepath.Glob(filepath.Join(dir, "sweep_*_vs_*"))
	for _, f := range old {
		if ext := filepath.Ext(f); ext == ".png" || ext == ".svg" || ext == ".pdf" {
			os.Remove(f)
		}
	}
	if err := writeSweepResults(dir, plan, runs); err != nil {
		return runs, fmt.Errorf("testbed: sweep: %w", err)
	}
	return runs, nil
}
