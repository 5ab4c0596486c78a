package testbed

import (
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// pfcIncast is a 3-to-1 on the DPDK clock with no congestion control and PFC
// on static thresholds: three line-rate senders into one 1 Gb/s port, held by
// pauses alone.
const pfcIncast = `
[experiment]
name = "pfc-3to1"
duration_ms = 100
sample_us = 500
clock = "dpdk"

[topology]
hosts = 4
link_gbps = 1
buffer_bytes = 1_000_000
mtu_bytes = 1024

[cc]
scheme = "none"

[pfc]
enabled = true
xoff_bytes = 60_000
xon_offset_bytes = 20_000

[buffer]
mode = "static"
` + threeToOne

// TestDPDKClockPFCLog: a DPDK-clock run that pauses writes pfc.csv, one row
// per XOFF and XON, as many as the switch's counters (activations and XON
// frames sent) and none lost to a full ring; every row is an XOFF or XON of
// the lossless priority 3 of a sender's port.
func TestDPDKClockPFCLog(t *testing.T) {
	res := runVirtual(t, pfcIncast, t.TempDir()) // the file's clock: dpdk
	if res.Clock != ClockDPDK {
		t.Fatalf("clock %q, want dpdk", res.Clock)
	}
	rows := resultRows(t, res.Dir, report.PFCCSVFile)
	if got := rows[0]; len(got) != 5 || got[0] != "t_us" || got[3] != "event" {
		t.Fatalf("pfc.csv header %v", got)
	}
	var xoffs, xons uint64
	for _, r := range rows[1:] {
		if r[2] != "3" || (r[1] != "0" && r[1] != "1" && r[1] != "2") {
			t.Fatalf("pfc.csv row %v: want priority 3 of a sender's port (0-2)", r)
		}
		switch r[3] {
		case "xoff":
			xoffs++
		case "xon":
			xons++
		default:
			t.Fatalf("pfc.csv row %v: event %q", r, r[3])
		}
	}
	var act, resumes, dropped, ctlDrops uint64
	for _, sw := range res.Switches {
		dropped += sw.PFCEventsDropped
		for _, p := range sw.Ports {
			act += p.PFCOnsets
			resumes += p.ResumesSent
			ctlDrops += p.DropControl
		}
	}
	t.Logf("pfc.csv: %d XOFF, %d XON; the switch counted %d activations, %d XON frames, %d events dropped, %d control frames dropped",
		xoffs, xons, act, resumes, dropped, ctlDrops)
	if act == 0 {
		t.Fatal("nothing paused: the test's incast should drive PFC")
	}
	// An XON whose frame found the port's control queue full is an event
	// but no frame sent (counted as a control drop instead).
	if xoffs != act || xons < resumes || xons > resumes+ctlDrops || dropped != 0 {
		t.Errorf("pfc.csv has %d XOFF + %d XON rows; the switch counted %d activations + %d XON frames (%d control drops), %d events dropped: want as many rows, none dropped",
			xoffs, xons, act, resumes, ctlDrops, dropped)
	}
}
