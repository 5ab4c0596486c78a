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
			go func() { done <- run(append([]string{path, "-o", out, "-q"}, args...)) }()
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
	if err := sweep(append([]string{"x.toml", "-j", "2", "-o", "out"}, sets...)); err != nil {
		t.Fatal(err)
	}
	planned, err := os.ReadFile("plan/index.csv")
	if err != nil {
		t.Fatal(err)
	}
	inProcess, err := os.ReadFile("out/long-sweep/latest/index.csv")
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
	} {
		err := tc.cmd(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
