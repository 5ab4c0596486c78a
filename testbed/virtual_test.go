package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/testbed/report"
)

// virtualRoCC is RoCC 3-to-1 at the paper's scale in virtual time.
const virtualRoCC = `
[experiment]
name = "v"
duration_ms = 30
sample_us = 100
clock = "virtual"

[topology]
hosts = 4
link_gbps = 10
delay_us = 1
buffer_bytes = 1_000_000
mtu_bytes = 1000

[cc]
scheme = "rocc"
expected_flows = 3

[cc.params]
q_ref_bytes = 75_000
q_mid_bytes = 150_000
q_max_bytes = 210_000

[[flows]]
id = 1
src = 0
dst = 3

[[flows]]
id = 2
src = 1
dst = 3
start_us = 3000

[[flows]]
id = 3
src = 2
dst = 3
size_bytes = 2_000_000
start_us = 5000
`

func runVirtual(t *testing.T, text, dir string) *Result {
	t.Helper()
	e, err := Decode("v.toml", text, ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = dir
	res, err := Run(context.Background(), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// measured is summary.json without what differs between two runs of one
// experiment and seed: the start time, and the config snapshot (whose
// effective output_dir names each run's directory).
func measured(t *testing.T, summary []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(summary, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "started_at")
	delete(m, "config")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVirtualDeterministic: the same file and seed give byte-identical CSVs
// and identical measured values in summary.json.
func TestVirtualDeterministic(t *testing.T) {
	a := runVirtual(t, virtualRoCC, t.TempDir())
	b := runVirtual(t, virtualRoCC, t.TempDir())
	if a.Clock != ClockVirtual || a.Summary.Clock != ClockVirtual || a.Summary.Seed != 1 {
		t.Fatalf("clock %q, summary clock %q seed %d", a.Clock, a.Summary.Clock, a.Summary.Seed)
	}
	for _, name := range []string{"queue.csv", "rate.csv", "fairrate.csv", "fct.csv", "summary.json"} {
		x, err1 := os.ReadFile(filepath.Join(a.Dir, name))
		y, err2 := os.ReadFile(filepath.Join(b.Dir, name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		if bytes.Count(x, []byte("\n")) < 2 {
			t.Errorf("%s: nothing recorded:\n%s", name, x)
		}
		if name == "summary.json" {
			// Only when each run started, and where it wrote, differ.
			x, y = measured(t, x), measured(t, y)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of one file and seed", name)
		}
	}
	a.Summary.StartedAt, b.Summary.StartedAt = "", ""
	a.Summary.Config, b.Summary.Config = nil, nil
	if !reflect.DeepEqual(a.Summary, b.Summary) {
		t.Errorf("summaries differ:\n%+v\n%+v", a.Summary, b.Summary)
	}
	// The paper's figures, at the paper's scale: the 2 MB flow completed, and
	// the steady half (15-30 ms, two long flows) holds the queue at Q_ref.
	s := a.Summary
	var done bool
	for _, f := range s.Flows {
		if f.ID == 3 && f.FCTUs.Or(0) > 0 && f.Bytes == 2_000_000 {
			done = true
		}
	}
	if !done {
		t.Errorf("flow 3 (2 MB) did not complete: %+v", s.Flows)
	}
	if q := s.Ports[3].SteadyQueueBytes.Or(0); q < 70_000 || q > 80_000 {
		t.Errorf("steady queue %.0f bytes, want 75 KB (Q_ref)", q)
	}
}

// TestVirtualTopologies runs every topology kind briefly in virtual time and
// checks that every flow delivered, across switches.
func TestVirtualTopologies(t *testing.T) {
	base := `
[experiment]
name = "topo"
duration_ms = 2
clock = "virtual"

[cc]
scheme = "dcqcn"
`
	for _, tc := range []struct {
		name, topo string
		flows      [][2]int
		switches   int
	}{
		{"chain", `kind = "chain"
hosts_per_switch = [2, 0, 2]
link_gbps = 10
trunk_gbps = 40
delay_us = 1`, [][2]int{{0, 2}, {1, 3}, {3, 0}}, 3},
		{"leaf-spine", `kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link_gbps = 25
delay_us = 0.5`, [][2]int{{0, 2}, {1, 3}, {2, 1}}, 4},
		{"fat-tree", `kind = "fat-tree"
k = 4
link_gbps = 100`, [][2]int{{0, 15}, {5, 10}, {15, 1}}, 20},
		{"explicit", `kind = "explicit"
hosts = 3
switches = ["a", "b"]
links = [
  { a = "h0", b = "a", gbps = 10, delay_us = 1 },
  { a = "h1", b = "a", gbps = 10, delay_us = 1 },
  { a = "a", b = "b", gbps = 40, delay_us = 5, gbps_ba = 10 },
  { a = "h2", b = "b", gbps = 10, delay_us = 1 },
]`, [][2]int{{0, 2}, {1, 2}, {2, 0}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := base + "\n[topology]\n" + tc.topo + "\n"
			for i, f := range tc.flows {
				text += "\n[[flows]]\nid = " + strconv.Itoa(i+1) + "\nsrc = " + strconv.Itoa(f[0]) + "\ndst = " + strconv.Itoa(f[1]) + "\nsize_bytes = 100_000\n"
			}
			res := runVirtual(t, text, t.TempDir())
			if len(res.Switches) != tc.switches {
				t.Fatalf("%d switches, want %d", len(res.Switches), tc.switches)
			}
			for _, f := range res.Summary.Flows {
				if f.Bytes != 100_000 || f.FCTUs.Or(0) <= 0 {
					t.Errorf("flow %+v did not complete", f)
				}
			}
			if len(res.Summary.Flows) != len(tc.flows) {
				t.Errorf("flows %+v", res.Summary.Flows)
			}
			back, err := report.LoadSummary(filepath.Join(res.Dir, "summary.json"))
			if err != nil || back.Topology == "" || back.Clock != ClockVirtual {
				t.Errorf("summary.json: %v, topology %q clock %q", err, back.Topology, back.Clock)
			}
		})
	}
}

func TestTopologyErrorsInFile(t *testing.T) {
	for _, tc := range []struct {
		name, topo, key string
	}{
		{"kind", `kind = "ring"`, "topology.kind"},
		{"chain no switches", `kind = "chain"`, "topology.hosts_per_switch"},
		{"leaf-spine no spines", "kind = \"leaf-spine\"\nleaves = 2\nhosts_per_leaf = 2", "topology.spines"},
		{"fat-tree odd", "kind = \"fat-tree\"\nk = 3", "topology.k"},
		{"explicit unknown node", "kind = \"explicit\"\nhosts = 2\nswitches = [\"s\"]\nlinks = [{ a = \"h0\", b = \"x\", gbps = 1 }]", "topology.links[0].b"},
		{"explicit unreachable", "kind = \"explicit\"\nhosts = 2\nswitches = [\"s\"]\nlinks = [{ a = \"h0\", b = \"s\", gbps = 1 }]", "topology"},
		{"star too big", "hosts = 65", "topology.hosts"},
		{"clock", "hosts = 2", "experiment.clock"},
		{"missing cdf", "hosts = 2\n[[workloads]]\ncdf = \"nonexistent.cdf\"\nsenders = [0]\ndsts = [1]\nload = 0.5", "workloads[0].cdf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "[experiment]\nname = \"x\"\n"
			if tc.name == "clock" {
				text += "clock = \"wall\"\n"
			}
			text += "[topology]\n" + tc.topo + "\n[[flows]]\nid = 1\nsrc = 0\ndst = 1\n"
			_, err := Decode("x.toml", text, ".")
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.File != "x.toml" {
				t.Fatalf("got %v, want an error at x.toml's key %s", err, tc.key)
			}
		})
	}
}

// stalledThrough reports a loop of e's run res (DPDK) that runs hosts and
// stalled for at least the run's duration (lcore.Stats.MaxStallNs counts from
// time 0 for a loop launched after it, and up to the stop), when the run's
// summary says a stalled lcore disturbed it: none of that loop's hosts polled
// from time 0 on, so none sent. A run whose host loop got no CPU from time 0
// on (a loaded machine) has no traffic to judge; one that says nothing of the
// kind must have.
func stalledThrough(e *Experiment, res *Result) (lcore.Stats, bool) {
	durNs := int64(e.Experiment.DurationMs * 1e6)
	for _, l := range res.Loops {
		if stallDisturbed(res) && l.MaxStallNs >= durNs && slices.Contains(e.Lcores.Hosts, l.Lcore) {
			return l, true
		}
	}
	return lcore.Stats{}, false
}

// stallDisturbed reports whether res's summary says an lcore stall over the
// stall bound disturbed the run.
func stallDisturbed(res *Result) bool {
	for _, r := range res.Summary.DegradedReasons {
		if res.Summary.Degraded && strings.Contains(r, "stalled") {
			return true
		}
	}
	return false
}

// TestEveryExperimentRunsInBothClocks runs every example experiment for a few
// ms in virtual time and on DPDK: one experiment file, two drivers. Each run
// sends data, but for a DPDK run that says a loop of its was off its CPU
// from time 0 to the end (stalledThrough).
func TestEveryExperimentRunsInBothClocks(t *testing.T) {
	files, _ := filepath.Glob("../configs/experiments/*.toml")
	if len(files) == 0 {
		t.Fatal("no experiments")
	}
	for _, f := range files {
		for _, clock := range []string{ClockVirtual, ClockDPDK} {
			t.Run(filepath.Base(f)+"/"+clock, func(t *testing.T) {
				e, err := Load(f)
				if err != nil {
					t.Fatal(err)
				}
				e.Experiment.Clock = clock
				e.Experiment.DurationMs = 1
				if clock == ClockDPDK {
					e.Experiment.DurationMs = 30 // long enough to see traffic on a loaded machine
				}
				// Every flow and incast starts at once, so that a few ms see traffic.
				for i := range e.Flows {
					e.Flows[i].StartUs = 0
				}
				for i := range e.Incast {
					e.Incast[i].StartUs = 0
				}
				e.Experiment.WarmupMs = 0
				e.Experiment.OutputDir = t.TempDir()
				if plan, err := e.Plan(); err == nil && clock == ClockDPDK && len(plan.Topo.Links)*2 > dpdk.MaxEthPorts {
					// Too many links for one DPDK process: the run must say so.
					_, err := Run(context.Background(), e, nil)
					if err == nil || !strings.Contains(err.Error(), "RTE_MAX_ETHPORTS") {
						t.Fatalf("a topology of %d links on DPDK: got %v, want the ethdev port limit", len(plan.Topo.Links), err)
					}
					return
				}
				res, err := Run(context.Background(), e, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.Summary.Clock != clock || res.MbufsLeaked != 0 {
					t.Fatalf("clock %q, %d mbufs leaked", res.Summary.Clock, res.MbufsLeaked)
				}
				var sent uint64
				for _, h := range res.Hosts {
					sent += h.Tx.DataFrames
				}
				if sent == 0 {
					// Flows start at time 0: only a run none of whose host
					// polls came after it sends nothing, and it says so.
					if l, ok := stalledThrough(e, res); ok {
						t.Logf("no data frame sent: lcore %d (%s) was off its CPU for %.1f ms, the whole run, and the run says it was disturbed",
							l.Lcore, l.Name, float64(l.MaxStallNs)/1e6)
						return
					}
					t.Fatalf("no data frame sent in a run no lcore stall spanned (loops %+v, degraded reasons %q)", res.Loops, res.Summary.DegradedReasons)
				}
			})
		}
	}
}
