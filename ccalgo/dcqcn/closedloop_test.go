package dcqcn_test

// Closed-loop tests: DCQCN's CP, NP and RP inside the real switch (switchd) and
// host (hostd) engines, on a fabric run in virtual time (package fabric), at
// 40 Gb/s (the link rate of the paper's testbed, DCQCN, SIGCOMM'15) and at
// 10 Gb/s, with the package's defaults (DefaultParams: Kmin 5 KB, Kmax 200 KB,
// Pmax 1 % at 40 Gb/s, scaled by link / 40 Gb/s; g = 1/256, K = T = 55 us,
// B = 10 MB, F = 5, R_AI 40 Mb/s, R_HAI 200 Mb/s; CNPs at most every 50 us).
//
// The claim under test is the paper's (Section 3, and its fluid-model
// analysis): N long flows through one ECN-marking port converge to a fair
// share with the link busy, the queue standing between Kmin and Kmax.

import (
	"fmt"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/dcqcn"
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

// tracedScheme is DCQCN with every RP wrapped to count the CNPs it gets and
// the ones it ignores.
const tracedScheme = "dcqcn-traced"

// tracedRP counts what OnCNP does. A CNP is ignored when it changes none of
// the RP's rate, target, alpha and timers: what rp.go does today with a CNP
// less than DecreaseIntervalUs after the last cut.
type tracedRP struct {
	*dcqcn.RP
	cnps, ignored int
	lastCut       int64
	// gaps are the times from the last honoured CNP to each ignored one, ns.
	gaps []int64
}

type rpState struct {
	rc, rt, alpha float64
	timer         int64
}

func (r *tracedRP) state() rpState {
	return rpState{r.RateBps(), r.TargetBps(), r.Alpha(), r.NextTimer()}
}

func (r *tracedRP) OnCNP(now int64) {
	before := r.state()
	r.RP.OnCNP(now)
	r.cnps++
	if r.state() == before {
		r.ignored++
		r.gaps = append(r.gaps, now-r.lastCut)
		return
	}
	r.lastCut = now
}

func init() {
	fabrictest.RegisterWrappedRP(dcqcn.Name, tracedScheme, func(rp *dcqcn.RP) ccalgo.ReactionPoint {
		return &tracedRP{RP: rp}
	})
}

// simulate runs spec (scheme dcqcn-traced) for end ns.
func simulate(t *testing.T, spec *fabric.Spec, end int64) *fabric.Result {
	t.Helper()
	spec.Scheme = tracedScheme
	spec.ExpectedFlows = len(spec.Flows)
	return fabrictest.Simulate(t, spec, end)
}

// cnpCounts sums, over the flows, the CNPs their RPs got and ignored.
func cnpCounts(t *testing.T, r *fabric.Result, flows []fabric.Flow) (cnps, ignored int, gaps []int64) {
	t.Helper()
	for _, f := range flows {
		rp := fabrictest.RP[*tracedRP](t, r, f.Src, int64(f.ID))
		cnps += rp.cnps
		ignored += rp.ignored
		gaps = append(gaps, rp.gaps...)
	}
	return cnps, ignored, gaps
}

// TestLongFlowsOneBottleneck: N long flows join one port (1 ms apart, or all at
// once: an incast of 8), each at line rate when it joins. Over [10, 20) ms
// they share the port fairly, the link is busy and the queue stands between
// Kmin and Kmax; nothing is dropped (the default 12 MiB shared buffer; PFC
// for the incast, whose start overshoots the lossy queues' share of it).
//
// Tolerances: DCQCN converges to fairness only through its cuts, and with
// Pmax = 1 % the queue gives a flow a CNP every few hundred us, so a 10 ms
// window still shows the last cuts' luck. Over the CP's seeds 1 to 8 the
// measured Jain indices were 0.966-1.0 at 10 Gb/s, 0.93-1.0 at 40 Gb/s and
// 0.956-0.994 for the incast; utilisation 0.978-0.993 everywhere.
func TestLongFlowsOneBottleneck(t *testing.T) {
	tests := []struct {
		name    string
		bps     float64
		n       int
		gap     int64
		minJain float64
	}{
		{"10G 2 flows", 10e9, 2, ms, 0.95},
		{"10G 3 flows", 10e9, 3, ms, 0.95},
		{"40G 2 flows", 40e9, 2, ms, 0.90},
		{"40G 3 flows", 40e9, 3, ms, 0.90},
		// Eight flows at line rate at once overshoot to a queue of about
		// 1.4 MB before the CNPs bring them down: more than a lossy queue's
		// dynamic threshold (alpha B / (1 + alpha) = 1.33 MiB), so this one
		// runs lossless, with PFC, as DCQCN is deployed.
		{"40G 8 flows at once", 40e9, 8, 0, 0.93},
	}
	const end, from = 20 * ms, 10 * ms
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flows := fabrictest.Staggered(tc.n, 0, tc.n, tc.gap)
			r := simulate(t, &fabric.Spec{Topo: fabric.Star(tc.n+1, tc.bps, 1000), Flows: flows,
				PFC: fabric.PFC{Enabled: tc.gap == 0}}, end)
			p := dcqcn.DefaultParams(ccalgo.Env{LinkBps: tc.bps})
			g := fabrictest.Goodputs(r, flows, from, end)
			util := fabrictest.Sum(g) / fabrictest.FrameGoodput(tc.bps, mtu, headerBytes)
			jain := fabric.Jain(g)
			mq, maxQ := r.MeanQueue(0, tc.n, from, end), r.MaxQueue(0, tc.n, from, end)
			pc := r.Port(0, tc.n)
			cnps, ignored, _ := cnpCounts(t, r, flows)
			t.Logf("[10, 20) ms: goodput %s Gb/s, Jain %.4f, utilisation %.3f of payload capacity; queue mean %.0f B, max %d B (Kmin %d, Kmax %d); whole run: queue max %d B, %d CE marks, %d CNPs, %d ignored by the RPs; %.0f ms wall",
				fabrictest.Gbps(g), jain, util, mq, maxQ, p.KminBytes, p.KmaxBytes, pc.QueueMaxBytes, pc.MarkedCE, cnps, ignored, float64(r.WallNs)/1e6)
			if jain < tc.minJain {
				t.Errorf("Jain %.4f < %v", jain, tc.minJain)
			}
			if util < 0.95 {
				t.Errorf("utilisation %.3f < 0.95", util)
			}
			if mq <= float64(p.KminBytes) || mq >= float64(p.KmaxBytes) {
				t.Errorf("mean queue %.0f B outside (Kmin %d, Kmax %d)", mq, p.KminBytes, p.KmaxBytes)
			}
			if pc.DropsTotal != 0 {
				t.Errorf("%d drops", pc.DropsTotal)
			}
		})
	}
}

// TestDifferentRTTs: three flows at 40 Gb/s whose senders' links have 1, 4 and
// 16 us of propagation delay (base RTTs about 4.5, 10.5 and 34.5 us), joining
// 1 ms apart. DCQCN's increase is clocked by its timer and byte counter, not
// by ACKs, so the shares should not follow the RTTs: over [10, 20) ms they are
// as fair as with equal RTTs (CP seeds 1 to 8: Jain 0.967-0.998, no order by
// RTT), the link busy, the queue between Kmin and Kmax.
func TestDifferentRTTs(t *testing.T) {
	const bps, end, from = 40e9, 20 * ms, 10 * ms
	flows := fabrictest.Staggered(3, 0, 3, ms)
	r := simulate(t, &fabric.Spec{Topo: fabrictest.StarDelays(4, bps, []int64{1000, 4000, 16_000}), Flows: flows}, end)
	p := dcqcn.DefaultParams(ccalgo.Env{LinkBps: bps})
	g := fabrictest.Goodputs(r, flows, from, end)
	util := fabrictest.Sum(g) / fabrictest.FrameGoodput(bps, mtu, headerBytes)
	jain := fabric.Jain(g)
	mq := r.MeanQueue(0, 3, from, end)
	cnps, ignored, _ := cnpCounts(t, r, flows)
	t.Logf("[10, 20) ms: goodput %s Gb/s (RTT short to long), Jain %.4f, utilisation %.3f; queue mean %.0f B max %d B (Kmin %d, Kmax %d); %d CNPs, %d ignored; %.0f ms wall",
		fabrictest.Gbps(g), jain, util, mq, r.MaxQueue(0, 3, from, end), p.KminBytes, p.KmaxBytes, cnps, ignored, float64(r.WallNs)/1e6)
	for w := int64(0); w < end; w += 2 * ms {
		t.Logf("  [%2d, %2d) ms: goodput %s Gb/s, queue mean %6.0f B", w/ms, (w+2*ms)/ms,
			fabrictest.Gbps(fabrictest.Goodputs(r, flows, w, w+2*ms)), r.MeanQueue(0, 3, w, w+2*ms))
	}
	if jain < 0.93 {
		t.Errorf("Jain %.4f < 0.93", jain)
	}
	if util < 0.95 {
		t.Errorf("utilisation %.3f < 0.95", util)
	}
	if mq <= float64(p.KminBytes) || mq >= float64(p.KmaxBytes) {
		t.Errorf("mean queue %.0f B outside (Kmin %d, Kmax %d)", mq, p.KminBytes, p.KmaxBytes)
	}
}

// TestTwoBottlenecks is a parking lot at 40 Gb/s: switches s0 - s1 - s2, flow
// A from s0 to s2 crosses both trunks, flow B (s0 to s1) shares the first with
// it and flow C (s1 to s2) the second; they join 1 ms apart. Both trunks are
// bottlenecks, busy, with a standing queue between Kmin and Kmax each. A is
// marked at two queues, so it tends to get more CNPs than B or C and less than
// its max-min share (half a trunk), the beat-down of ECN schemes; but the NP
// sends at most one CNP per 50 us whatever the number of marking hops, which
// bounds it. Over [10, 20) ms and CP seeds 1 to 8, A got 0.66-0.99 of its
// max-min share (mean 0.79) and the trunks 0.946-0.987 utilisation.
func TestTwoBottlenecks(t *testing.T) {
	const bps, end, from = 40e9, 20 * ms, 10 * ms
	topo, flows := fabrictest.ParkingLot(bps, ms)
	r := simulate(t, &fabric.Spec{Topo: topo, Flows: flows}, end)
	p := dcqcn.DefaultParams(ccalgo.Env{LinkBps: bps})
	g := fabrictest.Goodputs(r, flows, from, end)
	capacity := fabrictest.FrameGoodput(bps, mtu, headerBytes)
	maxMin := capacity / 2
	cnps, ignored, _ := cnpCounts(t, r, flows)
	perFlow := ""
	for _, f := range flows {
		rp := fabrictest.RP[*tracedRP](t, r, f.Src, int64(f.ID))
		perFlow += fmt.Sprintf(" %d", rp.cnps)
	}
	t.Logf("[10, 20) ms: goodput A %.2f, B %.2f, C %.2f Gb/s (max-min share %.2f; A/max-min %.2f); CNPs per flow%s (%d in all, %d ignored); %.0f ms wall",
		g[0]/1e9, g[1]/1e9, g[2]/1e9, maxMin/1e9, g[0]/maxMin, perFlow, cnps, ignored, float64(r.WallNs)/1e6)
	for _, tr := range fabrictest.ParkingLotTrunks() {
		util := tr.Util(g, capacity)
		mq := r.MeanQueue(tr.Sw, tr.Port, from, end)
		t.Logf("trunk %s: utilisation %.3f, queue mean %.0f B max %d B (Kmin %d, Kmax %d), %d CE marks",
			tr.Name, util, mq, r.MaxQueue(tr.Sw, tr.Port, from, end), p.KminBytes, p.KmaxBytes, r.Port(tr.Sw, tr.Port).MarkedCE)
		if util < 0.92 {
			t.Errorf("trunk %s: utilisation %.3f < 0.92", tr.Name, util)
		}
		if mq <= float64(p.KminBytes) || mq >= float64(p.KmaxBytes) {
			t.Errorf("trunk %s: mean queue %.0f B outside (Kmin %d, Kmax %d)", tr.Name, mq, p.KminBytes, p.KmaxBytes)
		}
	}
	if g[0] < 0.55*maxMin {
		t.Errorf("flow A gets %.2f of its max-min share, want >= 0.55", g[0]/maxMin)
	}
}

// rpIgnoresCNPs recorded a defect, now fixed: rp.go ignored any CNP less than
// DecreaseIntervalUs (50 us) after its last rate cut, alpha update included,
// and 50 us is also the NP's CNP spacing (paper Section 3.1, Figure 6). A CNP
// that the way back delays less than the one before it (a control frame
// waits behind the data frame on the wire at each hop) arrived a little less
// than 50 us after the last cut and was lost. The RP now holds such a CNP and
// cuts when the interval ends, so TestCNPsWithinDecreaseInterval asserts that
// no CNP is ignored (with the old rp.go it counts 9-10 of about 325).
const rpIgnoresCNPs = false

// TestCNPsWithinDecreaseInterval: eight flows into one 10 Gb/s port at once,
// and the receiver sending a long flow back to each sender, so that its CNPs
// wait behind data frames (up to one 1082-byte frame, 866 ns, per hop) and
// their spacing at the RPs jitters around the NP's 50 us while marking is
// dense. Measured in virtual time over 10 ms: about 325 CNPs reach the RPs and
// 9 or 10 of them (3 %, CP seeds 1 to 8) are ignored, each 49.2 to 49.7 us
// after the cut before it. The
// loss is small here because virtual time has no jitter but this queueing
// (the fabric has no delay jitter to add); polling and batching on the DPDK
// clock jitter by more (not measured here).
func TestCNPsWithinDecreaseInterval(t *testing.T) {
	const n, bps, end = 8, 10e9, 10 * ms
	flows := fabrictest.Staggered(n, 0, n, 0)
	all := append([]fabric.Flow(nil), flows...)
	for i := 0; i < n; i++ {
		all = append(all, fabric.Flow{ID: 100 + i, Src: n, Dst: i})
	}
	r := simulate(t, &fabric.Spec{Topo: fabric.Star(n+1, bps, 1000), Flows: all}, end)
	cnps, ignored, gaps := cnpCounts(t, r, flows)
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, g := range gaps {
		lo, hi = min(lo, g), max(hi, g)
	}
	t.Logf("%d CNPs reached the RPs, %d ignored (%.1f %%), %d to %d ns after the last cut; %.0f ms wall",
		cnps, ignored, 100*float64(ignored)/float64(max(cnps, 1)), lo, hi, float64(r.WallNs)/1e6)
	if cnps == 0 {
		t.Fatal("no CNPs: the scenario does not congest the port")
	}
	if rpIgnoresCNPs {
		// Today's behaviour (the defect): some CNPs are lost.
		if ignored == 0 {
			t.Errorf("no CNP ignored: if rp.go's decrease interval defect is fixed, set rpIgnoresCNPs to false")
		}
		return
	}
	if ignored != 0 {
		t.Errorf("%d of %d CNPs ignored by the RPs", ignored, cnps)
	}
}
