package testbed

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// TestTerminalSummaryScales runs issue 26's researcher's experiment
// (configs/experiments/classes-leafspine-virtual.toml: 32 hosts, HPCC, web
// search in lossless priority 3 and an 8-to-1 incast in lossy priority 1
// from the same hosts), cut to 3 ms: its terminal summary fits in 40 lines
// with the lines testbed run adds around it (the experiment and mirrors
// lines before, the virtual-time and parallel lines after), holds the FCT
// slowdowns of both classes and the worst flows, and lists no flow one by
// one; with -flows (RunOptions.Table.AllFlows) it lists every flow.
func TestTerminalSummaryScales(t *testing.T) {
	const cmdLines = 4 // what cmd/testbed prints beside the summary
	run := func(o report.TableOptions) (string, *Result) {
		t.Helper()
		e, err := LoadWith(filepath.Join("..", "configs", "experiments", "classes-leafspine-virtual.toml"),
			[]string{"experiment.duration_ms=3"})
		if err != nil {
			t.Fatal(err)
		}
		e.Experiment.OutputDir = t.TempDir()
		var out bytes.Buffer
		res, err := RunWith(context.Background(), e, &out, RunOptions{Table: o})
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), res
	}
	text, res := run(report.TableOptions{})
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	t.Logf("%d lines:\n%s", len(lines), text)
	if n := len(lines) + cmdLines; n > 40 {
		t.Errorf("%d lines with testbed run's own, want at most 40", n)
	}
	s := res.Summary
	if len(s.Flows) <= report.MaxTableFlows || len(s.WorstFlows) != report.MaxWorstFlows {
		t.Fatalf("%d flows, %d worst: not the case this test is for", len(s.Flows), len(s.WorstFlows))
	}
	var classes []int
	for _, c := range s.ClassFCTBuckets {
		classes = append(classes, c.Priority)
	}
	if fmt.Sprint(classes) != "[1 3]" {
		t.Fatalf("summary's classes %v, want [1 3]", classes)
	}
	// has: a line of text starts with prefix's words (the table's columns
	// are aligned with spaces)
	has := func(text, prefix string) bool {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.Join(strings.Fields(l), " "), prefix+" ") {
				return true
			}
		}
		return false
	}
	for _, c := range s.ClassFCTBuckets {
		for _, b := range c.Buckets {
			if row := fmt.Sprintf("p%d [%d,%d) %d", c.Priority, b.LoBytes, b.HiBytes, b.Count); !has(text, row) {
				t.Errorf("no row %q for class p%d", row, c.Priority)
			}
		}
	}
	for _, w := range s.WorstFlows {
		if !has(text, fmt.Sprintf("%d %s %s %d", w.ID, w.Src, w.Dst, w.SizeBytes)) {
			t.Errorf("worst flow %d not printed", w.ID)
		}
	}
	if !strings.Contains(text, fmt.Sprintf("%d flows, ", len(s.Flows))) || !strings.Contains(text, "-flows") {
		t.Error("no flow count pointing to -flows")
	}

	full, res := run(report.TableOptions{AllFlows: true})
	if strings.Contains(full, "largest FCT slowdown") {
		t.Error("-flows still prints the worst flows alone")
	}
	for _, f := range res.Summary.Flows {
		if !has(full, fmt.Sprintf("%d %s %s %d", f.ID, f.Src, f.Dst, f.Bytes)) {
			t.Fatalf("-flows: flow %d not printed", f.ID)
		}
	}
	if n := strings.Count(full, "\n"); n < len(res.Summary.Flows) {
		t.Errorf("-flows: %d lines for %d flows", n, len(res.Summary.Flows))
	}
}
