package timely_test

// Closed-loop tests: TIMELY's NP and RP inside the real host engine (hostd),
// with plain FIFO switch ports (switchd), on a fabric run in virtual time
// (package fabric), at 10 Gb/s (the rate for which the defaults' delta =
// 10 Mb/s is given) and at 100 Gb/s, with the package's
// defaults (DefaultParams: a = 0.02, beta = 0.8, T_low = 0, T_high = 500 us,
// delta = line / 1000, HAI after 5 samples with N = 5, min_rtt = the
// environment's base RTT).
//
// The claim under test is the paper's (TIMELY, SIGCOMM'15, Section 4, the
// gradient-based rate computation of Algorithm 1): reacting to the RTT
// gradient keeps the queue low and steady, far below T_high, with the link
// busy and the flows sharing it.

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/timely"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
	"github.com/ccbed/ccbed/hostd"
)

const (
	ms = int64(1_000_000)
	// mtu is the fabric's default payload; a full frame adds headerBytes
	// and 24 of preamble, FCS and gap on the wire: a link of bps carrying
	// only full frames has a goodput of fabrictest.FrameGoodput(bps, mtu,
	// headerBytes).
	mtu         = 1000
	headerBytes = hostd.DataOverhead
)

// simulate runs spec (scheme timely) for end ns.
func simulate(t *testing.T, spec *fabric.Spec, end int64) *fabric.Result {
	t.Helper()
	spec.Scheme = timely.Name
	spec.ExpectedFlows = len(spec.Flows)
	return fabrictest.Simulate(t, spec, end)
}

// settled is the start of the first 1 ms block from which, in every block up
// to end, every flow's goodput is within tol of the block's equal share; -1
// if the last block is not.
func settled(r *fabric.Result, flows []fabric.Flow, end int64, tol float64) int64 {
	at := int64(-1)
	for b := end - ms; b >= 0; b -= ms {
		g := fabrictest.Goodputs(r, flows, b, b+ms)
		fair := fabrictest.Sum(g) / float64(len(g))
		for _, x := range g {
			if fair == 0 || x < (1-tol)*fair || x > (1+tol)*fair {
				return at
			}
		}
		at = b
	}
	return at
}

// queueDelay is the queueing delay of a queue of q bytes at bps, ns.
func queueDelay(q float64, bps float64) float64 { return q * 8e9 / bps }

// checkQueue checks that the largest queue sample of a port over (from, to]
// is an order of magnitude below T_high (TIMELY's guard).
func checkQueue(t *testing.T, r *fabric.Result, sw, port int, bps float64, from, to int64) {
	t.Helper()
	tHigh := float64(timely.DefaultParams(ccalgo.Env{LinkBps: bps}).THighNs)
	if d := queueDelay(float64(r.MaxQueue(sw, port, from, to)), bps); d > tHigh/10 {
		t.Errorf("switch %d port %d: queue up to %.1f us of delay, want <= T_high / 10 = %.0f us", sw, port, d/1e3, tHigh/1e4)
	}
}

// TestLongFlowsOneBottleneck: N long flows join one port (500 us apart, or all
// at once), each at line rate when it joins. Over [10, 20) ms the queue is a
// few us of delay, the link busy, the shares equal; every flow is within 10 %
// of the equal share in every 1 ms from some time before 10 ms on. Measured
// over starts 0-700 us apart and link delays offset by 0-11 ns per port: Jain
// 0.9999-1.0, utilisation 0.991 (10G, 2 flows), 0.967-0.969 (10G, 4 flows),
// 0.993 (100G, 4 flows); largest queue sample 4-18 KB at 10G, 27-29 KB at
// 100G.
func TestLongFlowsOneBottleneck(t *testing.T) {
	tests := []struct {
		name string
		bps  float64
		n    int
		gap  int64
	}{
		{"10G 2 flows", 10e9, 2, 500_000},
		{"10G 4 flows", 10e9, 4, 500_000},
		{"10G 4 flows at once", 10e9, 4, 0},
		{"100G 4 flows", 100e9, 4, 500_000},
	}
	const from, end = 10 * ms, 20 * ms
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flows := fabrictest.Staggered(tc.n, 0, tc.n, tc.gap)
			r := simulate(t, &fabric.Spec{Topo: fabric.Star(tc.n+1, tc.bps, 1000), Flows: flows}, end)
			g := fabrictest.Goodputs(r, flows, from, end)
			util := fabrictest.Sum(g) / fabrictest.FrameGoodput(tc.bps, mtu, headerBytes)
			jain := fabric.Jain(g)
			mq, maxQ := r.MeanQueue(0, tc.n, from, end), r.MaxQueue(0, tc.n, from, end)
			st := settled(r, flows, end, 0.1)
			pc := r.Port(0, tc.n)
			t.Logf("[10, 20) ms: goodput %s Gb/s, Jain %.5f, utilisation %.3f; queue mean %.0f B (%.1f us), max sample %d B (%.1f us); whole run: queue max %d B (%.0f us; T_high 500 us), %d drops; within 10 %% of the equal share from %d ms; base RTT %.1f us; %.0f ms wall",
				fabrictest.Gbps(g), jain, util, mq, queueDelay(mq, tc.bps)/1e3, maxQ, queueDelay(float64(maxQ), tc.bps)/1e3,
				pc.QueueMaxBytes, queueDelay(float64(pc.QueueMaxBytes), tc.bps)/1e3, pc.DropsTotal, st/ms, float64(r.Plan.BaseRTTNs)/1e3, float64(r.WallNs)/1e6)
			if jain < 0.99 {
				t.Errorf("Jain %.5f < 0.99", jain)
			}
			if util < 0.95 {
				t.Errorf("utilisation %.3f < 0.95", util)
			}
			if st < 0 || st > from {
				t.Errorf("flows not within 10 %% of the equal share in every 1 ms from 10 ms on (from %d ms)", st/ms)
			}
			checkQueue(t, r, 0, tc.n, tc.bps, from, end)
			if pc.DropsTotal != 0 {
				t.Errorf("%d drops", pc.DropsTotal)
			}
		})
	}
}

// TestDifferentRTTs: three flows at 10 Gb/s whose senders' links have 1, 4
// and 16 us of propagation delay (base RTTs about 6, 12 and 36 us), joining
// 500 us apart. TIMELY updates per RTT sample, weighted by the time since the
// last one over min_rtt, so its additive increase per unit time does not
// depend on the RTT; the fabric gives every host the same min_rtt (the
// largest base RTT between two hosts, 42 us). Measured over [10, 20) ms (starts 0-700 us apart,
// delays offset by 0-11 ns): Jain 0.988-0.997, the longest-RTT flow slightly
// ahead (3.2-3.5 Gb/s against 2.7-3.2), utilisation 0.993, queue samples up
// to 15-23 KB.
func TestDifferentRTTs(t *testing.T) {
	const bps, from, end = 10e9, 10 * ms, 20 * ms
	flows := fabrictest.Staggered(3, 0, 3, 500_000)
	r := simulate(t, &fabric.Spec{Topo: fabrictest.StarDelays(4, bps, []int64{1000, 4000, 16_000}), Flows: flows}, end)
	g := fabrictest.Goodputs(r, flows, from, end)
	util := fabrictest.Sum(g) / fabrictest.FrameGoodput(bps, mtu, headerBytes)
	jain := fabric.Jain(g)
	mq, maxQ := r.MeanQueue(0, 3, from, end), r.MaxQueue(0, 3, from, end)
	t.Logf("[10, 20) ms: goodput %s Gb/s (RTT short to long), Jain %.4f, utilisation %.3f; queue mean %.0f B, max sample %d B (%.1f us); whole run: queue max %d B; min_rtt %.1f us; %.0f ms wall",
		fabrictest.Gbps(g), jain, util, mq, maxQ, queueDelay(float64(maxQ), bps)/1e3, r.Port(0, 3).QueueMaxBytes, float64(r.Plan.BaseRTTNs)/1e3, float64(r.WallNs)/1e6)
	if jain < 0.97 {
		t.Errorf("Jain %.4f < 0.97", jain)
	}
	if util < 0.95 {
		t.Errorf("utilisation %.3f < 0.95", util)
	}
	checkQueue(t, r, 0, 3, bps, from, end)
}

// TestTwoBottlenecks is a parking lot at 10 Gb/s: switches s0 - s1 - s2, flow
// A from s0 to s2 crosses both trunks, flow B (s0 to s1) shares the first with
// it and flow C (s1 to s2) the second; they join 500 us apart. A's RTT holds
// both queues, so its gradient sums both queues' growth and it cuts more:
// it gets less than B and C, but not far below its max-min share (half a
// trunk). Measured over [10, 20) ms (starts 0-700 us apart, delays offset by
// 0-11 ns): A 3.97-4.09 Gb/s (0.86-0.89 of max-min), B and C 4.87-5.20,
// trunks 0.97-0.99 busy.
func TestTwoBottlenecks(t *testing.T) {
	const bps, from, end = 10e9, 10 * ms, 20 * ms
	topo, flows := fabrictest.ParkingLot(bps, 500_000)
	r := simulate(t, &fabric.Spec{Topo: topo, Flows: flows}, end)
	g := fabrictest.Goodputs(r, flows, from, end)
	capacity := fabrictest.FrameGoodput(bps, mtu, headerBytes)
	maxMin := capacity / 2
	t.Logf("[10, 20) ms: goodput A %.2f, B %.2f, C %.2f Gb/s (A / max-min share %.2f); %.0f ms wall",
		g[0]/1e9, g[1]/1e9, g[2]/1e9, g[0]/maxMin, float64(r.WallNs)/1e6)
	for _, tr := range fabrictest.ParkingLotTrunks() {
		util := tr.Util(g, capacity)
		t.Logf("trunk %s: utilisation %.3f, queue mean %.0f B max sample %d B",
			tr.Name, util, r.MeanQueue(tr.Sw, tr.Port, from, end), r.MaxQueue(tr.Sw, tr.Port, from, end))
		if util < 0.95 {
			t.Errorf("trunk %s: utilisation %.3f < 0.95", tr.Name, util)
		}
		checkQueue(t, r, tr.Sw, tr.Port, bps, from, end)
	}
	if g[0] >= min(g[1], g[2]) {
		t.Errorf("A (%.2f Gb/s) not below B (%.2f) and C (%.2f)", g[0]/1e9, g[1]/1e9, g[2]/1e9)
	}
	if g[0] < 0.75*maxMin {
		t.Errorf("A gets %.2f of its max-min share, want >= 0.75", g[0]/maxMin)
	}
}
