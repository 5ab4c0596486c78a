package testbed

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ns3DatacenterDir holds ns3-datacenter's own input files, unchanged
// (ns3/testdata/ns3-datacenter/README.md).
const ns3DatacenterDir = "../ns3/testdata/ns3-datacenter/examples/PowerTCP"

// ns3Datacenter returns the absolute path of one of ns3-datacenter's files.
func ns3Datacenter(tb testing.TB, name string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join(ns3DatacenterDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// ns3ConfigMode writes ns3-datacenter's config.txt with its CC_MODE line set
// to mode (the file has CC_MODE 3) and returns its path; the experiment then
// names the topology and flows itself, as the copy's TOPOLOGY_FILE no longer
// resolves.
func ns3ConfigMode(tb testing.TB, mode string) string {
	tb.Helper()
	b, err := os.ReadFile(ns3Datacenter(tb, "config.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	text := strings.Replace(string(b), "CC_MODE 3\n", "CC_MODE "+mode+"\n", 1)
	if mode != "3" && text == string(b) {
		tb.Fatal("config.txt has no CC_MODE 3 line")
	}
	p := filepath.Join(tb.TempDir(), "config.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// ns3Experiment is an experiment of ns3-datacenter's files for CC_MODE mode
// with extra experiment keys.
func ns3Experiment(tb testing.TB, mode, extra string) string {
	tb.Helper()
	topo := ""
	conf := ns3Datacenter(tb, "config.txt")
	if mode != "3" {
		conf = ns3ConfigMode(tb, mode)
		topo = "ns3_topology = \"" + ns3Datacenter(tb, "topology.txt") + "\"\nns3_flows = \"" + ns3Datacenter(tb, "flow.txt") + "\"\n"
	}
	return "[experiment]\nname = \"ns3dc\"\nclock = \"virtual\"\n" + extra +
		"\n[topology]\nkind = \"ns3\"\nns3_config = \"" + conf + "\"\n" + topo
}

// TestNS3ConfigDatacenter: ns3-datacenter's config.txt, topology.txt (4-field
// header) and flow.txt validate unchanged for CC_MODE 1, 3, 7 and 8; the
// settings map as testbed/ns3config.go says, times stay absolute, and what
// ccbed cannot honour is named in one warning.
func TestNS3ConfigDatacenter(t *testing.T) {
	for _, tc := range []struct {
		mode, scheme string
		params       map[string]any
		// warned are the keys the warning names.
		warned []string
	}{
		{"1", "dcqcn", map[string]any{
			"alpha_timer_us": 1.0, "alpha_update": "timer", "decrease_interval_us": 4.0, "increase_timer_us": 900.0,
			"g": 0.00390625, "f": int64(2), "rai_mbps": 50.0, "rhai_mbps": 100.0, "min_rate_mbps": 100.0,
			"clamp_target_rate": false, "window": true, "byte_counter_bytes": int64(0), "timer_hyper_increase": true,
			"cnp_interval_us": 0.0,
			"ecn_by_link": []map[string]any{
				{"gbps": 25.0, "kmin_bytes": int64(100_000), "kmax_bytes": int64(400_000), "pmax": 0.2},
				{"gbps": 100.0, "kmin_bytes": int64(400_000), "kmax_bytes": int64(1_600_000), "pmax": 0.2},
			}}, []string{"ACK_HIGH_PRIO"}},
		{"3", "hpcc", map[string]any{"eta": 0.95, "max_stage": int64(5), "rate_ai_mbps": 50.0}, []string{"ACK_HIGH_PRIO"}},
		{"7", "timely", map[string]any{"delta_bps": 50e6, "hai_factor": 2.0, "min_rate_bps": 100e6,
			"t_low_ns": int64(50_000), "min_rtt_ns": int64(20_000)},
			[]string{"ACK_HIGH_PRIO", "HAS_WIN"}},
		{"8", "dctcp", map[string]any{"g": 0.00390625, "mark_at": "dequeue"},
			[]string{"ACK_HIGH_PRIO", "DCTCP_RATE_AI", "MIN_RATE", "KMIN_MAP"}},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			e, err := Decode("x.toml", ns3Experiment(t, tc.mode, ""), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Plan(); err != nil {
				t.Fatal(err)
			}
			x, tp := e.Experiment, e.Topology
			if e.CC.Scheme != tc.scheme || x.DurationMs != 400 || tp.MTUBytes != 1000 || tp.AckEvery != 1 ||
				!e.PFC.Enabled || e.Buffer.SizeBytes != 50<<20 {
				t.Errorf("scheme %s, duration %v ms, mtu %d, ack_every %d, pfc %v, buffer %d: want %s, 400 (SIMULATOR_STOP_TIME 0.4), 1000, 1, true, 50 MiB",
					e.CC.Scheme, x.DurationMs, tp.MTUBytes, tp.AckEvery, e.PFC.Enabled, e.Buffer.SizeBytes, tc.scheme)
			}
			if !reflect.DeepEqual(e.CC.Params, tc.params) {
				t.Errorf("cc.params\n%v\nwant\n%v", e.CC.Params, tc.params)
			}
			if len(e.Topo().Hosts) != 128 || len(e.Topo().Switches) != 10 {
				t.Errorf("%d hosts, %d switches: want 128, 10", len(e.Topo().Hosts), len(e.Topo().Switches))
			}
			// flow.txt: 5 flows, the first at 0.001 s, kept absolute.
			if len(e.ns3Flows) != 5 || e.ns3Flows[0].StartNs != 1_000_000 || e.ns3Flows[4].StartNs != 400_000_000 {
				t.Errorf("flows %+v: want 5, from 1 ms to 400 ms", e.ns3Flows)
			}
			w := e.Warnings()
			t.Logf("warning: %q", w)
			if len(w) != 1 {
				t.Fatalf("warnings %q: want one", w)
			}
			for _, k := range tc.warned {
				if !strings.Contains(w[0], k+" ") {
					t.Errorf("warning does not name %s: %s", k, w[0])
				}
			}
			if n := strings.Count(w[0], "(line "); n != len(tc.warned) {
				t.Errorf("warning names %d settings, want %d (%v): %s", n, len(tc.warned), tc.warned, w[0])
			}
			if tc.mode == "3" && !strings.Contains(w[0], "ACK_HIGH_PRIO 0 (line 46)") {
				t.Errorf("warning does not give the line: %s", w[0])
			}
		})
	}
}

// TestNS3ConfigPrecedence: the experiment file's keys, its overrides and a
// second Validate (as after -duration) win over config.txt.
func TestNS3ConfigPrecedence(t *testing.T) {
	text := ns3Experiment(t, "3", "duration_ms = 2\n") + "mtu_bytes = 1500\n[cc]\nscheme = \"dcqcn\"\n[cc.params]\nf = 7\n"
	e, err := DecodeWith("x.toml", text, ".", []string{"topology.ack_every=2", "pfc.enabled=false"})
	if err != nil {
		t.Fatal(err)
	}
	p := e.CC.Params
	if e.Experiment.DurationMs != 2 || e.Topology.MTUBytes != 1500 || e.Topology.AckEvery != 2 || e.PFC.Enabled ||
		e.CC.Scheme != "dcqcn" || p["f"] != int64(7) || p["g"] != 0.00390625 {
		t.Errorf("duration %v, mtu %d, ack_every %d, pfc %v, scheme %s, f %v, g %v: want the experiment's 2, 1500, 2, false, dcqcn, 7, and config.txt's g",
			e.Experiment.DurationMs, e.Topology.MTUBytes, e.Topology.AckEvery, e.PFC.Enabled, e.CC.Scheme, p["f"], p["g"])
	}
	e.Experiment.DurationMs = 3 // -duration 3ms
	if err := e.Validate(); err != nil || e.Experiment.DurationMs != 3 {
		t.Errorf("after -duration: %v, duration %v, want 3", err, e.Experiment.DurationMs)
	}
}

// TestNS3ConfigErrors: config.txt's errors name its file and line, and the
// experiment key that names it.
func TestNS3ConfigErrors(t *testing.T) {
	conf, err := os.ReadFile(ns3Datacenter(t, "config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"mode", "CC_MODE 3\n", "CC_MODE 10\n", "config.txt:15: CC_MODE: 10: ccbed runs CC_MODE 1"},
		{"rate", "RATE_AI 50Mb/s", "RATE_AI 50", ""},
		{"bad rate", "RATE_AI 50Mb/s", "RATE_AI fast", `config.txt:22: RATE_AI: "fast"`},
		{"payload", "PACKET_PAYLOAD_SIZE 1000", "PACKET_PAYLOAD_SIZE 10", "config.txt:4: PACKET_PAYLOAD_SIZE: 10: ccbed takes 64..9000"},
		{"stop", "SIMULATOR_STOP_TIME 0.4", "SIMULATOR_STOP_TIME 0", "config.txt:13: SIMULATOR_STOP_TIME"},
		{"map", "KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600", "KMAX_MAP 1 25000000000 400", "config.txt:52: KMAX_MAP: no entry for 1e+11 bits/s"},
		{"topology", "TOPOLOGY_FILE examples/PowerTCP/topology.txt", "TOPOLOGY_FILE examples/PowerTCP/nothing.txt", "config.txt:6: TOPOLOGY_FILE examples/PowerTCP/nothing.txt: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "examples", "PowerTCP")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"topology.txt", "flow.txt"} {
				b, err := os.ReadFile(ns3Datacenter(t, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text := strings.Replace(string(conf), tc.from, tc.to, 1)
			if err := os.WriteFile(filepath.Join(dir, "config.txt"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			exp := "[experiment]\nname = \"x\"\nclock = \"virtual\"\n[topology]\nkind = \"ns3\"\nns3_config = \"config.txt\"\n[cc]\nscheme = \"dcqcn\"\n"
			if tc.name == "mode" {
				exp = strings.Replace(exp, "[cc]\nscheme = \"dcqcn\"\n", "", 1)
			}
			_, err := Decode("x.toml", exp, dir)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "topology.ns3_config") {
				t.Fatalf("got %v\nwant an error at topology.ns3_config with %q", err, tc.want)
			}
		})
	}
}

// TestNS3StartS: ns3_start_s moves time 0; a flow before it is an error.
func TestNS3StartS(t *testing.T) {
	e, err := Load("../configs/experiments/ns3-leafspine-virtual.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.ns3Flows) != 3 || e.ns3Flows[0].StartNs != 0 || e.ns3Flows[1].StartNs != 1000 {
		t.Errorf("flows %+v: want 3, at 0 and 1 us, ...", e.ns3Flows)
	}
	_, err = DecodeWith("x.toml", "[experiment]\nname = \"x\"\n[topology]\nkind = \"ns3\"\nns3_topology = \""+nsTopology(t)+
		"\"\nns3_flows = \"../ns3/testdata/flow.txt\"\nns3_start_s = 2.5\n", ".", nil)
	if err == nil || !strings.Contains(err.Error(), "topology.ns3_start_s") || !strings.Contains(err.Error(), "before it") {
		t.Fatalf("a flow before ns3_start_s: %v", err)
	}
}

// TestNS3ConfigRun runs ns3-datacenter's files for every CC_MODE, shrunk by
// the experiment's own duration (flow.txt's first flow starts at 1 ms), and
// twice for DCQCN: the run is deterministic.
func TestNS3ConfigRun(t *testing.T) {
	if testing.Short() {
		t.Skip("virtual-time runs of a 128-host fabric")
	}
	run := func(mode string) *Result {
		e, err := Decode("x.toml", ns3Experiment(t, mode, "duration_ms = 1.1\nsample_us = 50\n"), ".")
		if err != nil {
			t.Fatal(err)
		}
		e.Experiment.OutputDir = t.TempDir()
		res, err := Run(context.Background(), e, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, mode := range []string{"1", "3", "7", "8"} {
		res := run(mode)
		var got int64
		for _, f := range res.Summary.Flows {
			if f.ID == 0 {
				got = f.Bytes
			}
		}
		t.Logf("CC_MODE %s (%s): flow 0 delivered %d bytes", mode, res.Summary.Scheme, got)
		// Flow 0 runs from 1 ms to 1.1 ms on a 25 Gb/s host link: at most
		// 312.5 KB, and the first RTT's worth at least.
		if got < 20_000 || got > 312_500 {
			t.Errorf("CC_MODE %s: flow 0 delivered %d bytes in 100 us at 25 Gb/s", mode, got)
		}
		if mode == "1" {
			again := run(mode)
			for _, name := range []string{"rate.csv", "fct.csv", "queue.csv"} {
				a, err1 := os.ReadFile(filepath.Join(res.Dir, name))
				b, err2 := os.ReadFile(filepath.Join(again.Dir, name))
				if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
					t.Errorf("%s differs between two runs (%v %v)", name, err1, err2)
				}
			}
		}
	}
}

// TestNS3ErrorRatePerLink: ERROR_RATE_PER_LINK becomes topology.loss_rate in
// virtual time, unless the experiment sets its own; it is not in the warning.
func TestNS3ErrorRatePerLink(t *testing.T) {
	b, err := os.ReadFile(ns3Datacenter(t, "config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "ERROR_RATE_PER_LINK 0.0000\n", "ERROR_RATE_PER_LINK 0.001\n", 1)
	if text == string(b) {
		t.Fatal("config.txt has no ERROR_RATE_PER_LINK 0.0000 line")
	}
	conf := filepath.Join(t.TempDir(), "config.txt")
	os.WriteFile(conf, []byte(text), 0o644)
	exp := func(extra string) string {
		return "[experiment]\nname = \"ns3dc\"\nclock = \"virtual\"\n\n[topology]\nkind = \"ns3\"\nns3_config = \"" + conf +
			"\"\nns3_topology = \"" + ns3Datacenter(t, "topology.txt") + "\"\nns3_flows = \"" + ns3Datacenter(t, "flow.txt") + "\"\n" + extra
	}
	e, err := Decode("x.toml", exp(""), ".")
	if err != nil {
		t.Fatal(err)
	}
	if e.Topology.LossRate != 0.001 || strings.Contains(strings.Join(e.Warnings(), " "), "ERROR_RATE_PER_LINK") {
		t.Errorf("loss rate %v, warnings %q: want 0.001 and no warning for it", e.Topology.LossRate, e.Warnings())
	}
	if e, err = Decode("x.toml", exp("loss_rate = 0.01\n"), "."); err != nil || e.Topology.LossRate != 0.01 {
		t.Errorf("the experiment's own loss rate: %v, %v; want 0.01", e.Topology.LossRate, err)
	}
}
