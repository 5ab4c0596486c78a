package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/testbed/report"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLatestLink: after two runs of different experiments into one parent,
// latest there points at the second's run directory and each experiment's
// latest at its own run, by relative paths, and no temporary link is left.
func TestLatestLink(t *testing.T) {
	out := t.TempDir()
	first := runVirtual(t, virtualRoCC, out)
	second := runVirtual(t, strings.Replace(virtualRoCC, `name = "v"`, `name = "w"`, 1), out)
	want := filepath.Join("w", filepath.Base(second.Dir))
	if got, err := os.Readlink(filepath.Join(out, LatestLink)); err != nil || got != want {
		t.Fatalf("latest -> %q (%v), want %q", got, err, want)
	}
	for _, r := range []*Result{first, second} {
		if got, err := os.Readlink(filepath.Join(filepath.Dir(r.Dir), LatestLink)); err != nil || got != filepath.Base(r.Dir) {
			t.Errorf("%s/latest -> %q (%v)", filepath.Dir(r.Dir), got, err)
		}
	}
	s, err := report.LoadSummary(filepath.Join(out, LatestLink, report.SummaryFile))
	if err != nil || s.Experiment != "w" {
		t.Errorf("latest/summary.json: experiment %q (%v), want w", s.Experiment, err)
	}
	if report.ResolveRun(filepath.Join(out, "v")) != filepath.Join(out, "v", LatestLink) {
		t.Errorf("ResolveRun(results/v) = %s", report.ResolveRun(filepath.Join(out, "v")))
	}
	if m, _ := filepath.Glob(filepath.Join(out, ".*")); len(m) != 0 {
		t.Errorf("left beside the results: %v", m)
	}
}

// TestLinkLatestRefuses: LinkLatest never replaces a directory or a file
// named latest; a run whose link cannot be updated still succeeds, with a
// warning on its log.
func TestLinkLatestRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, LatestLink), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := LinkLatest(dir, "run"); err == nil {
		t.Error("LinkLatest replaced a directory named latest")
	}
	if fi, err := os.Lstat(filepath.Join(dir, LatestLink)); err != nil || !fi.IsDir() {
		t.Errorf("the directory latest is gone: %v", err)
	}
	fileDir := t.TempDir()
	os.WriteFile(filepath.Join(fileDir, LatestLink), []byte("mine"), 0o644)
	if err := LinkLatest(fileDir, "run"); err == nil {
		t.Error("LinkLatest replaced a file named latest")
	}
	if b, _ := os.ReadFile(filepath.Join(fileDir, LatestLink)); string(b) != "mine" {
		t.Errorf("the file latest holds %q", b)
	}
	for _, d := range []string{dir, fileDir} {
		if m, _ := filepath.Glob(filepath.Join(d, ".*")); len(m) != 0 {
			t.Errorf("left behind: %v", m)
		}
	}

	e, err := Decode("v.toml", virtualRoCC, ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = dir
	core, logs := observer.New(zapcore.DebugLevel)
	res, err := RunWith(context.Background(), e, nil, RunOptions{Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessageSnippet("latest link not updated").FilterField(zap.String("dir", res.Dir)).Len(); n != 1 {
		t.Errorf("%d warnings about the latest link, want 1; log: %v", n, logs.All())
	}
	if logs.FilterMessage("results written").Len() != 1 {
		t.Errorf("no debug entry \"results written\"; log: %v", logs.All())
	}
}

// TestRunProgress: a virtual-time run reports its progress (simulated time
// of its end, flows started) about every second of wall time, between
// events; the caller may end the run from it.
func TestRunProgress(t *testing.T) {
	e, err := Decode("v.toml", strings.Replace(virtualRoCC, "duration_ms = 30", "duration_ms = 600_000", 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []fabric.Progress
	res, err := RunWith(ctx, e, nil, RunOptions{Progress: func(p fabric.Progress) {
		got = append(got, p)
		cancel()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !res.Interrupted {
		t.Fatalf("%d progress reports, interrupted %v; want 1, true", len(got), res.Interrupted)
	}
	p := got[0]
	if p.Clock != fabric.ClockVirtual || p.SimNs <= 0 || p.EndNs != 600_000_000_000 || p.FlowsStarted < 2 || p.Wall <= 0 {
		t.Errorf("progress %+v: want virtual, some time of 600 s, 2 or more flows started", p)
	}
	if s := p.String(); !strings.Contains(s, "of 600000.000 ms") || !strings.Contains(s, " done") {
		t.Errorf("progress line %q", s)
	}
}
