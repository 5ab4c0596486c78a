// Package p4qcn implements P4QCN (Geng et al., "P4QCN: Congestion Control Using
// P4-Capable Device in Data Center Networks", Electronics 2019): QCN extended
// to IP-routed networks, with a congestion point (CP) on the switch egress port
// that sends feedback packets (FBP, IPv4 with ECN = 11) straight back to a
// congested flow's source, and a reaction point (RP) per sending QP running a
// three-state FSM. There is no notification point (two-point architecture,
// Section 3.1, Figure 2).
//
// CP (Section 3.1.1, Eq. 1, Figure 3), at every packet entering the egress queue
// of q bytes (OnEnqueue), an FBP is sent with probability
//
//	P_feedback = 0                  q <= Q_min
//	           = alpha (q - Q_min)  Q_min < q < Q_max,  alpha = 1 / (Q_max - Q_min) by default
//	           = 1                  q >= Q_max           (Q_max < q < Q_pfc in Eq. 1)
//
// and at most one FBP per flow every N_fb (the paper's "at most one feedback
// packet every N micro-second for a same congestion flow"). The FBP is a
// ccalgo.Feedback{Kind: FeedbackP4QCN} for the packet's flow; Fb carries
// P_feedback scaled to 0..63 and QOff = q - Q_min, for telemetry only.
//
// RP (Section 3.1.2, Eqs. 2-4, Figures 5 and 6), three states:
//   - rate reduction, on every FBP from any state (Eq. 2): R_t = R_c;
//     R_c = R_c (1 - beta/2); the byte counter and timer are reset and the RP
//     enters fast recovery at once;
//   - fast recovery, N = 5 cycles (Eq. 3): R_c = (R_t + R_c)/2;
//   - active increase, every later cycle (Eq. 4): R_t = R_t + R_AI;
//     R_c = (R_t + R_c)/2.
//
// A cycle ends when ByteReset = 150 KB were sent or TimeReset passed since the
// last cycle (or the cut), whichever comes first; both then restart, and the N
// cycles of fast recovery count cycles of either kind (ccbed's choice: the
// paper's cycle is the byte counter's alone, and the timer is added as
// explained under the deviations). This differs from QCN, whose byte counter
// and timer run independently with separate stage counts (fast recovery lasts
// until either reaches F). This package reuses ccalgo/qcn's RateLimiter and
// CycleCounter (with hyper-active increase switched off) rather than copying
// them, so the two schemes share one implementation of the counters and of
// Eqs. 2-4's arithmetic.
//
// Defaults: beta = 1 (halve, the paper's maximum), N = 5 (Section 3.1.2), R_AI =
// 5 Mb/s (Section 3.1.2), Q_min = 20 KB, Q_max = 200 KB, PFC at 500 KB at
// 10 Gb/s (ccbed's choice, from Section 3.2.2's rules: Q_max below Q_pfc less
// one BDP in flight), N_fb = 50 us, byte counter 150 KB, timer 100 us (see the
// deviations).
//
// Deviations from the paper, and why:
//   - N_fb has no value in the paper (it calls it N, the letter of the recovery
//     cycles); ccbed's choice is 50 us, the CNP interval of DCQCN (Zhu et al.,
//     "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015).
//   - The per-flow N_fb limiter is a fixed direct-mapped table of FlowSlots
//     entries indexed by FlowKey.Hash (no allocation per packet). Two flows that
//     share a slot evict each other, so each may then get FBPs more often than
//     once per N_fb, never less often; the table is sized for many more flows
//     than a port carries.
//   - The paper keys flows by IP source/destination; the key here is
//     ccalgo.FlowKey (5-tuple and destination QP), so that QPs between the same
//     hosts are told apart.
//   - The paper ran at 7 Mb/s (mininet, bmv2) and gives no timer, only the byte
//     counter (QCN's 150 KB, kept). With a byte counter alone, both the cut
//     frequency (FBPs are drawn per packet) and the increase (per byte sent)
//     grow with a flow's rate, so nothing pulls the shares together and they
//     drift apart; QCN's 15 ms timer never fires at 10 Gb/s (a 150 KB cycle
//     takes 0.12-0.6 ms). The default timer is 100 us at 10 Gb/s (about one
//     150 KB cycle at line rate, 120 us), scaled with 1 / line rate, so that the
//     increase cadence does not depend on a flow's rate. Measured in
//     closedloop_test.go over [100, 300) ms: Jain index of 2 / 3 long flows
//     0.954 / 0.779 with 15 ms, 0.999 / 0.992 with 100 us. R_AI is
//     5 Mb/s per 10 Gb/s of line rate when ScaleAI is set (default: at 10 Gb/s
//     that is the paper's 5 Mb/s), since a fixed 5 Mb/s step is negligible at
//     100 Gb/s. The queue thresholds scale with the port's line rate from their
//     10 Gb/s values in DefaultParams (Section 3.2.2 sizes them from the BDP).
//   - R_c has a floor of 5 Mb/s (QCN's rpgMinRate) and a ceiling of the NIC's
//     line rate, and R_t is capped at the line rate; the paper states neither.
//   - The random draw of Eq. 1 uses a per-CP splitmix64 generator seeded from
//     Params.Seed and the CP's id, so runs are reproducible.
//   - P4QCN's CP also generates PFC pauses (Figure 4); PFC is a separate,
//     scheme-independent mechanism in ccbed (IEEE 802.1Qbb priority flow
//     control in the switch, docs/switch.md), so Q_pfc is only used here to
//     check Q_max <= Q_pfc.
package p4qcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/qcn"
)

// Name is the scheme's registered name.
const Name = "p4qcn"

// refLinkBps is the line rate the default thresholds and R_AI are given for.
const refLinkBps = 10e9

// Params are P4QCN's parameters; the struct tags give the TOML keys.
type Params struct {
	// CP
	QMinBytes int64   `toml:"qmin_bytes"` // Q_min of Eq. 1
	QMaxBytes int64   `toml:"qmax_bytes"` // Q_max of Eq. 1
	PFCBytes  int64   `toml:"pfc_bytes"`  // Q_pfc: Q_max must not exceed it; 0 = no check
	Alpha     float64 `toml:"alpha"`      // slope of Eq. 1 per byte; 0 = 1 / (Q_max - Q_min)
	NFbNs     int64   `toml:"n_fb_ns"`    // at most one FBP per flow per N_fb
	FlowSlots int     `toml:"flow_slots"` // entries of the per-flow N_fb table, a power of two
	Seed      uint64  `toml:"seed"`       // seed of Eq. 1's random draws

	// RP
	Beta           float64 `toml:"beta"`            // rate reduction factor of Eq. 2, in (0, 1]
	RecoveryCycles int     `toml:"recovery_cycles"` // N: fast-recovery cycles
	ByteReset      int64   `toml:"byte_reset"`      // bytes sent per cycle
	TimeReset      int64   `toml:"time_reset_ns"`   // ns per timer cycle; 0 = byte counter only
	AIRateBps      float64 `toml:"ai_rate_bps"`     // R_AI of Eq. 4 (at 10 Gb/s when ScaleAI)
	ScaleAI        bool    `toml:"scale_ai"`        // scale R_AI with the NIC rate / 10 Gb/s
	MinRateBps     float64 `toml:"min_rate_bps"`    // floor of R_c
}

// DefaultParams returns the paper's defaults and ccbed's choices (package doc)
// where the paper gives none; the CP's queue thresholds are the 10 Gb/s values
// scaled by env.LinkBps / 10 Gb/s, and the RP's timer period (100 us at
// 10 Gb/s) by its inverse (unscaled when env.LinkBps is 0).
func DefaultParams(env ccalgo.Env) *Params {
	scale := 1.0
	if env.LinkBps > 0 {
		scale = env.LinkBps / refLinkBps
	}
	return &Params{
		QMinBytes:      int64(20_000 * scale),
		QMaxBytes:      int64(200_000 * scale),
		PFCBytes:       int64(500_000 * scale),
		NFbNs:          50_000,
		FlowSlots:      1024,
		Seed:           1,
		Beta:           1,
		RecoveryCycles: 5,
		ByteReset:      150_000,
		TimeReset:      int64(100_000 / scale),
		AIRateBps:      5e6,
		ScaleAI:        true,
		MinRateBps:     5e6,
	}
}

func perr(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

func (p *Params) validateCP() error {
	switch {
	case p.QMinBytes < 0:
		return perr("qmin_bytes", p.QMinBytes, "must be >= 0")
	case p.QMaxBytes <= p.QMinBytes:
		return perr("qmax_bytes", p.QMaxBytes, "must be > qmin_bytes")
	case p.PFCBytes < 0 || (p.PFCBytes > 0 && p.QMaxBytes > p.PFCBytes):
		return perr("pfc_bytes", p.PFCBytes, "must be 0 or >= qmax_bytes (P4QCN acts before PFC)")
	case !(p.Alpha >= 0) || !finite(p.Alpha):
		return perr("alpha", p.Alpha, "must be finite and >= 0")
	case p.NFbNs < 0:
		return perr("n_fb_ns", p.NFbNs, "must be >= 0")
	case p.FlowSlots < 1 || p.FlowSlots&(p.FlowSlots-1) != 0:
		return perr("flow_slots", p.FlowSlots, "must be a power of two >= 1")
	}
	return nil
}

func (p *Params) validateRP() error {
	switch {
	case !(p.Beta > 0 && p.Beta <= 1):
		return perr("beta", p.Beta, "must be in (0, 1]")
	case p.RecoveryCycles < 1:
		return perr("recovery_cycles", p.RecoveryCycles, "must be >= 1")
	case p.ByteReset <= 0:
		return perr("byte_reset", p.ByteReset, "must be > 0")
	case p.TimeReset < 0:
		return perr("time_reset_ns", p.TimeReset, "must be >= 0")
	case !(p.AIRateBps >= 0) || !finite(p.AIRateBps):
		return perr("ai_rate_bps", p.AIRateBps, "must be finite and >= 0")
	case !(p.MinRateBps > 0) || !finite(p.MinRateBps):
		return perr("min_rate_bps", p.MinRateBps, "must be a finite rate > 0")
	}
	return nil
}

// flowSlot is one entry of the CP's per-flow N_fb table.
type flowSlot struct {
	key  ccalgo.FlowKey
	last int64 // time of the last FBP to key
	used bool
}

// CP is P4QCN's congestion point on one egress port.
type CP struct {
	ccalgo.CPBase
	p         Params
	alpha     float64
	mask      uint32
	slots     []flowSlot
	rng       uint64
	id        uint32
	fb        ccalgo.Feedback // scratch message handed to the sink
	Feedbacks int64           // FBPs sent
	Limited   int64           // FBPs Eq. 1 drew but the per-flow N_fb limit held back
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns a CP with parameters p (nil: defaults for env) on a port
// described by env. It allocates the per-flow table.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	if p == nil {
		p = DefaultParams(env)
	}
	if err := p.validateCP(); err != nil {
		return nil, err
	}
	c := &CP{
		p:     *p,
		alpha: p.Alpha,
		mask:  uint32(p.FlowSlots - 1),
		slots: make([]flowSlot, p.FlowSlots),
		rng:   p.Seed ^ uint64(env.ID)*0x9e3779b97f4a7c15,
		id:    env.ID,
	}
	if c.alpha == 0 {
		c.alpha = 1 / float64(p.QMaxBytes-p.QMinBytes)
	}
	return c, nil
}

// Probability is P_feedback of Eq. 1 at a queue of q bytes.
func (c *CP) Probability(q int64) float64 {
	switch {
	case q <= c.p.QMinBytes:
		return 0
	case q >= c.p.QMaxBytes:
		return 1
	}
	return math.Min(1, c.alpha*float64(q-c.p.QMinBytes))
}

// uniform returns the next draw in [0, 1) of the CP's splitmix64 generator.
func (c *CP) uniform() float64 {
	c.rng += 0x9e3779b97f4a7c15
	z := c.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) * (1.0 / (1 << 53))
}

// PacketHooks reports that only OnEnqueue does work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return true, false }

// OnEnqueue draws Eq. 1 for the packet and sends its flow's source an FBP when
// the draw says so and the flow had none in the last N_fb.
func (c *CP) OnEnqueue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	q := port.QueueBytes
	prob := c.Probability(q)
	if prob == 0 {
		return ccalgo.Verdict{}
	}
	if prob < 1 && c.uniform() >= prob {
		return ccalgo.Verdict{}
	}
	s := &c.slots[pkt.Flow.Hash()&c.mask]
	if s.used && s.key == pkt.Flow && now-s.last < c.p.NFbNs {
		c.Limited++
		return ccalgo.Verdict{}
	}
	s.key, s.last, s.used = pkt.Flow, now, true
	c.Feedbacks++
	qoff := q - c.p.QMinBytes
	if qoff > math.MaxInt32 {
		qoff = math.MaxInt32
	}
	c.fb = ccalgo.Feedback{
		Kind: ccalgo.FeedbackP4QCN,
		Flow: pkt.Flow,
		CPID: c.id,
		Fb:   uint8(math.Round(prob * qcn.FbMaxQuantized)),
		QOff: int32(qoff),
	}
	out.Emit(now, &c.fb)
	return ccalgo.Verdict{}
}

// State is the state of the RP's FSM (Figure 6).
type State uint8

// RP states. Rate reduction (Eq. 2) happens on an FBP and leads straight into
// fast recovery, so it is an event (RPStats.Decreases), not a state one can
// observe between calls.
const (
	StateLineRate       State = iota // no FBP since start, or recovered to line rate
	StateFastRecovery                // Eq. 3 at the end of each of the N cycles
	StateActiveIncrease              // Eq. 4 at the end of each cycle
)

// String names the state.
func (s State) String() string {
	switch s {
	case StateLineRate:
		return "line-rate"
	case StateFastRecovery:
		return "fast-recovery"
	case StateActiveIncrease:
		return "active-increase"
	}
	return "state(?)"
}

// RPStats counts what a reaction point did.
type RPStats struct {
	Decreases    int64 // rate reductions (Eq. 2), one per FBP
	FastRecovery int64 // fast-recovery cycles (Eq. 3)
	Active       int64 // active-increase cycles (Eq. 4)
}

// RP is P4QCN's reaction point of one QP.
type RP struct {
	ccalgo.RPBase
	cut    float64 // 1 - beta/2
	rai    float64 // R_AI in bits/s, scaled
	rate   qcn.RateLimiter
	cycles qcn.CycleCounter
	state  State
	stats  RPStats
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// NewRP returns an RP with parameters p (nil: defaults) on a NIC of env.LinkBps,
// starting at line rate.
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	if p == nil {
		p = DefaultParams(env)
	}
	if err := p.validateRP(); err != nil {
		return nil, err
	}
	if !(env.LinkBps > 0) || !finite(env.LinkBps) {
		return nil, perr("env.LinkBps", env.LinkBps, "must be a finite rate > 0")
	}
	r := &RP{cut: 1 - p.Beta/2, rai: p.AIRateBps}
	if p.ScaleAI {
		r.rai = p.AIRateBps * env.LinkBps / refLinkBps
	}
	r.rate = qcn.RateLimiter{Current: env.LinkBps, Target: env.LinkBps, MinBps: min(p.MinRateBps, env.LinkBps), MaxBps: env.LinkBps}
	r.cycles = qcn.CycleCounter{ByteReset: p.ByteReset, TimeReset: p.TimeReset, Threshold: p.RecoveryCycles, Joint: true}
	r.cycles.Stop()
	return r, nil
}

// OnFeedback is the rate reduction of Eq. 2, from any state, followed by the
// start of fast recovery.
func (r *RP) OnFeedback(now int64, fb *ccalgo.Feedback) {
	if fb.Kind != ccalgo.FeedbackP4QCN {
		return
	}
	r.rate.Cut(r.cut)
	r.cycles.Reset(now)
	r.state = StateFastRecovery
	r.stats.Decreases++
}

// OnSend counts sent bytes in the byte counter.
func (r *RP) OnSend(now int64, seq uint64, bytes int) {
	if r.state == StateLineRate {
		return
	}
	if cy, ok := r.cycles.OnBytes(now, bytes); ok {
		r.increase(cy)
	}
}

// NextTimer is the end of the timer's cycle, or Never at line rate.
func (r *RP) NextTimer() int64 {
	if r.state == StateLineRate {
		return ccalgo.Never
	}
	return r.cycles.NextTimer()
}

// OnTimer ends a timer cycle when one is due.
func (r *RP) OnTimer(now int64) {
	if r.state == StateLineRate {
		return
	}
	if cy, ok := r.cycles.OnTimer(now); ok {
		r.increase(cy)
	}
}

func (r *RP) increase(cy qcn.Cycle) {
	if cy.Stage == qcn.StageFastRecovery {
		r.rate.Recover() // Eq. 3
		r.stats.FastRecovery++
	} else {
		r.rate.Increase(r.rai) // Eq. 4
		r.stats.Active++
	}
	switch {
	case r.rate.AtLineRate():
		r.state = StateLineRate
		r.cycles.Stop()
	case r.cycles.Stage() == qcn.StageFastRecovery:
		r.state = StateFastRecovery
	default:
		r.state = StateActiveIncrease
	}
}

// RateBps is the current rate R_c.
func (r *RP) RateBps() float64 { return r.rate.Current }

// TargetBps is the target rate R_t.
func (r *RP) TargetBps() float64 { return r.rate.Target }

// State is the FSM's state: the update the next cycle applies.
func (r *RP) State() State { return r.state }

// Stats returns the RP's counters.
func (r *RP) Stats() RPStats { return r.stats }

func init() {
	ccalgo.Register(ccalgo.Define(Name, "P4QCN: Eq. 1 probabilistic switch feedback (1 per flow per N_fb), QCN-style RP FSM of Eqs. 2-4 (Geng et al., Electronics 2019)", DefaultParams,
		ccalgo.WithCP(NewCP), ccalgo.WithRP(NewRP)))
}

// ControlPeriodNs is the RP's timer cycle, 0 when it counts bytes only
// (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	return p.TimeReset, "P4QCN's RP timer cycle (time_reset_ns)"
}
