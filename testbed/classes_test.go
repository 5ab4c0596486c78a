package testbed

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// classes is issue 26's researcher's case on a star: a web-search mix in
// lossless priority 3 and an incast in lossy priority 1, from the same three
// hosts to host 3, with PFC on priority 3.
const classes = `
[experiment]
name = "classes"
duration_ms = 10
sample_us = 20
clock = "virtual"

[topology]
hosts = 4
link_gbps = 10
delay_us = 1
mtu_bytes = 1000

[pfc]
enabled = true

[buffer]
size_bytes = 1_000_000

[[workloads]]
cdf = "../configs/workloads/websearch.cdf"
senders = [0, 1, 2]
dsts = [3]
load = 0.9
priority = 3

[[incast]]
id_base = 500_000
senders = [0, 1, 2]
dst = 3
size_bytes = 300_000
start_us = 500
repeat = 3
period_us = 1000
priority = 1
`

// TestTrafficClassesInResults: the two classes of the same hosts queue apart
// (queue_prio.csv: each priority's queue of every port, summing to
// queue.csv's), only the lossless one is paused (pfc.csv), and the summary
// gives the hottest port's queue per priority.
func TestTrafficClassesInResults(t *testing.T) {
	res := runVirtual(t, classes, t.TempDir())
	q := resultRows(t, res.Dir, report.QueueCSVFile)
	pq := resultRows(t, res.Dir, report.PrioQueueCSVFile)
	if got := pq[0]; len(got) != 4 || got[2] != "priority" {
		t.Fatalf("queue_prio.csv header %v", got)
	}
	// Every queue.csv row is followed in queue_prio.csv by one row for each of
	// priorities 1 and 3, in the same order, which sum to it.
	if len(pq)-1 != 2*(len(q)-1) {
		t.Fatalf("%d queue_prio.csv rows for %d queue.csv rows: want 2 each (priorities 1 and 3)", len(pq)-1, len(q)-1)
	}
	var peak [8]int64 // the largest queue of each priority at host 3's port
	for i := 1; i < len(q); i++ {
		a, b := pq[2*i-1], pq[2*i]
		if a[0] != q[i][0] || b[0] != q[i][0] || a[1] != q[i][1] || b[1] != q[i][1] || a[2] != "1" || b[2] != "3" {
			t.Fatalf("queue.csv row %v: queue_prio.csv rows %v %v", q[i], a, b)
		}
		x, _ := strconv.ParseInt(a[3], 10, 64)
		y, _ := strconv.ParseInt(b[3], 10, 64)
		if tot, _ := strconv.ParseInt(q[i][2], 10, 64); x+y != tot {
			t.Fatalf("t %s port %s: priorities 1 and 3 hold %d + %d bytes, the port %d", q[i][0], q[i][1], x, y, tot)
		}
		if q[i][1] == "3" {
			peak[1], peak[3] = max(peak[1], x), max(peak[3], y)
		}
	}
	if peak[1] == 0 || peak[3] == 0 {
		t.Fatalf("host 3's port: largest queue %d bytes in priority 1, %d in 3: want both classes queued", peak[1], peak[3])
	}
	pfc := resultRows(t, res.Dir, report.PFCCSVFile)
	if got := pfc[0]; len(got) != 5 || got[3] != "event" {
		t.Fatalf("pfc.csv header %v", got)
	}
	var xoffs int
	for _, r := range pfc[1:] {
		if r[2] != "3" || (r[3] != "xoff" && r[3] != "xon") {
			t.Fatalf("pfc.csv row %v: want XOFF / XON of the lossless priority 3 only", r)
		}
		if r[3] == "xoff" {
			xoffs++
		}
	}
	var act uint64
	for _, p := range res.Summary.Ports {
		act += p.PFCActivations
		// By priority: every pause and activation is the lossless
		// priority 3's.
		bp, ba := p.PFCPausesByPriority, p.PFCActivationsByPriority
		if bp == nil || ba == nil {
			t.Fatalf("port %d: no per-priority PFC counts", p.ID)
		}
		for prio := range 8 {
			wantP, wantA := uint64(0), uint64(0)
			if prio == 3 {
				wantP, wantA = p.PFCPauses, p.PFCActivations
			}
			if bp[prio] != wantP || ba[prio] != wantA {
				t.Fatalf("port %d priority %d: %d pauses, %d activations by priority; want %d, %d", p.ID, prio, bp[prio], ba[prio], wantP, wantA)
			}
		}
	}
	if xoffs == 0 || uint64(xoffs) != act {
		t.Fatalf("pfc.csv has %d XOFFs, the ports counted %d activations: want as many, and some", xoffs, act)
	}
	h := res.Summary.HottestPort
	if h == nil || h.ID != 3 || len(h.Priorities) != 2 || h.Priorities[0].Priority != 1 || h.Priorities[1].Priority != 3 {
		t.Fatalf("hottest_port %+v: want port 3 with priorities 1 and 3", h)
	}
	t.Logf("host 3's port: peak %d B in priority 1, %d B in priority 3; %d XOFFs; hottest %+v", peak[1], peak[3], xoffs, *h)
}

// TestGeneratedFlowsAreTheRunsFlows: every flow a virtual-time run completed
// (fct.csv) is one of GeneratedFlows, with its sender, receiver, size,
// start and priority; and export-flows writes them all as a flow.txt.
func TestGeneratedFlowsAreTheRunsFlows(t *testing.T) {
	e, err := Decode("classes.toml", classes, ".")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := e.GeneratedFlows()
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ src, id int }
	byKey := map[key]int{}
	var prios [8]int
	for i, f := range gen {
		byKey[key{f.Src, f.ID}] = i
		prios[*f.Priority]++
	}
	if len(byKey) != len(gen) || prios[1] != 9 || prios[3] != len(gen)-9 {
		t.Fatalf("%d flows (%d distinct), %v by priority: want the 9 incast flows in priority 1, the workload's in 3", len(gen), len(byKey), prios)
	}
	res := runVirtual(t, classes, t.TempDir())
	fct := resultRows(t, res.Dir, report.FCTCSVFile)
	if len(fct) < 20 {
		t.Fatalf("%d completed flows: want a few tens", len(fct)-1)
	}
	var rowPrios [8]int
	for _, r := range fct[1:] { // flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority
		id, _ := strconv.Atoi(r[0])
		src, _ := strconv.Atoi(r[1][1:])
		i, ok := byKey[key{src, id}]
		if !ok {
			t.Fatalf("fct.csv row %v: not a generated flow", r)
		}
		f := gen[i]
		start, _ := strconv.ParseFloat(r[4], 64)
		if "h"+strconv.Itoa(f.Dst) != r[2] || strconv.FormatInt(f.SizeBytes, 10) != r[3] || math.Abs(start-float64(f.StartNs)/1e3) > 1e-6 ||
			r[7] != strconv.Itoa(*f.Priority) {
			t.Fatalf("fct.csv row %v: generated %+v, priority %d", r, f, *f.Priority)
		}
		rowPrios[*f.Priority]++
	}
	if rowPrios[1] == 0 || rowPrios[3] == 0 {
		t.Errorf("fct.csv rows by priority %v: want both classes", rowPrios)
	}
	var b strings.Builder
	n, err := e.ExportNS3Flows(&b)
	if err != nil || n != len(gen) || !strings.HasPrefix(b.String(), strconv.Itoa(n)+"\n") || strings.Count(b.String(), "\n") != n+1 {
		t.Fatalf("export: %d flows, %v:\n%.300s", n, err, b.String())
	}
}

// TestExportNS3FlowsRoundTrip: the flows of an experiment made from ns-3's
// files export as the flow.txt they came from (its counted lines).
func TestExportNS3FlowsRoundTrip(t *testing.T) {
	e, err := Load("../configs/experiments/ns3-leafspine-virtual.toml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := e.ExportNS3Flows(&b); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../configs/ns3/flow.txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(strings.SplitAfter(string(src), "\n")[:4], ""); b.String() != want {
		t.Fatalf("exported\n%swant\n%s", b.String(), want)
	}
}

// TestTrafficClassesTaggedInPCP: with priority_tag = "pcp" the hosts tag
// each flow's priority in an 802.1Q tag (their DSCP stays 0) and the
// switches classify by it: the classes still queue apart, and PFC still
// pauses only the lossless one.
func TestTrafficClassesTaggedInPCP(t *testing.T) {
	text := strings.Replace(classes, "mtu_bytes = 1000", "mtu_bytes = 1000\npriority_tag = \"pcp\"", 1)
	e, err := Decode("classes.toml", text, ".")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Hosts[0]; !h.TagPCP || h.TagPriority || p.Switches[0].PriorityFromDSCP {
		t.Fatalf("hosts tag_pcp %v tag_priority %v, switch priorities from the DSCP %v", h.TagPCP, h.TagPriority, p.Switches[0].PriorityFromDSCP)
	}
	res := runVirtual(t, text, t.TempDir())
	var peak [8]int64
	for _, r := range resultRows(t, res.Dir, report.PrioQueueCSVFile)[1:] {
		if r[1] == "3" {
			p, _ := strconv.Atoi(r[2])
			b, _ := strconv.ParseInt(r[3], 10, 64)
			peak[p] = max(peak[p], b)
		}
	}
	var xoffs int
	for _, r := range resultRows(t, res.Dir, report.PFCCSVFile)[1:] {
		if r[2] != "3" {
			t.Fatalf("pfc.csv row %v: want priority 3 only", r)
		}
		if r[3] == "xoff" {
			xoffs++
		}
	}
	if peak[1] == 0 || peak[3] == 0 || xoffs == 0 {
		t.Fatalf("host 3's port: peaks %v by priority, %d XOFFs: want both classes queued and 3 paused", peak, xoffs)
	}
	t.Logf("host 3's port: peak %d B in priority 1, %d B in priority 3; %d XOFFs", peak[1], peak[3], xoffs)
}

// TestOnePriorityWritesNoPrioQueue: with one priority queue.csv is its
// queue: queue_prio.csv is not written, summary.json has no hottest_port;
// pfc.csv is written all the same.
func TestOnePriorityWritesNoPrioQueue(t *testing.T) {
	res := runVirtual(t, strings.Replace(classes, "priority = 1", "priority = 3", 1), t.TempDir())
	if _, err := os.Stat(filepath.Join(res.Dir, report.PrioQueueCSVFile)); !os.IsNotExist(err) {
		t.Fatalf("queue_prio.csv with one priority: %v", err)
	}
	if res.Summary.HottestPort != nil {
		t.Fatalf("hottest_port %+v with one priority", res.Summary.HottestPort)
	}
	if rows := resultRows(t, res.Dir, report.PFCCSVFile); len(rows) < 2 {
		t.Fatalf("pfc.csv: %d rows: want its header and XOFFs of priority 3", len(rows))
	}
}
