package testbed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
	swdaemon "github.com/ccbed/ccbed/switchd/daemon"
	"github.com/ccbed/ccbed/testbed/report"
)

// TestCollectSynthetic merges hand-written node results: the switch's series
// shifted onto the hosts' time base, flows and ports as a one-process run
// records them, the consistency check passing, then failing when frames
// vanish.
func TestCollectSynthetic(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "inv.ini"), []byte(filledInventory), 0o644)
	inv, err := ReadInventory(filepath.Join(dir, "inv.ini"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.NodeFiles(dir, inv); err != nil {
		t.Fatal(err)
	}
	const start = int64(1_795_000_000_000_000_000)
	write := func(node, name string, v any) {
		p := filepath.Join(dir, ResultsSubdir, node, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else {
			b, _ = json.Marshal(v)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// hostsOut writes the hosts' outputs: lost data frames the receiver's
	// NIC got but the host did not count (counters that disagree), linkLost
	// frames the switch sent that the receiver's NIC never got (a loss on the
	// link, which both ends' counters show).
	hostsOut := func(lost, linkLost uint64) {
		for i := 0; i < 4; i++ {
			h := fmt.Sprintf("h%d", i)
			write(h, hostd.RunInfoFile, hostd.RunInfo{Host: h, StartAtUnixNs: start, StartAt: "2026-11-18T00:00:00Z",
				T0UnixNs: start + 100_000, DurationS: 0.15, ClockOffset: hostd.ClockOffset{Source: "none here"}})
			var rep hostd.Report
			rate, fct := hostd.RateCSVHeader+"\n", hostd.FCTCSVHeader+"\n"
			if i < 3 {
				rep.Tx.DataFrames, rep.Tx.DataBytes = 1000, 1_000_000
				rep.Port.TxFrames = 1000
				rate += fmt.Sprintf("1000,%d,0.3,0.35,\n100000,%d,0.33,0.333,\n", i+1, i+1)
				if i == 2 {
					fct += "3,10.0.0.3,10.0.0.4,200000,1000.000,1500.000,2.5000,1\n"
				} else {
					rep.Active = []hostd.FlowState{{Flow: int64(i + 1), AckedBytes: 900_000}}
				}
			} else {
				got := 3000 - lost - linkLost
				rep.Rx.Data, rep.Rx.DataBytes = got, got*1000
				rep.Port.RxFrames = 3000 - linkLost
			}
			write(h, "counters.json", rep)
			write(h, "rate.csv", rate)
			write(h, "fct.csv", fct)
		}
	}
	hostsOut(0, 0)
	// The switch started 2 s before the instant: its t = 2 000 000 us is the
	// hosts' 0.
	write("sw0", SwitchLogFile, "1794999998.000000 switchd: port 0 ...\n1794999998.000000 switchd: running, mode pipeline on lcores [1 2 3]\n")
	write("sw0", SwitchCSVFile, swdaemon.CSVHeader+"\n1999000.000,3,500,0.2500\n2050000.000,3,70000,0.3300\n2140000.000,3,0,0.3300\n2400000.000,3,90000,0.3300\n")
	write("sw0", CheckFile, "hugepages: not used (--no-huge)\nclock_offset_ns=-2500\n")
	sw := switchd.Results{Counters: switchd.Snapshot{Ports: []switchd.PortCounters{
		{Port: 0, TrafficCounters: switchd.TrafficCounters{RxPackets: 1000}},
		{Port: 1, TrafficCounters: switchd.TrafficCounters{RxPackets: 1000}},
		{Port: 2, TrafficCounters: switchd.TrafficCounters{RxPackets: 1000}},
		{Port: 3, TrafficCounters: switchd.TrafficCounters{TxPackets: 3000}, FeedbackSent: 42, DropsTotal: 0}}}}
	write("sw0", SwitchJSONFile, sw)

	res, err := Collect(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if !res.Consistency.OK || s.Experiment != "e2e" || s.DurationS != 0.15 || len(s.Flows) != 3 {
		t.Fatalf("consistency %+v; summary %+v", res.Consistency, s)
	}
	if f := s.Flows[0]; f.Src != "h0" || f.Dst != "h3" || f.Bytes != 900_000 {
		t.Errorf("flow 1: %+v", f)
	}
	if f := s.Flows[2]; f.FCTUs.Or(0) != 1500 || f.Bytes != 200_000 {
		t.Errorf("flow 3: %+v", f)
	}
	var p3 bool
	for _, p := range s.Ports {
		if p.ID == 3 {
			// Samples at -1 ms and beyond 150 ms fall outside the run.
			p3 = p.AvgQueueBytes.Or(0) == 35000 && p.CNPsSent == 42
		}
	}
	if !p3 {
		t.Errorf("port 3: %+v", s.Ports)
	}
	if !strings.Contains(s.Notes, "consistency ok") || !strings.Contains(s.Notes, "unknown on h0") {
		t.Errorf("notes %q", s.Notes)
	}
	if res.Nodes[0].T0Us != -2e6 || res.Nodes[0].ClockOffset.OffsetNs == nil || *res.Nodes[0].ClockOffset.OffsetNs != -2500 ||
		!strings.Contains(res.Nodes[0].T0Source, "running") {
		t.Errorf("switch time base %+v", res.Nodes[0])
	}
	// hostd's addresses become host names, its start time moves onto the
	// common time base (h2 woke 100 us after the instant); the sender's
	// rate is kept beside the goodput; unknown clock offsets do not degrade
	// the run; the flow's priority is kept.
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "fct.csv")); !strings.Contains(string(b), "\n3,h2,h3,200000,1100,1500,2.5,1\n") {
		t.Errorf("merged fct.csv:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "rate.csv")); !strings.Contains(string(b), "\n1100,1,0.3,0.35,\n") {
		t.Errorf("merged rate.csv:\n%s", b)
	}
	if s.Degraded || len(s.DegradedReasons) != 0 || s.StartedAt != "2026-11-18T11:06:40Z" || s.Config == nil || s.Config.SHA256 == "" {
		t.Errorf("degraded %v %q, started %q, config %+v", s.Degraded, s.DegradedReasons, s.StartedAt, s.Config)
	}
	for _, f := range []string{"summary.json", "queue.csv", "rate.csv", "fct.csv", "fairrate.csv", CollectFile, SwitchJSONFile, "counters-h3.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("merged %s: %v", f, err)
		}
	}

	// An older hostd's fct.csv, without priority: an empty cell. A priority
	// out of 0-7 is an error.
	write("h2", "fct.csv", hostd.FCTCSVHeaderNoPriority+"\n3,10.0.0.3,10.0.0.4,200000,1000.000,1500.000,2.5000\n")
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "fct.csv")); !strings.Contains(string(b), "\n3,h2,h3,200000,1100,1500,2.5,\n") {
		t.Errorf("merged fct.csv of an fct.csv without priority:\n%s", b)
	}
	write("h2", "fct.csv", hostd.FCTCSVHeader+"\n3,10.0.0.3,10.0.0.4,200000,1000.000,1500.000,2.5000,8\n")
	if _, err := Collect(dir, "", nil); err == nil || !strings.Contains(err.Error(), "priority 8") {
		t.Errorf("fct.csv with priority 8: %v, want an error naming it", err)
	}
	hostsOut(0, 0)

	// switchd's PFC event log: its columns are pfc.csv's. Without one (a
	// switchd before it) the merged pfc.csv has its header only and the
	// notes say why; with one, its events move onto the common time base
	// (those before the instant left out) and into pfc.csv; a log shorter
	// than the count in the switch's final JSON degrades the run.
	if swdaemon.PFCCSVHeader != report.PFCCSVHeader {
		t.Fatalf("switchd's PFC log header %q, pfc.csv's %q", swdaemon.PFCCSVHeader, report.PFCCSVHeader)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, report.PFCCSVFile)); string(b) != report.PFCCSVHeader+"\n" ||
		!strings.Contains(s.Notes, "left no PFC event log") {
		t.Errorf("no PFC log: merged pfc.csv %q, notes %q", b, s.Notes)
	}
	write("sw0", swdaemon.PFCCSVFile, swdaemon.PFCCSVHeader+"\n1999000.000,3,3,xoff,100\n2050000.000,0,3,xoff,20096\n2051000.500,0,3,xon,14999\n")
	sw.Final, sw.PFCRows = true, 3
	write("sw0", SwitchJSONFile, sw)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	wantPFC := report.PFCCSVHeader + "\n50000,0,3,xoff,20096\n51000.5,0,3,xon,14999\n"
	if b, _ := os.ReadFile(filepath.Join(res.Dir, report.PFCCSVFile)); string(b) != wantPFC || res.Summary.Degraded ||
		strings.Contains(res.Summary.Notes, "PFC event log") {
		t.Errorf("merged pfc.csv %q, want %q; degraded %v %q; notes %q", b, wantPFC, res.Summary.Degraded, res.Summary.DegradedReasons, res.Summary.Notes)
	}
	sw.PFCRows = 5
	write("sw0", SwitchJSONFile, sw)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; !s.Degraded || len(s.DegradedReasons) != 1 || !strings.Contains(s.DegradedReasons[0], "wrote 5 PFC events, its pfc.csv holds 3") {
		t.Errorf("a PFC log short of the JSON's count: degraded %v %q", s.Degraded, s.DegradedReasons)
	}
	write("sw0", swdaemon.PFCCSVFile, swdaemon.PFCCSVHeader+"\n2050000.000,0,9,xoff,1\n")
	if _, err := Collect(dir, "", nil); err == nil || !strings.Contains(err.Error(), "priority 9") {
		t.Errorf("a PFC log with priority 9: %v, want an error naming it", err)
	}
	os.Remove(filepath.Join(dir, ResultsSubdir, "sw0", swdaemon.PFCCSVFile))
	sw.Final, sw.PFCRows = false, 0
	write("sw0", SwitchJSONFile, sw)

	// A switchd that records its own clock origin (1 s before the instant)
	// is placed by it, not by the log's stamp (2 s before).
	sw.ClockOriginUnixNs = start - 1_000_000_000
	write("sw0", SwitchJSONFile, sw)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if n := res.Nodes[0]; n.T0Us != -1e6 || !strings.Contains(n.T0Source, "clock_origin_unix_ns") {
		t.Errorf("switch time base from its clock origin: %+v, want T0Us -1e6", n)
	}
	sw.ClockOriginUnixNs = 0
	write("sw0", SwitchJSONFile, sw)

	// 400 data frames vanish inside a host, after its NIC: the counters
	// disagree and the check fails.
	hostsOut(400, 0)
	res, err = Collect(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Consistency.OK || !strings.Contains(res.Summary.Notes, "consistency FAILED") {
		t.Errorf("400 frames lost in a host, check %+v", res.Consistency)
	}
	if !res.Summary.Degraded || !strings.Contains(strings.Join(res.Summary.DegradedReasons, ";"), "disagree") {
		t.Errorf("400 frames lost in a host: degraded %v %q", res.Summary.Degraded, res.Summary.DegradedReasons)
	}

	// 400 frames lost on the switch-to-host link (both NICs count them): the
	// counters agree, and the run is marked degraded.
	hostsOut(0, 400)
	res, err = Collect(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Consistency; !c.OK || c.LinkLostFrames != 400 || !strings.Contains(res.Summary.Notes, "DEGRADED") {
		t.Errorf("400 frames lost on a link, check %+v", c)
	}
	if s := res.Summary; !s.Degraded || len(s.DegradedReasons) != 1 || !strings.Contains(s.DegradedReasons[0], "400 frames lost") {
		t.Errorf("400 frames lost on a link: degraded %v %q", s.Degraded, s.DegradedReasons)
	}

	// 500 control frames (ACKs, rate messages) lost on the switch-to-sender
	// link of h0: no data frame is missing, the run is degraded, the check
	// passes; 500 such frames and 400 data frames vanishing inside a host
	// fail it.
	sw.Counters.Ports[0].TxPackets = 500
	write("sw0", SwitchJSONFile, sw)
	hostsOut(0, 0)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if c := res.Consistency; !c.OK || c.LinkLostFrames != 500 || !res.Summary.Degraded {
		t.Errorf("500 control frames lost on a sender's link: check %+v, degraded %v", c, res.Summary.Degraded)
	}
	hostsOut(400, 0)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if res.Consistency.OK {
		t.Errorf("400 data frames lost in a host beside 500 control frames lost on a link: check %+v", res.Consistency)
	}
	sw.Counters.Ports[0].TxPackets = 0
	write("sw0", SwitchJSONFile, sw)

	// A clock offset above the bound degrades the run.
	write("sw0", CheckFile, "clock_offset_ns=9000000\n")
	hostsOut(0, 0)
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; !s.Degraded || !strings.Contains(strings.Join(s.DegradedReasons, ";"), "clock offsets above") {
		t.Errorf("clock offset 9 ms: degraded %v %q", s.Degraded, s.DegradedReasons)
	}

	// What the nodes' own counters say they lost: a switch lcore stalled
	// 3 ms and a host's 0.5 ms (over the experiment's bound, which nodes.json
	// carries; the host's other lcore, 90 us, is within it), flows a
	// host dropped from its full pending queue or never started, FCT records
	// it did not keep. Each is a reason with its count.
	write("sw0", CheckFile, "clock_offset_ns=-2500\n")
	sw.Lcores = []switchd.LcoreResults{{Name: "rx", Lcore: 1, Iterations: 10, MaxStallNs: 3_000_000}}
	write("sw0", SwitchJSONFile, sw)
	hostsOut(0, 0)
	var rep hostd.Report
	if err := readJSONFile(filepath.Join(dir, ResultsSubdir, "h0", "counters.json"), &rep); err != nil {
		t.Fatal(err)
	}
	rep.Tx.PendingDropped, rep.Tx.FlowsWaiting, rep.Tx.FCTsDropped = 12, 3, 2
	write("h0", "counters.json", rep)
	write("h1", hostd.RunInfoFile, hostd.RunInfo{Host: "h1", StartAtUnixNs: start, StartAt: "2026-11-18T00:00:00Z",
		T0UnixNs: start + 100_000, DurationS: 0.15, ClockOffset: hostd.ClockOffset{Source: "none here"},
		Lcores: []hostd.LcoreRun{{Name: "host", Lcore: 2, Iterations: 10, MaxStallNs: 500_000}, {Name: "rx", Lcore: 3, Iterations: 10, MaxStallNs: 90_000}}})
	// h2 reached its time 0 2.5 ms after the instant (off its CPU then);
	// the others' 100 us is within the bound.
	write("h2", hostd.RunInfoFile, hostd.RunInfo{Host: "h2", StartAtUnixNs: start, StartAt: "2026-11-18T00:00:00Z",
		T0UnixNs: start + 2_500_000, DurationS: 0.15, ClockOffset: hostd.ClockOffset{Source: "none here"}})
	if res, err = Collect(dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if res.StallBound == nil || res.StallBound.Ns != 100_000 {
		t.Errorf("collect result's stall bound %+v, want the manifest's 100 us", res.StallBound)
	}
	want := []string{"lcore 1 (switch rx) stalled for up to 3.000 ms, over the stall bound of 100 us: 0.5 of ",
		"lcore 2 (h1 host) stalled for up to 0.500 ms, over the stall bound of 100 us",
		"host h2 reached its time 0 2.500 ms after the common start instant, over the stall bound of 100 us",
		"host h0 dropped 12 flows unstarted", "host h0 never started 3 flows", "host h0 dropped 2 FCT records"}
	if s := res.Summary; !s.Degraded || len(s.DegradedReasons) != len(want) {
		t.Fatalf("node losses: degraded %v %q, want %q", s.Degraded, s.DegradedReasons, want)
	}
	for i, w := range want {
		if r := res.Summary.DegradedReasons[i]; !strings.Contains(r, w) {
			t.Errorf("reason %q, want %q", r, w)
		}
	}
}
