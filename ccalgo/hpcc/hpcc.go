// Package hpcc implements HPCC, High Precision Congestion Control (Li et al.,
// "HPCC: High Precision Congestion Control", SIGCOMM 2019). INT field widths
// and units are the paper's (Section 4.1, Figure 7), with TS in ns (the
// constants in package ccalgo); the deltas of Algorithm 1 are taken modulo the
// wrap of the TS and txBytes fields (at most one wrap between two ACKs).
//
// Roles, and where they sit in ccbed's dataplane:
//
//   - CP (switchd, tx+CC lcore of each egress port): asks the engine to append an
//     INT record (B, TS, txBytes, qLen; Section 4.1, Figure 7) to every data packet
//     at dequeue (Verdict.StampINT). Hop builds that record from the port state.
//   - NP (hostd rx lcore): copies the data packet's INT stack and send timestamp
//     into its ACK (Section 3.1: "the receiver ... copies all the meta-data
//     recorded by the switches to the ACK").
//   - RP (hostd tx lcore, one per QP): Algorithm 1 of Section 3.2, line by line:
//     MeasureInflight (lines 1-10, Eqn (1)-(2) with the EWMA of line 9),
//     ComputeWind (lines 11-20, Eqn (4) and the W_AI stages) and NewAck
//     (lines 21-27: W^c and incStage committed only on the ACK that passes
//     lastUpdateSeq = snd_nxt at the last commit; pacing rate R = W / T).
//
// Defaults (Section 3.3 and 5.1): eta = 0.95, maxStage = 5, W_init = B_NIC * T
// (Section 3.2), W_AI = W_init (1 - eta) / N with N the expected number of
// concurrent flows (Env.ExpectedFlows; the paper's 80 B is this rule at 100 Gb/s,
// N = 100), T = Env.BaseRTT (the paper sets T "slightly greater than the maximum
// RTT", so configure Env.BaseRTT or Params.TNs that way).
//
// Deviations from the paper, and why:
//
//   - INT placement: the paper puts the INT stack between the UDP header and the
//     BTH (Figure 7); ccbed puts it right after the BTH so that standard RoCEv2
//     dissectors still find the BTH at its usual offset (wire/ does the encoding;
//     fields and meaning are unchanged).
//   - Algorithm 1 needs the previous INT record L before its first measurement.
//     The first ACK with INT (and any ACK whose hop count differs from L, i.e. a
//     path change) only records L; W stays as it is. [H], the HPCC authors' ns-3
//     simulator (github.com/alibaba-edu/High-Precision-Congestion-Control), does
//     the same.
//   - Line 4 divides by ack.ts - L.ts; when that is 0 (two records with the same
//     nanosecond) txRate is taken as 0; such a hop has tau = 0 and cannot move U.
//   - Lines 6-7 start from u = 0 and so leave tau undefined when every hop reports
//     u' = 0; here hop 0 is always taken first, so tau is hop 0's delta then.
//   - W is clamped to [MinWindowBytes, W_init]. The upper bound keeps the pacing
//     rate R = W / T at or below the NIC rate (the paper's Eqn (4) has no bound:
//     with U << eta its MI step would grant a window the NIC cannot send and that
//     would turn into queue the moment a bottleneck appears; [H] likewise clamps
//     the rate to the line rate). The lower bound (one MTU by default) keeps a
//     flow able to send a full packet.
//   - An ACK without INT records (NHops = 0) carries no load information and is
//     ignored. A NAK that carries INT is measured like an ACK: its records
//     describe a packet that crossed the network like any other.
package hpcc

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registry name.
const Name = "hpcc"

// Params are HPCC's parameters (Section 3.3). Zero values of the derived fields
// mean "derive from the others", so that a TOML file changing T_ns or Eta keeps
// W_init and W_AI consistent with the paper's rules.
type Params struct {
	// Eta is the target utilisation eta (Algorithm 1 line 12, Eqn (3)). Paper: 0.95.
	Eta float64 `toml:"eta"`
	// MaxStage is the number of additive-increase rounds before a multiplicative
	// step (line 12). Paper: 5.
	MaxStage int `toml:"max_stage"`
	// TNs is T, ns: slightly above the largest base RTT (Section 3.2, 5.1).
	TNs int64 `toml:"t_ns"`
	// WInitBytes is the initial window; 0 means B_NIC * T (Section 3.2).
	WInitBytes int64 `toml:"w_init_bytes"`
	// WAIBytes is the additive increase W_AI; 0 means W_init (1 - eta) / N
	// (Section 3.3 rule of thumb).
	WAIBytes float64 `toml:"w_ai_bytes"`
	// ExpectedFlows is N of the W_AI rule: the expected maximum number of
	// concurrent flows on a link.
	ExpectedFlows int `toml:"expected_flows"`
	// RateAIMbps gives W_AI as a rate, as the ns-3 simulators' RATE_AI
	// does (their HPCC adds RATE_AI to the rate, ccbed's W_AI to the
	// window W = rate * T): W_AI = RateAIMbps * T / 8, when w_ai_bytes is
	// 0. 0 (default): the W_AI rule.
	RateAIMbps float64 `toml:"rate_ai_mbps"`
	// MinWindowBytes is the smallest window W may take (not in the paper; see the
	// package doc). 0 means one MTU.
	MinWindowBytes int64 `toml:"min_window_bytes"`
}

// DefaultParams returns the paper's defaults for env. T is env.BaseRTT, N is
// env.ExpectedFlows (100, the paper's evaluation value, when env gives none).
func DefaultParams(env ccalgo.Env) *Params {
	n := env.ExpectedFlows
	if n <= 0 {
		n = 100
	}
	return &Params{
		Eta:           0.95,
		MaxStage:      5,
		TNs:           env.BaseRTT,
		ExpectedFlows: n,
	}
}

// resolved is a validated Params with the derived values filled in.
type resolved struct {
	eta      float64
	maxStage int
	t        float64 // T, ns
	wInit    float64 // bytes
	wAI      float64 // bytes
	wMin     float64 // bytes
	lineBps  float64
}

func resolve(p *Params, env ccalgo.Env) (resolved, error) {
	bad := func(param string, v any, why string) error {
		return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: why}
	}
	if p == nil {
		return resolved{}, bad("params", p, "nil")
	}
	if !(p.Eta > 0 && p.Eta <= 1) {
		return resolved{}, bad("eta", p.Eta, "must be in (0, 1]")
	}
	if p.MaxStage < 0 {
		return resolved{}, bad("max_stage", p.MaxStage, "must be >= 0")
	}
	if p.TNs <= 0 {
		return resolved{}, bad("t_ns", p.TNs, "must be > 0 (set Env.BaseRTT or t_ns)")
	}
	if p.WInitBytes < 0 {
		return resolved{}, bad("w_init_bytes", p.WInitBytes, "must be >= 0")
	}
	if p.WAIBytes < 0 || math.IsNaN(p.WAIBytes) || math.IsInf(p.WAIBytes, 0) {
		return resolved{}, bad("w_ai_bytes", p.WAIBytes, "must be finite and >= 0")
	}
	if p.MinWindowBytes < 0 {
		return resolved{}, bad("min_window_bytes", p.MinWindowBytes, "must be >= 0")
	}
	if !(p.RateAIMbps >= 0) || math.IsInf(p.RateAIMbps, 0) {
		return resolved{}, bad("rate_ai_mbps", p.RateAIMbps, "must be finite and >= 0")
	}
	r := resolved{eta: p.Eta, maxStage: p.MaxStage, t: float64(p.TNs), lineBps: env.LinkBps}
	if p.WInitBytes > 0 {
		r.wInit = float64(p.WInitBytes)
	} else {
		if !(env.LinkBps > 0) {
			return resolved{}, bad("w_init_bytes", p.WInitBytes, "0 needs Env.LinkBps > 0 to derive B_NIC * T")
		}
		r.wInit = env.LinkBps / 8 * r.t / 1e9
	}
	switch {
	case p.WAIBytes > 0:
		r.wAI = p.WAIBytes
	case p.RateAIMbps > 0:
		r.wAI = p.RateAIMbps * 1e6 / 8 * r.t / 1e9
	default:
		if p.ExpectedFlows <= 0 {
			return resolved{}, bad("expected_flows", p.ExpectedFlows, "must be > 0 when w_ai_bytes is 0")
		}
		r.wAI = r.wInit * (1 - r.eta) / float64(p.ExpectedFlows)
	}
	r.wMin = float64(p.MinWindowBytes)
	if r.wMin == 0 {
		r.wMin = float64(env.MTU)
		if r.wMin <= 0 {
			r.wMin = 1000
		}
	}
	if r.wMin > r.wInit {
		r.wMin = r.wInit
	}
	return r, nil
}

func init() {
	ccalgo.Register(ccalgo.Define(Name, "HPCC: INT-based inflight-bytes window control (Li et al., SIGCOMM 2019, Alg. 1)", DefaultParams,
		ccalgo.WithCP(func(*Params, ccalgo.Env) (*CP, error) { return NewCP(), nil }),
		ccalgo.WithNP(func(*Params, ccalgo.Env) (*NP, error) { return NewNP(), nil }),
		ccalgo.WithRP(NewRP),
	))
}

// CP is HPCC's congestion point: it asks for an INT record on every data packet
// at dequeue (Section 4.1). It keeps no state.
type CP struct {
	ccalgo.CPBase
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns an HPCC congestion point.
func NewCP() *CP { return &CP{} }

// PacketHooks reports that only OnDequeue does work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return false, true }

// FlowBlind reports that the hooks never read the packet's flow (ccalgo.FlowBlind).
func (*CP) FlowBlind() bool { return true }

// INTOnly reports that OnDequeue's INT request is the CP's only per-packet
// work (ccalgo.INTOnly): a switch may stamp every data packet at dequeue
// without calling it.
func (*CP) INTOnly() bool { return true }

// OnDequeue asks the engine to stamp this hop's INT record (see Hop).
func (*CP) OnDequeue(int64, *ccalgo.DataPacket, *ccalgo.PortState, ccalgo.FeedbackSink) ccalgo.Verdict {
	return ccalgo.Verdict{StampINT: true}
}

// Hop builds the INT record of a packet dequeued at now from port (Section 4.1,
// Figure 7): B = the port's line rate, TS = now modulo 2^24 ns, txBytes = bytes
// sent before this packet modulo the 20-bit field of 128 B units (truncated to
// whole units, as the wire carries them), qLen = queue bytes after the dequeue,
// truncated to 80 B units and saturated at the 16-bit field. Engines may use it
// to honour Verdict.StampINT.
func Hop(now int64, port *ccalgo.PortState) ccalgo.INTHop {
	tx := port.TxBytes / ccalgo.INTTxBytesUnit * ccalgo.INTTxBytesUnit % ccalgo.INTTxBytesWrap
	q := port.QueueBytes
	if q < 0 {
		q = 0
	}
	q = q / ccalgo.INTQLenUnit * ccalgo.INTQLenUnit
	if q > ccalgo.INTQLenMax {
		q = ccalgo.INTQLenMax
	}
	return ccalgo.INTHop{
		LinkBps: port.LinkBps,
		TS:      uint32(uint64(now) % ccalgo.INTTSWrap),
		TxBytes: uint32(tx),
		QLen:    uint32(q),
	}
}

// NP is HPCC's notification point: it echoes the INT stack and the send
// timestamp of each data packet in the ACK. It keeps no state.
type NP struct{}

var _ ccalgo.NotificationPoint = (*NP)(nil)

// NewNP returns an HPCC notification point.
func NewNP() *NP { return &NP{} }

// OnData copies d's INT records and send timestamp into ack. HPCC never sends
// CNPs.
func (*NP) OnData(_ int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.INT = d.INT
	return false
}

// RP is HPCC's reaction point, one per QP (Algorithm 1).
type RP struct {
	ccalgo.RPBase
	p resolved

	w             float64 // W, bytes
	wc            float64 // W^c, the reference window, bytes
	u             float64 // U, normalised inflight bytes (EWMA, line 9)
	incStage      int
	lastUpdateSeq uint64
	last          ccalgo.INTStack // L: link feedback at the last update
	haveLast      bool
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns an HPCC reaction point for a QP on a NIC of env.LinkBps, starting
// at W = W^c = W_init (line rate).
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	r, err := resolve(p, env)
	if err != nil {
		return nil, err
	}
	rp := &RP{p: r}
	rp.w = r.wInit
	rp.wc = r.wInit
	return rp, nil
}

// OnAck runs NewAck (Algorithm 1 lines 21-27).
func (r *RP) OnAck(_ int64, a *ccalgo.AckEvent) { r.newAck(a) }

// OnNak measures the INT records a NAK carries like an ACK's (see the package
// doc); go-back-N itself is the sender's business.
func (r *RP) OnNak(_ int64, a *ccalgo.AckEvent) { r.newAck(a) }

func (r *RP) newAck(a *ccalgo.AckEvent) {
	s := &a.Fields.INT
	if s.NHops == 0 {
		return
	}
	if !r.haveLast || s.NHops != r.last.NHops {
		r.last = *s
		r.haveLast = true
		return
	}
	u := r.measureInflight(s)
	if a.AckedSeq > r.lastUpdateSeq { // line 22
		r.w = r.computeWind(u, true) // line 23
		r.lastUpdateSeq = a.SndNxt   // line 24
	} else {
		r.w = r.computeWind(u, false) // line 26
	}
	r.last = *s // line 27 (R = W / T is RateBps)
}

// measureInflight is MeasureInflight (Algorithm 1 lines 1-10): it updates and
// returns U from the hops of s and the last records L.
func (r *RP) measureInflight(s *ccalgo.INTStack) float64 {
	var u, tau float64
	for i := 0; i < int(s.NHops); i++ {
		h, l := &s.Hops[i], &r.last.Hops[i]
		if !(h.LinkBps > 0) {
			continue
		}
		dts := (h.TS - l.TS) % ccalgo.INTTSWrap                // ns, one wrap at most
		dtx := (h.TxBytes - l.TxBytes) % ccalgo.INTTxBytesWrap // bytes, one wrap at most
		bytesPerNs := h.LinkBps / 8e9
		txRate := 0.0 // line 4, bytes/ns
		if dts > 0 {
			txRate = float64(dtx) / float64(dts)
		}
		q := min(h.QLen, l.QLen)
		up := float64(q)/(bytesPerNs*r.p.t) + txRate/bytesPerNs // line 5, Eqn (2)
		if i == 0 || up > u {                                   // lines 6-7
			u = up
			tau = float64(dts)
		}
	}
	tau = min(tau, r.p.t)                 // line 8
	r.u = (1-tau/r.p.t)*r.u + tau/r.p.t*u // line 9
	return r.u
}

// computeWind is ComputeWind (Algorithm 1 lines 11-20), with W clamped to
// [wMin, wInit] (package doc).
func (r *RP) computeWind(u float64, updateWc bool) float64 {
	var w float64
	if u >= r.p.eta || r.incStage >= r.p.maxStage { // line 12
		// Line 13, Eqn (4). U = 0 gives +Inf, which the clamp turns into W_init.
		w = r.clamp(r.wc/(u/r.p.eta) + r.p.wAI)
		if updateWc { // lines 14-15
			r.incStage = 0
			r.wc = w
		}
	} else {
		w = r.clamp(r.wc + r.p.wAI) // line 17
		if updateWc {               // lines 18-19
			r.incStage++
			r.wc = w
		}
	}
	return w
}

func (r *RP) clamp(w float64) float64 {
	return min(max(w, r.p.wMin), r.p.wInit)
}

// RateBps is the pacing rate R = W / T (line 27), bits/s.
func (r *RP) RateBps() float64 { return r.w * 8e9 / r.p.t }

// WindowBytes is the window W, bytes in flight.
func (r *RP) WindowBytes() int64 { return int64(r.w) }

// U returns the current normalised inflight estimate U (telemetry and tests).
func (r *RP) U() float64 { return r.u }

// ReferenceWindow returns W^c, bytes (telemetry and tests).
func (r *RP) ReferenceWindow() float64 { return r.wc }

// IncStage returns the number of additive-increase rounds since the last
// multiplicative step (telemetry and tests).
func (r *RP) IncStage() int { return r.incStage }

// ControlPeriodNs is T, the base RTT HPCC's window updates once per
// (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	return p.TNs, "HPCC's per-RTT update period T (t_ns)"
}
