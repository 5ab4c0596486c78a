package main

import (
	"os"
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

// TestSIGINTWritesInterruptedResults sends SIGINT to testbed run: the run
// stops, its results are written and marked interrupted.
func TestSIGINTWritesInterruptedResults(t *testing.T) {
	path := writeExperiment(t, long)
	out := t.TempDir()
	done := make(chan error, 1)
	go func() { done <- run([]string{path, "-o", out, "-q"}) }()
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
