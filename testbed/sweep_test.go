package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// sweepText is the sweep tests' experiment: virtualRoCC for 4 ms.
var sweepText = strings.Replace(virtualRoCC, "duration_ms = 30", "duration_ms = 4", 1)

// sweepLoad loads sweepText with the point's overrides.
func sweepLoad(sets []string) (*Experiment, error) { return DecodeWith("v.toml", sweepText, ".", sets) }

// provenanceKeys are summary.json's keys that record the wall clock and the
// process rather than the run: when it started, the machine, the build.
var provenanceKeys = []string{"started_at", "machine", "build"}

// sweepFiles reads every file below dir by its path relative to dir,
// summary.json without provenanceKeys.
func sweepFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == report.SummaryFile {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return err
			}
			for _, k := range provenanceKeys {
				if _, ok := m[k]; !ok {
					t.Errorf("%s has no %s", path, k)
				}
				delete(m, k)
			}
			if b, err = json.MarshalIndent(m, "", "  "); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSweepJobsIdentical: 8 points on 1 worker and on 2 (and on more
// workers than points) give the same sweep directory, file for file and
// byte for byte (the index and plots included), but for summary.json's
// provenance, which records the wall clock.
func TestSweepJobsIdentical(t *testing.T) {
	points, _ := SweepPoints([]string{"cc.params.q_ref_bytes=50000,100000", "experiment.seed=1,2,3,4"})
	var want map[string][]byte
	for _, jobs := range []int{1, 2, 9} {
		dir, runs, err := Sweep(context.Background(), filepath.Join(t.TempDir(), "sweep"), points, sweepLoad, SweepOptions{Jobs: jobs})
		if err != nil || len(runs) != 8 {
			t.Fatalf("-j %d: %d runs, %v", jobs, len(runs), err)
		}
		got := sweepFiles(t, dir)
		if want == nil {
			want = got
			if len(got) < 8*5 {
				t.Fatalf("-j 1 wrote %d files", len(got))
			}
			continue
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("-j %d: %s differs from -j 1's", jobs, name)
			}
		}
		if len(got) != len(want) {
			t.Errorf("-j %d: %d files, -j 1 %d", jobs, len(got), len(want))
		}
	}
}

// TestSweepKeepsGoingPastAFailure: a run that fails is listed as failed with
// its error and the others are run and measured; the sweep is written, and
// its error names the failed run.
func TestSweepKeepsGoingPastAFailure(t *testing.T) {
	points, _ := SweepPoints([]string{"experiment.seed=1,2,3"})
	load := func(sets []string) (*Experiment, error) {
		e, err := sweepLoad(sets)
		if err == nil && sets[0] == "experiment.seed=2" {
			e.Experiment.Name = "../escape" // RunWith refuses it, after the load
		}
		return e, err
	}
	var out bytes.Buffer
	dir, runs, err := Sweep(context.Background(), filepath.Join(t.TempDir(), "sweep"), points, load, SweepOptions{Jobs: 2, Out: &out})
	if err == nil || !strings.Contains(err.Error(), "1 of 3 runs failed: run-001 (experiment.seed=2)") || dir == "" {
		t.Fatalf("sweep in %q: %v", dir, err)
	}
	for i, want := range []string{SweepOK, SweepFailed, SweepOK} {
		if runs[i].Status != want {
			t.Errorf("run %d: %s (%s), want %s", i, runs[i].Status, runs[i].Error, want)
		}
	}
	if !strings.Contains(runs[1].Error, "experiment.name") || runs[1].Metrics["flows_completed"].Valid() {
		t.Errorf("failed run: %q, metrics %v", runs[1].Error, runs[1].Metrics)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-002", report.SummaryFile)); err != nil {
		t.Errorf("the run after the failure: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, SweepIndexCSV))
	if lines := strings.Split(string(b), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[2], "1,run-001,2,failed,false,false,,") ||
		!strings.Contains(lines[2], "experiment.name") {
		t.Errorf("index.csv:\n%s", b)
	}
	if !strings.Contains(out.String(), "== run-001: experiment.seed=2: failed: ") || strings.Count(out.String(), "== run-") != 3 ||
		!strings.Contains(out.String(), "results in run-002\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestSweepStops: when the context ends, the run in progress is written,
// marked interrupted, no further run starts, and the index lists the points
// not run as missing.
func TestSweepStops(t *testing.T) {
	points, _ := SweepPoints([]string{"experiment.seed=1,2,3,4"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var reports []SweepProgress
	o := SweepOptions{Jobs: 2, Progress: func(p SweepProgress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
		cancel() // at the first run's start
	}}
	dir, runs, err := Sweep(ctx, filepath.Join(t.TempDir(), "sweep"), points, sweepLoad, o)
	if err != nil || len(runs) != 4 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if runs[0].Status != SweepOK || !runs[0].Interrupted {
		t.Errorf("run 0: %s, interrupted %v", runs[0].Status, runs[0].Interrupted)
	}
	for _, r := range runs[2:] { // run 1 may have been handed out before the end
		if r.Status != SweepMissing || !strings.Contains(r.Error, "not run") {
			t.Errorf("%s: %s %q", r.Dir, r.Status, r.Error)
		}
		if _, err := os.Stat(filepath.Join(dir, r.Dir)); err == nil {
			t.Errorf("%s exists", r.Dir)
		}
	}
	if last := reports[len(reports)-1]; len(reports) < 2 || len(reports[0].Running) != 1 || reports[0].Running[0].Dir != "run-000" ||
		last.Total != 4 || last.Done < 1 || len(last.Running) != 0 || !strings.HasPrefix(reports[0].String(), "sweep: 0 of 4 done; run-000 0%") {
		t.Errorf("progress: %+v", reports)
	}
}

// TestPlanAndMerge: a plan lists one command per point, a Slurm array over
// them, and plan.json; MergeSweep builds the index of a plan whose points
// ran in part (missing, staged, mismatched runs listed) and of a sweep's
// own directory, where it writes the index Sweep wrote.
func TestPlanAndMerge(t *testing.T) {
	points, _ := SweepPoints([]string{"cc.params.q_ref_bytes=50000,100000", "experiment.seed=1,2"})
	dir := filepath.Join(t.TempDir(), "plan")
	o := SweepOptions{File: "x.toml", Flags: []string{"-duration", "4ms"}}
	args := func(sets []string, e *Experiment, runDir string) []string {
		return append(append([]string{"run", o.File, "-set"}, sets...), "-run-dir", runDir, "-note", "it's")
	}
	files, err := PlanSweep(dir, points, sweepLoad, o, args)
	if err != nil || len(files) != 3 {
		t.Fatalf("plan: %v %v", files, err)
	}
	jobs, _ := os.ReadFile(filepath.Join(dir, SweepJobsFile))
	lines := strings.Split(strings.TrimSuffix(string(jobs), "\n"), "\n")
	want := "${TESTBED:-testbed} run x.toml -set cc.params.q_ref_bytes=100000 experiment.seed=2 -run-dir " + dir + "/run-003 -note 'it'\\''s'"
	if len(lines) != 4 || lines[3] != want {
		t.Errorf("jobs.txt:\n%s\nwant last line\n%s", jobs, want)
	}
	slurm, _ := os.ReadFile(filepath.Join(dir, SweepSlurmFile))
	for _, s := range []string{"#SBATCH --array=0-3\n", "$((SLURM_ARRAY_TASK_ID + 1))p\" " + filepath.Join(dir, SweepJobsFile)} {
		if !bytes.Contains(slurm, []byte(s)) {
			t.Errorf("slurm.sh lacks %q:\n%s", s, slurm)
		}
	}
	plan, err := ReadSweepPlan(dir)
	if err != nil || plan.Experiment != "v" || !slices.Equal(plan.Keys, []string{"cc.params.q_ref_bytes", "experiment.seed"}) ||
		!slices.Equal(plan.Seeds, []uint64{1, 2, 1, 2}) || !slices.Equal(plan.Flags, o.Flags) {
		t.Errorf("plan %+v, %v", plan, err)
	}
	if _, err := PlanSweep(dir, points, sweepLoad, o, args); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a second plan into the same directory: %v", err)
	}

	// Points 0 and 2 ran, 1 is staged, 3 ran with other overrides.
	for i, sets := range [][]string{points[0], points[2], {"cc.params.q_ref_bytes=60000"}} {
		e, err := sweepLoad(sets)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := RunWith(context.Background(), e, nil, RunOptions{Dir: filepath.Join(dir, []string{"run-000", "run-002", "run-003"}[i])}); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, ".run-001.partial-1-2"), 0o755)
	os.Mkdir(filepath.Join(dir, "run-001-killed"), 0o755) // an earlier run of point 1, killed: not merged
	os.WriteFile(filepath.Join(dir, "run-001-killed", report.SummaryFile), []byte("{}"), 0o644)
	runs, err := MergeSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{SweepOK, SweepMissing, SweepOK, SweepFailed} {
		if runs[i].Status != want {
			t.Errorf("run %d: %s (%s), want %s", i, runs[i].Status, runs[i].Error, want)
		}
	}
	if !strings.Contains(runs[1].Error, "staged in .run-001.partial-1-2") || !strings.Contains(runs[1].Error, "kept in run-001-killed") || !strings.Contains(runs[3].Error, "the plan's point is") {
		t.Errorf("errors: %q, %q", runs[1].Error, runs[3].Error)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "sweep_*_vs_cc.params.q_ref_bytes.png")); len(m) == 0 {
		t.Error("no plots against Q_ref")
	}

	// A sweep's own directory: the merge writes the index the sweep wrote.
	sweepDir, _, err := Sweep(context.Background(), filepath.Join(t.TempDir(), "sweep"), points, sweepLoad, SweepOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := sweepFiles(t, sweepDir)
	if _, err := MergeSweep(sweepDir); err != nil {
		t.Fatal(err)
	}
	after := sweepFiles(t, sweepDir)
	for _, f := range []string{SweepIndexCSV, SweepIndexJSON, "sweep_max_steady_queue_bytes_vs_cc.params.q_ref_bytes.svg"} {
		if len(before[f]) == 0 || !bytes.Equal(before[f], after[f]) {
			t.Errorf("%s: %d bytes before the merge, %d after, or not the same", f, len(before[f]), len(after[f]))
		}
	}
}
