package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/testbed/report"
)

// long is a virtual-time experiment that runs for minutes of wall time.
const long = `
[experiment]
name = "long"
duration_ms = 600_000
clock = "virtual"

[topology]
hosts = 2
link_gbps = 10

[cc]
scheme = "dcqcn"

[[flows]]
id = 1
src = 0
dst = 1
`

func writeExperiment(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSIGINTWritesInterruptedResults sends SIGINT to testbed run, with the
// serial driver and with the parallel one: the run stops, its results are
// written and marked interrupted.
func TestSIGINTWritesInterruptedResults(t *testing.T) {
	for _, args := range [][]string{{"-workers", "1"}, {"-workers", "2", "-partition", "node"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			path := writeExperiment(t, long)
			out := t.TempDir()
			done := make(chan error, 1)
			go func() { done <- run(append([]string{path, "-results", out, "-q"}, args...)) }()
			deadline := time.Now().Add(30 * time.Second)
			for {
				if m, _ := filepath.Glob(filepath.Join(out, "long", ".*.partial-*")); len(m) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the run never staged its results")
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("SIGINT did not stop the run")
			}
			s, err := report.LoadSummary(filepath.Join(out, "long", "latest", report.SummaryFile))
			if err != nil || !s.Interrupted || s.DurationS <= 0 || s.DurationS >= 600 {
				t.Fatalf("summary after SIGINT: interrupted %v, duration %v s, %v", s.Interrupted, s.DurationS, err)
			}
		})
	}
}

// TestSetErrors: a -set typo or bad value is an error naming the override
// and the key, in run, sweep and validate alike.
func TestSetErrors(t *testing.T) {
	path := writeExperiment(t, strings.Replace(long, "600_000", "1", 1))
	for _, tc := range []struct {
		cmd  func([]string) error
		args []string
		want string
	}{
		{run, []string{path, "-set", "cc.schem=dctcp"}, "-set cc.schem=dctcp: cc.schem: unknown key"},
		{run, []string{path, "-set", "topology.link_gbps=x"}, "topology.link_gbps: incompatible types"},
		{validate, []string{"-set", "experiment.sed=2", path}, "experiment.sed: unknown key"},
		{sweep, []string{path, "-set", "topology.hosts=2,x"}, "-set topology.hosts=x: topology.hosts: incompatible types"},
		{sweep, []string{path, "-set", "novalue"}, "want key=v1,v2"},
		{sweep, []string{path, "-set", "flows.0.rate_gbps=1,2", "-set", "flows.9.src=1"}, "-set flows.9.src=1: flows.9.src: index 9 out of range"},
	} {
		err := tc.cmd(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// testbedMainEnv, set to 1 in a test binary's environment, makes the binary
// testbed itself: a test that runs testbed as a program (GNU parallel
// running a plan's commands) runs its own binary, built from this tree.
const testbedMainEnv = "CCBED_TEST_TESTBED_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(testbedMainEnv) == "1" {
		os.Exit(command(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestSweepPlanUnderParallel plans a sweep of 4 points, runs one task of its
// Slurm array script as Slurm would (the task's id in the environment) and
// then every command under GNU parallel, 2 at once, from the directory the
// plan was made in; -merge builds an index byte for byte the same as the
// one testbed sweep -j 2 writes for the same points in-process. Skipped
// without GNU parallel (apt-get install parallel).
func TestSweepPlanUnderParallel(t *testing.T) {
	par, err := exec.LookPath("parallel")
	if err != nil {
		t.Skip("GNU parallel is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("x.toml", []byte(strings.Replace(long, "duration_ms = 600_000", "duration_ms = 600_000\nseed = 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := []string{"-set", "topology.link_gbps=10,25", "-set", "cc.scheme=dcqcn,dctcp", "-duration", "3ms", "-q"}
	if err := sweep(append([]string{"x.toml", "-plan", "plan"}, sets...)); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), testbedMainEnv+"=1", "TESTBED="+self)
	slurm := exec.Command("bash", "plan/slurm.sh")
	slurm.Env = append(env, "SLURM_ARRAY_TASK_ID=1", "SLURM_SUBMIT_DIR="+must(os.Getwd()))
	if out, err := slurm.CombinedOutput(); err != nil {
		t.Fatalf("slurm.sh task 1: %v\n%s", err, out)
	}
	if _, err := os.Stat("plan/run-001/summary.json"); err != nil {
		t.Fatalf("slurm.sh task 1: %v", err)
	}
	jobs, err := os.Open("plan/jobs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer jobs.Close()
	cmd := exec.Command(par, "--will-cite", "-j", "2")
	cmd.Stdin, cmd.Env = jobs, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("parallel: %v\n%s", err, out)
	}
	if err := sweep([]string{"-merge", "plan", "-q"}); err != nil {
		t.Fatal(err)
	}
	if err := sweep(append([]string{"x.toml", "-j", "2", "-o", "out/sw"}, sets...)); err != nil {
		t.Fatal(err)
	}
	planned, err := os.ReadFile("plan/index.csv")
	if err != nil {
		t.Fatal(err)
	}
	inProcess, err := os.ReadFile("out/sw/index.csv")
	if err != nil || !bytes.Equal(planned, inProcess) || strings.Count(string(planned), ",ok,false,") != 4 {
		t.Errorf("index of the plan:\n%s\nof the sweep (%v):\n%s", planned, err, inProcess)
	}
	s, err := report.LoadSummary("plan/run-003/summary.json")
	if err != nil || s.Seed != 5 || s.Config.Path != "x.toml" || strings.Join(s.Config.Overrides, " ") != "topology.link_gbps=25 cc.scheme=dctcp" {
		t.Errorf("run-003: %+v, %v", s.Config, err)
	}
}

// must is v, failing on err (in a test's set-up).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSweepFlags: -merge stands alone, -j is 1 or more, a plan's runs write
// into it (no -o), and run's -run-dir excludes -o.
func TestSweepFlags(t *testing.T) {
	path := writeExperiment(t, strings.Replace(long, "600_000", "1", 1))
	for _, tc := range []struct {
		cmd  func([]string) error
		args []string
		want string
	}{
		{sweep, []string{path, "-merge", "d"}, "-merge DIR takes no experiment file"},
		{sweep, []string{"-set", "experiment.seed=1"}, "missing EXPERIMENT.toml"},
		{sweep, []string{path, "-j", "0", "-set", "experiment.seed=1"}, "-j 0: want 1 or more"},
		{sweep, []string{path, "-plan", "p", "-o", "o", "-set", "experiment.seed=1"}, "give -o or -plan"},
		{sweep, []string{"-merge", t.TempDir()}, "plan.json: no such file"},
		{run, []string{path, "-run-dir", "r", "-o", "o"}, "give -o or -run-dir"},
		{run, []string{path, "-results", "r", "-o", "o"}, "give -results or -o"},
		{sweep, []string{path, "-results", "r", "-o", "o", "-set", "experiment.seed=1"}, "give -results or -o"},
		{sweep, []string{path, "-results", "r", "-plan", "o", "-set", "experiment.seed=1"}, "give -o or -plan"},
	} {
		err := tc.cmd(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestOutMeanings: -o is the output directory of the command that writes
// it (the run's own, the sweep's own, the one flow.txt goes in); -results is
// run's and sweep's results root; the deprecated meanings hold where the new
// one cannot (a directory holding other files, a .txt path).
func TestOutMeanings(t *testing.T) {
	path := writeExperiment(t, strings.Replace(long, "600_000", "1", 1))
	root := t.TempDir()
	other := filepath.Join(root, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	sweepTaken := filepath.Join(root, "sweep-taken")
	os.MkdirAll(sweepTaken, 0o755)
	os.WriteFile(filepath.Join(sweepTaken, "plan.json"), []byte("{}"), 0o644)
	seed := []string{"-set", "experiment.seed=1,2"}
	sized := writeExperiment(t, strings.Replace(long, "600_000", "1", 1)+"size_bytes = 10000\n")
	for _, tc := range []struct {
		name string
		cmd  func([]string) error
		args []string
		want string // a file the command wrote, below root
		err  string
	}{
		{"run -o new", run, []string{path, "-q", "-o", filepath.Join(root, "r1")}, "r1/summary.json", ""},
		{"run -o again replaces", run, []string{path, "-q", "-o", filepath.Join(root, "r1")}, "r1/summary.json", ""},
		{"run -o empty", run, []string{path, "-q", "-o", must(os.MkdirTemp(root, "empty"))}, "", ""},
		{"run -results", run, []string{path, "-q", "-results", filepath.Join(root, "res")}, "res/long/latest/summary.json", ""},
		{"run -o deprecated", run, []string{path, "-q", "-o", other}, "other/long/latest/summary.json", ""},
		{"run -o a file", run, []string{path, "-q", "-o", filepath.Join(other, "notes.txt")}, "", "exists and is not a directory"},
		{"sweep -o new", sweep, append([]string{path, "-q", "-j", "1", "-o", filepath.Join(root, "sw")}, seed...), "sw/run-001/summary.json", ""},
		{"sweep -o taken", sweep, append([]string{path, "-q", "-o", sweepTaken}, seed...), "", "holds a sweep already"},
		{"sweep -results", sweep, append([]string{path, "-q", "-j", "1", "-results", filepath.Join(root, "swres")}, seed...), "swres/long-sweep/latest/index.csv", ""},
		{"sweep -o deprecated", sweep, append([]string{path, "-q", "-j", "1", "-o", other}, seed...), "other/long-sweep/latest/index.csv", ""},
		{"export-flows -o dir", exportFlows, []string{sized, "-q", "-o", filepath.Join(root, "flows")}, "flows/flow.txt", ""},
		{"export-flows -o file.txt", exportFlows, []string{sized, "-q", "-o", filepath.Join(root, "mine.txt")}, "mine.txt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cmd(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if _, err := os.Stat(filepath.Join(root, tc.want)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(other, "notes.txt")); string(b) != "mine" {
		t.Errorf("a deprecated -o touched a file of its own: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(root, "r1", "long")); len(m) > 0 {
		t.Errorf("run -o DIR wrote below DIR: %v", m)
	}
}
