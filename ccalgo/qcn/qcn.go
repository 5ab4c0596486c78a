// Package qcn implements QCN, IEEE 802.1Qau Quantized Congestion Notification,
// the baseline that P4QCN (Geng et al., "P4QCN: Congestion Control Using
// P4-Capable Device in Data Center Networks", Electronics 2019, Sections 2.3
// and 3) extends to IP networks. It has two roles: a congestion point (CP) on
// the switch egress port, which samples arriving packets and sends the source
// of a sampled packet a congestion notification carrying the quantised
// feedback Fb, and a reaction point (RP) per sending QP, which cuts its rate in
// proportion to Fb and recovers it with a byte counter and a timer (fast
// recovery, active increase, hyper-active increase). There is no notification
// point: feedback goes straight from the switch to the source (QCN's two-point
// architecture).
//
// CP (802.1Qau congestion point): at each sample,
//
//	Q_off = q - Q_eq, Q_delta = q - q_old, Fb = -(Q_off + w Q_delta),
//
// and when Fb < 0 a ccalgo.Feedback{Kind: FeedbackQCN} goes to the sampled
// packet's source with |Fb| capped at Q_eq (2w + 1) and quantised to 6 bits
// (0..63). The next sample comes after SampleBase / (1 + 9 |Fb|_q / 63) bytes.
//
// RP (802.1Qau reaction point): on feedback, R_t = R_c;
// R_c = R_c (1 - G_d |Fb|_q), the factor not below MinDecFactor and R_c not
// below MinRateBps; the byte counter and timer restart. Each cycle of either
// (increase.go): fast recovery R_c = (R_t + R_c)/2 while both counts are below
// F; active increase R_t += R_AI when one has reached F; hyper-active increase
// R_t += i R_HAI when both have.
// At the first cycle after a cut, R_t > 10 R_c makes R_t = R_t / 8.
//
// Defaults are the IEEE 802.1Qau MIB values: cpQueueSizeSetPoint 26,000 B,
// w = 2, sample base 150,000 B, rpgByteReset 150,000 B, rpgTimeReset 15 ms,
// rpgThreshold 5, rpgAiRate 5 Mb/s, rpgHaiRate 50 Mb/s, Gd = 1/128 (rpgGd = 7,
// i.e. 2^-7; see also Linux's struct ieee_qcn, include/uapi/linux/dcbnl.h),
// rpgMinDecFac 50 %, rpgMinRate 5 Mb/s.
//
// Deviations:
//   - Sampling is deterministic (no random jitter on the sampling interval), and
//     the interval formula is ccbed's stand-in for the standard's table (which
//     samples from about 1 % to 10 % of packets as |Fb| grows):
//     SampleBase / (1 + 9 |Fb|_q / 63), from 1/150 KB to 10/150 KB.
//   - Quantisation is floor(|Fb| * 63 / (Q_eq (2w + 1))); a sample whose
//     quantised |Fb| is 0 sends nothing (there would be nothing to cut).
//   - Queue lengths are in bytes, not the standard's 64-byte pages.
//   - The RP releases its rate limiter (no timer) when R_c is back at the line
//     rate, and counts payload bytes, not frame bytes (see increase.go for the
//     byte-counter and timer deviations).
package qcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registered name.
const Name = "qcn"

// FbMaxQuantized is the largest quantised |Fb| (6 bits).
const FbMaxQuantized = 63

// Params are QCN's parameters; the struct tags give the TOML keys.
type Params struct {
	// CP
	QeqBytes        int64   `toml:"qeq_bytes"`         // Q_eq: queue set point (cpQueueSizeSetPoint)
	W               float64 `toml:"w"`                 // weight of Q_delta in Fb
	SampleBaseBytes int64   `toml:"sample_base_bytes"` // bytes between samples when |Fb| = 0

	// RP
	Gd           float64 `toml:"gd"`             // decrease gain: cut = Gd |Fb|_q
	MinDecFactor float64 `toml:"min_dec_factor"` // R_c keeps at least this fraction on one cut (rpgMinDecFac)
	MinRateBps   float64 `toml:"min_rate_bps"`   // floor of R_c (rpgMinRate)
	ByteReset    int64   `toml:"byte_reset"`     // bytes per byte-counter cycle (rpgByteReset)
	TimeReset    int64   `toml:"time_reset_ns"`  // ns per timer cycle (rpgTimeReset); 0: no timer
	Threshold    int     `toml:"threshold"`      // F: fast-recovery cycles (rpgThreshold)
	AIRateBps    float64 `toml:"ai_rate_bps"`    // R_AI (rpgAiRate)
	HAIRateBps   float64 `toml:"hai_rate_bps"`   // R_HAI (rpgHaiRate)
}

// DefaultParams returns the IEEE 802.1Qau MIB defaults listed in the package
// doc. They do not depend on env.
func DefaultParams(ccalgo.Env) *Params {
	return &Params{
		QeqBytes:        26_000,
		W:               2,
		SampleBaseBytes: 150_000,
		Gd:              1.0 / 128,
		MinDecFactor:    0.5,
		MinRateBps:      5e6,
		ByteReset:       150_000,
		TimeReset:       15_000_000,
		Threshold:       5,
		AIRateBps:       5e6,
		HAIRateBps:      50e6,
	}
}

func perr(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

// validateCP checks the CP's parameters.
func (p *Params) validateCP() error {
	switch {
	case p.QeqBytes <= 0:
		return perr("qeq_bytes", p.QeqBytes, "must be > 0")
	case !(p.W >= 0) || math.IsInf(p.W, 0):
		return perr("w", p.W, "must be finite and >= 0")
	case p.SampleBaseBytes <= 0:
		return perr("sample_base_bytes", p.SampleBaseBytes, "must be > 0")
	}
	return nil
}

// validateRP checks the RP's parameters.
func (p *Params) validateRP() error {
	switch {
	case !(p.Gd > 0) || p.Gd*FbMaxQuantized >= 1:
		return perr("gd", p.Gd, "must be > 0 and below 1/63")
	case !(p.MinDecFactor > 0 && p.MinDecFactor < 1):
		return perr("min_dec_factor", p.MinDecFactor, "must be in (0, 1)")
	case !validRate(p.MinRateBps):
		return perr("min_rate_bps", p.MinRateBps, "must be a finite rate > 0")
	case p.ByteReset <= 0:
		return perr("byte_reset", p.ByteReset, "must be > 0")
	case p.TimeReset < 0:
		return perr("time_reset_ns", p.TimeReset, "must be >= 0")
	case p.Threshold < 1:
		return perr("threshold", p.Threshold, "must be >= 1")
	case !(p.AIRateBps >= 0) || math.IsInf(p.AIRateBps, 0):
		return perr("ai_rate_bps", p.AIRateBps, "must be finite and >= 0")
	case !(p.HAIRateBps >= 0) || math.IsInf(p.HAIRateBps, 0):
		return perr("hai_rate_bps", p.HAIRateBps, "must be finite and >= 0")
	}
	return nil
}

// CP is QCN's congestion point on one egress port.
type CP struct {
	ccalgo.CPBase
	p          Params
	fbMax      float64 // cap of |Fb|: Q_eq (2w + 1)
	qOld       int64   // queue at the previous sample
	untilNext  int64   // bytes to enqueue before the next sample
	id         uint32
	fb         ccalgo.Feedback // scratch message handed to the sink
	Samples    int64           // samples taken
	Feedbacks  int64           // notifications sent
	LastFbQuan uint8           // quantised |Fb| of the last sample (0: none sent)
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns a CP with parameters p (nil: defaults) on a port described by env.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	if p == nil {
		p = DefaultParams(env)
	}
	if err := p.validateCP(); err != nil {
		return nil, err
	}
	return &CP{
		p:         *p,
		fbMax:     float64(p.QeqBytes) * (2*p.W + 1),
		untilNext: p.SampleBaseBytes,
		id:        env.ID,
	}, nil
}

// Quantize returns |Fb| of a sample at queue q with previous sample qOld,
// quantised to 0..63; 0 when Fb >= 0 (no congestion).
func (c *CP) Quantize(q, qOld int64) uint8 {
	qOff := float64(q - c.p.QeqBytes)
	qDelta := float64(q - qOld)
	fb := -(qOff + c.p.W*qDelta)
	if fb >= 0 {
		return 0
	}
	mag := math.Min(-fb, c.fbMax)
	return uint8(mag * FbMaxQuantized / c.fbMax)
}

// SampleInterval is the number of bytes until the next sample after a sample
// whose quantised |Fb| was fbq: SampleBase / (1 + 9 fbq / 63).
func (c *CP) SampleInterval(fbq uint8) int64 {
	return c.p.SampleBaseBytes * FbMaxQuantized / (FbMaxQuantized + 9*int64(fbq))
}

// PacketHooks reports that only OnEnqueue does work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return true, false }

// OnEnqueue samples the packet when the sampling byte count runs out, and sends
// a notification to its source when the sample shows congestion.
func (c *CP) OnEnqueue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	c.untilNext -= int64(pkt.WireBytes)
	if c.untilNext > 0 {
		return ccalgo.Verdict{}
	}
	c.Samples++
	q := port.QueueBytes
	fbq := c.Quantize(q, c.qOld)
	qDelta := q - c.qOld
	c.qOld = q
	c.untilNext = c.SampleInterval(fbq)
	c.LastFbQuan = fbq
	if fbq == 0 {
		return ccalgo.Verdict{}
	}
	c.Feedbacks++
	c.fb = ccalgo.Feedback{
		Kind:   ccalgo.FeedbackQCN,
		Flow:   pkt.Flow,
		CPID:   c.id,
		Fb:     fbq,
		QOff:   clamp32(q - c.p.QeqBytes),
		QDelta: clamp32(qDelta),
	}
	out.Emit(now, &c.fb)
	return ccalgo.Verdict{}
}

func clamp32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// RPStats counts what a reaction point did, for tests and telemetry.
type RPStats struct {
	Decreases    int64 // cuts on feedback
	FastRecovery int64 // fast-recovery cycles
	Active       int64 // active-increase cycles
	Hyper        int64 // hyper-active-increase cycles
}

// RP is QCN's reaction point of one QP.
type RP struct {
	ccalgo.RPBase
	p      Params
	rate   RateLimiter
	cycles CycleCounter
	active bool // the rate limiter is engaged (a cut happened, not yet back at line rate)
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
	if !validRate(env.LinkBps) {
		return nil, perr("env.LinkBps", env.LinkBps, "must be a finite rate > 0")
	}
	r := &RP{p: *p}
	r.rate = RateLimiter{Current: env.LinkBps, Target: env.LinkBps, MinBps: min(p.MinRateBps, env.LinkBps), MaxBps: env.LinkBps}
	r.cycles = CycleCounter{ByteReset: p.ByteReset, TimeReset: p.TimeReset, Threshold: p.Threshold, Hyper: true}
	r.cycles.Stop()
	return r, nil
}

// OnFeedback cuts the rate by G_d |Fb| and restarts the byte counter and timer.
func (r *RP) OnFeedback(now int64, fb *ccalgo.Feedback) {
	if fb.Kind != ccalgo.FeedbackQCN || fb.Fb == 0 {
		return
	}
	fbq := min(fb.Fb, FbMaxQuantized)
	r.rate.Cut(max(1-r.p.Gd*float64(fbq), r.p.MinDecFactor))
	r.cycles.Reset(now)
	r.active = true
	r.stats.Decreases++
}

// OnSend counts sent bytes in the byte counter.
func (r *RP) OnSend(now int64, seq uint64, bytes int) {
	if !r.active {
		return
	}
	if cy, ok := r.cycles.OnBytes(now, bytes); ok {
		r.increase(cy)
	}
}

// NextTimer is the end of the timer's cycle, or Never when the limiter is off.
func (r *RP) NextTimer() int64 {
	if !r.active {
		return ccalgo.Never
	}
	return r.cycles.NextTimer()
}

// OnTimer ends a timer cycle when one is due.
func (r *RP) OnTimer(now int64) {
	if !r.active {
		return
	}
	if cy, ok := r.cycles.OnTimer(now); ok {
		r.increase(cy)
	}
}

func (r *RP) increase(cy Cycle) {
	if cy.First && r.rate.Target > 10*r.rate.Current {
		r.rate.Target /= 8
	}
	switch cy.Stage {
	case StageFastRecovery:
		r.rate.Recover()
		r.stats.FastRecovery++
	case StageActiveIncrease:
		r.rate.Increase(r.p.AIRateBps)
		r.stats.Active++
	case StageHyperIncrease:
		r.rate.Increase(float64(cy.Hyper) * r.p.HAIRateBps)
		r.stats.Hyper++
	}
	if r.rate.AtLineRate() {
		r.active = false
		r.cycles.Stop()
	}
}

// RateBps is the current rate R_c.
func (r *RP) RateBps() float64 { return r.rate.Current }

// TargetBps is the target rate R_t.
func (r *RP) TargetBps() float64 { return r.rate.Target }

// Stage is the increase stage of the next cycle; ok is false when the rate
// limiter is released (line rate, no cut pending recovery).
func (r *RP) Stage() (s Stage, ok bool) { return r.cycles.Stage(), r.active }

// Stats returns the RP's counters.
func (r *RP) Stats() RPStats { return r.stats }

func init() {
	ccalgo.Register(ccalgo.Define(Name, "IEEE 802.1Qau QCN: sampled Fb = -(Qoff + w Qdelta) feedback from the switch, byte-counter/timer RP", DefaultParams,
		ccalgo.WithCP(NewCP), ccalgo.WithRP(NewRP)))
}

// ControlPeriodNs is the RP's timer cycle, 0 without a timer
// (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	return p.TimeReset, "QCN's RP timer cycle (time_reset_ns)"
}
