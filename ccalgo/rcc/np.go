package rcc

// RCC's notification point: Algorithm 1 of Section III-B at the receiver, with
// the message count of Section III-D and the B_R meter of Section III-C. See the
// package comment for the equations and the deviations.

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// rxMeter measures B_R, the bytes received by the host over the last round
// (Section III-C), as a sliding estimate over two fixed buckets of one round.
type rxMeter struct {
	started     bool
	busyStart   int64 // first arrival after the host was idle for a round
	firstBytes  int64 // bytes of that first arrival
	lastArrival int64
	bucketStart int64
	cur, prev   int64 // bytes of the current and previous bucket
}

// add counts bytes received at now; round is the current round (ns, > 0).
func (m *rxMeter) add(now int64, bytes int64, round int64) {
	if !m.started || now-m.lastArrival > round {
		m.started = true
		m.busyStart = now
		m.firstBytes = bytes
		m.bucketStart = now
		m.cur, m.prev = 0, 0
	}
	m.lastArrival = now
	if d := now - m.bucketStart; d >= round {
		k := d / round
		if k == 1 {
			m.prev = m.cur
		} else {
			m.prev = 0
		}
		m.cur = 0
		m.bucketStart += k * round
	}
	m.cur += bytes
}

// bytes returns B_R at now, the time of the last add.
func (m *rxMeter) bytes(now int64, round int64) float64 {
	if !m.started || round <= 0 {
		return 0
	}
	hist := now - m.busyStart
	if hist < round {
		if hist <= 0 {
			return 0
		}
		// First round of a busy period: extrapolate the rate measured so far.
		return float64(m.cur+m.prev-m.firstBytes) * float64(round) / float64(hist)
	}
	f := float64(now-m.bucketStart) / float64(round)
	return float64(m.cur) + float64(m.prev)*(1-f)
}

// npQP is the receiver's state of one QP.
type npQP struct {
	ctl         controller
	active      bool    // a message is in progress (counted in N)
	maxWire     int     // wire bytes of the largest packet seen
	payloadFrac float64 // payload / wire bytes of that packet
}

// NP is RCC's notification point, one per receiving host. It is not safe for
// concurrent use: the host's rx goroutine owns it.
type NP struct {
	cfg    config
	qps    []npQP
	active int   // N: messages in progress
	minOWD int64 // min_i RTT_base_i (one-way); valid when hasMin
	hasMin bool
	rx     rxMeter
}

var _ ccalgo.NotificationPoint = (*NP)(nil)

// NewNP returns the NP for params (a *Params; nil: defaults) and env. Per-QP state
// for env.MaxFlows QPs is allocated here.
func NewNP(params any, env ccalgo.Env) (*NP, error) {
	cfg, err := resolve(params, env)
	if err != nil {
		return nil, err
	}
	if env.MaxFlows <= 0 {
		return nil, bad("env.MaxFlows", env.MaxFlows, "must be > 0")
	}
	return &NP{cfg: cfg, qps: make([]npQP, env.MaxFlows)}, nil
}

// ActiveMessages returns N, the number of messages in progress.
func (np *NP) ActiveMessages() int { return np.active }

// InPID reports whether QP qp is under PID control.
func (np *NP) InPID(qp int32) bool {
	return qp >= 0 && int(qp) < len(np.qps) && np.qps[qp].ctl.inPID
}

// round returns the round-trip base min_i RTT_base_i (ns) of the B_R round, the
// EWA share and the PID period: the configured base RTT, else twice the smallest
// one-way delay seen on any QP.
func (np *NP) round() int64 {
	if np.cfg.baseRTT > 0 {
		return np.cfg.baseRTT
	}
	if !np.hasMin || np.minOWD <= 0 {
		return 0
	}
	return 2 * np.minOWD
}

// OnData runs Algorithm 1 for one data packet and fills ack: EchoTS, Window
// (receiver mode), ActiveFlows (N) and RecvBytes (B_R). It never asks for a CNP.
// A packet whose QP is out of range is ignored.
func (np *NP) OnData(now int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	if d.QP < 0 || int(d.QP) >= len(np.qps) {
		return false
	}
	q := &np.qps[d.QP]
	// Line 4: N from the BTH First/Last opcodes (Section III-D).
	if d.FirstOfMessage && !q.active {
		q.active = true
		np.active++
	}
	if d.WireBytes >= q.maxWire && d.WireBytes > 0 && d.PayloadBytes > 0 {
		q.maxWire = d.WireBytes
		q.payloadFrac = float64(d.PayloadBytes) / float64(d.WireBytes)
	}
	// Line 3: one-way delay; RTT_base per QP and min_i RTT_base_i.
	owd := now - d.SendTS
	q.ctl.sample(owd)
	if !np.hasMin || owd < np.minOWD {
		np.minOWD = owd
		np.hasMin = true
	}
	wire := int64(d.WireBytes)
	if wire <= 0 {
		wire = int64(d.PayloadBytes + np.cfg.hdr)
	}
	round := np.round()
	var br float64
	if round > 0 {
		np.rx.add(now, wire, round)
		br = np.rx.bytes(now, round)
	}
	n := np.active
	if n < 1 {
		n = 1
	}
	ack.ActiveFlows = uint32(n)
	switch {
	case br >= math.MaxUint32:
		ack.RecvBytes = math.MaxUint32
	default:
		ack.RecvBytes = uint32(br)
	}
	if !np.cfg.sender {
		frac := q.payloadFrac
		if frac == 0 {
			frac = float64(np.cfg.mtu) / float64(np.cfg.mtu+np.cfg.hdr)
		}
		fair := ewaShare(&np.cfg, round, n, frac)  // line 5
		lastHop := lastHopFull(&np.cfg, br, round) // line 10
		ack.Window = int64(q.ctl.window(now, owd, fair, lastHop, round, &np.cfg))
	}
	if d.LastOfMessage && q.active {
		q.active = false
		np.active--
		q.ctl.endFlow()
	}
	return false
}
