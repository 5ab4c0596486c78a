package acc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/acc"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
	"github.com/ccbed/ccbed/hostd"
)

// Closed-loop tests of ACC (Zhang et al., "Revisiting Congestion Control for
// Lossless Ethernet", NSDI 2024) on the fabric: the real switch engine
// (switchd, TCD's ternary marking on every egress port) and host engine
// (hostd: ACC's NP echoing the mark in every ACK, its RP on every QP) in
// virtual time, at the paper's link rates and with its parameters (Section
// 6.1: T = base RTT, RI_Low = line rate / 250, RI_High = 10 RI_Low,
// P_thresh = 1, TCD threshold 2 MTU, max(T_on) = 24 us at 100 Gb/s). Sections
// and figures below are that paper's.
//
// Units. A data frame is the MTU of payload plus hostd.DataOverhead (66 B) and
// takes 24 B more on the wire, so a full link of C carries a payload goodput
// of C x MTU / (MTU + 90). The RP's rates count MTU + HeaderBytes (62 B) per
// packet (acc.DefaultHeaderBytes), so the ACK arrival rate of a full link is
// C x 1062 / 1090 = 0.974 C in its units.
//
// Issue 11 fixed two defects these tests pinned. The ACK-rate estimate R =
// recvNum x MTU / T (Algorithm 1 line 3) counted whole ACKs in a period T = the
// base RTT, so R moved in steps of one ACK per period ((MTU + 62) x 8 / T: 1.49
// Gb/s at 10 Gb/s and T = 5.7 us, against shares of 2.5 Gb/s) and the throttle
// set each flow to its own rounded count; R is now measured between ACKs (see
// rp.go), and TestFairness10G fails on the old count (91 % of the link used).
// And periods with CE on 90 % of their ACKs or fewer counted as uncongested,
// ignoring UE marks too; they now follow Section 4.1 (held, or a victim's with
// UE), which parks the shares in TestUnequalRTTs at 100 Gb/s (pinned there).

const (
	mtu        = 1000
	frameBytes = mtu + hostd.DataOverhead
	wireBytes  = frameBytes + fabrictest.WireOverhead
)

// traceScheme is ACC with every RP wrapped so that a test sees each period's
// class and the first throttle and halt.
const traceScheme = "acc-trace"

// tracedRP records what its RP decided at the end of each period.
type tracedRP struct {
	*acc.RP
	classes [5]int // periods per acc.Class
	// firstThrottle is when the RP first set R_s = R (Algorithm 1 line 4),
	// rateAfter that R_s, firstHalt t_Halt of the first halt with its
	// extension (lines 27-34, 6-10).
	firstThrottle int64
	rateAfter     float64
	firstHalt     int64
	throttled     bool
}

func (r *tracedRP) OnTimer(now int64) {
	before := r.RP.Stats()
	r.RP.OnTimer(now)
	s := r.RP.Stats()
	if s.Periods == before.Periods {
		return
	}
	r.classes[r.RP.LastClass()]++
	if !r.throttled && s.Throttles > 0 {
		r.throttled, r.firstThrottle, r.rateAfter = true, now, r.RP.RateBps()
	}
	if s.Halts == 1 {
		r.firstHalt = r.RP.HaltNs() // with the extension once it is decided
	}
}

// traced runs the scheme with its RPs traced.
var traced = fabrictest.TraceRPs(acc.SchemeName, traceScheme, func(rp *acc.RP) *tracedRP { return &tracedRP{RP: rp} })

// classShares sums the traced RPs' period classes, as fractions.
func classShares(rps []*tracedRP) string {
	var n [5]int
	tot := 0
	for _, rp := range rps {
		for c, k := range rp.classes {
			n[c] += k
			tot += k
		}
	}
	s := ""
	for _, c := range []acc.Class{acc.ClassCongested, acc.ClassMixedCE, acc.ClassUncongested, acc.ClassNoAck, acc.ClassUndetermined} {
		s += fmt.Sprintf(" %s %.0f %%", c, 100*float64(n[c])/float64(max(tot, 1)))
	}
	return s
}

// TestIncast10To1 is Section 6.3's first microbenchmark (Fig. 10): ten sources
// send long flows to one destination through one switch, all links 100 Gb/s
// with 1 us of delay (the large-scale simulations' links, Section 6.1), every
// flow starting at line rate, default parameters (T = the base RTT, 4.19 us).
//
// The paper: ACC "quickly suppresses the deep queue" (Fig. 10(a)); each flow's
// halt time is "close to the ideal halt time (i.e., the maximum bottleneck
// queue length divided by link bandwidth)" (Fig. 10(b)); "near full link
// utilization" (Fig. 10(c)); "each flow attains the expected average fair
// rate (i.e., 10Gbps)" (Fig. 10(d)); and Proposition 1, the aggregate rate
// matches C within one period T of congestion.
//
// Asserted: congestion detected within 3 T; every flow throttled within 2 T
// of the first, their rates then adding up to the ACK rate of a full link
// within 5 % (Proposition 1); each first halt, extension included, within
// 10 % of the ideal; the queue below 10 % of its peak within the ideal drain
// time + 10 % + 2 T (the last tenth drains more slowly: the first throttle
// still counts whole ACKs over T, as no eligible ACK precedes a flow's first
// period, and most flows resume at 10.13 Gb/s, 104 % of the link's share);
// over [1, 5] ms the link >= 95 % used, the queue mean below 20 KB and Jain's
// index >= 0.98 (Fig. 10(d); measured 0.988, 0.948 when R counted whole ACKs
// per period).
func TestIncast10To1(t *testing.T) {
	const (
		c    = 100e9
		n    = 10
		from = 1_000_000
		end  = 5_000_000
	)
	spec := &fabric.Spec{Topo: fabric.Star(n+1, c, 1000), SampleNs: 1000}
	spec.Flows = fabrictest.Staggered(n, 1, 0, 0)
	r := traced.SimulateLossless(t, spec, end)
	T := r.Plan.BaseRTTNs
	var rps []*tracedRP
	first, last := int64(math.MaxInt64), int64(0)
	aggR := 0.0
	var halts []int64
	for i := 0; i < n; i++ {
		rp := traced.RP(t, r, i+1, int64(i+1))
		rps = append(rps, rp)
		if !rp.throttled {
			t.Fatalf("flow %d never throttled", i+1)
		}
		first, last = min(first, rp.firstThrottle), max(last, rp.firstThrottle)
		aggR += rp.rateAfter
		halts = append(halts, rp.firstHalt)
	}
	ackRate := c * float64(mtu+acc.DefaultHeaderBytes) / wireBytes
	peak, peakAt := fabrictest.QueuePeak(r, 0, 0, 0, from)
	drained := fabrictest.QueueBelow(r, 0, 0, peakAt, from, 0.1*float64(peak))
	drained5 := fabrictest.QueueBelow(r, 0, 0, peakAt, from, 0.05*float64(peak))
	ideal := int64(float64(peak) * 8e9 / c)
	g := fabrictest.Goodputs(r, spec.Flows, from, end)
	util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(c, mtu)
	j := fabric.Jain(g)
	q := r.MeanQueue(0, 0, from, end)
	t.Logf("T = %d ns; first throttles at %.1f..%.1f us, rates then %s Gb/s adding up to %.2f Gb/s (ACK rate of a full link %.2f Gb/s; Proposition 1: C within T)",
		T, float64(first)/1e3, float64(last)/1e3, fabrictest.Gbps(rateAfter(rps)), aggR/1e9, ackRate/1e9)
	t.Logf("queue peak %.0f KB at %.1f us, below 10 %% %.1f us and below 5 %% %.1f us later (ideal drain %.1f us); first halts %v ns (paper: close to the ideal %d ns)",
		float64(peak)/1e3, float64(peakAt)/1e3, float64(drained-peakAt)/1e3, float64(drained5-peakAt)/1e3, float64(ideal)/1e3, halts, ideal)
	t.Logf("over [1, 5] ms: goodput %s Gb/s (paper: 10 Gb/s each, here C/10's payload share %.2f), utilisation %.4f, Jain %.4f; queue mean %.0f B, max %d B; periods:%s",
		fabrictest.Gbps(g), fabrictest.PayloadGoodput(c, mtu)/n/1e9, util, j, q, r.MaxQueue(0, 0, from, end), classShares(rps))
	if first > 3*T {
		t.Errorf("congestion detected at %d ns, later than 3 T = %d ns", first, 3*T)
	}
	if last-first > 2*T {
		t.Errorf("first throttles spread over %d ns, more than 2 T = %d ns", last-first, 2*T)
	}
	if math.Abs(aggR-ackRate) > 0.05*ackRate {
		t.Errorf("rates after the first throttles add up to %.4g b/s, want the ACK rate %.4g within 5 %%", aggR, ackRate)
	}
	for i, h := range halts {
		if math.Abs(float64(h-ideal)) > 0.1*float64(ideal) {
			t.Errorf("flow %d: first halt %d ns, want the ideal %d ns within 10 %%", i+1, h, ideal)
		}
	}
	if drained < 0 || drained-peakAt > ideal+ideal/10+2*T {
		t.Errorf("queue of %d B took %d ns to fall below 10 %%, want within the ideal %d ns + 10 %% + 2 T", peak, drained-peakAt, ideal)
	}
	if util < 0.95 {
		t.Errorf("utilisation %.4f over [1, 5] ms, want >= 0.95", util)
	}
	if q > 20_000 {
		t.Errorf("queue mean %.0f B over [1, 5] ms, want below 20 KB", q)
	}
	if j < 0.98 {
		t.Errorf("Jain %.4f over [1, 5] ms, want >= 0.98 (C/10 each)", j)
	}
}

// classShare is the fraction of the traced RPs' periods of class c.
func classShare(rps []*tracedRP, c acc.Class) float64 {
	n, tot := 0, 0
	for _, rp := range rps {
		n += rp.classes[c]
		for _, k := range rp.classes {
			tot += k
		}
	}
	return float64(n) / float64(max(tot, 1))
}

func rateAfter(rps []*tracedRP) []float64 {
	var x []float64
	for _, rp := range rps {
		x = append(x, rp.rateAfter)
	}
	return x
}

// phases returns, for a run of n flows started gap apart (flow i+1 at i x
// gap), each phase's goodputs: phase k has flows 1..k+1, measured over its
// second half.
func phases(r *fabric.Result, n int, gap int64) [][]float64 {
	var out [][]float64
	for k := 0; k < n; k++ {
		from, to := int64(k)*gap+gap/2, int64(k+1)*gap
		var g []float64
		for i := 0; i <= k; i++ {
			g = append(g, r.Goodput(int64(i+1), from, to))
		}
		out = append(out, g)
	}
	return out
}

// TestTestbed4To1 is the testbed experiment of Section 6.2 (Fig. 9): each of
// four servers starts a long flow to a fifth through one switch, 10 Gb/s
// NICs, RTT about 20 us, T = 50 us ("the period of generating CNPs in
// DCQCN"), MTU 4000 B (footnote 5), one ACK per packet. The paper: "ACC can
// directly adjust the rate to the proper rate (i.e., 10Gbps) after one
// period", and the aggregate rate "is maintained as 10Gbps".
//
// Asserted: every flow throttled within 2 T of the first, the rates then
// adding up to the ACK rate of a full link within 10 % (the first throttle
// counts whole ACKs over T: one ACK is 0.65 Gb/s at T = 50 us against 2.5
// Gb/s shares); over [5, 10] ms the link >= 95 % used and, Proposition 2's
// per-flow fairness, not in Fig. 9, Jain's index >= 0.98 (measured 0.997;
// 0.833 when R counted whole ACKs per period).
func TestTestbed4To1(t *testing.T) {
	const (
		c    = 10e9
		n    = 4
		m    = 4000
		from = 5_000_000
		end  = 10_000_000
	)
	spec := &fabric.Spec{Topo: fabric.Star(n+1, c, 3300), SampleNs: 10_000, MTU: m}
	p := acc.DefaultParams(ccalgo.Env{LinkBps: c, MTU: m, BaseRTT: 50_000})
	spec.Typed = p
	spec.Flows = fabrictest.Staggered(n, 1, 0, 0)
	r := traced.SimulateLossless(t, spec, end)
	var rps []*tracedRP
	first, last := int64(math.MaxInt64), int64(0)
	for i := 0; i < n; i++ {
		rp := traced.RP(t, r, i+1, int64(i+1))
		rps = append(rps, rp)
		first, last = min(first, rp.firstThrottle), max(last, rp.firstThrottle)
	}
	aggR := fabrictest.Sum(rateAfter(rps))
	ackRate := c * float64(m+acc.DefaultHeaderBytes) / float64(m+hostd.DataOverhead+24)
	g := fabrictest.Goodputs(r, spec.Flows, from, end)
	util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(c, m)
	j := fabric.Jain(g)
	t.Logf("T = %d ns (base RTT %d ns); first throttles at %.1f..%.1f us, rates then %s Gb/s adding up to %.2f Gb/s (paper: 10; ACK rate of a full link %.2f)",
		p.PeriodNs, r.Plan.BaseRTTNs, float64(first)/1e3, float64(last)/1e3, fabrictest.Gbps(rateAfter(rps)), aggR/1e9, ackRate/1e9)
	t.Logf("over [5, 10] ms: goodput %s Gb/s, utilisation %.4f, Jain %.4f; queue mean %.0f B, max %d B; periods:%s",
		fabrictest.Gbps(g), util, j, r.MeanQueue(0, 0, from, end), r.MaxQueue(0, 0, from, end), classShares(rps))
	if last-first > 2*p.PeriodNs {
		t.Errorf("first throttles spread over %d ns, more than 2 T", last-first)
	}
	if math.Abs(aggR-ackRate) > 0.1*ackRate {
		t.Errorf("rates after the first throttles add up to %.4g b/s, want the ACK rate %.4g within 10 %%", aggR, ackRate)
	}
	if util < 0.95 {
		t.Errorf("utilisation %.4f, want >= 0.95", util)
	}
	if j < 0.98 {
		t.Errorf("Jain %.4f, want >= 0.98 (Proposition 2: C/4 each)", j)
	}
}

// TestStaggered10G starts four long flows 2 ms apart towards one receiver at
// 10 Gb/s, 1 us links, default parameters (T = the base RTT, 5.93 us): the
// paper's rate and parameters with starts that symmetry cannot help. Each
// phase must move to the new fair share (Propositions 1 and 2) with the link
// full.
//
// Asserted for each phase's second half (1 ms): the link >= 95 % used (91 %
// with four flows when R counted whole ACKs per period, one ACK being 1.43
// Gb/s here) and Jain's index >= 0.99 up to three flows, >= 0.93 with four
// (measured 0.9996, 0.994 and 0.950: with one or two ACKs per flow and period,
// each throttle takes a rate that is off by a packet slot in the shared queue,
// and the shares wander around C/4 over a millisecond; TestFairness10G
// measures them over longer).
func TestStaggered10G(t *testing.T) {
	const (
		c   = 10e9
		n   = 4
		gap = 2_000_000
	)
	spec := &fabric.Spec{Topo: fabric.Star(n+1, c, 1000), SampleNs: 10_000}
	spec.Flows = fabrictest.Staggered(n, 1, 0, gap)
	r := traced.SimulateLossless(t, spec, n*gap)
	var rps []*tracedRP
	for i := 0; i < n; i++ {
		rps = append(rps, traced.RP(t, r, i+1, int64(i+1)))
	}
	full := fabrictest.PayloadGoodput(c, mtu)
	for k, g := range phases(r, n, gap) {
		util := fabrictest.Sum(g) / full
		j := fabric.Jain(g)
		from, to := int64(k)*gap+gap/2, int64(k+1)*gap
		t.Logf("%d flows over [%.0f, %.0f] ms: goodput %s Gb/s (C/%d's share %.2f), utilisation %.4f, Jain %.4f, queue mean %.0f B, max %d B",
			k+1, float64(from)/1e6, float64(to)/1e6, fabrictest.Gbps(g), k+1, full/float64(k+1)/1e9, util, j, r.MeanQueue(0, 0, from, to), r.MaxQueue(0, 0, from, to))
		if util < 0.95 {
			t.Errorf("%d flows: utilisation %.4f, want >= 0.95", k+1, util)
		}
		minJ := 0.99
		if k == n-1 {
			minJ = 0.93
		}
		if j < minJ {
			t.Errorf("%d flows: Jain %.4f, want >= %.2f", k+1, j, minJ)
		}
	}
	t.Logf("periods:%s", classShares(rps))
}

// TestFairness10G is Propositions 1 and 2 where the ACK count per period is
// smallest: four long flows at 10 Gb/s, started 1 ms apart, 0.943 us links for
// a base RTT of 5.7 us, default parameters (T = 5.7 us). A share (2.3 Gb/s of
// goodput) is 1.6 packets per period, and one ACK per period is 1.49 Gb/s of
// R: counting whole ACKs over T (Algorithm 1 line 3 as written) throttled the
// flows to multiples of that and left the link 91 % used (0.906 over [8, 20]
// ms, Jain 0.996, one flow at 0.83 of C/4).
//
// Asserted over [8, 20] ms: the link >= 95 % used, Jain's index >= 0.98 and
// every flow within 15 % of C/4 (measured 0.971, 0.997, 0.90-1.04 of C/4).
func TestFairness10G(t *testing.T) {
	const (
		c    = 10e9
		n    = 4
		d    = 943 // ns per link, each way
		gap  = 1_000_000
		from = 8_000_000
		end  = 20_000_000
	)
	spec := &fabric.Spec{Topo: fabrictest.StarDelays(n+1, c, []int64{d, d, d, d, d}), SampleNs: 10_000}
	spec.Flows = fabrictest.Staggered(n, 1, 0, gap)
	r := traced.SimulateLossless(t, spec, end)
	if rtt := r.Plan.BaseRTTNs; rtt < 5_600 || rtt > 5_800 {
		t.Fatalf("base RTT %d ns, want about 5.7 us", rtt)
	}
	var rps []*tracedRP
	for i := 0; i < n; i++ {
		rps = append(rps, traced.RP(t, r, i+1, int64(i+1)))
	}
	g := fabrictest.Goodputs(r, spec.Flows, from, end)
	full := fabrictest.PayloadGoodput(c, mtu)
	util := fabrictest.Sum(g) / full
	j := fabric.Jain(g)
	var perMs []string
	for w := int64(from); w < end; w += 2_000_000 {
		perMs = append(perMs, fabrictest.Scaled(fabrictest.Goodputs(r, spec.Flows, w, w+2_000_000), full/n, 2))
	}
	t.Logf("T = %d ns; over [8, 20] ms: goodput %s Gb/s (C/4's share %.2f), utilisation %.4f, Jain %.4f, queue mean %.0f B, max %d B; per 2 ms, of C/4's share: %v; periods:%s",
		r.Plan.BaseRTTNs, fabrictest.Gbps(g), full/n/1e9, util, j, r.MeanQueue(0, 0, from, end), r.MaxQueue(0, 0, from, end), perMs, classShares(rps))
	if util < 0.95 {
		t.Errorf("utilisation %.4f, want >= 0.95", util)
	}
	if j < 0.98 {
		t.Errorf("Jain %.4f, want >= 0.98", j)
	}
	for i, x := range g {
		if math.Abs(x/(full/n)-1) > 0.15 {
			t.Errorf("flow %d: %.3f Gb/s, %.2f of C/4, want within 15 %%", i+1, x/1e9, x/(full/n))
		}
	}
}

// TestUnequalRTTs is Proposition 2 ("fair bandwidth allocation regardless of
// the initial sending rate") with what symmetry cannot give: four senders
// whose links have 1, 2, 4 and 8 us of delay (base RTTs of 4.2 to 24 us),
// starting 0.5 ms apart, at the paper's 100 Gb/s and at its testbed's 10
// Gb/s. T is the fabric's largest base RTT (the default, Section 6.1: T must
// cover the RTT).
//
// Asserted over [2, 6] ms: the link >= 98 % used at both rates; at 10 Gb/s
// Jain's index >= 0.9 (measured 0.931: the shares wander between 0.65 and
// 1.4 of C/4, logged per millisecond). Pinned at 100 Gb/s, a known limit of
// Section 4.1's rule: Jain's index below 0.95 with most periods held (mixed
// CE, no UE). After the halts the four rates add up to C, the queue holds a
// few packets and every period of 24 us (about 280 packets) sees a few CE
// marks but not 90 %: the flows neither increase nor throttle, and the shares
// stay where the last throttle left them (0.42, 0.46, 1.11, 2.02 of C/4; Jain
// 0.707, 83 % of periods held). Counting such periods as uncongested
// (mixed_ce = "increase", what ccbed did before issue 11) holds no period and
// the shares converge, slowly: Jain 0.728 over [2, 6] ms, the per-ms shares
// moving from 0.26..2.32 to 0.49..1.66 of C/4 (with the old ACK-rate estimate
// as well, Jain was 0.992).
func TestUnequalRTTs(t *testing.T) {
	delays := []int64{1000, 2000, 4000, 8000}
	for _, tc := range []struct {
		c       float64
		mixedCE string
	}{{100e9, acc.MixedCEHold}, {10e9, acc.MixedCEHold}, {100e9, acc.MixedCEIncrease}} {
		c := tc.c
		t.Run(fmt.Sprintf("%gG/%s", c/1e9, tc.mixedCE), func(t *testing.T) {
			t.Parallel()
			const from, end = 2_000_000, 6_000_000
			mixedCE, err := ccalgo.NewOverrides("acc", func(p any) error { p.(*acc.Params).MixedCE = tc.mixedCE; return nil })
			if err != nil {
				t.Fatal(err)
			}
			spec := &fabric.Spec{Topo: fabrictest.StarDelays(len(delays)+1, c, append([]int64{1000}, delays...)), SampleNs: 10_000,
				Params: mixedCE}
			spec.Flows = fabrictest.Staggered(len(delays), 1, 0, 500_000)
			r := traced.SimulateLossless(t, spec, end)
			var rps []*tracedRP
			for i := range delays {
				rps = append(rps, traced.RP(t, r, i+1, int64(i+1)))
			}
			g := fabrictest.Goodputs(r, spec.Flows, from, end)
			full := fabrictest.PayloadGoodput(c, mtu)
			util := fabrictest.Sum(g) / full
			j := fabric.Jain(g)
			var perMs []string
			for w := int64(from); w < end; w += 1_000_000 {
				var x []float64
				for i := range delays {
					x = append(x, r.Goodput(int64(i+1), w, w+1_000_000)/(full/4))
				}
				perMs = append(perMs, fmt.Sprintf("%.2f", x))
			}
			t.Logf("T = %d ns; goodput %s Gb/s (C/4's share %.2f), utilisation %.4f, Jain %.4f, queue mean %.0f B; per ms, of C/4's share: %v; periods:%s",
				r.Plan.BaseRTTNs, fabrictest.Gbps(g), full/4/1e9, util, j, r.MeanQueue(0, 0, from, end), perMs, classShares(rps))
			if util < 0.98 {
				t.Errorf("utilisation %.4f, want >= 0.98", util)
			}
			if c == 10e9 && j < 0.9 {
				t.Errorf("Jain %.4f, want >= 0.9", j)
			}
			if tc.mixedCE == acc.MixedCEIncrease {
				first := fabric.Jain(fabrictest.Goodputs(r, spec.Flows, from, from+1_000_000))
				last := fabric.Jain(fabrictest.Goodputs(r, spec.Flows, end-1_000_000, end))
				if held := classShare(rps, acc.ClassMixedCE); held != 0 || last <= first {
					t.Errorf("mixed_ce = increase: %.0f %% of periods held, Jain first ms %.4f, last ms %.4f: want none held and the shares converging",
						100*held, first, last)
				}
				return
			}
			if held := classShare(rps, acc.ClassMixedCE); c == 100e9 && (j >= 0.95 || held < 0.5) {
				t.Errorf("Jain %.4f with %.0f %% of periods held: the shares no longer park; assert Jain >= 0.95", j, 100*held)
			}
		})
	}
}
