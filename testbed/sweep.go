package testbed

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ccbed/ccbed/testbed/report"
)

// The index files a sweep writes into its directory, beside run-000/, ...
const (
	SweepIndexCSV  = "index.csv"
	SweepIndexJSON = "index.json"
)

// SweepRun is one run of a sweep: its settings, where its results are, and
// its metrics (report.MeasureRun). It is one row of index.csv and one entry
// of index.json.
type SweepRun struct {
	// Run is the run's number, Dir its results directory relative to the
	// sweep's (run-000, ...).
	Run int    `json:"run"`
	Dir string `json:"dir"`
	// Sets are the -set overrides of this run, in the order given.
	Sets []string `json:"sets"`
	// Values are the overridden keys' values, keyed by key.
	Values map[string]string `json:"values"`
	// Interrupted and Degraded are the run's summary's.
	Interrupted bool `json:"interrupted"`
	Degraded    bool `json:"degraded"`
	// Metrics are the run's sweep metrics (report.SweepMetrics), null
	// where the run has no value.
	Metrics report.Metrics `json:"metrics"`
}

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

// Sweep runs one experiment per point (SweepPoints), each loaded by load,
// into a sweep directory of its own, parent/<sweep id>/ (report.RunID's
// time, without a seed: "20261127-172512"; never replacing another sweep),
// as run-000, run-001, ..., and writes index.csv and index.json there, and plots of each metric that varies against each swept key
// (report.SweepPlots: sweep_<metric>_vs_<key>.png and .svg, the seeds,
// SweepSeedKey, taken as repeats; an interrupted run is left out of the
// plots). Every point is loaded and checked before the first run starts, so
// a typo fails at once. The sweep directory is staged and renamed into place
// like a run's (report.StageRun), and parent's LatestLink then points at
// it. When ctx ends, the run in progress stops and is written, marked
// interrupted, the index lists the runs made so far, and no further run
// starts. Each run's summary table goes to out (nil: none). It returns the
// sweep's directory and its runs.
func Sweep(ctx context.Context, parent string, points [][]string, load func(sets []string) (*Experiment, error), out io.Writer) (string, []SweepRun, error) {
	exps := make([]*Experiment, len(points))
	for i, p := range points {
		e, err := load(p)
		if err != nil {
			return "", nil, err
		}
		exps[i] = e
	}
	stage, err := report.StageRun(parent, time.Now().UTC().Format(report.RunIDLayout))
	if err != nil {
		return "", nil, err
	}
	defer stage.Abort() // after Commit, nothing
	runs, err := sweepRuns(ctx, stage.Path(), exps, points, out)
	if err != nil {
		return "", runs, err
	}
	if err := stage.Commit(); err != nil {
		return "", runs, err
	}
	// The link is a convenience: a sweep whose link is in the way is still
	// whole.
	LinkLatest(parent, filepath.Base(stage.Target()))
	return stage.Target(), runs, nil
}

// sweepRuns runs the points into dir, the sweep's staging directory, and
// writes its index and plots there.
func sweepRuns(ctx context.Context, dir string, exps []*Experiment, points [][]string, out io.Writer) ([]SweepRun, error) {
	var runs []SweepRun
	for i, e := range exps {
		if ctx.Err() != nil {
			break
		}
		r := SweepRun{Run: i, Dir: fmt.Sprintf("run-%03d", i), Sets: points[i], Values: map[string]string{}}
		for _, kv := range points[i] {
			k, v, _ := strings.Cut(kv, "=")
			r.Values[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if out != nil {
			fmt.Fprintf(out, "== %s: %s\n", r.Dir, strings.Join(points[i], " "))
		}
		res, err := RunWith(ctx, e, out, RunOptions{Dir: filepath.Join(dir, r.Dir)})
		if err != nil {
			return runs, fmt.Errorf("%s (%s): %w", r.Dir, strings.Join(points[i], " "), err)
		}
		r.Interrupted, r.Degraded = res.Summary.Interrupted, res.Summary.Degraded
		if r.Metrics, err = report.MeasureRun(res.Dir); err != nil {
			return runs, fmt.Errorf("%s: %w", r.Dir, err)
		}
		runs = append(runs, r)
	}
	if err := writeSweepIndex(dir, runs, points); err != nil {
		return runs, err
	}
	var plotted []report.SweepRun
	for _, r := range runs {
		if !r.Interrupted { // cut short: not comparable with the others
			plotted = append(plotted, report.SweepRun{Values: r.Values, Metrics: r.Metrics})
		}
	}
	title := "sweep of " + exps[0].Experiment.Name
	_, err := report.SweepPlots(dir, title, sweepKeys(points), SweepSeedKey, plotted)
	return runs, err
}

// sweepKeys are the swept keys, in the order given.
func sweepKeys(points [][]string) []string {
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
// then one per metric, report.SweepMetrics; an empty cell for a missing
// value).
func writeSweepIndex(dir string, runs []SweepRun, points [][]string) error {
	b, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SweepIndexJSON), append(b, '\n'), 0o644); err != nil {
		return err
	}
	keys := sweepKeys(points)
	metrics := report.SweepMetrics()
	f, err := os.Create(filepath.Join(dir, SweepIndexCSV))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := append(append([]string{"run", "dir"}, keys...), "interrupted", "degraded")
	for _, m := range metrics {
		header = append(header, m.Name)
	}
	w.Write(header)
	for _, r := range runs {
		row := []string{strconv.Itoa(r.Run), r.Dir}
		for _, k := range keys {
			row = append(row, r.Values[k])
		}
		row = append(row, strconv.FormatBool(r.Interrupted), strconv.FormatBool(r.Degraded))
		for _, m := range metrics {
			cell := "" // missing
			if v, ok := r.Metrics[m.Name].Get(); ok {
				cell = strconv.FormatFloat(v, 'f', -1, 64)
			}
			row = append(row, cell)
		}
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
