// RoCC reaction point: RoCC (Menikkumbura et al., "Congestion Control for
// Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS 2023) Section
// III-E, Algorithm 2 (PROCESS_CNP, lines 1-7, and TIMER_EXPIRED, lines 8-13).
// Deviations 4-6 of the package doc.

package rocc

import "github.com/ccbed/ccbed/ccalgo"

// RPStats are an RP's counters.
type RPStats struct {
	Accepted  uint64 // rate messages accepted (line 4 true)
	Rejected  uint64 // rate messages ignored (higher rate from another CP, or zero)
	Doublings uint64 // timer expiries that doubled R_cur (line 12)
	Removals  uint64 // rate limiter removed at R_max (line 10)
}

// RP is RoCC's reaction point: the rate limiter of one sender QP.
type RP struct {
	ccalgo.RPBase
	rMax    float64 // R_max: line rate of the NIC, bits/s
	rCur    float64 // R_cur, bits/s
	cpCur   uint32  // CP_cur
	limited bool    // a rate limiter is installed
	period  int64
	next    int64
	stats   RPStats
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns an RP for a NIC of env.LinkBps (R_max), starting without a rate
// limiter (at line rate).
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	if !(env.LinkBps > 0) {
		return nil, paramErr("env.LinkBps", env.LinkBps, "the RP needs a positive line rate (R_max)")
	}
	d, err := p.derive(env.LinkBps)
	if err != nil {
		return nil, err
	}
	return &RP{rMax: env.LinkBps, rCur: env.LinkBps, period: d.rpTimer, next: ccalgo.Never}, nil
}

// OnFeedback is PROCESS_CNP: it accepts a RoCC rate message whose rate is not
// above R_cur, or that comes from CP_cur while a limiter is installed, sets R_cur
// to it and restarts the timer. Other feedback kinds are ignored.
func (r *RP) OnFeedback(now int64, fb *ccalgo.Feedback) {
	if fb.Kind != ccalgo.FeedbackRoCCRate {
		return
	}
	rate := float64(fb.RateUnits) * fb.DeltaFBps // line 2
	if fb.DeltaFBps == 0 {
		rate = fb.RateBps
	}
	if !(rate > 0) {
		r.stats.Rejected++
		return
	}
	if rate <= r.rCur || (r.limited && fb.CPID == r.cpCur) { // line 4
		r.rCur = min(rate, r.rMax) // line 5
		r.cpCur = fb.CPID          // line 6
		r.limited = true
		r.next = now + r.period // line 7
		r.stats.Accepted++
		return
	}
	r.stats.Rejected++
}

// NextTimer returns the fast-recovery deadline, or Never without a limiter.
func (r *RP) NextTimer() int64 { return r.next }

// OnTimer is TIMER_EXPIRED: double R_cur up to R_max, and remove the limiter at
// the expiry that finds it at R_max.
func (r *RP) OnTimer(now int64) {
	if now < r.next {
		return
	}
	if !r.limited {
		r.next = ccalgo.Never
		return
	}
	if r.rCur >= r.rMax { // lines 9-10
		r.rCur = r.rMax
		r.limited = false
		r.cpCur = 0
		r.next = ccalgo.Never
		r.stats.Removals++
		return
	}
	r.rCur = min(2*r.rCur, r.rMax) // line 12
	r.next = now + r.period        // line 13
	r.stats.Doublings++
}

// RateBps returns R_cur, or the line rate without a limiter.
func (r *RP) RateBps() float64 { return r.rCur }

// Limited reports whether a rate limiter is installed, and the CP it follows.
func (r *RP) Limited() (cpID uint32, ok bool) { return r.cpCur, r.limited }

// Stats returns the RP's counters.
func (r *RP) Stats() RPStats { return r.stats }
