package rcc

// RCC's reaction point: the window of every ACK and pacing at window / RTT_base
// (Section III-D), line rate until the first ACK (Section III-B); in sender mode,
// Algorithm 1 on the sender's RTT samples with N and B_R from the receiver
// (Section III-G). See the package comment for the deviations.

import "github.com/ccbed/ccbed/ccalgo"

// RP is RCC's reaction point, one per QP. It is not safe for concurrent use: the
// host's tx goroutine owns it.
type RP struct {
	ccalgo.RPBase
	cfg        config
	lineBps    float64 // NIC rate, bits/s
	wireFactor float64 // (MTU + HeaderBytes) / MTU
	minRTT     int64   // smallest RTT seen, ns; 0 = none yet
	window     int64   // bytes; NoWindow until the first window
	rate       float64 // bits/s
	ctl        controller
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns the RP for params (a *Params; nil: defaults) and env.
func NewRP(params any, env ccalgo.Env) (*RP, error) {
	cfg, err := resolve(params, env)
	if err != nil {
		return nil, err
	}
	line := env.LinkBps
	if line <= 0 {
		line = cfg.bytesPNs * 8e9
	}
	return &RP{
		cfg:        cfg,
		lineBps:    line,
		wireFactor: float64(cfg.mtu+cfg.hdr) / float64(cfg.mtu),
		window:     ccalgo.NoWindow,
		rate:       line,
	}, nil
}

// OnAck takes the ACK's window (receiver mode) or computes it (sender mode) and
// sets the pacing rate to window / RTT_base.
func (r *RP) OnAck(now int64, a *ccalgo.AckEvent) {
	if a.RTT > 0 && (r.minRTT == 0 || a.RTT < r.minRTT) {
		r.minRTT = a.RTT
	}
	if r.cfg.sender {
		r.senderWindow(now, a)
	} else if a.Fields.Window > 0 {
		r.window = a.Fields.Window
	}
	if r.window == ccalgo.NoWindow || r.minRTT == 0 {
		return
	}
	rate := float64(r.window) * 8e9 / float64(r.minRTT) * r.wireFactor
	if rate > r.lineBps {
		rate = r.lineBps
	}
	r.rate = rate
}

// senderWindow is Algorithm 1 at the sender (Section III-G): the delay sample is
// the RTT, N and B_R come from the receiver.
func (r *RP) senderWindow(now int64, a *ccalgo.AckEvent) {
	if a.RTT <= 0 || a.Fields.ActiveFlows == 0 {
		return // no delay sample, or an ACK without RCC's fields
	}
	r.ctl.sample(a.RTT)
	// The round-trip base of EWA, of the receiver's B_R round and of the PID
	// period: the configured one (the receiver uses the same), else the
	// smallest RTT seen.
	round := r.cfg.baseRTT
	if round == 0 {
		round = r.minRTT
	}
	frac := float64(r.cfg.mtu) / float64(r.cfg.mtu+r.cfg.hdr)
	fair := ewaShare(&r.cfg, round, int(a.Fields.ActiveFlows), frac)
	lastHop := lastHopFull(&r.cfg, float64(a.Fields.RecvBytes), round)
	r.window = int64(r.ctl.window(now, a.RTT, fair, lastHop, round, &r.cfg))
}

// OnNak treats the NAK's echo fields like an ACK's.
func (r *RP) OnNak(now int64, a *ccalgo.AckEvent) { r.OnAck(now, a) }

// RateBps returns the pacing rate: line rate until the first window, then
// window / RTT_base on the wire, at most line rate.
func (r *RP) RateBps() float64 { return r.rate }

// WindowBytes returns the window from the last ACK; NoWindow before the first.
func (r *RP) WindowBytes() int64 { return r.window }

// BaseRTT returns the smallest RTT seen (ns), 0 before the first sample.
func (r *RP) BaseRTT() int64 { return r.minRTT }

// InPID reports whether the sender-side controller is under PID control (sender
// mode only).
func (r *RP) InPID() bool { return r.ctl.inPID }
