package hpcc_test

import (
	"cmp"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/hpcc"
	"github.com/ccbed/ccbed/ccalgo/sim"
)

// TestIncast16To1 runs HPCC's incast scenario (Section 5.2 "faster and better
// congestion avoidance", scaled to the paper's simulation links): 16 long flows
// from 16 hosts with 100 Gb/s NICs into one 100 Gb/s port, 1 us per link.
// All flows start at line rate at once; within a few RTTs the window control
// must bring the link to about eta utilisation with a near-zero queue and a fair
// share for every flow.
func TestIncast16To1(t *testing.T) {
	const (
		c        = 100e9
		nFlows   = 16
		duration = 3_000_000 // 3 ms
		steady   = 1_000_000 // measure over [1 ms, 3 ms)
	)
	tests := []struct {
		name     string
		tNs      int64 // 0: the default, T = Env.BaseRTT
		expected int   // ExpectedFlows N of the W_AI rule; 0: 16, the real count
		ackEvery int
		// Bars below the defaults (goodput/C >= 0.9, Jain >= 0.99 and a
		// settled Jain over 100 us) where the case is expected to miss them.
		minGoodput, minJain float64
		fairMaySwing        bool
	}{
		{name: "defaults: T = base RTT, N = 16"},
		{name: "T = 5 us", tNs: 5000},
		// The paper's W_AI (N = 100, Section 5.1, 26 B here) with 16 flows:
		// utilisation and queue as before, but the tiny additive step no
		// longer outweighs the per-flow noise of U (each flow's own qlen and
		// tau samples), so the shares wander (measured: Jain 0.96-0.98 over
		// 1 ms windows up to 12 ms, rates 4.4-8 Gb/s around 5.5).
		{name: "N = 100", expected: 100, minGoodput: 0.88, minJain: 0.95, fairMaySwing: true},
		// ACK coalescing (a flow's window is only ~3 packets here; with 4 or
		// more packets per ACK the simulator's receiver, which has no delayed
		// ACK timer, would wait forever for the k-th packet).
		{name: "ACK every 2nd packet", ackEvery: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Scheme: hpcc.Name, LinkBps: c, HostBps: c, LinkDelay: 1000, Duration: duration,
				ExpectedFlows: tc.expected, AckEvery: tc.ackEvery, Flows: sim.LongFlows(nFlows, 0)}
			if tc.tNs != 0 {
				p := hpcc.DefaultParams(ccalgo.Env{ExpectedFlows: max(nFlows, tc.expected)})
				p.TNs = tc.tNs
				cfg.Params = p
			}
			res, err := sim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			wireOverPayload := float64(sim.DefaultMTU+sim.DefaultHeaderBytes) / sim.DefaultMTU
			rates := make([]float64, nFlows)
			var sum float64
			for i := range rates {
				rates[i] = res.MeanGoodput(i, steady, duration)
				sum += rates[i]
			}
			agg := make([]float64, len(res.T))
			for k := range res.T {
				for i := range nFlows {
					agg[k] += res.Goodput[i][k]
				}
			}
			goodputUtil := sum / c
			wireUtil := goodputUtil * wireOverPayload
			jain := sim.Jain(rates)
			meanQ := res.MeanQueue(steady, duration)
			maxQ := res.MaxQueueIn(steady, duration)
			// Settling: the aggregate (smoothed over 50 us) within 5 % of its
			// steady mean; fairness: Jain's index of the flows' goodputs over
			// 100 us (a flow's 10 us sample holds only 7 or 8 packets) at
			// 0.98 or more for good; the queue below 20 KB for good.
			settleAgg := sim.SettlingTime(res.T, smooth(agg, 5), sum, 0.05)
			settleFair := sim.SettlingTime(res.T, windowJain(res.Goodput, 10), 1, 0.02)
			settleQ := queueBelow(res, 20_000)
			t.Logf("base RTT %d ns: goodput/C %.4f, wire utilisation %.4f, Jain %.5f, steady queue mean %.0f B max %d B, max %d B in the first RTTs, drops %d",
				res.BaseRTT, goodputUtil, wireUtil, jain, meanQ, maxQ, res.MaxQueue, res.Drops)
			t.Logf("settling: aggregate %d ns, Jain(100 us) >= 0.98 from %d ns, queue < 20 KB from %d ns", settleAgg, settleFair, settleQ)
			for i := range min(nFlows, 4) {
				t.Logf("flow %d: %.2f Gb/s, window at end %d B", i, rates[i]/1e9, res.Window[i][len(res.T)-1])
			}
			// eta = 0.95 of the wire rate is the target; the W_AI rule lets the
			// N flows' additive increase use the 5 % headroom, so U moves
			// between eta and 1.
			minGoodput, minJain := cmp.Or(tc.minGoodput, 0.9), cmp.Or(tc.minJain, 0.99)
			if goodputUtil < minGoodput || wireUtil < 0.93 || wireUtil > 1 {
				t.Errorf("goodput/C %.4f (want >= %v), wire utilisation %.4f (want in [0.93, 1])", goodputUtil, minGoodput, wireUtil)
			}
			if jain < minJain {
				t.Errorf("Jain %.5f, want >= %v", jain, minJain)
			}
			if !tc.fairMaySwing && (settleFair < 0 || settleFair > steady) {
				t.Errorf("Jain over 100 us not settled at >= 0.98 by %d ns", steady)
			}
			if settleAgg < 0 || settleAgg > steady || settleQ < 0 || settleQ > steady {
				t.Errorf("not settled by %d ns", steady)
			}
			if maxQ > 50_000 {
				t.Errorf("steady queue up to %d B, want tens of KB at most", maxQ)
			}
		})
	}
}

// smooth returns the moving mean of x over the last k samples.
func smooth(x []float64, k int) []float64 {
	out := make([]float64, len(x))
	var s float64
	for i, v := range x {
		s += v
		if i >= k {
			s -= x[i-k]
		}
		out[i] = s / float64(min(i+1, k))
	}
	return out
}

// windowJain is, at each sample, Jain's index of the flows' goodputs averaged
// over the last k samples.
func windowJain(goodput [][]float64, k int) []float64 {
	sm := make([][]float64, len(goodput))
	for i := range goodput {
		sm[i] = smooth(goodput[i], k)
	}
	out := make([]float64, len(goodput[0]))
	x := make([]float64, len(goodput))
	for j := range out {
		for i := range sm {
			x[i] = sm[i][j]
		}
		out[j] = sim.Jain(x)
	}
	return out
}

// queueBelow is the first sample time from which the queue stays below limit
// bytes; -1 if the last sample is not below it.
func queueBelow(res *sim.Result, limit int64) int64 {
	at := int64(-1)
	for k := len(res.Queue) - 1; k >= 0 && res.Queue[k] < limit; k-- {
		at = res.T[k]
	}
	return at
}

// TestJoinAndLeave is the paper's fairness and rate-recovery micro-benchmarks
// (Section 5.2, Figure 9a and 9g) at 100 Gb/s: 4 long flows join one every
// 500 us, then a 1 MB flow joins at 2.5 ms and leaves. At the end of every
// phase the active flows share the link fairly at high utilisation, and once
// the short flow is gone the long flows take its bandwidth back at once
// (multiplicative increase, not additive).
func TestJoinAndLeave(t *testing.T) {
	const c = 100e9
	cfg := sim.Config{Scheme: hpcc.Name, LinkBps: c, LinkDelay: 1000, Duration: 4_000_000,
		Flows: sim.LongFlows(4, 500_000)}
	cfg.Flows = append(cfg.Flows, sim.Flow{Src: 4, Start: 2_500_000, Bytes: 1_000_000})
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(2_500_000) + res.FCT[4]
	if res.FCT[4] < 0 {
		t.Fatal("short flow unfinished")
	}
	phases := []struct {
		name     string
		from, to int64
		active   int // flows 0 .. active-1
	}{
		{"1 flow", 300_000, 500_000, 1},
		{"2 flows", 800_000, 1_000_000, 2},
		{"3 flows", 1_300_000, 1_500_000, 3},
		{"4 flows", 2_300_000, 2_500_000, 4},
		{"4 long + 1 short", 2_650_000, 2_750_000, 5},
		// From 100 us after the short flow's last byte was acknowledged.
		{"after the short flow", (end/10_000+10)*10_000 + 10_000, (end/10_000+20)*10_000 + 10_000, 4},
	}
	for _, ph := range phases {
		rates := make([]float64, ph.active)
		var sum float64
		for i := range rates {
			rates[i] = res.MeanGoodput(i, ph.from, ph.to)
			sum += rates[i]
		}
		jain := sim.Jain(rates)
		t.Logf("%-22s [%d, %d) us: goodput/C %.4f, Jain %.4f, max queue %d B", ph.name, ph.from/1000, ph.to/1000,
			sum/c, jain, res.MaxQueueIn(ph.from, ph.to))
		if sum/c < 0.89 || jain < 0.95 {
			t.Errorf("%s: goodput/C %.4f (want >= 0.89), Jain %.4f (want >= 0.95)", ph.name, sum/c, jain)
		}
	}
	t.Logf("1 MB flow FCT %d us, max queue %d B", res.FCT[4]/1000, res.MaxQueue)
}

// TestAcrossINTWraps runs two flows at 100 Gb/s for 36 ms, across two wraps of
// the INT txBytes field (2^27 B, every 10.7 ms of a busy 100 Gb/s port) and two
// of the TS field (2^24 ns, 16.8 ms): a wrap mishandled in the deltas would show
// as a collapse (huge or negative txRate) somewhere in the run.
func TestAcrossINTWraps(t *testing.T) {
	const c = 100e9
	cfg := sim.Config{Scheme: hpcc.Name, LinkBps: c, LinkDelay: 1000, Duration: 36_000_000,
		SampleEvery: 50_000, Flows: []sim.Flow{{Src: 0}, {Src: 1}}}
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lo := math.Inf(1)
	for k, ts := range res.T {
		if ts < 1_000_000 {
			continue
		}
		lo = min(lo, (res.Goodput[0][k]+res.Goodput[1][k])/c)
	}
	t.Logf("lowest aggregate goodput/C in a 50 us sample after 1 ms: %.4f; max queue after 1 ms %d B",
		lo, res.MaxQueueIn(1_000_000, cfg.Duration))
	if lo < 0.85 {
		t.Errorf("aggregate goodput fell to %.4f C", lo)
	}
}
