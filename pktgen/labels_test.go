package pktgen

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestRateLabels: the reports give L2 (frame bytes, no FCS) and L1 (plus 24 B
// of FCS, preamble and gap a frame) rates, each labelled.
func TestRateLabels(t *testing.T) {
	l2, l1 := gbps(1_000_000, 64_000_000, 1) // 1 Mpps of 64 B frames
	if math.Abs(l2-0.512) > 1e-9 || math.Abs(l1-0.704) > 1e-9 {
		t.Errorf("1 Mpps of 64 B: %v Gb/s L2, %v Gb/s L1; want 0.512, 0.704", l2, l1)
	}
	var b bytes.Buffer
	WriteText(&b, Summary{DurationS: 1, Ports: []PortSummary{{Name: "p", TxPackets: 1_000_000, TxMpps: 1, TxGbps: l2, TxL1Gbps: l1}}})
	for _, want := range []string{"Gb/s L2: frame bytes without FCS; L1: plus FCS, preamble and gap, 24 B a frame",
		"1.000 Mpps 0.512 Gb/s L2 0.704 Gb/s L1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nwant %q", b.String(), want)
		}
	}
}

// TestEALArgsAlias: eal_args as in the daemons' files; eal, its deprecated
// spelling, moves there and is flagged; both at once is an error.
func TestEALArgsAlias(t *testing.T) {
	port := []PortConfig{{Name: "net_null0"}}
	c := Config{EAL: []string{"--no-huge"}, Ports: port}
	if err := c.Validate(nil); err != nil || !c.DeprecatedEAL() || len(c.EAL) != 0 || strings.Join(c.EALArgs, " ") != "--no-huge" {
		t.Errorf("eal alone: %v, deprecated %v, eal_args %q", err, c.DeprecatedEAL(), c.EALArgs)
	}
	c = Config{EALArgs: []string{"--no-huge"}, Ports: port}
	if err := c.Validate(nil); err != nil || c.DeprecatedEAL() {
		t.Errorf("eal_args: %v, deprecated %v", err, c.DeprecatedEAL())
	}
	c = Config{EAL: []string{"-l", "0"}, EALArgs: []string{"--no-huge"}, Ports: port}
	if err := c.Validate(nil); err == nil || !strings.Contains(err.Error(), "give eal_args alone") {
		t.Errorf("eal and eal_args: %v", err)
	}
}
