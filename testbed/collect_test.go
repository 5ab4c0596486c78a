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
			rate, fct := "t_us,flow,gbps\n", "flow,size_bytes,fct_us,slowdown\n"
			if i < 3 {
				rep.Tx.DataFrames, rep.Tx.DataBytes = 1000, 1_000_000
				rep.Port.TxFrames = 1000
				rate += fmt.Sprintf("1000,%d,0.3\n100000,%d,0.33\n", i+1, i+1)
				if i == 2 {
					fct += "3,200000,1500,2.5\n"
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
	write("sw0", SwitchCSVFile, switchd.CSVHeader+"\n1999000.000,3,500,0.2500\n2050000.000,3,70000,0.3300\n2140000.000,3,0,0.3300\n2400000.000,3,90000,0.3300\n")
	write("sw0", CheckFile, "hugepages: not used (--no-huge)\nclock_offset_ns=-2500\n")
	sw := switchd.Results{Counters: switchd.Snapshot{Ports: []switchd.PortCounters{
		{Port: 0, RxPackets: 1000}, {Port: 1, RxPackets: 1000}, {Port: 2, RxPackets: 1000},
		{Port: 3, TxPackets: 3000, FeedbackSent: 42, DropsTotal: 0}}}}
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
	if f := s.Flows[2]; f.FCTUs != 1500 || f.Bytes != 200_000 {
		t.Errorf("flow 3: %+v", f)
	}
	var p3 bool
	for _, p := range s.Ports {
		if p.ID == 3 {
			// Samples at -1 ms and beyond 150 ms fall outside the run.
			p3 = p.AvgQueueBytes == 35000 && p.CNPsSent == 42
		}
	}
	if !p3 {
		t.Errorf("port 3: %+v", s.Ports)
	}
	if !strings.Contains(s.Notes, "consistency ok") || !strings.Contains(s.Notes, "unknown on h0") {
		t.Errorf("notes %q", s.Notes)
	}
	if res.Nodes[0].T0Us != -2e6 || res.Nodes[0].ClockOffset.OffsetNs == nil || *res.Nodes[0].ClockOffset.OffsetNs != -2500 {
		t.Errorf("switch time base %+v", res.Nodes[0])
	}
	for _, f := range []string{"summary.json", "queue.csv", "rate.csv", "fct.csv", "fairrate.csv", CollectFile, SwitchJSONFile, "counters-h3.json"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("merged %s: %v", f, err)
		}
	}

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
}
