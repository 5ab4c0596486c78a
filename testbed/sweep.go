package testbed

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/internal/atomicfile"
	"github.com/ccbed/ccbed/testbed/report"
	"go.uber.org/zap"
)

// The files a sweep writes into its directory, beside run-000/, ...: the
// index (one entry per point), the plan (SweepPlan), and, from PlanSweep,
// the commands that run the points (one a line) and a Slurm array script
// that runs them.
const (
	SweepIndexCSV  = "index.csv"
	SweepIndexJSON = "index.json"
	SweepPlanFile  = "plan.json"
	SweepJobsFile  = "jobs.txt"
	SweepSlurmFile = "slurm.sh"
)

// SweepRun is one run of a sweep: its settings, where its results are, how
// it ended and its metrics (report.MeasureRun). It is one row of index.csv
// and one entry of index.json.
type SweepRun struct {
	// Run is the run's number, Dir its results directory relative to the
	// sweep's (run-000, ...).
	Run int    `json:"run"`
	Dir string `json:"dir"`
	// Sets are the -set overrides of this run, in the order given.
	Sets []string `json:"sets"`
	// Values are the overridden keys' values, keyed by key.
	Values map[string]string `json:"values"`
	// Status is how the run ended: SweepOK, SweepFailed or SweepMissing.
	Status string `json:"status"`
	// Error says why a run failed or is missing ("" when SweepOK).
	Error string `json:"error"`
	// Interrupted and Degraded are the run's summary's.
	Interrupted bool `json:"interrupted"`
	Degraded    bool `json:"degraded"`
	// Metrics are the run's sweep metrics (report.SweepMetrics), null
	// where the run has no value (every one, for a run that is not
	// SweepOK).
	Metrics report.Metrics `json:"metrics"`
}

// A SweepRun's Status.
const (
	// SweepOK: the run wrote its results directory (interrupted or not).
	SweepOK = "ok"
	// SweepFailed: the run, or measuring its results, returned an error
	// (SweepRun.Error); its directory is absent or not measured.
	SweepFailed = "failed"
	// SweepMissing: no results directory: the run never started (the
	// sweep was stopped first) or, for MergeSweep, has not finished.
	SweepMissing = "missing"
)

// SweepSeedKey is the key whose values a sweep's plots take as repeats of
// one point (report.SweepPlots' replicate).
const SweepSeedKey = "experiment.seed"

// SweepPoints expands sets, each "key=v1,v2,..." (commas inside [...], {...}
// or quotes do not split), into the cartesian product of their values: one
// list of key=value overrides per run, the first key varying slowest.
func SweepPoints(sets []string) ([][]string, error) {
	points := [][]string{nil}
	seen := map[string]bool{}
	for _, s := range sets {
		key, values, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("-set %q: want key=v1,v2,...", s)
		}
		if seen[key] {
			return nil, fmt.Errorf("-set %q: %s given twice", s, key)
		}
		seen[key] = true
		vals := splitValues(values)
		var next [][]string
		for _, p := range points {
			for _, v := range vals {
				next = append(next, append(append([]string(nil), p...), key+"="+v))
			}
		}
		points = next
	}
	return points, nil
}

// splitValues splits s at the commas outside brackets, braces and quotes.
func splitValues(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// SweepOptions are how Sweep runs its points and what it records of them.
type SweepOptions struct {
	// Jobs is how many points run at once (0: runtime.NumCPU()), each in
	// a goroutine of its own: the engines share no mutable state, so a
	// point's results are the same for any Jobs. On the DPDK clock points
	// run one at a time whatever Jobs says (the EAL is one per process, and
	// real-time runs on shared CPUs would disturb each other).
	Jobs int
	// Out receives each run's summary table, whole, when the run ends,
	// under a line naming the run (nil: none).
	Out io.Writer
	// Progress, when not nil, receives the sweep's progress when a run
	// starts or ends and when a run reports its own (RunOptions.Progress).
	// Calls never overlap, and none overlaps a write to Out.
	Progress func(SweepProgress)
	// Log receives the runs' status messages (nil: none).
	Log *zap.Logger
	// File and Flags are the experiment file as named and the run flags
	// every point shares, as words (-duration 10ms), recorded in
	// plan.json so that a point can be run again (SweepPlan).
	File  string
	Flags []string
	// Dir, when not empty, is the sweep's directory itself in place of a
	// new one in Sweep's parent (testbed sweep -o DIR): it must not exist
	// or be empty, and parent's LatestLink is left as it is.
	Dir string
}

// jobs is how many points of exps run at once.
func (o SweepOptions) jobs(exps []*Experiment) int {
	n := o.Jobs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	for _, e := range exps {
		if e.Experiment.Clock == ClockDPDK {
			return 1
		}
	}
	return max(1, min(n, len(exps)))
}

// SweepProgress is a sweep's progress: how many runs ended, and where each
// running one is.
type SweepProgress struct {
	// Total is the number of points; Done the runs that ended (Failed of
	// them with an error).
	Total, Done, Failed int
	// Running are the runs in progress, by run number.
	Running []RunningPoint
}

// RunningPoint is a run of a sweep in progress.
type RunningPoint struct {
	// Run is the run's number, Dir its directory (run-003).
	Run int
	Dir string
	// Progress is the run's last report (zero before its first).
	Progress fabric.Progress
}

// String is the progress in one line: "sweep: 3 of 8 done, 1 failed; run-003
// 45%, run-004 12%".
func (p SweepProgress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep: %d of %d done", p.Done, p.Total)
	if p.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", p.Failed)
	}
	for i, r := range p.Running {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s %.0f%%", sep, r.Dir, 100*r.Progress.Done())
	}
	return b.String()
}

// Sweep runs one experiment per point (SweepPoints), each loaded by load,
// into a sweep directory of its own, parent/<sweep id>/ (report.RunID's
// time, without a seed: "20261127-172512"; never replacing another sweep),
// as run-000, run-001, ..., o.Jobs of them at once (SweepOptions), and writes
// there plan.json (SweepPlan), index.csv and index.json (one entry per
// point, in point order, whatever order the runs ended in), and plots of
// each metric that varies against each swept key (report.SweepPlots:
// sweep_<metric>_vs_<key>.png, .svg and .pdf, the seeds, SweepSeedKey, taken as
// repeats; a run that is interrupted or not SweepOK is left out of the
// plots). Every point is loaded and checked before the first run starts, so
// a typo fails at once. A run that fails is listed as SweepFailed with its
// error and the others go on; the sweep is then written and an error naming
// the failed runs returned with it. The sweep directory is staged and renamed
// into place like a run's (report.StageRun), and parent's LatestLink then
// points at it. When ctx ends, the runs in progress stop and are written,
// marked interrupted, no further run starts, and the index lists the points
// never run as SweepMissing. It returns the sweep's directory and its runs.
// With o.Dir the sweep's directory is o.Dir itself, and no link moves.
func Sweep(ctx context.Context, parent string, points [][]string, load func(sets []string) (*Experiment, error), o SweepOptions) (string, []SweepRun, error) {
	exps, err := loadPoints(points, load)
	if err != nil {
		return "", nil, err
	}
	var stage *report.Staged
	if o.Dir != "" {
		if ents, rerr := os.ReadDir(o.Dir); rerr == nil && len(ents) > 0 {
			return "", nil, fmt.Errorf("testbed: sweep: %s is not empty: a sweep goes into a directory of its own", o.Dir)
		}
		stage, err = report.StageDir(o.Dir)
	} else {
		stage, err = report.StageRun(parent, time.Now().UTC().Format(report.RunIDLayout))
	}
	if err != nil {
		return "", nil, err
	}
	defer stage.Abort() // after Commit, nothing
	plan := newSweepPlan(exps, points, o)
	if err := writeJSON(filepath.Join(stage.Path(), SweepPlanFile), plan); err != nil {
		return "", nil, err
	}
	runs := sweepRuns(ctx, stage.Path(), exps, points, o)
	if err := writeSweepResults(stage.Path(), plan, runs); err != nil {
		return "", runs, err
	}
	if err := stage.Commit(); err != nil {
		return "", runs, err
	}
	// The link is a convenience: a sweep whose link is in the way is still
	// whole.
	if o.Dir == "" {
		LinkLatest(parent, filepath.Base(stage.Target()))
	}
	return stage.Target(), runs, failedRuns(runs)
}

// loadPoints loads every point, stopping at the first error.
func loadPoints(points [][]string, load func(sets []string) (*Experiment, error)) ([]*Experiment, error) {
	exps := make([]*Experiment, len(points))
	for i, p := range points {
		e, err := load(p)
		if err != nil {
			return nil, err
		}
		exps[i] = e
	}
	return exps, nil
}

// newSweepPlan is the plan of a sweep of exps, loaded from points.
func newSweepPlan(exps []*Experiment, points [][]string, o SweepOptions) SweepPlan {
	p := SweepPlan{Experiment: exps[0].Experiment.Name, File: o.File, Flags: append([]string{}, o.Flags...), Keys: SweepKeys(points), Points: points}
	for _, e := range exps {
		p.Seeds = append(p.Seeds, e.Experiment.Seed)
	}
	return p
}

// failedRuns is an error naming the runs that failed, nil when none did.
func failedRuns(runs []SweepRun) error {
	var msgs []string
	for _, r := range runs {
		if r.Status == SweepFailed {
			msgs = append(msgs, fmt.Sprintf("%s (%s): %s", r.Dir, strings.Join(r.Sets, " "), r.Error))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d runs failed: %s", len(msgs), len(runs), strings.Join(msgs, "; "))
}

// newSweepRun is point i's entry, before it runs: SweepMissing.
func newSweepRun(i int, sets []string) SweepRun {
	r := SweepRun{Run: i, Dir: fmt.Sprintf("run-%03d", i), Sets: sets, Values: map[string]string{},
		Status: SweepMissing, Error: "not run: the sweep was stopped before it", Metrics: noMetrics()}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		r.Values[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return r
}

// noMetrics is every sweep metric missing.
func noMetrics() report.Metrics {
	m := report.Metrics{}
	for _, sm := range report.SweepMetrics() {
		m[sm.Name] = report.None
	}
	return m
}

// sweeper is a sweep in progress: what its runs share.
type sweeper struct {
	ctx  context.Context
	dir  string
	o    SweepOptions
	mu   sync.Mutex // guards prog and serialises o.Progress and o.Out
	prog SweepProgress
}

// sweepRuns runs the points into dir, the sweep's staging directory, on
// o.jobs workers, and returns every point's entry.
func sweepRuns(ctx context.Context, dir string, exps []*Experiment, points [][]string, o SweepOptions) []SweepRun {
	s := &sweeper{ctx: ctx, dir: dir, o: o, prog: SweepProgress{Total: len(exps)}}
	runs := make([]SweepRun, len(exps))
	for i := range runs {
		runs[i] = newSweepRun(i, points[i])
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range o.jobs(exps) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() == nil {
					runs[i] = s.run(exps[i], runs[i])
				}
			}
		}()
	}
	for i := range exps {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return runs
}

// run runs one point into its directory and returns its entry: SweepOK
// with its metrics, or SweepFailed with the error (a panic included: it
// loses this run, not the sweep).
func (s *sweeper) run(e *Experiment, r SweepRun) (out SweepRun) {
	s.started(r)
	var table bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			out = r
			out.Status, out.Error = SweepFailed, fmt.Sprintf("panic: %v", p)
		}
		s.ended(out, &table)
	}()
	opts := RunOptions{Dir: filepath.Join(s.dir, r.Dir), Log: s.o.Log}
	if s.o.Progress != nil {
		opts.Progress = func(p fabric.Progress) { s.progress(r.Run, p) }
	}
	var w io.Writer
	if s.o.Out != nil {
		w = &table
	}
	res, err := RunWith(s.ctx, e, w, opts)
	if err != nil {
		r.Status, r.Error = SweepFailed, err.Error()
		return r
	}
	return measureSweepRun(s.dir, r, res.Summary.Interrupted, res.Summary.Degraded)
}

// measureSweepRun is r, whose directory in dir holds its results, with its
// metrics: SweepOK, or SweepFailed when they cannot be read.
func measureSweepRun(dir string, r SweepRun, interrupted, degraded bool) SweepRun {
	m, err := report.MeasureRun(filepath.Join(dir, r.Dir))
	if err != nil {
		r.Status, r.Error = SweepFailed, err.Error()
		return r
	}
	r.Status, r.Error, r.Metrics = SweepOK, "", m
	r.Interrupted, r.Degraded = interrupted, degraded
	return r
}

// started records that run r started.
func (s *sweeper) started(r SweepRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.prog.Running), func(i int) bool { return s.prog.Running[i].Run > r.Run })
	s.prog.Running = slices.Insert(s.prog.Running, i, RunningPoint{Run: r.Run, Dir: r.Dir})
	s.report()
}

// progress records run's own progress.
func (s *sweeper) progress(run int, p fabric.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.prog.Running {
		if s.prog.Running[i].Run == run {
			s.prog.Running[i].Progress = p
		}
	}
	s.report()
}

// ended records that r ended and writes its table to Out, whole, under a
// line naming the run (and its error, when it failed), its directory
// relative to the sweep's.
func (s *sweeper) ended(r SweepRun, table *bytes.Buffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prog.Running = slices.DeleteFunc(s.prog.Running, func(p RunningPoint) bool { return p.Run == r.Run })
	s.prog.Done++
	if r.Status == SweepFailed {
		s.prog.Failed++
	}
	if s.o.Out != nil {
		head := fmt.Sprintf("== %s: %s", r.Dir, strings.Join(r.Sets, " "))
		switch {
		case r.Status == SweepFailed:
			head += ": failed: " + r.Error
		case r.Interrupted:
			head += ": interrupted"
		}
		// The table names the run's directory in the sweep's staging
		// directory, renamed when the sweep ends: name it in the sweep's.
		fmt.Fprintf(s.o.Out, "%s\n%s", head, bytes.ReplaceAll(table.Bytes(), []byte(s.dir+string(filepath.Separator)), nil))
	}
	s.report()
}

// report passes the progress to o.Progress; s.mu is held.
func (s *sweeper) report() {
	if s.o.Progress != nil {
		p := s.prog
		p.Running = slices.Clone(s.prog.Running)
		s.o.Progress(p)
	}
}

// writeSweepResults writes the index of runs into dir, and the sweep plots
// of the runs that are SweepOK and not interrupted (those cut short are not
// comparable with the others).
func writeSweepResults(dir string, plan SweepPlan, runs []SweepRun) error {
	if err := writeSweepIndex(dir, runs, plan.Keys); err != nil {
		return err
	}
	var plotted []report.SweepRun
	for _, r := range runs {
		if r.Status == SweepOK && !r.Interrupted {
			plotted = append(plotted, report.SweepRun{Values: r.Values, Metrics: r.Metrics})
		}
	}
	_, err := report.SweepPlots(dir, "sweep of "+plan.Experiment, plan.Keys, SweepSeedKey, plotted)
	return err
}

// SweepKeys are the swept keys of points, in the order given.
func SweepKeys(points [][]string) []string {
	var keys []string
	if len(points) > 0 {
		for _, kv := range points[0] {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, strings.TrimSpace(k))
		}
	}
	return keys
}

// writeSweepIndex writes index.json and index.csv (one column per swept key,
// the status, interrupted and degraded, one column per metric,
// report.SweepMetrics, with an empty cell for a missing value, and the
// error), each replaced whole (atomicfile.Write).
func writeSweepIndex(dir string, runs []SweepRun, keys []string) error {
	if err := writeJSON(filepath.Join(dir, SweepIndexJSON), runs); err != nil {
		return err
	}
	metrics := report.SweepMetrics()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := append(append([]string{"run", "dir"}, keys...), "status", "interrupted", "degraded")
	for _, m := range metrics {
		header = append(header, m.Name)
	}
	w.Write(append(header, "error"))
	for _, r := range runs {
		row := []string{strconv.Itoa(r.Run), r.Dir}
		for _, k := range keys {
			row = append(row, r.Values[k])
		}
		row = append(row, r.Status, strconv.FormatBool(r.Interrupted), strconv.FormatBool(r.Degraded))
		for _, m := range metrics {
			cell := "" // missing
			if v, ok := r.Metrics[m.Name].Get(); ok {
				cell = strconv.FormatFloat(v, 'f', -1, 64)
			}
			row = append(row, cell)
		}
		w.Write(append(row, r.Error))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, SweepIndexCSV), buf.Bytes())
}

// writeJSON writes v to path as indented JSON (atomicfile.Write).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}
