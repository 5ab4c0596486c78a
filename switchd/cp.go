package switchd

import (
	"encoding/binary"
	"math/bits"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// feedbackSink turns a CP's feedback into a packet toward the flow's source.
type feedbackSink struct {
	e     *Engine
	from  int
	rates wire.RoCCRates // EmitRates' computation, for its burst
}

// Emit builds fb's packet into the generated-control queue of the port toward
// fb.Flow.SrcIP. It runs on the tx+CC lcore.
func (s *feedbackSink) Emit(now int64, fb *ccalgo.Feedback) {
	out, _ := s.e.feedbackPort(&fb.Flow)
	s.e.emitFeedback(s.from, out, fb, nil, nil)
}

// EmitRates is Emit for RoCC's rate messages of one computation (fb) to
// flows, in order (rocc.RateSink): the frames come from one template with
// the rate written once, and a run of flows from one source whose route
// has a single port takes one lookup.
func (s *feedbackSink) EmitRates(now int64, fb *ccalgo.Feedback, flows []ccalgo.FlowKey) {
	e := s.e
	e.roccRate.Rates(&s.rates, fb)
	src, out, same := uint32(0), 0, false
	for i := range flows {
		k := &flows[i]
		if !same || k.SrcIP != src {
			src = k.SrcIP
			out, same = e.feedbackPort(k)
		}
		e.emitFeedback(s.from, out, fb, &s.rates, k)
	}
}

// CP returns port p's congestion point (nil for a plain FIFO port).
func (e *Engine) CP(p int) ccalgo.CongestionPoint { return e.eg[p].cp }

// applyMark raises the ECN mark of en, an entry of g's queue prio, to m (never
// lowering it), updating the IPv4 checksum incrementally. A packet that is
// not ECN-capable is not marked.
func (e *Engine) applyMark(now int64, g *egress, en *qEntry, prio uint8, m ccalgo.Mark) {
	nm := en.mark.Max(m)
	if nm == en.mark {
		return
	}
	ip := wire.IPv4(en.frame()[en.ipOff:])
	if ip.ECN() == wire.ECNNotECT {
		g.c[cNotECT]++
		return
	}
	ip.SetECN(wire.ECNForMark(nm))
	en.mark = nm
	if nm == ccalgo.MarkCE {
		g.c[cMarkedCE]++
	} else {
		g.c[cMarkedUE]++
	}
	e.traceMark(now, g, en, prio)
}

// dequeueHooks runs what a data frame leaving queue prio (en, its head)
// needs once the queue no longer counts it: the flowCounter's count, or the
// INT record of an INTOnly CP, or the CP's OnDequeue and its mark (skipped
// while the queue is quiet, ccalgo.QuietQueue), and the INT record asked for
// at enqueue or now.
func (e *Engine) dequeueHooks(now int64, g *egress, en *qEntry, prio int) {
	if en.class == ClassData {
		switch {
		case g.fc != nil:
			q := &g.q[prio]
			g.fc.DequeueFlow(en.tag, q.flow(q.head), g.qPrio[prio])
			return
		case g.stampAll:
			e.stampINT(g, en)
			return
		case g.hookDeq && g.qPrio[prio] > g.quiet:
			e.onDequeue(now, g, en, prio)
			return
		}
	}
	if en.stamp {
		e.stampINT(g, en)
	}
}

// onDequeue is dequeueHooks' call of the CP's OnDequeue for data frame en.
// Without an enqueue hook the entry's mark is read here, from the frame
// (nothing changed its ECN bits since it entered), and its tag is 0.
func (e *Engine) onDequeue(now int64, g *egress, en *qEntry, prio int) {
	g.ps.QueueBytes = g.qPrio[prio]
	if g.needFlow { // a flow-blind CP's flow key was never set
		q := &g.q[prio]
		g.dp.Flow = *q.flow(q.head)
	}
	tag := uint32(0)
	if g.hookEnq {
		tag = en.tag
	} else {
		en.mark = wire.MarkFromECN(en.frame()[en.ipOff+1])
	}
	g.dp.WireBytes, g.dp.Mark, g.dp.Tag = int(en.n), en.mark, tag
	v := g.cp.OnDequeue(now, &g.dp, &g.ps, g.sink)
	e.tx[g.sh].cpDirty |= 1 << g.idx
	if v.Mark > en.mark { // applyMark never lowers a mark
		e.applyMark(now, g, en, uint8(prio), v.Mark)
	}
	if v.StampINT || en.stamp {
		e.stampINT(g, en)
	}
}

// intCode is the B code of a link of bps in this switch's INT records.
func intCode(bps float64) uint8 {
	c, _ := wire.LinkSpeedCode(bps)
	return c
}

// stampINT pushes this hop's INT record (HPCC Section 4.1): B, TS = the time
// the packet starts on the wire, txBytes = bytes the port sent before this
// packet, qLen = queue after the dequeue.
//
// TS is the shaper's clock (busyUntil as the frame starts), not the poll's
// time: the frames one late poll releases together (a shaper burst) start one
// serialisation time apart on the link, and TS must say so, or the pairs (TS,
// txBytes) give a txRate above the link rate (HPCC Eq. 2 then over-reacts).
func (e *Engine) stampINT(g *egress, en *qEntry) {
	if e.pushHop(g, en, g.busyUntil, g.ps.TxBytes, g.qBytes) {
		g.c[cINTStamped]++
	} else {
		g.c[cINTFull]++
	}
}

// pushHop is stampINT's record for a frame that starts on the wire at bu,
// after the port sent tx bytes, leaving q bytes queued. It reports false,
// writing nothing, for a frame without an INT stack or with a full one.
func (e *Engine) pushHop(g *egress, en *qEntry, bu float64, tx uint64, q int64) bool {
	if en.intOff == 0 {
		return false
	}
	hop := ccalgo.INTHop{
		TS:      uint32(uint64(int64(bu)) % ccalgo.INTTSWrap),
		TxBytes: uint32(tx % ccalgo.INTTxBytesWrap),
		QLen:    uint32(min(max(q, 0), ccalgo.INTQLenMax)),
	}
	return wire.INT(en.frame()[en.intOff:]).PushCode(g.intCode, &hop, e.switchID)
}

// drainINT is drainData's loop for a lossy queue prio of a port whose CP
// is ccalgo.INTOnly (egress.stampAll): it does what the general loop does
// with dequeueHooks stamping every data frame (stampINT, nothing else: no
// feedback becomes pending), the shaper's clock, the bytes sent and the
// queue kept in registers and the counts written once. It returns the
// shaper's clock, the frames put into out and their bytes.
func (e *Engine) drainINT(g *egress, q *dataQueue, prio int, bu, t float64, out []TxItem) (float64, int, int) {
	ovh, nspb := float64(e.overhead), g.nsPerByte
	qb, tx0 := g.qBytes, g.ps.TxBytes
	tx := tx0
	n := 0
	var stamped, full uint64
	for n < len(out) && bu <= t && q.head != q.tail {
		en := &q.buf[q.head&q.mask]
		l := int(en.n)
		qb -= int64(l)
		if en.class == ClassData {
			if e.pushHop(g, en, bu, tx, qb) {
				stamped++
			} else {
				full++
			}
		}
		it := &out[n]
		it.H, it.Frame = en.h, en.frame()
		en.h, en.p = 0, nil
		q.head++
		bu += (float64(l) + ovh) * nspb
		tx += uint64(l)
		n++
	}
	bytes := int(tx - tx0)
	g.qBytes = qb
	g.qPrio[prio] -= int64(bytes)
	g.ps.TxBytes = tx
	g.c[cINTStamped] += stamped
	g.c[cINTFull] += full
	return bu, n, bytes
}

// feedbackPort returns the port of feedback to flow k's source (-1: no
// route), as routes.LookupHash with the feedback's flow hash would, and
// whether every flow from k.SrcIP takes it (no route, or one port: the
// hash, computed only for an ECMP group, does not matter).
func (e *Engine) feedbackPort(k *ccalgo.FlowKey) (int, bool) {
	t := &e.routes
	r := t.find(k.SrcIP)
	switch {
	case r == nil:
		return -1, true
	case r.n == 1:
		return int(t.ports[r.first]), true
	}
	h := FlowHash(e.hashSeed, e.ip, k.SrcIP, k.DstPort, k.SrcPort, 0)
	return int(t.ports[r.first+h%r.n]), false
}

// emitFeedback builds a CP's feedback packet toward the flow's source, out
// its port (feedbackPort). With rates, fb is a rate message of the
// computation in rates, to flow rate (EmitRates); without, fb is whole.
func (e *Engine) emitFeedback(from, out int, fb *ccalgo.Feedback, rates *wire.RoCCRates, rate *ccalgo.FlowKey) {
	if out < 0 {
		e.eg[from].c[cFeedbackNoPort]++
		return
	}
	g, cp := &e.eg[out], &e.eg[from]
	sh := &e.tx[cp.sh]
	// A port of another shard: the frame crosses over that shard's mailbox
	// (drops counted at the congestion point's port, the one this lcore
	// owns).
	var mb *mailbox
	var b []byte
	if g.sh == cp.sh {
		b = g.gen.slot()
	} else {
		mb = sh.outbox[g.sh]
		b = mb.slot()
	}
	if b == nil {
		if mb == nil {
			g.c[cDropControl]++
		} else {
			cp.c[cDropControl]++
		}
		return
	}
	var n int
	var err error
	switch {
	case rates != nil:
		// From the computation's template: BuildFeedback's frame for
		// these endpoints.
		n, err = rates.Build(b, &g.peer, &g.mac, rate.SrcIP, rate)
	case fb.Kind == ccalgo.FeedbackRoCCRate:
		n, err = e.roccRate.Build(b, &g.peer, &g.mac, fb.Flow.SrcIP, fb)
	default:
		sh.ep = wire.Endpoints{
			DstMAC: g.peer, SrcMAC: g.mac,
			SrcIP: e.ip, DstIP: fb.Flow.SrcIP,
			SrcPort: fb.Flow.DstPort,
		}
		n, err = wire.BuildFeedback(b, &sh.ep, fb)
	}
	if err != nil {
		cp.c[cDropControl]++
		return
	}
	if mb != nil {
		mb.commit(uint8(out), n)
	} else {
		g.gen.commit(n)
		sh.active |= 1 << out
	}
	// Feedback is counted at the congestion point that generated it (the
	// port whose queue the flow congests), not at the port it leaves by.
	switch fb.Kind {
	case ccalgo.FeedbackRoCCRate:
		cp.c[cRoCCRateSent]++
	case ccalgo.FeedbackP4QCN:
		cp.c[cP4QCNSent]++
	case ccalgo.FeedbackQCN:
		cp.c[cQCNSent]++
	}
}

// readTimers reads the timers of shard sh's CPs that ran since they were last
// read, and keeps the earliest of its ports' in cpMin.
func (e *Engine) readTimers(sh *txShard) {
	if sh.cpDirty == 0 {
		return
	}
	// Only a timer that moved later on the port that held the minimum needs
	// a scan of every port; an earlier or unchanged one updates it in place.
	rescan := false
	for a := sh.cpDirty; a != 0; a &= a - 1 {
		p := bits.TrailingZeros64(a)
		g := &e.eg[p]
		old := g.cpNext
		g.cpNext = g.cp.NextTimer()
		switch {
		case g.cpNext < sh.cpMin:
			sh.cpMin = g.cpNext
		case g.cpNext > old && old == sh.cpMin:
			rescan = true
		}
	}
	sh.cpDirty = 0
	if rescan {
		m := ccalgo.Never
		for a := sh.ports; a != 0; a &= a - 1 {
			m = min(m, e.eg[bits.TrailingZeros64(a)].cpNext)
		}
		sh.cpMin = m
	}
}

// readFlowWords reads a data frame's flow key for a flowCounter CP (RoCC's
// EnqueueWords) in the frame's byte order, as rocc.FlowWords lays it out:
// the IPv4 addresses, the UDP ports and the BTH's destination QP (0 without
// a BTH) in three loads.
func readFlowWords(frame []byte, m *Meta) (a, b uint64) {
	a = binary.LittleEndian.Uint64(frame[m.IPOff:][12:20])
	l4 := frame[m.L4Off:]
	b = uint64(binary.LittleEndian.Uint32(l4[:4]))
	if m.RoCE {
		b |= uint64(binary.LittleEndian.Uint32(l4[wire.UDPLen+4:wire.UDPLen+8])&^0xff) << 32
	}
	return a, b
}

// setFlowKey writes into k the key whose words readFlowWords read (the
// key readFlowKey reads), for the rare dequeue whose tag no longer names
// its flow's entry.
func setFlowKey(k *ccalgo.FlowKey, a, b uint64) {
	k.SrcIP, k.DstIP = bits.ReverseBytes32(uint32(a)), bits.ReverseBytes32(uint32(a>>32))
	k.SrcPort, k.DstPort = bits.ReverseBytes16(uint16(b)), bits.ReverseBytes16(uint16(b>>16))
	k.DestQP = bits.ReverseBytes32(uint32(b >> 32))
}
