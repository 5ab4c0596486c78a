package pktgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
)

// runVirtual drives g in virtual time for durNs, polling at random intervals
// of mean pollNs for bursts of up to burst packets, and returns each flow's
// L1 bits (rate_gbps flows) or packets (rate_mpps flows) and the port's L1
// bits, with the send time of every packet of each flow.
func runVirtual(g *Generator, pc *PortConfig, durNs int64, pollNs float64, burst int, seed uint64) (units []float64, portBits float64, times [][]int64) {
	buf := make([]byte, MaxFrameLen)
	n := len(g.flows)
	units = make([]float64, n)
	times = make([][]int64, n)
	rng := rand.New(rand.NewPCG(seed, 7))
	now := int64(0)
	for now < durNs {
		k := g.Grant(now, burst)
		for range k {
			f := int(g.perFlow.pending()[0])
			sz := g.Build(buf, now)
			if sz == 0 {
				panic("Build refused a granted packet")
			}
			if pc.Flow[f].RateMpps > 0 {
				units[f]++
			} else {
				units[f] += float64(sz+L1Overhead) * 8
			}
			portBits += float64(sz+L1Overhead) * 8
			times[f] = append(times[f], now)
		}
		now += 1 + int64(rng.Float64()*2*pollNs)
	}
	return units, portBits, times
}

// TestFlowRates: every flow paced by its own token bucket reaches its rate
// in virtual time (jittered polls, no wall clock), whatever the others do;
// a flow without a rate takes what the port's cap leaves; a port cap below
// the flows' sum scales them down and is met.
func TestFlowRates(t *testing.T) {
	type want struct {
		flow []float64 // per flow: Gb/s, or Mpps for rate_mpps flows; < 0 unchecked
		port float64   // Gb/s L1 of the port; 0 unchecked
	}
	cases := []struct {
		name string
		p    PortConfig
		want want
	}{
		{"1 and 3 Gb/s", PortConfig{Flow: []FlowConfig{{RateGbps: 1}, {RateGbps: 3}}},
			want{flow: []float64{1, 3}, port: 4}},
		{"gbps and mpps imix", PortConfig{Mix: "imix", Flow: []FlowConfig{{RateGbps: 2}, {RateMpps: 0.5}, {RateGbps: 0.1}}},
			want{flow: []float64{2, 0.5, 0.1}}},
		{"roce 5 flows", PortConfig{Proto: "roce", Size: 200, Vary: []string{"dest_qp"},
			Flow: []FlowConfig{{RateGbps: 1}, {RateGbps: 2}, {RateGbps: 3}, {RateGbps: 4}, {RateGbps: 0.5}}},
			want{flow: []float64{1, 2, 3, 4, 0.5}}},
		{"unrated flow fills the port's cap", PortConfig{RateGbps: 10, Flow: []FlowConfig{{RateGbps: 2}, {}}},
			want{flow: []float64{2, 8}, port: 10}},
		{"port cap below the sum", PortConfig{RateGbps: 3, Flow: []FlowConfig{{RateGbps: 1}, {RateGbps: 3}}},
			want{flow: []float64{1, -1}, port: 3}},
		{"port mpps cap", PortConfig{RateMpps: 2, Flow: []FlowConfig{{RateMpps: 0.5}, {RateMpps: 1}}},
			want{flow: []float64{0.5, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, 0)
			if g.perFlow == nil {
				t.Fatal("no flow scheduler")
			}
			const dur = 20e6 // 20 ms of virtual time
			units, portBits, _ := runVirtual(g, &c.p, dur, 500, 32, 1)
			sec := float64(dur) / 1e9
			for f, w := range c.want.flow {
				if w < 0 {
					continue
				}
				got := units[f] / sec / 1e9 // Gb/s
				if c.p.Flow[f].RateMpps > 0 {
					got = units[f] / sec / 1e6 // Mpps
				}
				if math.Abs(got-w)/w > 0.01 {
					t.Errorf("flow %d: %.4g, want %.4g (1%%)", f, got, w)
				}
			}
			if c.want.port > 0 {
				if got := portBits / sec / 1e9; math.Abs(got-c.want.port)/c.want.port > 0.01 {
					t.Errorf("port: %.4g Gb/s, want %.4g", got, c.want.port)
				}
			}
			if st := g.FlowStats(); len(st) != len(c.p.Flow) {
				t.Errorf("FlowStats: %d flows, want %d", len(st), len(c.p.Flow))
			}
		})
	}
}

// TestFlowSchedulerOrder: with a poll every nanosecond (a manual clock), each
// flow's packets leave at its own spacing, 1/rate apart, interleaved in the
// order the flows become eligible; a flow served late by a slow poll catches
// up by at most its burst.
func TestFlowSchedulerOrder(t *testing.T) {
	// 64 B frames are 704 bits on the wire: 1 Mpps, 0.704 Gb/s and 0.5 Mpps.
	p := PortConfig{Flow: []FlowConfig{{RateMpps: 1}, {RateGbps: 0.704}, {RateMpps: 0.5}}}
	g := newGen(t, p, 0)
	buf := make([]byte, 128)
	var order []int
	var at []int64
	for now := int64(0); now < 10_000; now++ {
		for k := g.Grant(now, 32); k > 0; k-- {
			order = append(order, int(g.perFlow.pending()[0]))
			at = append(at, now)
			g.Build(buf, now)
		}
	}
	next := []int64{0, 0, 0}
	gap := []int64{1000, 1000, 2000}
	for i, f := range order {
		if at[i] != next[f] {
			t.Fatalf("packet %d (flow %d) left at %d ns, want %d", i, f, at[i], next[f])
		}
		next[f] += gap[f]
	}
	// Flows due at the same time go in the order they started waiting:
	// 0 1 2 at t=0 (flow order), 0 1 at t=1000, then 2 (waiting since 0)
	// before 0 and 1 (waiting since 1000) at t=2000.
	if want := []int{0, 1, 2, 0, 1, 2, 0, 1}; !slices.Equal(order[:len(want)], want) {
		t.Fatalf("order %v, want %v", order[:len(want)], want)
	}
	if len(order) != 10+10+5 {
		t.Fatalf("%d packets in 10 us, want 25", len(order))
	}

	// A poll 100 us late: flow 0 owes nothing and may send its burst (32
	// packets of credit) at once, not the 100 it missed.
	now := int64(110_000)
	k := g.Grant(now, 512)
	cnt := make([]int, 3)
	for _, f := range g.perFlow.pending()[:k] {
		cnt[f]++
	}
	for range k {
		g.Build(buf, now)
	}
	if cnt[0] < 30 || cnt[0] > 33 || cnt[2] < 30 || cnt[2] > 33 {
		t.Fatalf("after a 100 us stall: %v packets per flow, want about a 32-packet burst each", cnt)
	}
}

// TestFlowPicksCarry: picks that Grant made but Build did not use (the
// mempool was empty) stay first in line for the next Grant, their tokens
// already taken: no flow loses or gains packets.
func TestFlowPicksCarry(t *testing.T) {
	p := PortConfig{Flow: []FlowConfig{{RateMpps: 1}, {RateMpps: 2}}}
	g := newGen(t, p, 0)
	buf := make([]byte, 128)
	for k := g.Grant(0, 4); k > 0; k-- { // one packet each, then both in debt
		g.Build(buf, 0)
	}
	k := g.Grant(10_000, 4)
	first := append([]uint16(nil), g.perFlow.pending()...)
	if k != 4 || len(first) != 4 {
		t.Fatalf("granted %d, %d picks; want 4", k, len(first))
	}
	g.Build(buf, 10_000) // one built, three left
	if k := g.Grant(10_000, 8); k < 3 || !slices.Equal(g.perFlow.pending()[:3], first[1:]) {
		t.Fatalf("after a short build: %d granted, picks %v, want %v first", k, g.perFlow.pending(), first[1:])
	}
	if g.Build(buf, 10_000) == 0 {
		t.Fatal("Build refused a pending pick")
	}
	// No picks pending and no Grant: Build refuses (never indexes past the picks).
	g2 := newGen(t, p, 0)
	if n := g2.Build(buf, 0); n != 0 {
		t.Fatalf("Build without Grant wrote %d bytes", n)
	}
}

// TestFlowRateConfig: [[ports.flow]] errors name the file, line and key; a
// sum above the port's line rate is a warning that does too.
func TestFlowRateConfig(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		line       int
		key, want  string
	}{
		{"above line rate", "[[ports]]\nrate_gbps = 10\n[[ports.flow]]\nrate_gbps = 1\n[[ports.flow]]\nrate_gbps = 12\n",
			6, "ports[0].flow[1].rate_gbps", "12 Gb/s is above the port's line rate 10 Gb/s L1"},
		{"mpps above line rate", "[[ports]]\nrate_gbps = 1\n[[ports.flow]]\nrate_mpps = 2\n",
			4, "ports[0].flow[0].rate_mpps", "2 Mpps (1.408 Gb/s L1 in the stream's frames) is above the port's line rate 1 Gb/s"},
		{"above mpps line rate", "[[ports]]\nrate_mpps = 1\n[[ports.flow]]\nrate_gbps = 1\n",
			4, "ports[0].flow[0].rate_gbps", "above the port's line rate 0.704 Gb/s"},
		{"second port", "[[ports]]\n[[ports.flow]]\nrate_gbps = 1\n[[ports]]\nrate_gbps = 5\n[[ports.flow]]\nrate_gbps = 6\n",
			7, "ports[1].flow[0].rate_gbps", "6 Gb/s is above"},
		{"both rates", "[[ports]]\n[[ports.flow]]\nrate_gbps = 1\nrate_mpps = 1\n", 4, "ports[0].flow[0].rate_mpps", "not both"},
		{"nan", "[[ports]]\n[[ports.flow]]\nrate_gbps = nan\n", 3, "ports[0].flow[0].rate_gbps", "got NaN"},
		{"negative", "[[ports]]\n[[ports.flow]]\nrate_mpps = -1\n", 3, "ports[0].flow[0].rate_mpps", "got -1"},
		{"flows disagree", "[[ports]]\nflows = 3\n[[ports.flow]]\nrate_gbps = 1\n", 2, "ports[0].flows", "3, but 1 [[ports.flow]] tables"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkValidateError(t, tc.toml, tc.line, tc.key, tc.want) })
	}

	var cfg Config
	text := "[[ports]]\nrate_gbps = 10\n[[ports.flow]]\nrate_gbps = 6\n[[ports.flow]]\nrate_mpps = 10\n"
	f, err := config.Decode("w.toml", text, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(f); err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], "w.toml:3: ports[0].flow: the flows' rates sum to 13.04 Gb/s L1, above the port's line rate 10 Gb/s") {
		t.Fatalf("warnings %q", w)
	}
	if cfg.Ports[0].NumFlows() != 2 {
		t.Fatalf("NumFlows %d, want 2", cfg.Ports[0].NumFlows())
	}
	cfg.Ports[0].Flow[1] = FlowConfig{} // an unrated flow takes what is left: no warning
	if err := cfg.Validate(f); err != nil || len(cfg.Warnings()) != 0 {
		t.Fatalf("unrated flow: %v, warnings %q", err, cfg.Warnings())
	}
}

// TestFlowRatesAllocs: Grant and Build with flow rates allocate nothing.
func TestFlowRatesAllocs(t *testing.T) {
	p := PortConfig{RateGbps: 40, Mix: "imix", Flow: []FlowConfig{{RateGbps: 10}, {RateMpps: 1}, {}, {RateGbps: 0.5}}}
	if allocs := burstAllocs(t, newGen(t, p, 0), 2000); allocs != 0 {
		t.Fatalf("%.1f allocs per burst, want 0", allocs)
	}
}

// TestParseFlowRates: -flow-rates entries in Gb/s, Mpps or none.
func TestParseFlowRates(t *testing.T) {
	got, err := ParseFlowRates("2.5, 1g,0.5mpps,3M,0,-")
	want := []FlowConfig{{RateGbps: 2.5}, {RateGbps: 1}, {RateMpps: 0.5}, {RateMpps: 3}, {}, {}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "x", "1gbps", "mpps", "1,,2"} {
		if _, err := ParseFlowRates(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
