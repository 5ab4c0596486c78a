// RoCC congestion point: RoCC (Menikkumbura et al., "Congestion Control for
// Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS 2023) Section
// III-B, Algorithm 1 (lines 1-21), run every T (Sections IV-B and VI), with the
// rate message of Section III-C sent to the flows of the flow table of Section
// III-D. Deviations: see the package doc.

package rocc

import "github.com/ccbed/ccbed/ccalgo"

// CPStats are a CP's counters.
type CPStats struct {
	Updates   uint64 // fair-rate computations (Algorithm 1 calls)
	MDMax     uint64 // line 3: F <- F_min on Q_cur >= Q_max
	MDMid     uint64 // line 5: F <- F/2 on Q_cur - Q_old >= Q_mid
	Messages  uint64 // rate messages emitted
	TableFull uint64 // enqueues of untracked flows refused by a full flow table
}

// CP is RoCC's congestion point for one egress port.
type CP struct {
	d      derived
	f      int64 // F, fixed point (FracBits)
	qOld   int64 // Q_old, Delta_Q units
	next   int64 // next OnTimer time
	table  flowTable
	fb     ccalgo.Feedback
	stats  CPStats
	lastQ  int64 // Q_cur of the last computation
	lastSh uint  // AUTO_TUNE shift (log2 ratio) of the last PI step
	// keys holds the flows of one computation's messages for a RateSink;
	// it grows with the table (a few times per run), never per message.
	keys []ccalgo.FlowKey
}

// RateSink is a ccalgo.FeedbackSink that also takes the rate messages of
// one computation in one call: EmitRates(now, fb, flows) does what
// Emit(now, fb) with fb.Flow = flows[i], for each i in order, does, and
// may keep neither fb nor flows. A switch builds such a burst from one
// template with the rate written once (wire.RoCCRates) and looks a
// source's route up once for its flows.
type RateSink interface {
	ccalgo.FeedbackSink
	EmitRates(now int64, fb *ccalgo.Feedback, flows []ccalgo.FlowKey)
}

var (
	_ ccalgo.CongestionPoint  = (*CP)(nil)
	_ ccalgo.FairRateReporter = (*CP)(nil)
)

// NewCP returns a CP for a port of env.LinkBps; env.ID is the CPID its rate
// messages carry. F starts at F_max (no limit) and the first computation is at T.
func NewCP(p *Params, env ccalgo.Env) (*CP, error) {
	d, err := p.derive(env.LinkBps)
	if err != nil {
		return nil, err
	}
	c := &CP{
		d:     d,
		f:     d.fMaxFx,
		next:  d.t,
		table: newFlowTable(d.tableSize),
	}
	c.fb = ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, CPID: env.ID, DeltaFBps: d.deltaF}
	return c, nil
}

// PacketHooks reports that both per-packet hooks do work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return true, true }

// OnEnqueue records the packet's flow in the flow table (EnqueueFlow). The
// verdict's Tag is the flow's entry and its generation.
func (c *CP) OnEnqueue(_ int64, pkt *ccalgo.DataPacket, _ *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	return ccalgo.Verdict{Tag: c.EnqueueFlow(&pkt.Flow)}
}

// OnDequeue removes the packet from its flow's count (DequeueFlow).
func (c *CP) OnDequeue(_ int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	c.DequeueFlow(pkt.Tag, &pkt.Flow, port.QueueBytes)
	return ccalgo.Verdict{}
}

// EnqueueFlow is OnEnqueue's work for a data packet of key entering the
// queue: the flow is recorded in the flow table (seen in this interval, one
// more packet in the queue). It returns the packet's tag (OnEnqueue's
// Verdict.Tag), for DequeueFlow. Neither per-packet call marks, stamps,
// emits feedback or moves NextTimer, so a switch may call these two in
// place of OnEnqueue and OnDequeue, without a DataPacket, a PortState or a
// Verdict.
func (c *CP) EnqueueFlow(key *ccalgo.FlowKey) uint32 {
	return c.table.add(wordsOf(key))
}

// EnqueueWords is EnqueueFlow for the key of FlowWords{A: a, B: b}: a
// switch that reads the words from the frame spares the key's byte swaps
// and packing.
func (c *CP) EnqueueWords(a, b uint64) uint32 {
	return c.table.add(flowWords{a, b})
}

// DequeueFlow is OnDequeue's work for a packet of key leaving the queue,
// queueBytes the queue's bytes after it: its flow's count goes down (found
// by tag, EnqueueFlow's result, or by key when the tag no longer names the
// flow's entry), and a flow with no packet left in the queue and not seen
// in this interval leaves the table.
func (c *CP) DequeueFlow(tag uint32, key *ccalgo.FlowKey, queueBytes int64) {
	c.table.removeTag(tag, key)
	if queueBytes <= 0 && c.table.Len() > 0 {
		// The queue is empty: no flow has a packet in it, whatever the counts
		// say (a flow first tracked after some of its packets were queued).
		c.table.queueEmpty()
	}
}

// FlowKeys gives DequeueFlows the key of the i-th packet of its batch. It
// is an alias of an interface literal, so that a switch declares the same
// type without importing this package.
type FlowKeys = interface {
	FlowKey(i int) *ccalgo.FlowKey
}

// DequeueFlows is DequeueFlow for packets that left the queue one after
// another, in one call: tags[i] is the i-th one's tag, keys.FlowKey(i) its
// key (asked for only when the tag no longer names its flow's entry), and
// emptied says whether the queue was empty after the last. It does what
// DequeueFlow for each in turn does: before the last, the queue still held
// the later ones, so only the last can find it empty.
func (c *CP) DequeueFlows(tags []uint32, keys FlowKeys, emptied bool) {
	t := &c.table
	t.removeTags(tags, keys)
	if emptied && t.Len() > 0 {
		t.queueEmpty()
	}
}

// NextTimer returns the time of the next fair-rate computation.
func (c *CP) NextTimer() int64 { return c.next }

// OnTimer runs Algorithm 1 on the current queue length and, when the queue is not
// empty, sends the new fair rate to every flow in the flow table: the flows with
// packets in the queue and those that entered it since the last computation.
// Then a new interval starts.
func (c *CP) OnTimer(now int64, port *ccalgo.PortState, out ccalgo.FeedbackSink) {
	if now < c.next {
		return
	}
	c.next += c.d.t
	if c.next <= now { // called late: keep the grid, skip the missed slots
		c.next = now - (now-c.next)%c.d.t + c.d.t
	}
	q := port.QueueBytes
	if q < 0 {
		q = 0
	}
	c.calculate(q / c.d.deltaQ)
	if q > 0 && c.table.Len() > 0 {
		units := uint32(c.f >> FracBits)
		c.fb.RateUnits = units
		c.fb.RateBps = float64(units) * c.d.deltaF
		if rs, ok := out.(RateSink); ok {
			keys := c.keys[:0]
			for _, k := range c.table.dense {
				keys = append(keys, c.table.entries[k].w.key())
			}
			c.keys = keys
			rs.EmitRates(now, &c.fb, keys)
			c.fb.Flow = keys[len(keys)-1] // as the loop below leaves it
		} else {
			for _, k := range c.table.dense {
				c.fb.Flow = c.table.entries[k].w.key()
				out.Emit(now, &c.fb)
			}
		}
		c.stats.Messages += uint64(len(c.table.dense))
	}
	c.table.endInterval()
}

// calculate is CALCULATE_FAIR_RATE of Algorithm 1 with qCur in Delta_Q units.
func (c *CP) calculate(qCur int64) {
	d := &c.d
	c.stats.Updates++
	c.lastQ = qCur
	mdFloor := d.fMaxFx >> 3 // F_max / 8
	switch {
	case qCur >= d.qMax && c.f > mdFloor: // lines 2-3
		c.f = d.fMinFx
		c.stats.MDMax++
	case qCur-c.qOld >= d.qMid && c.f > mdFloor: // lines 4-5
		c.f >>= 1
		c.stats.MDMid++
	default: // lines 7-8
		sh := c.autoTune()
		c.lastSh = sh
		c.f -= (d.alphaFx>>sh)*(qCur-d.qRef) + (d.betaFx>>sh)*(qCur-c.qOld)
	}
	if c.f > d.fMaxFx { // lines 9-10
		c.f = d.fMaxFx
	}
	if c.f < d.fMinFx { // lines 11-12
		c.f = d.fMinFx
	}
	c.qOld = qCur // line 13
}

// autoTune is AUTO_TUNE (lines 15-21): it returns log2(ratio), ratio = level/2,
// where level doubles from 2 while F < F_max/level and level < 64. The gains are
// alpha~ >> shift and beta~ >> shift.
func (c *CP) autoTune() uint {
	lg := uint(1) // log2(level)
	for lg < 6 && c.f < c.d.fMaxFx>>lg {
		lg++
	}
	return lg - 1
}

// FairRateBps returns the current fair rate, the value the rate messages carry,
// in bits/s.
func (c *CP) FairRateBps() float64 {
	return float64(c.f>>FracBits) * c.d.deltaF
}

// FairRateUnits returns F in Delta_F units (integer part).
func (c *CP) FairRateUnits() uint32 { return uint32(c.f >> FracBits) }

// FlowsTracked returns the number of flows in the flow table.
func (c *CP) FlowsTracked() int { return c.table.Len() }

// Stats returns the CP's counters.
func (c *CP) Stats() CPStats {
	s := c.stats
	s.TableFull = c.table.full
	return s
}
