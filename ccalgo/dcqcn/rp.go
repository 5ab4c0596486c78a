package dcqcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// RP is DCQCN's reaction point for one QP (paper Section 3.1, Figure 7,
// equations (1)-(4); ccbed's choices in the package doc).
type RP struct {
	ccalgo.RPBase
	// byteCounter and f are Params.ByteCounterBytes and Params.F (the RP
	// keeps no string, so that a host resets it by copying a template).
	byteCounter int64
	f           int
	// clamp, timerHyper and alphaOnTimer are Params.ClampTargetRate,
	// Params.TimerHyperIncrease (with the byte counter off) and
	// Params.AlphaUpdate == AlphaOnTimer.
	clamp        bool
	timerHyper   bool
	alphaOnTimer bool
	lineRate     float64
	minRate      float64
	rai          float64
	rhai         float64
	g            float64
	kNs          int64 // alpha timer period
	tNs          int64 // increase timer period
	decNs        int64 // minimum spacing of rate decreases
	window       int64

	rc, rt    float64 // current and target rate, bits/s
	alpha     float64
	tCnt      int   // increase timer events since the last CNP
	bCnt      int   // byte counter events since the last CNP
	bytes     int64 // bytes sent since the last byte counter event or CNP
	nextAlpha int64 // alpha timer, Never before the first CNP
	nextInc   int64 // increase timer, Never before the first CNP
	lastCut   int64 // time of the last rate decrease; math.MinInt64 if none
	// heldCNP: a CNP came within decNs of the last cut; its cut is applied
	// at lastCut + decNs.
	heldCNP bool
	// cnpSinceAlpha: a CNP came since the last alpha timer event
	// (AlphaOnTimer only).
	cnpSinceAlpha bool
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// NewRP returns an RP at line rate (env.LinkBps) with alpha = p.InitAlpha.
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	if err := p.validateRP(); err != nil {
		return nil, err
	}
	if !(env.LinkBps > 0) {
		return nil, bad("LinkBps", env.LinkBps, "env needs the NIC's line rate")
	}
	r := &RP{
		byteCounter:  p.ByteCounterBytes,
		f:            p.F,
		clamp:        p.ClampTargetRate,
		timerHyper:   p.TimerHyperIncrease && p.ByteCounterBytes == 0,
		alphaOnTimer: p.AlphaUpdate == AlphaOnTimer,
		lineRate:     env.LinkBps,
		minRate:      min(p.MinRateMbps*1e6, env.LinkBps),
		rai:          p.RAIMbps * 1e6,
		rhai:         p.RHAIMbps * 1e6,
		g:            p.G,
		kNs:          int64(p.AlphaTimerUs * 1000),
		tNs:          int64(p.IncreaseTimerUs * 1000),
		decNs:        int64(p.DecreaseIntervalUs * 1000),
		window:       ccalgo.NoWindow,
		rc:           env.LinkBps,
		rt:           env.LinkBps,
		alpha:        p.InitAlpha,
		nextAlpha:    ccalgo.Never,
		nextInc:      ccalgo.Never,
		lastCut:      math.MinInt64,
	}
	if p.Window {
		r.window = max(int64(math.Ceil(env.LinkBps*float64(env.BaseRTT)/8e9)), int64(env.MTU))
	}
	return r, nil
}

// RateBps is the current rate R_C.
func (r *RP) RateBps() float64 { return r.rc }

// TargetBps is the target rate R_T.
func (r *RP) TargetBps() float64 { return r.rt }

// Alpha is the current congestion estimate alpha.
func (r *RP) Alpha() float64 { return r.alpha }

// WindowBytes is line rate * base RTT in the "+win" variant, else NoWindow.
func (r *RP) WindowBytes() int64 { return r.window }

// NextTimer is the earliest of the alpha timer, the increase timer and the end
// of the decrease interval when a CNP is held.
func (r *RP) NextTimer() int64 {
	t := min(r.nextAlpha, r.nextInc)
	if r.heldCNP {
		t = min(t, r.lastCut+r.decNs)
	}
	return t
}

// OnCNP cuts the rate (eq. 2, R_T = R_C first unless ClampTargetRate is
// off), then updates alpha (eq. 1; with AlphaOnTimer the alpha timer does),
// resets both increase counters and re-arms the timers. A CNP within
// DecreaseIntervalUs of the last cut is held, and cuts when the interval ends
// (several held CNPs make one cut).
func (r *RP) OnCNP(now int64) {
	if r.alphaOnTimer {
		if r.nextAlpha == ccalgo.Never {
			// The first CNP starts the alpha timer; alpha keeps its
			// initial value for the first cut (ns-3's Mellanox model).
			r.nextAlpha = now + r.kNs
		} else {
			r.cnpSinceAlpha = true
		}
	}
	if r.lastCut != math.MinInt64 && now-r.lastCut < r.decNs {
		r.heldCNP = true
		return
	}
	r.cut(now)
}

// cut is the rate decrease and alpha update of a CNP, at now.
func (r *RP) cut(now int64) {
	r.heldCNP = false
	// Without ClampTargetRate the target is kept for a cut in the same
	// recovery, and clamped once an increase event has come since the last
	// cut (ns-3's Mellanox model: its increase stage is non-zero).
	if r.clamp || r.tCnt+r.bCnt > 0 || r.lastCut == math.MinInt64 {
		r.rt = r.rc
	}
	r.lastCut = now
	r.rc = max(r.minRate, r.rc*(1-r.alpha/2))
	if !r.alphaOnTimer {
		r.alpha = (1-r.g)*r.alpha + r.g
		r.nextAlpha = now + r.kNs
	}
	r.tCnt, r.bCnt, r.bytes = 0, 0, 0
	r.nextInc = now + r.tNs
}

// OnSend counts bytes for the byte counter; every B bytes is an increase event.
func (r *RP) OnSend(now int64, seq uint64, bytes int) {
	if r.byteCounter <= 0 || r.nextInc == ccalgo.Never {
		return // no byte counter, or no CNP yet: nothing to recover from
	}
	r.bytes += int64(bytes)
	if r.bytes >= r.byteCounter {
		r.bytes -= r.byteCounter
		r.bCnt++
		r.increase()
	}
}

// OnTimer applies a held CNP whose decrease interval has ended, then runs the
// alpha decay (eq. 3) and the timer increase event due at now. With
// AlphaOnTimer the alpha event due at now comes before the held cut, which
// then cuts with the updated alpha (ns-3's Mellanox model orders them so).
func (r *RP) OnTimer(now int64) {
	if r.alphaOnTimer {
		r.alphaEvent(now)
	}
	if r.heldCNP && now >= r.lastCut+r.decNs {
		r.cut(now) // re-arms the increase timer, and the alpha timer with AlphaOnCut, past now
	}
	r.alphaEvent(now)
	if now >= r.nextInc {
		r.tCnt++
		r.increase()
		r.nextInc += r.tNs
		if r.nextInc <= now {
			r.nextInc = now + r.tNs
		}
	}
}

// alphaEvent runs the alpha timer's event if it is due at now: decay (eq. 3),
// or with AlphaOnTimer and a CNP in the period, the rise of eq. (1).
func (r *RP) alphaEvent(now int64) {
	if now < r.nextAlpha {
		return
	}
	r.alpha *= 1 - r.g
	if r.cnpSinceAlpha {
		r.alpha += r.g
		r.cnpSinceAlpha = false
	}
	r.nextAlpha += r.kNs
	if r.nextAlpha <= now {
		r.nextAlpha = now + r.kNs
	}
}

// increase is one rate increase event (eq. 4 and the AI / HAI stages).
func (r *RP) increase() {
	// Without a byte counter B_cnt stays 0: fast recovery, then additive
	// increase only, unless TimerHyperIncrease lets the timer alone go on to
	// hyper increase.
	hi, lo := max(r.tCnt, r.bCnt), min(r.tCnt, r.bCnt)
	switch {
	case hi < r.f: // fast recovery
	case r.timerHyper && r.tCnt > r.f: // hyper increase on the timer alone
		r.rt += r.rhai
	case lo < r.f: // additive increase
		r.rt += r.rai
	default: // hyper increase
		r.rt += float64(lo-r.f+1) * r.rhai
	}
	r.rt = min(r.rt, r.lineRate)
	r.rc = min((r.rt+r.rc)/2, r.lineRate)
}
