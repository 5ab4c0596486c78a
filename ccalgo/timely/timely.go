// Package timely implements TIMELY, RTT-gradient rate control (Mittal et al.,
// "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015), in
// the per-sample formulation of the rate computation in the TIMELY authors'
// published reference snippet, [T] below; [H] below is the HPCC authors' ns-3
// simulator (github.com/alibaba-edu/High-Precision-Congestion-Control), which
// runs TIMELY beside DCQCN, HPCC and DCTCP. It is one of ccbed's baselines
// (`testbed schemes` lists every scheme).
//
// Roles, and where they sit in ccbed's dataplane:
//
//   - NP (hostd rx lcore): echoes each data packet's send timestamp in its ACK.
//   - RP (hostd tx lcore, one per QP): the rate computation below on every RTT
//     sample (ACK arrival time minus the echoed send time, AckEvent.RTT). TIMELY
//     is purely rate based: no window.
//
// Per RTT sample rtt taken at now (after [T]):
//
//	w         = min(1, (now - last_update) / min_rtt); last_update = now
//	rtt_diff  = rtt - prev_rtt; prev_rtt = rtt
//	avg_diff  = (1 - a) avg_diff + a rtt_diff
//	gradient  = avg_diff / min_rtt
//	rtt < T_low:    rate += delta w
//	rtt > T_high:   rate *= 1 - w beta (1 - T_high / rtt)
//	gradient <= 0:  rate += N delta w   (N = 5 after 5 negative gradients
//	                                     in a row: hyper-active increase)
//	otherwise:      rate *= 1 - beta gradient
//	rate = max(rate, previous rate / 2), within [MinRateBps, line rate]
//
// Defaults (ccbed's choices, from [T] and [H]): a = 0.02 ([T]; [H] uses 0.875
// with once-per-window updates), beta = 0.8, T_low = 0 (ccbed paces every
// packet, and the usual 50 us applies to 64 KB segments), T_high = 500 us
// ([H]'s value, the tighter of the two; [T] uses 1 ms), delta = 10 Mb/s at
// 10 Gb/s scaled with the line rate (line / 1000), HAI after 5 samples with
// factor 5, min_rtt = Env.BaseRTT (the propagation RTT; 20 us when the
// environment gives none), MinRateBps = line / 1000, start at line rate.
//
// ccbed's choices where the paper and [T] leave room, and why:
//
//   - The first RTT sample only initialises prev_rtt and last_update: there is no
//     difference to take yet.
//   - The HAI counter counts consecutive samples whose gradient (avg_diff) is
//     negative, as in the TIMELY paper's Algorithm 1 ("gradient < 0 for five
//     completion events"); a sample with gradient >= 0 resets it.
//   - A NAK's echoed timestamp is a valid RTT sample and is used like an ACK's.
//   - An ACK with RTT = 0 (unknown) is ignored.
package timely

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registry name.
const Name = "timely"

// Params are TIMELY's parameters (defaults in the package doc).
type Params struct {
	// Alpha is the EWMA weight a of the RTT difference. Default 0.02 ([T]).
	Alpha float64 `toml:"alpha"`
	// Beta is the multiplicative decrease factor. Default 0.8.
	Beta float64 `toml:"beta"`
	// TLowNs is T_low, ns: below it the rate always increases. Default 0.
	TLowNs int64 `toml:"t_low_ns"`
	// THighNs is T_high, ns: above it the rate always decreases. Default 500 us
	// ([H]).
	THighNs int64 `toml:"t_high_ns"`
	// DeltaBps is the additive increment delta, bits/s. Default line / 1000.
	DeltaBps float64 `toml:"delta_bps"`
	// MinRTTNs is min_rtt, ns, the propagation RTT that normalises the gradient
	// and the update weight. Default Env.BaseRTT.
	MinRTTNs int64 `toml:"min_rtt_ns"`
	// HAIThreshold is the number of consecutive negative-gradient samples after
	// which the increase is multiplied by HAIFactor. Default 5.
	HAIThreshold int `toml:"hai_threshold"`
	// HAIFactor is N of hyper-active increase. Default 5.
	HAIFactor float64 `toml:"hai_factor"`
	// MinRateBps is the lowest rate. Default line / 1000.
	MinRateBps float64 `toml:"min_rate_bps"`
	// MaxRateBps is the highest rate and the starting rate; 0 means the line
	// rate (Env.LinkBps).
	MaxRateBps float64 `toml:"max_rate_bps"`
}

// DefaultParams returns the package doc's defaults for env.
func DefaultParams(env ccalgo.Env) *Params {
	minRTT := env.BaseRTT
	if minRTT <= 0 {
		minRTT = 20000
	}
	return &Params{
		Alpha:        0.02,
		Beta:         0.8,
		TLowNs:       0,
		THighNs:      500000,
		DeltaBps:     env.LinkBps / 1000,
		MinRTTNs:     minRTT,
		HAIThreshold: 5,
		HAIFactor:    5,
		MinRateBps:   env.LinkBps / 1000,
	}
}

func validate(p *Params, env ccalgo.Env) (maxRate float64, err error) {
	bad := func(param string, v any, why string) error {
		return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: why}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case p == nil:
		return 0, bad("params", p, "nil")
	case !(p.Alpha > 0 && p.Alpha <= 1):
		return 0, bad("alpha", p.Alpha, "must be in (0, 1]")
	case !(p.Beta > 0 && p.Beta <= 1):
		return 0, bad("beta", p.Beta, "must be in (0, 1]")
	case p.TLowNs < 0:
		return 0, bad("t_low_ns", p.TLowNs, "must be >= 0")
	case p.THighNs <= p.TLowNs:
		return 0, bad("t_high_ns", p.THighNs, "must be > t_low_ns")
	case !(p.DeltaBps > 0) || !finite(p.DeltaBps):
		return 0, bad("delta_bps", p.DeltaBps, "must be > 0 and finite")
	case p.MinRTTNs <= 0:
		return 0, bad("min_rtt_ns", p.MinRTTNs, "must be > 0")
	case p.HAIThreshold < 1:
		return 0, bad("hai_threshold", p.HAIThreshold, "must be >= 1")
	case !(p.HAIFactor >= 1) || !finite(p.HAIFactor):
		return 0, bad("hai_factor", p.HAIFactor, "must be >= 1 and finite")
	case !(p.MinRateBps > 0) || !finite(p.MinRateBps):
		return 0, bad("min_rate_bps", p.MinRateBps, "must be > 0 and finite")
	case p.MaxRateBps < 0 || !finite(p.MaxRateBps):
		return 0, bad("max_rate_bps", p.MaxRateBps, "must be >= 0 and finite")
	}
	maxRate = p.MaxRateBps
	if maxRate == 0 {
		maxRate = env.LinkBps
	}
	if !(maxRate >= p.MinRateBps) {
		return 0, bad("max_rate_bps", maxRate, "the maximum rate (0: Env.LinkBps) must be >= min_rate_bps")
	}
	return maxRate, nil
}

func init() {
	ccalgo.Register(ccalgo.Define(Name, "TIMELY: RTT-gradient rate control (Mittal et al., SIGCOMM 2015)", DefaultParams,
		ccalgo.WithNP(func(*Params, ccalgo.Env) (*NP, error) { return NewNP(), nil }), ccalgo.WithRP(NewRP)))
}

// NP is TIMELY's notification point: it echoes the send timestamp. It keeps no
// state.
type NP struct{}

var _ ccalgo.NotificationPoint = (*NP)(nil)

// NewNP returns a TIMELY notification point.
func NewNP() *NP { return &NP{} }

// OnData echoes d's send timestamp in ack. TIMELY never sends CNPs.
func (*NP) OnData(_ int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	return false
}

// RP is TIMELY's reaction point, one per QP.
type RP struct {
	ccalgo.RPBase

	alpha, beta, delta, haiFactor float64
	tLow, tHigh, minRTT           float64 // ns
	haiThreshold                  int
	minRate, maxRate              float64

	rate       float64 // bits/s
	prevRTT    float64 // ns
	avgDiff    float64 // ns
	lastUpdate int64   // ns
	negRun     int     // consecutive samples with a negative gradient
	started    bool    // a first sample has been seen
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns a TIMELY reaction point starting at the maximum rate.
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	maxRate, err := validate(p, env)
	if err != nil {
		return nil, err
	}
	return &RP{
		alpha: p.Alpha, beta: p.Beta, delta: p.DeltaBps, haiFactor: p.HAIFactor,
		tLow: float64(p.TLowNs), tHigh: float64(p.THighNs), minRTT: float64(p.MinRTTNs),
		haiThreshold: p.HAIThreshold,
		minRate:      p.MinRateBps, maxRate: maxRate,
		rate: maxRate,
	}, nil
}

// OnAck takes the ACK's RTT sample.
func (r *RP) OnAck(now int64, a *ccalgo.AckEvent) { r.Sample(now, a.RTT) }

// OnNak takes the NAK's RTT sample (see the package doc).
func (r *RP) OnNak(now int64, a *ccalgo.AckEvent) { r.Sample(now, a.RTT) }

// Sample runs TIMELY's rate computation on one RTT sample (ns) taken at now.
// Non-positive samples are ignored.
func (r *RP) Sample(now, rttNs int64) {
	if rttNs <= 0 {
		return
	}
	rtt := float64(rttNs)
	if !r.started {
		r.started = true
		r.prevRTT = rtt
		r.lastUpdate = now
		return
	}
	diff := rtt - r.prevRTT
	r.prevRTT = rtt
	r.avgDiff = (1-r.alpha)*r.avgDiff + r.alpha*diff
	gradient := r.avgDiff / r.minRTT
	if gradient < 0 {
		r.negRun++
	} else {
		r.negRun = 0
	}
	w := min(1, float64(now-r.lastUpdate)/r.minRTT)
	if w < 0 {
		w = 0
	}
	r.lastUpdate = now

	old := r.rate
	var rate float64
	switch {
	case rtt < r.tLow:
		rate = old + r.delta*w
	case rtt > r.tHigh:
		rate = old * (1 - w*r.beta*(1-r.tHigh/rtt))
	case gradient <= 0:
		n := 1.0
		if r.negRun >= r.haiThreshold {
			n = r.haiFactor
		}
		rate = old + n*r.delta*w
	default:
		rate = old * (1 - r.beta*gradient)
	}
	rate = max(rate, old/2)
	r.rate = min(max(rate, r.minRate), r.maxRate)
}

// RateBps is the current pacing rate, bits/s.
func (r *RP) RateBps() float64 { return r.rate }

// Gradient returns the current normalised RTT gradient avg_diff / min_rtt
// (telemetry and tests).
func (r *RP) Gradient() float64 { return r.avgDiff / r.minRTT }
