package p4qcn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/sim"
)

// Closed-loop tests on the packet-level simulator (ccalgo/sim): the real CP and
// RP in a dumbbell at 10 Gb/s, in virtual time.

// traceScheme is P4QCN with every RP wrapped so that the test sees the FSM's
// events: the simulator only samples RateBps.
const traceScheme = "p4qcn-trace"

// fsmEvent is one step of an RP's FSM.
type fsmEvent struct {
	t     int64
	kind  byte  // 'D' rate reduction (Eq. 2), 'F' fast-recovery cycle (Eq. 3), 'A' active-increase cycle (Eq. 4)
	state State // the state after the step
}

// tracedRP records the FSM events of the RP it wraps.
type tracedRP struct {
	*RP
	last   RPStats
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

// traced holds the RPs of the current traceScheme run, in flow order.
var traced []*tracedRP

func init() {
	s, err := ccalgo.Lookup(Name)
	if err != nil {
		panic(err)
	}
	s.Name = traceScheme
	newRP := s.NewRP
	s.NewRP = func(p any, env ccalgo.Env) (ccalgo.ReactionPoint, error) {
		rp, err := newRP(p, env)
		if err != nil {
			return nil, err
		}
		t := &tracedRP{RP: rp.(*RP)}
		traced = append(traced, t)
		return t, nil
	}
	ccalgo.Register(s)
}

func runSim(t *testing.T, cfg sim.Config) *sim.Result {
	t.Helper()
	traced = nil
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkFSM checks one RP's event sequence against Figure 6: the first event is
// a rate reduction; a fast-recovery cycle follows a reduction, at most N of
// them; active increase only after N fast-recovery cycles; a reduction may come
// from any state and always leads to fast recovery. It returns how many full
// reduction -> N x fast recovery -> active increase sequences it saw.
func checkFSM(t *testing.T, flow int, ev []fsmEvent, n int) (full int) {
	t.Helper()
	fr := -1 // fast-recovery cycles since the last reduction; -1 before any
	for i, e := range ev {
		bad := func(why string) {
			t.Errorf("flow %d event %d (%c at %d ns, state %v): %s", flow, i, e.kind, e.t, e.state, why)
		}
		switch e.kind {
		case 'D':
			fr = 0
			if e.state != StateFastRecovery {
				bad("reduction did not lead to fast recovery")
			}
		case 'F':
			if fr < 0 || fr >= n {
				bad("fast-recovery cycle outside fast recovery")
			}
			fr++
			want := StateFastRecovery
			if fr == n {
				want = StateActiveIncrease
			}
			if e.state != want && e.state != StateLineRate {
				bad("wrong state after a fast-recovery cycle")
			}
		case 'A':
			if fr != n {
				bad("active increase before N fast-recovery cycles")
			}
			if i > 0 && ev[i-1].kind == 'F' {
				full++
			}
			if e.state != StateActiveIncrease && e.state != StateLineRate {
				bad("wrong state after an active-increase cycle")
			}
		}
		if t.Failed() {
			return full
		}
	}
	return full
}

func payloadCapacity(cfg sim.Config) float64 {
	return cfg.LinkBps * float64(cfg.MTU) / float64(cfg.MTU+cfg.HeaderBytes)
}

// smooth averages series over windows of w samples (the 10 us samples of
// goodput are single packets).
func smooth(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	var sum float64
	for i, v := range x {
		sum += v
		if i >= w {
			sum -= x[i-w]
		}
		out[i] = sum / float64(min(i+1, w))
	}
	return out
}

// 2 and 3 long flows from separate hosts into one 10 Gb/s port, P4QCN defaults:
// the RPs go through reduction, fast recovery and active increase in the order
// of Figure 6, the queue reaches Q_min but stays below Q_max, the link stays
// busy and the flows share it fairly.
func TestClosedLoopLongFlows(t *testing.T) {
	const ms = 1_000_000
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d-flows", n), func(t *testing.T) {
			flows := sim.LongFlows(n, 0)
			cfg := sim.Config{Scheme: traceScheme, LinkBps: 10e9, MTU: 1000, HeaderBytes: 62, Flows: flows, Duration: 300 * ms}
			res := runSim(t, cfg)
			p := DefaultParams(ccalgo.Env{LinkBps: cfg.LinkBps})
			if len(traced) != n {
				t.Fatalf("%d traced RPs, want %d", len(traced), n)
			}
			for i, tr := range traced {
				var b strings.Builder
				for _, e := range tr.events[:min(40, len(tr.events))] {
					b.WriteByte(e.kind)
				}
				full := checkFSM(t, i, tr.events, p.RecoveryCycles)
				t.Logf("flow %d: %+v, %d full D-5F-A sequences, first events %s", i, tr.RP.Stats(), full, b.String())
				if full == 0 {
					t.Errorf("flow %d never went reduction -> fast recovery -> active increase", i)
				}
			}

			from, to := int64(100*ms), cfg.Duration
			var g []float64
			var sum float64
			for i := range flows {
				g = append(g, res.MeanGoodput(i, from, to))
				sum += g[i]
			}
			util := sum / payloadCapacity(cfg)
			jain := sim.Jain(g)
			maxQ, meanQ := res.MaxQueueIn(from, to), res.MeanQueue(from, to)
			t.Logf("steady [100, 300) ms: goodput %.3g b/s, utilisation %.3f, Jain %.4f, queue mean %.0f B max %d B; whole run max queue %d B, FBPs %d",
				g, util, jain, meanQ, maxQ, res.MaxQueue, res.Feedbacks)
			for i := range flows {
				st := sim.SettlingTime(res.T, smooth(res.Goodput[i], 500), payloadCapacity(cfg)/float64(n), 0.25)
				t.Logf("flow %d: 5 ms mean goodput within 25 %% of C/%d from %.1f ms on", i, n, float64(st)/ms)
			}
			if res.MaxQueue >= p.QMaxBytes || maxQ < p.QMinBytes {
				t.Errorf("steady max queue %d B, whole-run max %d B: want the queue to reach Q_min = %d and stay below Q_max = %d",
					maxQ, res.MaxQueue, p.QMinBytes, p.QMaxBytes)
			}
			if res.Drops != 0 {
				t.Errorf("%d drops with an unlimited buffer", res.Drops)
			}
			if util < 0.85 {
				t.Errorf("utilisation %.3f, want >= 0.85", util)
			}
			if jain < 0.95 {
				t.Errorf("Jain index %.4f, want >= 0.95", jain)
			}
		})
	}
}
