package testbed

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// TestOverloadedWorkloadDegraded: the overloaded workload, end to end
// in virtual time and small. Four senders offer 95 % of their line each to
// one receiver in one-frame flows (4x what it can take), so their QPs
// (max_qps 1024 each) stay busy, and the flows arriving behind them fill the
// queue of flows waiting for a QP (max_pending 4096) and then overflow it.
// Dropped flows and flows never started must each mark the run degraded,
// with their counts, in summary.json; so must frames a receiver refused, if
// any (its flow table, 65,536 slots for the fabric's hosts, no longer fills
// here: TestDegradedReasons covers that reason).
func TestOverloadedWorkloadDegraded(t *testing.T) {
	dir := t.TempDir()
	cdf := filepath.Join(dir, "one-frame.cdf")
	if err := os.WriteFile(cdf, []byte("1000 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runVirtual(t, fmt.Sprintf(`
[experiment]
name = "overloaded"
duration_ms = 5
clock = "virtual"

[topology]
hosts = 5
link_gbps = 10
delay_us = 1
buffer_bytes = 1_000_000
mtu_bytes = 1000

[cc]
scheme = "dcqcn"

[[workloads]]
id_base = 1_000_000
cdf = %q
senders = [0, 1, 2, 3]
dsts = [4]
load = 0.95
`, cdf), dir)
	s, err := report.LoadSummary(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	reasons := strings.Join(s.DegradedReasons, "\n")
	var want []string
	var completed uint64
	for i, h := range res.Hosts {
		name := fmt.Sprintf("h%d", i)
		completed += h.Tx.FlowsCompleted
		if n := h.Tx.PendingDropped; n > 0 {
			want = append(want, fmt.Sprintf("host %s dropped %d flows unstarted", name, n))
		}
		if n := h.Tx.FlowsWaiting; n > 0 {
			want = append(want, fmt.Sprintf("host %s never started %d flows that arrived", name, n))
		}
		if n := h.Rx.FlowTableFull; n > 0 {
			want = append(want, fmt.Sprintf("host %s refused %d data frames", name, n))
		}
	}
	for _, k := range []string{"flows unstarted", "never started"} {
		if !strings.Contains(strings.Join(want, "\n"), k) {
			t.Errorf("no host counted %q: the workload did not overload (%q)", k, want)
		}
	}
	if !s.Degraded || len(s.DegradedReasons) != len(want) {
		t.Fatalf("degraded %v, reasons:\n%s\nwant %d:\n%s", s.Degraded, reasons, len(want), strings.Join(want, "\n"))
	}
	for _, w := range want {
		if !strings.Contains(reasons, w) {
			t.Errorf("no reason %q in:\n%s", w, reasons)
		}
	}
	// What was recorded is whole: a row for every completion.
	fct, err := os.ReadFile(filepath.Join(res.Dir, report.FCTCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	if rows := bytes.Count(fct, []byte{'\n'}) - 1; rows != int(completed) {
		t.Errorf("%d FCT rows, %d flows completed", rows, completed)
	}
	t.Logf("%d flows completed; %s", completed, reasons)
}
