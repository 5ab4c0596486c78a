package p4qcn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/p4qcn"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
)

// Closed-loop tests of P4QCN (Geng et al., "P4QCN: Congestion Control Using
// P4-Capable Device in Data Center Networks", Electronics 2019) on the fabric:
// the real switch engine (switchd, P4QCN's CP on every egress port sending
// feedback packets straight to the sources) and host engine (hostd, P4QCN's
// RP on every QP) in virtual time. Sections, equations and figures below are
// that paper's.
//
// Scale. The paper ran at 7 Mb/s in mininet with bmv2 and queue thresholds in
// bmv2's queue units (Section 4: Q_min = Q_max = 11), and reports latency,
// loss and link use against UDP, TCP and PFC, not a closed-loop trace at a
// datacenter rate. These tests run at 10 Gb/s, the rate the package's
// defaults are given for (Q_min = 20 KB, Q_max = 200 KB, N = 5, beta = 1,
// R_AI = 5 Mb/s, 150 KB byte counter, 100 us timer), on 1 us links, and check
// what the paper's model promises: the FSM of Fig. 6 (rate reduction, N
// fast-recovery cycles, active increase), the queue held at the equilibrium
// where Eq. 1 starts to send feedback (above Q_min, far below Q_max, so that
// PFC at Q_pfc is never needed) and the link shared fairly.
//
// Units. A data frame is the MTU of payload plus hostd.DataOverhead (66 B) and
// takes 24 B more on the wire, so a full link of C carries a payload goodput
// of C x 1000/1090.

const mtu = 1000

// traceScheme is P4QCN with every RP wrapped so that the test sees the FSM's
// events.
const traceScheme = "p4qcn-trace"

// fsmEvent is one step of an RP's FSM.
type fsmEvent struct {
	t     int64
	kind  byte        // 'D' rate reduction (Eq. 2), 'F' fast-recovery cycle (Eq. 3), 'A' active-increase cycle (Eq. 4)
	state p4qcn.State // the state after the step
}

// tracedRP records the FSM events of the RP it wraps.
type tracedRP struct {
	*p4qcn.RP
	last   p4qcn.RPStats
	events []fsmEvent
}

func (t *tracedRP) note(now int64) {
	s := t.RP.Stats()
	if s == t.last {
		return
	}
	for ; t.last.Decreases < s.Decreases; t.last.Decreases++ {
		t.events = append(t.events, fsmEvent{now, 'D', t.RP.State()})
	}
	for ; t.last.FastRecovery < s.FastRecovery; t.last.FastRecovery++ {
		t.events = append(t.events, fsmEvent{now, 'F', t.RP.State()})
	}
	for ; t.last.Active < s.Active; t.last.Active++ {
		t.events = append(t.events, fsmEvent{now, 'A', t.RP.State()})
	}
}

func (t *tracedRP) OnFeedback(now int64, fb *ccalgo.Feedback) { t.RP.OnFeedback(now, fb); t.note(now) }
func (t *tracedRP) OnSend(now int64, seq uint64, n int)       { t.RP.OnSend(now, seq, n); t.note(now) }
func (t *tracedRP) OnTimer(now int64)                         { t.RP.OnTimer(now); t.note(now) }

// traced runs the scheme with its RPs traced.
var traced = fabrictest.TraceRPs(p4qcn.Name, traceScheme, func(rp *p4qcn.RP) *tracedRP { return &tracedRP{RP: rp} })

// checkFSM checks one RP's event sequence against Fig. 6: the first event is
// a rate reduction; a fast-recovery cycle follows a reduction, at most N of
// them; active increase only after N fast-recovery cycles; a reduction may
// come from any state and always leads to fast recovery. It returns how many
// full reduction -> N x fast recovery -> active increase sequences it saw.
func checkFSM(t testing.TB, flow int, ev []fsmEvent, n int) (full int) {
	t.Helper()
	fr := -1 // fast-recovery cycles since the last reduction; -1 before any
	for i, e := range ev {
		bad := func(why string) {
			t.Errorf("flow %d event %d (%c at %d ns, state %v): %s", flow, i, e.kind, e.t, e.state, why)
		}
		switch e.kind {
		case 'D':
			fr = 0
			if e.state != p4qcn.StateFastRecovery {
				bad("reduction did not lead to fast recovery")
			}
		case 'F':
			if fr < 0 || fr >= n {
				bad("fast-recovery cycle outside fast recovery")
			}
			fr++
			want := p4qcn.StateFastRecovery
			if fr == n {
				want = p4qcn.StateActiveIncrease
			}
			if e.state != want && e.state != p4qcn.StateLineRate {
				bad("wrong state after a fast-recovery cycle")
			}
		case 'A':
			if fr != n {
				bad("active increase before N fast-recovery cycles")
			}
			if i > 0 && ev[i-1].kind == 'F' {
				full++
			}
			if e.state != p4qcn.StateActiveIncrease && e.state != p4qcn.StateLineRate {
				bad("wrong state after an active-increase cycle")
			}
		}
		if t.Failed() {
			return full
		}
	}
	return full
}

// TestClosedLoopLongFlows: 2 and 3 long flows from separate hosts start
// together at line rate into one 10 Gb/s port, P4QCN's defaults. Asserted:
// every RP goes through reduction, fast recovery and active increase in the
// order of Fig. 6, and completes that sequence at least once; over the
// steady [15, 30] ms the queue reaches Q_min (Eq. 1's feedback region) and
// stays below Q_min + 10 % of (Q_max - Q_min), where Eq. 1 sends feedback
// with at most 10 % probability, far below Q_max (the equilibrium); the link
// >= 95 % used; Jain's index >= 0.99.
func TestClosedLoopLongFlows(t *testing.T) {
	const (
		c    = 10e9
		from = 15_000_000
		end  = 30_000_000
	)
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d-flows", n), func(t *testing.T) {
			t.Parallel()
			spec := &fabric.Spec{Topo: fabric.Star(n+1, c, 1000), SampleNs: 100_000}
			p := p4qcn.DefaultParams(ccalgo.Env{LinkBps: c})
			spec.Typed = p
			spec.Flows = fabrictest.Staggered(n, 1, 0, 0)
			r := traced.SimulateLossless(t, spec, end)
			for i := 0; i < n; i++ {
				tr := traced.RP(t, r, i+1, int64(i+1))
				var b strings.Builder
				for _, e := range tr.events[:min(40, len(tr.events))] {
					b.WriteByte(e.kind)
				}
				full := checkFSM(t, i+1, tr.events, p.RecoveryCycles)
				t.Logf("flow %d: %+v, %d full D-5F-A sequences, first events %s", i+1, tr.RP.Stats(), full, b.String())
				if full == 0 {
					t.Errorf("flow %d never went reduction -> fast recovery -> active increase", i+1)
				}
			}
			g := fabrictest.Goodputs(r, spec.Flows, from, end)
			util := fabrictest.Sum(g) / fabrictest.PayloadGoodput(c, mtu)
			j := fabric.Jain(g)
			maxQ, meanQ := r.MaxQueue(0, 0, from, end), r.MeanQueue(0, 0, from, end)
			hi := p.QMinBytes + (p.QMaxBytes-p.QMinBytes)/10
			pc := r.Port(0, 0)
			t.Logf("over [15, 30] ms: goodput %s Gb/s (C/%d's share %.3f), utilisation %.4f, Jain %.5f; queue mean %.0f B, max %d B (Q_min %d, Q_max %d); whole run max %d B; %d FBPs",
				fabrictest.Scaled(g, 1e9, 3), n, fabrictest.PayloadGoodput(c, mtu)/float64(n)/1e9, util, j, meanQ, maxQ, p.QMinBytes, p.QMaxBytes, r.MaxQueue(0, 0, 0, end), pc.P4QCNSent)
			if maxQ < p.QMinBytes || maxQ >= hi {
				t.Errorf("steady max queue %d B, want it in [Q_min, Q_min + 10 %% of Q_max - Q_min) = [%d, %d)", maxQ, p.QMinBytes, hi)
			}
			if m := r.MaxQueue(0, 0, 0, end); m >= p.QMaxBytes {
				t.Errorf("queue reached %d B >= Q_max %d B", m, p.QMaxBytes)
			}
			if util < 0.95 {
				t.Errorf("utilisation %.4f, want >= 0.95", util)
			}
			if j < 0.99 {
				t.Errorf("Jain %.5f, want >= 0.99", j)
			}
		})
	}
}

// TestStaggeredUnequalRTTs: three long flows whose links have 1, 5 and 20 us
// of delay (base RTTs of about 7, 15 and 45 us) start 5 ms apart at line rate
// into one 10 Gb/s port. P4QCN's rates do not depend on the RTT (the CP's
// feedback is per packet, the RP's cycles per byte and per 100 us), so the
// shares must converge as with equal RTTs.
//
// Asserted: the link >= 90 % used in the 5 ms windows before the third
// start, and over the last 5 ms >= 95 % used with Jain's index >= 0.97.
// Logged: the third start at line rate fills the queue to 81 KB, Eq. 1 cuts
// every flow (beta = 1 halves the rate) and the rates then climb back by R_AI
// = 5 Mb/s a cycle (100 us), 50 Mb/s a millisecond: the link stays 33 % idle
// in the 5 ms after that start and 11 % 15 ms later, and as every flow climbs
// by the same R_AI between the rare cuts (33 feedback packets in 40 ms), the
// shares draw together slowly (Jain 0.960 to 0.985 over 25 ms).
func TestStaggeredUnequalRTTs(t *testing.T) {
	const (
		c   = 10e9
		gap = 5_000_000
		end = 40_000_000
	)
	delays := []int64{1000, 5000, 20_000}
	spec := &fabric.Spec{Topo: fabrictest.StarDelays(len(delays)+1, c, append([]int64{1000}, delays...)), SampleNs: 100_000}
	spec.Typed = p4qcn.DefaultParams(ccalgo.Env{LinkBps: c})
	spec.Flows = fabrictest.Staggered(len(delays), 1, 0, gap)
	r := traced.SimulateLossless(t, spec, end)
	full := fabrictest.PayloadGoodput(c, mtu)
	for w := int64(0); w < end; w += gap {
		var g []float64
		active := 0
		for i := range delays {
			g = append(g, r.Goodput(int64(i+1), w, w+gap))
			if int64(i)*gap <= w {
				active++
			}
		}
		util := fabrictest.Sum(g) / full
		j := fabric.Jain(g[:active])
		t.Logf("[%2d, %2d] ms: goodput %s Gb/s, utilisation %.4f, Jain of the %d active %.4f, queue mean %.0f B, max %d B",
			w/1e6, (w+gap)/1e6, fabrictest.Scaled(g, 1e9, 3), util, active, j, r.MeanQueue(0, 0, w, w+gap), r.MaxQueue(0, 0, w, w+gap))
		if w+gap <= int64(len(delays)-1)*gap && w+gap < end && util < 0.9 {
			t.Errorf("[%d, %d] ns: utilisation %.4f, want >= 0.9", w, w+gap, util)
		}
		if w+gap == end {
			if util < 0.95 {
				t.Errorf("last 5 ms: utilisation %.4f, want >= 0.95", util)
			}
			if j < 0.97 {
				t.Errorf("last 5 ms: Jain %.4f, want >= 0.97", j)
			}
		}
	}
	t.Logf("%d FBPs", r.Port(0, 0).P4QCNSent)
}
