package dcqcn

import "github.com/ccbed/ccbed/ccalgo"

// CP is DCQCN's congestion point: RED-style ECN marking at dequeue (paper
// Section 3.1, Figure 5; spec dcqcn.md "CP").
type CP struct {
	ccalgo.CPBase
	kmin, kmax int64
	pmax       float64
	slope      float64 // pmax / (kmax - kmin)
	rng        uint64  // xorshift64* state, never 0
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP returns a CP marking with p's thresholds.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	if err := p.validateCP(); err != nil {
		return nil, err
	}
	c := &CP{kmin: p.KminBytes, kmax: p.KmaxBytes, pmax: p.Pmax, rng: p.Seed}
	if c.rng == 0 {
		c.rng = 0x9e3779b97f4a7c15
	}
	if p.KmaxBytes > p.KminBytes {
		c.slope = p.Pmax / float64(p.KmaxBytes-p.KminBytes)
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

// PacketHooks reports that only OnDequeue does work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return false, true }

// OnDequeue marks the leaving packet CE with MarkProbability of the queue it
// leaves behind.
func (c *CP) OnDequeue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	q := port.QueueBytes
	if q <= c.kmin {
		return ccalgo.Verdict{}
	}
	if q > c.kmax || c.uniform() < c.slope*float64(q-c.kmin) {
		return ccalgo.Verdict{Mark: ccalgo.MarkCE}
	}
	return ccalgo.Verdict{}
}
