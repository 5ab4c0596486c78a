package testbed

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/testbed/report"
)

// TestInjectedFailures: an experiment with a loss rate and a link taken down
// for a while runs in virtual time, and summary.json lists what each link
// direction lost; the same experiment without them lists nothing. A node
// the topology lacks, times backwards, and the DPDK clock are refused at
// their keys.
func TestInjectedFailures(t *testing.T) {
	text := strings.Replace(virtualRoCC, "mtu_bytes = 1000\n", "mtu_bytes = 1000\nloss_rate = 0.001\n", 1) + `
[[link_failures]]
a = "h1"
b = "s0"
down_us = 5000
up_us = 6000
`
	res := runVirtual(t, text, t.TempDir())
	s, err := report.LoadSummary(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var lost, downLost, frames uint64
	fromH1 := false
	for _, l := range s.LinkLosses {
		lost, downLost, frames = lost+l.Lost, downLost+l.DownLost, frames+l.Frames
		fromH1 = fromH1 || (l.From == "h1" && l.To == "s0" && l.DownLost > 0)
	}
	if lost == 0 || downLost == 0 || !fromH1 || frames < lost+downLost {
		t.Errorf("link losses %+v: want random losses, and h1's uplink losing frames while down", s.LinkLosses)
	}
	clean := runVirtual(t, virtualRoCC, t.TempDir())
	if c, _ := report.LoadSummary(filepath.Join(clean.Dir, report.SummaryFile)); len(c.LinkLosses) != 0 {
		t.Errorf("no failures: link losses %+v", c.LinkLosses)
	}

	for _, tc := range []struct{ name, from, to, key string }{
		{"no such node", `a = "h1"`, `a = "h9"`, "link_failures[0].a"},
		{"up before down", "up_us = 6000", "up_us = 4000", "link_failures[0].up_us"},
		{"no link between", `b = "s0"`, `b = "h2"`, "link_failures"},
		{"DPDK clock", `clock = "virtual"`, `clock = "dpdk"`, "link_failures"},
		{"a certain loss", "loss_rate = 0.001", "loss_rate = 1", "topology.loss_rate"},
	} {
		_, err := Decode("v.toml", strings.Replace(text, tc.from, tc.to, 1), ".")
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s: %v, want an error at %s", tc.name, err, tc.key)
		}
	}
}
