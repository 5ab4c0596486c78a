// Package dctcp implements DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)",
// SIGCOMM 2010) for RDMA queue pairs, as the RDMA simulators run it (the HPCC
// authors' ns-3 simulator, [H]):
//
//   - CP (Section 3.1, "Simple Marking at the Switch"): mark CE when the egress
//     queue exceeds K (DCQCN's marking with Kmin = Kmax = K, Pmax = 1). Where,
//     Params.MarkAt: by default at enqueue, on the queue the arriving packet
//     finds, as the paper specifies ("an arriving packet is marked with the CE
//     codepoint if the queue occupancy is greater than K upon its arrival");
//     "dequeue" marks on the queue a leaving packet leaves behind, as [H] does.
//     Default K = 30 KB * link / 10 Gb/s ([H]'s run script, HPCC Section 5.1).
//   - NP (Section 3.1, "ECN-Echo at the Receiver"): echo each data packet's CE in
//     its ACK (ccbed ACKs every packet or every k-th one, so no delayed-ACK state
//     machine); the send timestamp is echoed too.
//   - RP (Section 3.1, "Controller at the Sender", equations (1) and (2)): once
//     per window of data, when an ACK passes the sequence that was next to send at
//     the last update, F = marked ACKs / ACKs in that window and
//     alpha = (1 - g) alpha + g F (eq. 1), g = 1/16, alpha starting at 1. On the
//     first marked ACK outside a reduction, W = W (1 - alpha / 2) (eq. 2), and no
//     further cut until the data sent before the cut is acknowledged. Without
//     marks, W grows by one MTU per window (additive increase of congestion
//     avoidance, W += MTU * newly acked / W per ACK).
//
// Form: window-based (the paper's; [H] runs DCTCP rate-based, cutting the rate
// by (1 - alpha / 2), and either form would do):
// the RP exposes W as WindowBytes and paces at line rate, so the ACK clock spaces
// packets.
//
// Deviations and choices:
//   - The initial window is one bandwidth-delay product (line rate * base RTT),
//     as RDMA senders start at line rate; there is no slow start (TCP's slow
//     start has no counterpart in RoCE NICs).
//   - The window floor is one MTU.
//   - A go-back-N NAK (a loss) halves W once per window, TCP's loss response.
//   - The alpha update of a window is applied before the cut an ACK may cause,
//     so the cut uses the freshest alpha (Linux's order: alpha in the ACK event,
//     ssthresh afterwards).
package dctcp

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registered name.
const Name = "dctcp"

// Params are DCTCP's parameters, TOML-decodable.
type Params struct {
	KBytes          int64   `toml:"k_bytes"`           // CP: mark above this queue (default 30 KB * link/10G)
	MarkAt          string  `toml:"mark_at"`           // CP: "enqueue" (default, Section 3.1) or "dequeue"
	G               float64 `toml:"g"`                 // RP: alpha gain (default 1/16)
	InitAlpha       float64 `toml:"init_alpha"`        // RP: alpha of a new QP (default 1)
	InitWindowBytes int64   `toml:"init_window_bytes"` // RP: first window; 0 = line rate * base RTT
	MinWindowBytes  int64   `toml:"min_window_bytes"`  // RP: window floor; 0 = one MTU
	AIBytes         int64   `toml:"ai_bytes"`          // RP: window growth per window of data; 0 = one MTU
}

// DefaultParams returns the defaults for env.
func DefaultParams(env ccalgo.Env) *Params {
	return &Params{
		KBytes:    int64(math.Round(30_000 * env.LinkBps / 10e9)),
		MarkAt:    DefaultMarkAt,
		G:         1.0 / 16,
		InitAlpha: 1,
	}
}

func bad(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

// DefaultMarkAt is where the CP marks by default: at enqueue, the paper's
// switch (Section 3.1: an arriving packet is marked "if the queue occupancy is
// greater than K upon its arrival").
const DefaultMarkAt = ccalgo.MarkAtEnqueue

// CP marks CE when the egress queue exceeds K, in the hook Params.MarkAt
// names; the other hook does nothing, and PacketHooks says so, so that the
// switch skips it.
type CP struct {
	ccalgo.CPBase
	k         int64
	atEnqueue bool // mark in OnEnqueue, else in OnDequeue
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns a CP with threshold p.KBytes, marking where p.MarkAt says.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	switch {
	case p.KBytes < 0:
		return nil, bad("k_bytes", p.KBytes, "must be >= 0")
	}
	if err := ccalgo.CheckMarkAt(Name, p.MarkAt); err != nil {
		return nil, err
	}
	return &CP{k: p.KBytes, atEnqueue: p.MarkAt == ccalgo.MarkAtEnqueue}, nil
}

// PacketHooks reports that only the hook of Params.MarkAt does work
// (ccalgo.PacketHooks).
func (c *CP) PacketHooks() (enqueue, dequeue bool) { return c.atEnqueue, !c.atEnqueue }

// FlowBlind reports that the hooks never read the packet's flow (ccalgo.FlowBlind).
func (*CP) FlowBlind() bool { return true }

// OnEnqueue marks the arriving packet CE when MarkAt is "enqueue" and the
// queue it finds (port.QueueBytes without the packet) exceeds K; otherwise it
// does nothing.
func (c *CP) OnEnqueue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if c.atEnqueue && port.QueueBytes-int64(pkt.WireBytes) > c.k {
		return ccalgo.Verdict{Mark: ccalgo.MarkCE}
	}
	return ccalgo.Verdict{}
}

// OnDequeue marks the leaving packet CE when MarkAt is "dequeue" and the queue
// it leaves behind (port.QueueBytes) exceeds K; otherwise it does nothing.
func (c *CP) OnDequeue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if !c.atEnqueue && port.QueueBytes > c.k {
		return ccalgo.Verdict{Mark: ccalgo.MarkCE}
	}
	return ccalgo.Verdict{}
}

// NP echoes the CE mark and the send timestamp in every ACK.
type NP struct{}

var _ ccalgo.NotificationPoint = NP{}

// OnData fills the echo fields; DCTCP never sends CNPs.
func (NP) OnData(now int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.Mark = d.Mark
	return false
}

// RP is DCTCP's window controller for one QP.
type RP struct {
	ccalgo.RPBase
	g        float64
	lineRate float64
	minW     float64
	ai       float64

	w        float64 // window, bytes
	alpha    float64
	acks     int64  // ACKs in the current observation window
	marked   int64  // marked ACKs in it
	winEnd   uint64 // the window ends when AckedSeq passes this
	cutEnd   uint64 // no further cut until AckedSeq passes this
	reducing bool
	started  bool
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns an RP with the initial window of p (default one BDP of env).
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	switch {
	case !(p.G > 0 && p.G <= 1):
		return nil, bad("g", p.G, "must be in (0, 1]")
	case !(p.InitAlpha >= 0 && p.InitAlpha <= 1):
		return nil, bad("init_alpha", p.InitAlpha, "must be in [0, 1]")
	case p.InitWindowBytes < 0 || p.MinWindowBytes < 0 || p.AIBytes < 0:
		return nil, bad("init_window_bytes/min_window_bytes/ai_bytes", p, "must be >= 0")
	case !(env.LinkBps > 0) || env.MTU <= 0:
		return nil, bad("env", env, "needs LinkBps > 0 and MTU > 0")
	}
	r := &RP{g: p.G, lineRate: env.LinkBps, alpha: p.InitAlpha,
		minW: float64(p.MinWindowBytes), ai: float64(p.AIBytes)}
	if r.minW == 0 {
		r.minW = float64(env.MTU)
	}
	if r.ai == 0 {
		r.ai = float64(env.MTU)
	}
	r.w = float64(p.InitWindowBytes)
	if r.w == 0 {
		r.w = env.LinkBps * float64(env.BaseRTT) / 8e9
	}
	r.w = max(r.w, r.minW)
	return r, nil
}

// RateBps is line rate: DCTCP is window-limited.
func (r *RP) RateBps() float64 { return r.lineRate }

// WindowBytes is the current window W.
func (r *RP) WindowBytes() int64 { return int64(r.w) }

// Alpha is the current estimate of the fraction of marked packets.
func (r *RP) Alpha() float64 { return r.alpha }

// OnAck counts the ACK, closes the observation window when AckedSeq passes its
// end (eq. 1), cuts W on a mark outside a reduction (eq. 2), else grows W.
func (r *RP) OnAck(now int64, a *ccalgo.AckEvent) {
	if !r.started {
		r.started = true
		r.winEnd = a.SndNxt
	}
	marked := a.Fields.Mark == ccalgo.MarkCE
	r.acks++
	if marked {
		r.marked++
	}
	if a.AckedSeq >= r.winEnd {
		f := float64(r.marked) / float64(r.acks)
		r.alpha = (1-r.g)*r.alpha + r.g*f
		r.acks, r.marked = 0, 0
		r.winEnd = a.SndNxt
	}
	if r.reducing && a.AckedSeq >= r.cutEnd {
		r.reducing = false
	}
	switch {
	case marked && !r.reducing:
		r.w = max(r.minW, r.w*(1-r.alpha/2))
		r.reducing = true
		r.cutEnd = a.SndNxt
	case !marked && a.NewlyAcked > 0:
		r.w += r.ai * float64(a.NewlyAcked) / r.w
	}
}

// OnNak halves W once per window: go-back-N means a packet was lost.
func (r *RP) OnNak(now int64, a *ccalgo.AckEvent) {
	if r.reducing && a.AckedSeq < r.cutEnd {
		return
	}
	r.w = max(r.minW, r.w/2)
	r.reducing = true
	r.cutEnd = a.SndNxt
}

func init() {
	ccalgo.Register(ccalgo.Define(Name, "DCTCP (SIGCOMM'10) for RDMA: ECN threshold K, ECN echo, window with alpha (g = 1/16)", DefaultParams,
		ccalgo.WithCP(NewCP),
		ccalgo.WithNP(func(*Params, ccalgo.Env) (NP, error) { return NP{}, nil }),
		ccalgo.WithRP(NewRP),
	))
}
