package rcc_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/rcc"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

// Closed-loop tests of RCC (Zhang et al., "RCC: Enabling Receiver-Driven RDMA
// Congestion Control With Congestion Divide-and-Conquer in Datacenter
// Networks", IEEE/ACM ToN 2023) on the fabric: the real switch engine
// (switchd, a plain switch: RCC has no switch role) and host engine (hostd:
// RCC's NP on every receiver, its RP on every QP) in virtual time, at the
// paper's link rates, delays and parameters (Section V-A: 100 Gb/s, 1 us per
// link, n = 3, delta = 0.2, eta = 0.95, Kp = 1e4, Kd = 1e5). Sections and
// figures below are that paper's.
//
// Units. A data frame is the MTU of payload plus hostd.DataOverhead (66 B) and
// takes 24 B more on the wire (preamble and delimiter, FCS, inter-frame gap),
// so a full link of C carries a payload goodput of C x 1000/1090 = 0.917 C.
// The paper's "~0.95 C / N" per flow (Section V-B-1) is most likely the same
// quantity in its simulator (HPCC's ns-3, where a 1000 B payload travels in
// about 1048 B and no preamble or gap is modelled: 0.954). The tests compare
// goodputs with C/N x 1000/1090 (share) and log the paper's figure beside
// them.
//
// Every case starts its flows at line rate (Section III-B), so the first round
// trip of an N-to-1 start queues about (N - 1) bandwidth-delay products at the
// switch; the steady checks begin after that queue has drained.

const (
	mtu        = 1000
	frameBytes = mtu + hostd.DataOverhead
	wireBytes  = frameBytes + fabrictest.WireOverhead
)

// share is the payload goodput of one of n flows filling a link of c.
func share(c float64, n int) float64 { return fabrictest.PayloadGoodput(c/float64(n), mtu) }

// ewaWindow is the EWA window (Section III-D, C x RTT_base / N) the NP assigns
// for a round of rtt ns: C counts wire bits, the window payload bytes, scaled
// by payload / frame bytes of the QP's packets.
func ewaWindow(c float64, rtt int64, n int) float64 {
	return c / 8e9 * float64(rtt) / float64(n) * mtu / frameBytes
}

// probeScheme is RCC with every NP recorded, so that a test can ask which QPs
// Algorithm 1 moved to PID control (the congestion-type flags of Fig. 15).
const probeScheme = "rcc-probe"

// probes maps a run's *rcc.Params (every run builds its own) and a host's IP
// to the host's NP: hostd builds one NP to check the parameters and then the
// engine's, which is the one kept.
var probes = struct {
	sync.Mutex
	np map[*rcc.Params]map[uint32]*rcc.NP
}{np: map[*rcc.Params]map[uint32]*rcc.NP{}}

func init() {
	fabrictest.RegisterWrappedNP(rcc.Name, probeScheme, func(np *rcc.NP, p any, env ccalgo.Env) ccalgo.NotificationPoint {
		if pp, ok := p.(*rcc.Params); ok {
			probes.Lock()
			if probes.np[pp] == nil {
				probes.np[pp] = map[uint32]*rcc.NP{}
			}
			probes.np[pp][env.ID] = np
			probes.Unlock()
		}
		return np
	})
}

// npOf returns host h's NP in the run configured with p.
func npOf(t testing.TB, p *rcc.Params, h int) *rcc.NP {
	t.Helper()
	probes.Lock()
	defer probes.Unlock()
	np := probes.np[p][fabric.HostIP(h)]
	if np == nil {
		t.Fatalf("no NP recorded for host %d", h)
	}
	return np
}

// params returns the defaults every host of spec would derive for itself
// (C = the hosts' link rate c, RTT_base = the plan's base RTT) and sets them
// as the spec's typed parameters, so that the test can change them and find
// the run's NPs.
func params(t testing.TB, spec *fabric.Spec, c float64) *rcc.Params {
	t.Helper()
	spec.Scheme = probeScheme
	plan, err := spec.Plan()
	if err != nil {
		t.Fatal(err)
	}
	p := rcc.DefaultParams(ccalgo.Env{LinkBps: c, MTU: mtu, BaseRTT: plan.BaseRTTNs})
	spec.Typed = p
	return p
}

// simulate runs spec (RCC, its NPs recorded) for endNs and fails the test on
// an error, a drop, a lost sample or a retransmission: every case has room in
// its buffers.
func simulate(t testing.TB, spec *fabric.Spec, endNs int64) *fabric.Result {
	t.Helper()
	spec.Scheme = probeScheme
	return fabrictest.SimulateLossless(t, spec, endNs)
}

// series returns flow id's rate samples in time order.
func series(r *fabric.Result, id int64) []hostd.RateSample {
	var out []hostd.RateSample
	for _, h := range r.Hosts {
		for _, s := range h.Samples() {
			if s.Flow == id {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b hostd.RateSample) int { return int(a.T - b.T) })
	return out
}

// settledAt returns the time of the first sample in (from, to] from which on
// every sample in (from, to] of every series has a window within tol of its
// want; -1 when the last one does not.
func settledAt(ss [][]hostd.RateSample, want []float64, from, to int64, tol float64) int64 {
	bad := map[int64]bool{}
	for i, s := range ss {
		for _, x := range s {
			if x.T > from && x.T <= to {
				bad[x.T] = bad[x.T] || math.Abs(float64(x.Window)-want[i]) > tol*want[i]
			}
		}
	}
	ts := make([]int64, 0, len(bad))
	for t := range bad {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	at := int64(-1)
	for _, t := range ts {
		switch {
		case bad[t]:
			at = -1
		case at < 0:
			at = t
		}
	}
	return at
}

// TestLastHopIncast is last-hop congestion (Section III-D, V-B-1): N senders
// start long flows at line rate together towards one receiver through one
// switch. EWA assigns every QP C x RTT_base / N from the first ACK, so "each
// flow's goodput quickly converges to ~100 x 0.95 / N Gbps, giving a Jain
// fairness index within 0.998 ~ 0.999", "in one RTT", with a near-zero queue
// (Fig. 6, 8). At 100 Gb/s with 1 us links (Section V-A) for N = 2 .. 16, in
// the paper's receiver mode, with RTT_base measured (Params.BaseRTTNs = 0)
// and in the sender-side variant (Section III-G); and the testbed's 25 Gb/s,
// 12 us cases (Section VI-B: 2-to-1, "the sending rate stabilizes at 12Gbps
// with a near-zero queue length"; VI-C: 3-to-1).
//
// Asserted: each flow's goodput over the second half within 1 % of its share
// as far as whole packets in its window can fill the pipe (below), Jain >=
// 0.999, every window within 5 % of the EWA share by 2 base RTTs after the
// start and from then on (measured with 1 us samples: 1.1 to 1.7 base RTTs),
// and a steady mean queue below 3 frames.
//
// Whole packets: EWA scales C x RTT_base / N to payload bytes by 1000/1066
// (payload over frame), but a frame also takes 24 B of preamble and gap on
// the wire, and the host sends a packet only if it fits in the window, so
// the window keeps floor(W / MTU) frames of 1090 B in flight. At 100 Gb/s that
// fills 0.998 of the pipe; at 25 Gb/s and N = 3 (W = 11.7 KB, 11 packets)
// only 0.962, and the link stays 4 % idle. With RTT_base measured (twice the
// smallest one-way delay, 5 % above the base RTT at 25 Gb/s) the window is
// large enough and a frame or two waits in the queue instead.
func TestLastHopIncast(t *testing.T) {
	type setup struct {
		c     float64
		n     int
		delay int64
		end   int64
	}
	var setups []setup
	for _, n := range []int{2, 4, 8, 16} {
		setups = append(setups, setup{100e9, n, 1000, 1_000_000})
	}
	setups = append(setups, setup{25e9, 2, 2800, 2_000_000}, setup{25e9, 3, 2800, 2_000_000})
	modes := []struct {
		name string
		mut  func(*rcc.Params)
	}{
		{"receiver", nil},
		{"receiver-measured-rtt", func(p *rcc.Params) { p.BaseRTTNs = 0 }},
		{"sender", func(p *rcc.Params) { p.Mode = rcc.ModeSender }},
	}
	for _, su := range setups {
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%gG/N=%d/%s", su.c/1e9, su.n, mode.name), func(t *testing.T) {
				t.Parallel()
				spec := &fabric.Spec{Topo: fabric.Star(su.n+1, su.c, su.delay), SampleNs: 1000}
				p := params(t, spec, su.c)
				if mode.mut != nil {
					mode.mut(p)
				}
				spec.Flows = fabrictest.Staggered(su.n, 1, 0, 0)
				r := simulate(t, spec, su.end)
				rtt := r.Plan.BaseRTTNs
				from := su.end / 2
				sh := share(su.c, su.n)
				var g, rates []float64
				var ss [][]hostd.RateSample
				var final []int64
				for i := 0; i < su.n; i++ {
					id := int64(i + 1)
					g = append(g, r.Goodput(id, from, su.end))
					rates = append(rates, r.MeanRate(id, from, su.end))
					s := series(r, id)
					ss = append(ss, s)
					final = append(final, s[len(s)-1].Window)
				}
				// The share the windows must settle at: EWA with the configured
				// RTT_base; with a measured one, twice the smallest one-way
				// delay (two hops of a data frame's serialisation and
				// propagation), which overestimates the round trip by a data
				// frame's serialisation less an ACK's, on each hop.
				want := ewaWindow(su.c, rtt, su.n)
				if p.BaseRTTNs == 0 {
					owd := 2 * (wireBytes*8e9/su.c + float64(su.delay))
					want = ewaWindow(su.c, int64(2*owd), su.n)
				}
				wants := slices.Repeat([]float64{want}, su.n)
				settle := settledAt(ss, wants, 0, su.end, 0.05)
				peak, peakAt := fabrictest.QueuePeak(r, 0, 0, 0, su.end)
				drained := fabrictest.QueueBelow(r, 0, 0, peakAt, su.end, 2*frameBytes)
				q := r.MeanQueue(0, 0, from, su.end)
				j := fabric.Jain(g)
				// The hosts send whole packets within the window (pacer: a packet
				// must fit), so a window of W payload bytes keeps floor(W/MTU)
				// frames in flight; filling one N-th of the pipe takes
				// C x RTT_base / N of wire bytes.
				fill := math.Min(1, math.Floor(float64(final[0])/mtu)*wireBytes*8/(su.c*float64(rtt)/1e9/float64(su.n)))
				t.Logf("goodput/share %s (share %.2f Gb/s = C/N x %.3f; paper: ~0.95 C/N, Jain 0.998-0.999); whole packets in the window fill %.4f of the pipe; Jain %.5f; "+
					"sending rates %s Gb/s; windows %v B (EWA %.0f B), settled at %d ns = %.2f base RTTs (paper: one RTT); "+
					"first-RTT queue %.0f KB at %.1f us, below 2 frames at %.1f us; steady queue mean %.0f B, max %d B",
					fabrictest.Scaled(g, sh, 4), sh/1e9, float64(mtu)/wireBytes, fill, j, fabrictest.Gbps(rates), final, want, settle, float64(settle)/float64(rtt),
					float64(peak)/1e3, float64(peakAt)/1e3, float64(drained)/1e3, q, r.MaxQueue(0, 0, from, su.end))
				for i, x := range g {
					if math.Abs(x-fill*sh) > 0.01*fill*sh {
						t.Errorf("flow %d: goodput %.4g b/s, want %.4g (share x fill) within 1 %%", i+1, x, fill*sh)
					}
				}
				if j < 0.999 {
					t.Errorf("Jain %.5f, want >= 0.999", j)
				}
				if settle < 0 || settle > 2*rtt {
					t.Errorf("windows settled at %d ns, want within 2 base RTTs (%d ns)", settle, 2*rtt)
				}
				if q > 3*frameBytes {
					t.Errorf("steady mean queue %.0f B, want below 3 frames (%d B)", q, 3*frameBytes)
				}
			})
		}
	}
}

// TestArrivalsAndDepartures is Section V-B-1's fast convergence (Fig. 6): four
// senders start one flow each to one receiver in turn over a 100 Gb/s
// bottleneck, with sizes in the paper's ratio 4.4 : 2.2 : 1.1 : 0.27, so that
// the number of flows goes 1, 2, 3, 4, 3, 2, 1. The paper spaces the starts
// 100 ms apart; RCC reacts per round trip, so 200 us (48 base RTTs) with the
// sizes scaled alike (8.8, 4.4, 2.2 and 0.54 MB) gives the same phases. "RCC
// quickly throttles the rate of existing flows upon a new flow starts, and
// recovers the rate of other flows after a flow ends ... only needs one RTT".
//
// Asserted: in each phase (its first 20 us left out) every active flow's
// goodput within 2 % of C/N's share and Jain >= 0.999; after every arrival and
// departure, every active window within 5 % of the new EWA share within 3
// base RTTs (measured: 1.2 base RTTs after an arrival; a departure is timed
// at the sender's last ACK, by when the NP has already counted it: 0.1 to
// 0.2 RTTs).
func TestArrivalsAndDepartures(t *testing.T) {
	const (
		c   = 100e9
		gap = 200_000
		end = 1_500_000
	)
	spec := &fabric.Spec{Topo: fabric.Star(5, c, 1000), SampleNs: 1000}
	params(t, spec, c)
	sizes := []int64{8_800_000, 4_400_000, 2_200_000, 540_000}
	for i, sz := range sizes {
		spec.Flows = append(spec.Flows, fabric.Flow{ID: i + 1, Src: i + 1, Dst: 0, StartNs: int64(i) * gap, SizeBytes: sz})
	}
	r := simulate(t, spec, end)
	rtt := r.Plan.BaseRTTNs
	// Events: the starts, and the ends the hosts recorded (the last ACK).
	type event struct {
		t      int64
		flow   int
		arrive bool
	}
	var evs []event
	for i := range sizes {
		evs = append(evs, event{int64(i) * gap, i + 1, true})
		f, ok := r.FCTOf(int64(i + 1))
		if !ok {
			t.Fatalf("flow %d did not complete by %d ns", i+1, end)
		}
		evs = append(evs, event{f.StartNs + f.FCTNs, i + 1, false})
	}
	slices.SortFunc(evs, func(a, b event) int { return int(a.t - b.t) })
	active := map[int]bool{}
	var ss [][]hostd.RateSample
	for i := range sizes {
		ss = append(ss, series(r, int64(i+1)))
	}
	for k, e := range evs {
		active[e.flow] = e.arrive
		next := int64(end)
		if k+1 < len(evs) {
			next = evs[k+1].t
		}
		var ids []int
		for i := range sizes {
			if active[i+1] {
				ids = append(ids, i+1)
			}
		}
		if len(ids) == 0 {
			continue
		}
		n := len(ids)
		var g []float64
		var ws [][]hostd.RateSample
		for _, id := range ids {
			g = append(g, r.Goodput(int64(id), e.t+20_000, next))
			ws = append(ws, ss[id-1])
		}
		want := slices.Repeat([]float64{ewaWindow(c, rtt, n)}, n)
		settle := settledAt(ws, want, e.t, next, 0.05)
		what := "starts"
		if !e.arrive {
			what = "ends"
		}
		sh := share(c, n)
		t.Logf("%.3f ms flow %d %s: %d flows %v until %.3f ms; goodput/share %s (paper ~0.95 C/N each), Jain %.5f; windows within 5 %% of EWA after %.2f base RTTs",
			float64(e.t)/1e6, e.flow, what, n, ids, float64(next)/1e6, fabrictest.Scaled(g, sh, 4), fabric.Jain(g), float64(settle-e.t)/float64(rtt))
		for i, x := range g {
			if math.Abs(x-sh) > 0.02*sh {
				t.Errorf("phase from %d ns: flow %d goodput %.4g b/s, want %.4g within 2 %%", e.t, ids[i], x, sh)
			}
		}
		if j := fabric.Jain(g); j < 0.999 {
			t.Errorf("phase from %d ns: Jain %.5f, want >= 0.999", e.t, j)
		}
		if settle < 0 || settle-e.t > 3*rtt {
			t.Errorf("after flow %d %s at %d ns: windows settled at %d ns, want within 3 base RTTs (%d ns)", e.flow, what, e.t, settle, 3*rtt)
		}
	}
}

// TestUnequalRTTs is Section V-B-1's N-to-1 with senders whose links have
// 1, 2, 4 and 8 us of delay (base RTTs of 4.2 to 18.2 us) and staggered starts
// (0, 100, 200, 300 us), at 100 Gb/s. The paper evaluates equal RTTs only,
// but claims EWA's "accurate bandwidth sharing" (Section III-D): every flow at
// C/N with a near-zero queue.
//
// It is not what RCC does with unequal RTTs, and the test pins why (when EWA
// gives every flow the rate C/N, these checks fail and must become the
// paper's). The NP gives every QP the same window, C x RTT_base / N (Section
// III-D, with one RTT_base for all QPs, as the package comment says), and the
// RP sends a window per its own round trip, so a flow's rate goes as
// RTT_base / RTT_i:
//   - with the configured RTT_base (the fabric's largest base RTT between any
//     two hosts, 24.2 us here, from the 8 us sender to the 4 us one, a path
//     no flow takes), the windows add up to more than the pipe, a standing
//     queue of about 190 KB raises every RTT until they fit, and the shares
//     still fall with the RTT (1.22, 1.11, 0.94, 0.72 of C/N; Jain 0.965);
//   - with RTT_base measured (twice the smallest one-way delay at the
//     receiver), the windows fit the shortest path: the long flows cannot fill
//     their shares (0.99, 0.67, 0.41, 0.23 of C/N; Jain 0.80), the link is
//     58 % used, and, B_R below eta C, the delay test moves three of the four
//     flows to PID control.
func TestUnequalRTTs(t *testing.T) {
	const c = 100e9
	delays := []int64{1000, 2000, 4000, 8000}
	for _, mode := range []string{"configured-rtt", "measured-rtt"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			spec := &fabric.Spec{Topo: fabrictest.StarDelays(len(delays)+1, c, append([]int64{1000}, delays...)), SampleNs: 10_000}
			p := params(t, spec, c)
			if mode == "measured-rtt" {
				p.BaseRTTNs = 0
			}
			spec.Flows = fabrictest.Staggered(len(delays), 1, 0, 100_000)
			const from, end = 1_000_000, 2_000_000
			r := simulate(t, spec, end)
			n := len(delays)
			var g []float64
			var pid []bool
			np := npOf(t, p, 0)
			for i := range delays {
				g = append(g, r.Goodput(int64(i+1), from, end))
				pid = append(pid, np.InPID(int32(i)))
			}
			sh := share(c, n)
			util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(c, mtu)
			j := fabric.Jain(g)
			q := r.MeanQueue(0, 0, from, end)
			t.Logf("goodput %s Gb/s = %s of C/N's share (paper: ~0.95 C/N each); utilisation %.3f; Jain %.4f; queue mean %.0f B, max %d B; QPs in PID %v",
				fabrictest.Gbps(g), fabrictest.Scaled(g, sh, 4), util, j, q, r.MaxQueue(0, 0, from, end), pid)
			if j >= 0.99 {
				t.Errorf("Jain %.4f >= 0.99: EWA seems to give every RTT its share now; make this test assert the paper's C/N each", j)
			}
			for i := 1; i < n; i++ {
				if g[i] >= g[i-1] {
					t.Errorf("flow %d (RTT longer) got %.4g b/s >= flow %d's %.4g: the window-per-RTT shares are gone; update the test", i+1, g[i], i, g[i-1])
				}
			}
			switch mode {
			case "configured-rtt":
				if util < 0.99 {
					t.Errorf("utilisation %.3f, want >= 0.99", util)
				}
				if q < 100_000 {
					t.Errorf("standing queue %.0f B < 100 KB: the windows no longer overfill the pipe; update the test", q)
				}
			case "measured-rtt":
				if util > 0.8 {
					t.Errorf("utilisation %.3f > 0.8: the long-RTT flows fill their shares now; update the test", util)
				}
				if q > 3*frameBytes {
					t.Errorf("queue mean %.0f B, want below 3 frames", q)
				}
			}
		})
	}
}

// TestInNetworkPID is in-network congestion (Section III-E): flows from one
// leaf to another share the link between them, not a receiver, so B_R stays
// below eta C at every receiver, the delay test (Eq. 1) moves each flow to
// PID control (Eq. 2-5) for good, and PID must fill the bottleneck with a
// near-zero queue. Cases:
//   - the testbed's second experiment (Section VI-B, Fig. 16(b)): two senders
//     to two receivers across a leaf-spine-leaf path at 25 Gb/s, base RTT
//     about 12 us; "the sending rate stabilizes at 12Gbps" for both, the
//     queue "limited to a very low level". The second flow starts 0.5 ms
//     after the first;
//   - four flows across a 100 Gb/s switch-to-switch link (Section V-A's links),
//     started 0.5 ms apart;
//   - the same four flows started together.
//
// Asserted: every flow under PID control and no drops; where PID holds the
// link (the staggered cases), the bottleneck busy (utilisation >= 0.95) with a
// queue below RTT_target's (delta/2 of the one-way base delay) plus 3 frames.
// The shares are logged, not asserted: Eq. 4-5 have no force towards equal
// windows (package doc, "Fairness under in-network congestion"), so one start
// gap's shares are whatever the flows' histories gave them (measured: Jain
// 0.936 at 25 Gb/s, 14.3 and 8.4 Gb/s against the paper's 12 each; 0.778
// for the four flows, 23.2, 8.8, 42.2 and 17.7 Gb/s), and small changes move
// them: the second 25 Gb/s flow started 10 us earlier or later gives Jain
// 0.996 or 0.993. TestInNetworkShares asserts their range over several start
// gaps.
//
// Four flows started together at 100 Gb/s share fairly but do not settle:
// their windows swing together between one MTU and 74 KB, the queue peaks at
// 235 KB and the link is used 63 %. One PID step per RTT_base on the latest
// delay sample, with Kd = 1e5, cuts every window to the floor whenever the
// queue's delay jumps (a 20 us jump gives tanh(2) = 0.96), and the cut shows
// in the delay only a queue's worth of delay later. The test asserts
// utilisation < 0.9 there, flipping when PID holds the link.
func TestInNetworkPID(t *testing.T) {
	cases := []struct {
		name     string
		c        float64
		n        int
		hosts    []int // hosts per switch of the chain
		delay    int64
		stagger  int64
		unstable bool // the four-flow limit cycle shows
	}{
		{"testbed-25G-2-flows", 25e9, 2, []int{2, 0, 2}, 1300, 500_000, false},
		{"100G-4-flows-staggered", 100e9, 4, []int{4, 4}, 1000, 500_000, false},
		{"100G-4-flows-together", 100e9, 4, []int{4, 4}, 1000, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, p, g, end := inNetworkRun(t, tc.c, tc.n, tc.hosts, tc.delay, tc.stagger)
			from := end - 2_000_000
			// The bottleneck: the first switch's port towards the next, after
			// its hosts' ports.
			bn := tc.hosts[0]
			var pid []bool
			for i := 0; i < tc.n; i++ {
				pid = append(pid, npOf(t, p, tc.n+i).InPID(0))
			}
			var lo, hi int64 = math.MaxInt64, 0
			for _, s := range series(r, 1) {
				if s.T > from {
					lo, hi = min(lo, s.Window), max(hi, s.Window)
				}
			}
			util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(tc.c, mtu)
			q := r.MeanQueue(0, bn, from, end)
			qTarget := targetQueue(p, r, tc.c)
			t.Logf("goodput %s Gb/s (paper: 12 each at 25 Gb/s), utilisation %.3f, Jain %.4f; in PID %v; bottleneck queue mean %.0f B (RTT_target's %.0f B), max %d B; flow 1's window %d..%d B",
				fabrictest.Gbps(g), util, fabric.Jain(g), pid, q, qTarget, r.MaxQueue(0, bn, from, end), lo, hi)
			for i, in := range pid {
				if !in {
					t.Errorf("flow %d not under PID control: in-network congestion not detected", i+1)
				}
			}
			if tc.unstable {
				if util >= 0.9 {
					t.Errorf("utilisation %.3f >= 0.9: PID holds the link with four flows started together now; assert the paper's near-full link and near-zero queue", util)
				}
				return
			}
			if util < 0.95 {
				t.Errorf("utilisation %.3f, want >= 0.95", util)
			}
			if lim := qTarget + 3*frameBytes; q > lim {
				t.Errorf("bottleneck queue mean %.0f B, want below RTT_target's + 3 frames (%.0f B)", q, lim)
			}
		})
	}
}

// inNetworkRun runs n long flows across a chain of switches with hosts[i]
// hosts on switch i (fabric.Chain, every link at c with delay ns), flow i+1
// from host i to host n+i starting at i x stagger, for 3 ms after the last
// start. It returns the run, its parameters, each flow's goodput over the
// last 2 ms and the run's end.
func inNetworkRun(t testing.TB, c float64, n int, hosts []int, delay, stagger int64) (*fabric.Result, *rcc.Params, []float64, int64) {
	t.Helper()
	spec := &fabric.Spec{Topo: fabric.Chain(hosts, c, c, delay), SampleNs: 10_000}
	p := params(t, spec, c)
	for i := 0; i < n; i++ {
		spec.Flows = append(spec.Flows, fabric.Flow{ID: i + 1, Src: i, Dst: n + i, StartNs: int64(i) * stagger})
	}
	end := int64(n-1)*stagger + 3_000_000
	r := simulate(t, spec, end)
	return r, p, fabrictest.Goodputs(r, spec.Flows, end-2_000_000, end), end
}

// targetQueue is the queue at c that RTT_target (Eq. 2) allows on the
// longest path of r's fabric: delta/2 of the one-way base delay (half the
// base RTT).
func targetQueue(p *rcc.Params, r *fabric.Result, c float64) float64 {
	return p.Delta / 2 * float64(r.Plan.BaseRTTNs) / 2 * c / 8e9
}

// TestInNetworkShares is the fairness the paper claims for PID control under
// in-network congestion (Section IV-A, Eq. 11: W_i / R_i equal at the fixed
// point; Section VI-B, Fig. 16(b): two flows at 12 Gb/s each on 25 Gb/s) and
// what RCC's Eq. 4-5 give instead (package doc, "Fairness under in-network
// congestion"): the flows share one delay signal, so Eq. 5 scales their
// windows by the same factor and nothing pulls them together; the shares
// keep what each flow's history gave it and wander. Each case runs
// TestInNetworkPID's flows with the later flows started 0.1, 0.3, 0.5 and
// 0.7 ms apart; the shares over the last 2 ms of each run (measured):
//   - two flows across the testbed's 25 Gb/s leaf-spine-leaf path: Jain
//     0.960, 0.997, 0.936 (14.3 and 8.4 Gb/s) and 0.998;
//   - two flows across a 100 Gb/s switch-to-switch link: Jain 0.997, 0.982,
//     0.999 and 0.927 (33.0 and 58.7 Gb/s);
//   - four flows across it: Jain 0.406, 0.512, 0.778 and 0.759, with one or
//     two flows near 1 Gb/s in three of the four runs.
//
// Asserted, per case: the link busy (utilisation >= 0.95) in every run; the
// least fair run below the paper's fairness (Jain < 0.99: this flips if a
// change gives PID a force towards equal shares; then assert the paper's C/N
// each) and above a floor that notices a change that starves flows (0.9 for
// two flows, 0.35 for four: 0.25 is one flow with the whole link); and for
// four flows no run fair (Jain < 0.9).
func TestInNetworkShares(t *testing.T) {
	cases := []struct {
		name   string
		c      float64
		n      int
		hosts  []int
		delay  int64
		lo, hi float64 // band of the least fair run's Jain
		allHi  float64 // every run's Jain below this
	}{
		{"testbed-25G-2-flows", 25e9, 2, []int{2, 0, 2}, 1300, 0.9, 0.99, 1},
		{"100G-2-flows", 100e9, 2, []int{2, 2}, 1000, 0.9, 0.99, 1},
		{"100G-4-flows", 100e9, 4, []int{4, 4}, 1000, 0.35, 0.9, 0.9},
	}
	gaps := []int64{100_000, 300_000, 500_000, 700_000}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			worst := 1.0
			for _, gap := range gaps {
				_, _, g, _ := inNetworkRun(t, tc.c, tc.n, tc.hosts, tc.delay, gap)
				j := fabric.Jain(g)
				util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(tc.c, mtu)
				worst = min(worst, j)
				t.Logf("starts %.1f ms apart: goodput %s Gb/s (paper: C/N's share %.2f each), utilisation %.3f, Jain %.4f",
					float64(gap)/1e6, fabrictest.Gbps(g), share(tc.c, tc.n)/1e9, util, j)
				if util < 0.95 {
					t.Errorf("starts %d ns apart: utilisation %.3f, want >= 0.95", gap, util)
				}
				if j >= tc.allHi {
					t.Errorf("starts %d ns apart: Jain %.4f >= %.2f: PID shares this run fairly now; see the package doc's fairness section", gap, j, tc.allHi)
				}
			}
			t.Logf("least fair run: Jain %.4f (asserted in [%.2f, %.2f); paper: 0.998-0.999)", worst, tc.lo, tc.hi)
			if worst >= tc.hi {
				t.Errorf("least fair run's Jain %.4f >= %.2f: PID seems to pull the shares together now; assert the paper's C/N each and update the package doc", worst, tc.hi)
			}
			if worst < tc.lo {
				t.Errorf("least fair run's Jain %.4f < %.2f: PID starves flows more than before", worst, tc.lo)
			}
		})
	}
}

// TestParkingLot is two bottlenecks in series, the in-network case of
// Section III-E that Fig. 1(a) and 15 build in part: fabrictest.ParkingLot at
// 100 Gb/s, flow A across both switch-to-switch links from 0, B sharing the
// first from 0.5 ms, C the second from 1 ms; every flow ends at a receiver
// of its own, so all three run PID. Max-min fairness, and the paper's Eq.
// 11, give every flow C/2.
//
// What RCC does (package doc, "Fairness under in-network congestion"): B and
// C each hold their link's queue at their own RTT_target (Eq. 2, delta/2 of
// a one-way base delay of three links: about 4 KB at 100 Gb/s); A's target
// is delta/2 of its four links' base delay, less than the two queues it
// crosses, so A's error (Eq. 3) never falls to 0, Kp integrates it into U
// (Eq. 4) and Eq. 5 holds A at its minimum window. Measured over the last
// 1.5 ms: A 0.89 Gb/s (one MTU per round trip), B and C 90.85 each, Jain
// 0.673 (2/3 is A at 0); start gaps of 0, 0.2, 0.49 and 1 ms give A 0.89 to
// 2.95 Gb/s.
//
// Asserted: both links busy (>= 0.99) with queues below RTT_target's plus 3
// frames; A between 0.8 of one MTU per base RTT and a tenth of C/2's share,
// and Jain in (2/3, 0.7]: a change that lets A keep a share, or fairness,
// flips it.
func TestParkingLot(t *testing.T) {
	const (
		c   = 100e9
		gap = 500_000
		end = 2*gap + 2_500_000
	)
	topo, flows := fabrictest.ParkingLot(c, gap)
	spec := &fabric.Spec{Topo: topo, SampleNs: 10_000, Flows: flows}
	p := params(t, spec, c)
	r := simulate(t, spec, end)
	const from = end - 1_500_000
	g := fabrictest.Goodputs(r, flows, from, end)
	full := fabrictest.PayloadGoodput(c, mtu)
	j := fabric.Jain(g)
	// A's floor: one MTU per round trip; its path is the fabric's longest.
	floor := float64(p.MinWindowBytes) * 8e9 / float64(r.Plan.BaseRTTNs)
	var pid []bool
	for _, h := range []int{4, 2, 5} { // A's, B's and C's receivers
		pid = append(pid, npOf(t, p, h).InPID(0))
	}
	// RTT_target's queue for B and C: delta/2 of a one-way base delay of
	// three links, a third less than the longest path's four.
	qLim := targetQueue(p, r, c)*3/4 + 3*frameBytes
	t.Logf("goodput A, B, C %s Gb/s (max-min and the paper's Eq. 11: %.2f each); A at %.3f of C/2's share, %.2f of one MTU per base RTT; Jain %.4f; in PID %v",
		fabrictest.Gbps(g), share(c, 2)/1e9, g[0]/share(c, 2), g[0]/floor, j, pid)
	for i, in := range pid {
		if !in {
			t.Errorf("flow %c not under PID control: in-network congestion not detected", 'A'+i)
		}
	}
	for _, tr := range fabrictest.ParkingLotTrunks() {
		u := tr.Util(g, full)
		q := r.MeanQueue(tr.Sw, tr.Port, from, end)
		t.Logf("%s: utilisation %.3f, queue mean %.0f B, max %d B", tr.Name, u, q, r.MaxQueue(tr.Sw, tr.Port, from, end))
		if u < 0.99 {
			t.Errorf("%s: utilisation %.3f, want >= 0.99", tr.Name, u)
		}
		if q > qLim {
			t.Errorf("%s: queue mean %.0f B, want below RTT_target's + 3 frames (%.0f B)", tr.Name, q, qLim)
		}
	}
	if g[0] < 0.8*floor || g[0] > 0.1*share(c, 2) {
		t.Errorf("flow A at %.4g b/s, want between 0.8 of one MTU per base RTT (%.4g) and a tenth of C/2's share (%.4g): A no longer held at its floor; see the package doc's fairness section",
			g[0], 0.8*floor, 0.1*share(c, 2))
	}
	if j <= 2.0/3 || j > 0.7 {
		t.Errorf("Jain %.4f, want in (2/3, 0.7]", j)
	}
}

// TestTwoBottlenecks is Section V-D-6 (Fig. 15(c)) on the multi-bottleneck
// topology of Fig. 1(a) at 100 Gb/s, 1 us links, built as a chain of two
// switches: flow 1 (h0 -> h2) crosses the link between them and h2's last hop,
// two bottlenecks in series; flow 2 (h1 -> h3, from 1 ms) shares the link
// between the switches with it, in-network congestion; flow 3 (h4 -> h2, from
// 2 ms) shares h2's last hop, last-hop congestion. The paper: "RCC handles
// different kinds of congestion perfectly by combining EWA and PID parts and
// achieves near-zero queuing length", with the detected types matching the
// constructed ones, every flow at the max-min share C/2 in the end.
//
// Asserted, as the paper: flows 1 and 2 detected as in-network (under PID),
// each phase's bottlenecks busy (>= 0.99) with queues below RTT_target's plus
// 3 frames, and flows 1 and 2 sharing fairly before flow 3 starts (Jain
// 0.9989; 0.993 and 0.9996 with flow 2 started 0.1 ms earlier or later:
// flow 2's line-rate start cuts both windows to near the floor as they enter
// PID, and half a millisecond is too short for the shares to wander far from
// there; TestInNetworkShares shows where they go).
//
// Not as the paper, and pinned so that a fix flips the test, once flow 3
// starts:
//   - flow 3 is detected as in-network too, within its first round trip: it
//     starts at line rate beside flow 1's 48 Gb/s, its queue passes Eq. 1's
//     RTT_base (1 + delta) for n = 3 packets (0.3 us) while B_R, the bytes of
//     the last round (6.3 us), still shows h2's link below eta C, so line 13
//     runs and PID holds flow 3 for good (lines 6-9);
//   - flow 1 starves, leaving h2's last hop partly idle (package doc,
//     "Fairness under in-network congestion"): it has flow 2's base delay
//     and crosses the queue that flow 2 holds at their common RTT_target,
//     plus h2's last-hop queue, so its error (Eq. 3) stays above flow 2's
//     and Kp integrates the difference into its U; and its cap, h2's EWA
//     share C/2 (flow 2's is the whole link), resets its U (anti-windup)
//     whenever it stops there. It falls towards its minimum window: 6.5
//     Gb/s over [2.5, 3] ms (2.7 to 15 Gb/s with flow 3 started up to 0.1
//     ms earlier or later), asserted between 0.8 of one MTU per base RTT
//     and half its max-min share;
//   - flow 3 sits at its cap, EWA's window C x RTT_base / 2 with RTT_base the
//     fabric's largest base RTT (6.3 us) on a 4.2 us path: C/2 x 6.3 / 4.2.
func TestTwoBottlenecks(t *testing.T) {
	const (
		c     = 100e9
		phase = 1_000_000
	)
	spec := &fabric.Spec{Topo: fabric.Chain([]int{2, 3}, c, c, 1000), SampleNs: 10_000}
	p := params(t, spec, c)
	spec.Flows = []fabric.Flow{{ID: 1, Src: 0, Dst: 2}, {ID: 2, Src: 1, Dst: 3, StartNs: phase}, {ID: 3, Src: 4, Dst: 2, StartNs: 2 * phase}}
	r := simulate(t, spec, 3*phase)
	// Flow 3's base RTT: one switch, 1 us links.
	short, err := (&fabric.Spec{Topo: fabric.Star(2, c, 1000), Scheme: probeScheme}).Plan()
	if err != nil {
		t.Fatal(err)
	}
	rtt3 := short.BaseRTTNs
	const trunk, lastHop = 2, 0 // switch 0's port to switch 1; switch 1's port to h2
	full := fabrictest.PayloadGoodput(c, mtu)
	qLim := p.Delta/2*float64(r.Plan.BaseRTTNs)/2*c/8e9 + 3*frameBytes
	for ph := 0; ph < 3; ph++ {
		from, to := int64(ph)*phase+phase/2, int64(ph+1)*phase
		g := fabrictest.Goodputs(r, spec.Flows, from, to)
		qt, ql := r.MeanQueue(0, trunk, from, to), r.MeanQueue(1, lastHop, from, to)
		t.Logf("phase %d (%d flows) over [%.1f, %.1f] ms: goodput %s Gb/s (max-min share %.2f each; paper ~0.95 C/N); queue mean between the switches %.0f B, h2's last hop %.0f B",
			ph+1, ph+1, float64(from)/1e6, float64(to)/1e6, fabrictest.Gbps(g), share(c, min(ph+1, 2))/1e9, qt, ql)
		for _, q := range []float64{qt, ql} {
			if q > qLim {
				t.Errorf("phase %d: queue mean %.0f B, want below RTT_target's + 3 frames (%.0f B)", ph+1, q, qLim)
			}
		}
		switch ph {
		case 0:
			if g[0] < 0.99*full {
				t.Errorf("flow 1 alone: %.4g b/s, want >= 0.99 x %.4g", g[0], full)
			}
		case 1:
			if u := (g[0] + g[1]) / full; u < 0.99 {
				t.Errorf("flows 1 and 2: link between the switches used %.3f, want >= 0.99", u)
			}
			if j := fabric.Jain(g[:2]); j < 0.99 {
				t.Errorf("flows 1 and 2: Jain %.4f, want >= 0.99", j)
			}
		case 2:
			if u := (g[0] + g[1]) / full; u < 0.99 {
				t.Errorf("flows 1 and 2: link between the switches used %.3f, want >= 0.99", u)
			}
			want3 := share(c, 2) * float64(r.Plan.BaseRTTNs) / float64(rtt3)
			t.Logf("flow 3 at %.2f Gb/s (C/2's share x RTT_base %d / RTT_3 %d ns = %.2f Gb/s); flow 1 at %.3f of C/2's share; h2's last hop used %.3f",
				g[2]/1e9, r.Plan.BaseRTTNs, rtt3, want3/1e9, g[0]/share(c, 2), (g[0]+g[2])/full)
			if math.Abs(g[2]-want3) > 0.03*want3 {
				t.Errorf("flow 3 at %.4g b/s, not C/2's share x RTT_base/RTT_3 = %.4g within 3 %%: EWA's cap changed; update the test", g[2], want3)
			}
			if g[0] >= 0.5*share(c, 2) {
				t.Errorf("flow 1 at %.4g b/s >= half its max-min share: PID's unfairness seems fixed; assert the paper's C/2 each", g[0])
			}
			if floor := float64(p.MinWindowBytes) * 8e9 / float64(r.Plan.BaseRTTNs); g[0] < 0.8*floor {
				t.Errorf("flow 1 at %.4g b/s, below 0.8 of one MTU per base RTT (%.4g): starved below its minimum window", g[0], 0.8*floor)
			}
		}
	}
	pid := []bool{npOf(t, p, 2).InPID(0), npOf(t, p, 3).InPID(0), npOf(t, p, 2).InPID(1)}
	t.Logf("under PID: flow 1 %v, flow 2 %v, flow 3 %v (paper: in-network, in-network, last hop)", pid[0], pid[1], pid[2])
	if !pid[0] || !pid[1] {
		t.Errorf("flows 1 and 2 under PID: %v %v, want both (in-network congestion)", pid[0], pid[1])
	}
	if !pid[2] {
		t.Errorf("flow 3 no longer taken for in-network congestion: the last-hop test keeps up with line-rate starts now; assert the paper's EWA for it")
	}
}

// TestLargeIncast is Section V-B-2 and V-B-3 (Fig. 7, 8) at the paper's scale:
// one receiver gets 200 KB from each of 1000 flows at once (20 senders of 50
// flows each: a switch has at most 64 ports), beside a long-lived background
// flow, at 100 Gb/s with 1 us links and the paper's 32 MB switch buffer
// (Section V-A), all of it the receiver's port's (a static buffer: the
// first round trip's 22 MB queue would overflow a port's share of a shared
// one). The paper: "the total goodput of the 1000 flows remains
// stable ... at around 94.98Gbps" (its 0.95 payload share of the link) and
// "RCC keeps near-zero queue length".
//
// Asserted: no drop; every incast flow done; their aggregate goodput >= 0.99
// of the payload share of the link; the completion times within 5 % of each
// other (p99 / median). Not as the paper, pinned so that a change flips the
// test: the queue. Each flow sends at line rate until its first ACK, and with
// 50 flows per NIC the first ACKs come back only after the queue they build:
// about 22 MB. Then N = 1001 gives every QP a window of C x RTT_base / N = 52
// B, which the NP floors at MinWindowBytes = one MTU, so the windows keep
// N frames in flight, N x 1090 B less a bandwidth-delay product (52 KB) in
// the queue: about 1 MB for as long as the incast lasts.
func TestLargeIncast(t *testing.T) {
	const (
		c       = 100e9
		senders = 20
		per     = 50
		size    = 200_000
		start   = 500_000
		end     = 19_000_000
	)
	spec := &fabric.Spec{Topo: fabric.Star(senders+2, c, 1000), SampleNs: 100_000, BufferBytes: 32 << 20,
		Buffer: switchd.BufferConfig{Mode: "static"}}
	params(t, spec, c)
	var snd []int
	for i := range senders {
		snd = append(snd, i+2)
	}
	spec.Flows = []fabric.Flow{{ID: 1, Src: 1, Dst: 0}}
	spec.Incast = []fabric.Incast{{IDBase: 100, Senders: snd, Dst: 0, FlowsPerSender: per, SizeBytes: size, StartNs: start}}
	r := simulate(t, spec, end)
	var fct []int64
	last := int64(0)
	for _, f := range r.FCTs() {
		fct = append(fct, f.FCTNs)
		last = max(last, f.StartNs+f.FCTNs)
	}
	if len(fct) != senders*per {
		t.Fatalf("%d of %d incast flows done by %d ns", len(fct), senders*per, end)
	}
	slices.Sort(fct)
	full := fabrictest.PayloadGoodput(c, mtu)
	agg := float64(senders*per*size) * 8e9 / float64(last-start)
	p50, p99 := fct[len(fct)/2], fct[len(fct)*99/100]
	n := senders*per + 1
	floorQ := float64(n*wireBytes) - c*float64(r.Plan.BaseRTTNs)/8e9
	peak := r.MaxQueue(0, 0, 0, end)
	q := r.MeanQueue(0, 0, 5_000_000, 15_000_000)
	t.Logf("incast goodput %.2f Gb/s = %.4f of the link's payload share (paper: 94.98 Gb/s, its 0.95); FCT min %.2f, median %.2f, p99 %.2f, max %.2f ms; "+
		"background flow %.3f Gb/s during the incast; queue peak %.1f MB, mean over [5, 15] ms %.0f KB (N x frame - BDP = %.0f KB; paper: near zero)",
		agg/1e9, agg/full, float64(fct[0])/1e6, float64(p50)/1e6, float64(p99)/1e6, float64(fct[len(fct)-1])/1e6,
		r.Goodput(1, 1_000_000, 15_000_000)/1e9, float64(peak)/1e6, q/1e3, floorQ/1e3)
	if agg < 0.99*full {
		t.Errorf("incast goodput %.4g b/s, want >= 0.99 x %.4g", agg, full)
	}
	if float64(p99) > 1.05*float64(p50) {
		t.Errorf("FCT p99 %d ns > 1.05 x median %d ns", p99, p50)
	}
	if peak < 5_000_000 {
		t.Errorf("queue peak %d B < 5 MB: the line-rate starts no longer pile up; update the test", peak)
	}
	if math.Abs(q-floorQ) > 0.1*floorQ {
		t.Errorf("queue mean %.0f B, not N x frame - BDP = %.0f B within 10 %%: the window floor changed; update the test", q, floorQ)
	}
}
