package dcqcn

import "github.com/ccbed/ccbed/ccalgo"

// DefaultMarkAt is where the CP evaluates RED and marks by default: at dequeue,
// on the queue the packet leaves behind. The DCQCN paper (Section 3.1, Figure 5)
// gives the RED curve of the egress queue; the DCQCN authors' ns-3 simulator and
// the HPCC authors' simulator both apply it as a packet leaves the queue, and
// ccbed follows them (a mark made at dequeue reaches the receiver without
// waiting behind the queue it reports).
const DefaultMarkAt = ccalgo.MarkAtDequeue

// CP is DCQCN's congestion point: RED-style ECN marking (paper Section 3.1,
// Figure 5) in the hook Params.MarkAt names; the other hook does nothing, and
// PacketHooks says so, so that the switch skips it.
type CP struct {
	ccalgo.CPBase
	kmin, kmax int64
	pmax       float64
	slope      float64 // pmax / (kmax - kmin)
	atEnqueue  bool    // mark in OnEnqueue, else in OnDequeue
	rng        uint64  // xorshift64* state, never 0
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns a CP marking where p.MarkAt says, with the thresholds of
// p.ECNByLink's entry for env.LinkBps, else p's own.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	if err := p.validateCP(); err != nil {
		return nil, err
	}
	kmin, kmax, pmax := p.ecnFor(env.LinkBps)
	c := &CP{kmin: kmin, kmax: kmax, pmax: pmax, rng: p.Seed,
		atEnqueue: p.MarkAt == ccalgo.MarkAtEnqueue}
	if c.rng == 0 {
		c.rng = 0x9e3779b97f4a7c15
	}
	if kmax > kmin {
		c.slope = pmax / float64(kmax-kmin)
	}
	return c, nil
}

// MarkProbability is the marking probability for a queue of q bytes (Figure 5).
func (c *CP) MarkProbability(q int64) float64 {
	switch {
	case q <= c.kmin:
		return 0
	case q > c.kmax:
		return 1
	}
	return c.slope * float64(q-c.kmin)
}

// uniform returns a pseudo-random number in [0, 1) (xorshift64*).
func (c *CP) uniform() float64 {
	x := c.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	c.rng = x
	return float64((x*0x2545f4914f6cdd1d)>>11) / (1 << 53)
}

// PacketHooks reports that only the hook of Params.MarkAt does work
// (ccalgo.PacketHooks).
func (c *CP) PacketHooks() (enqueue, dequeue bool) { return c.atEnqueue, !c.atEnqueue }

// FlowBlind reports that the hooks never read the packet's flow (ccalgo.FlowBlind).
func (*CP) FlowBlind() bool { return true }

// QuietBytes is Kmin (ccalgo.QuietQueue): with at most Kmin bytes queued
// (the queue a packet finds at enqueue is QueueBytes less the packet) the
// marking probability is 0 (Figure 5), and mark returns before its random
// draw, so the hooks change nothing and a switch may skip them.
func (c *CP) QuietBytes() int64 { return c.kmin }

// OnEnqueue marks the arriving packet CE with MarkProbability of the queue it
// finds (port.QueueBytes without the packet) when MarkAt is "enqueue";
// otherwise it does nothing.
func (c *CP) OnEnqueue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if !c.atEnqueue {
		return ccalgo.Verdict{}
	}
	return c.mark(port.QueueBytes - int64(pkt.WireBytes))
}

// OnDequeue marks the leaving packet CE with MarkProbability of the queue it
// leaves behind (port.QueueBytes) when MarkAt is "dequeue"; otherwise it does
// nothing.
func (c *CP) OnDequeue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if c.atEnqueue {
		return ccalgo.Verdict{}
	}
	return c.mark(port.QueueBytes)
}

// mark draws RED's decision for a queue of q bytes.
func (c *CP) mark(q int64) ccalgo.Verdict {
	if q <= c.kmin {
		return ccalgo.Verdict{}
	}
	if q > c.kmax || c.uniform() < c.slope*float64(q-c.kmin) {
		return ccalgo.Verdict{Mark: ccalgo.MarkCE}
	}
	return ccalgo.Verdict{}
}
