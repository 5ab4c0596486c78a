package switchd

import "github.com/ccbed/ccbed/ccalgo"

// cpHooks reports whether cp's OnEnqueue and OnDequeue do work, from its
// ccalgo.PacketHooks when it has one (both otherwise). It runs once per port in
// New; the engine then skips a no-op hook per packet.
func cpHooks(cp ccalgo.CongestionPoint) (enq, deq bool) {
	if h, ok := cp.(ccalgo.PacketHooks); ok {
		return h.PacketHooks()
	}
	return true, true
}

// flowCounter is a CP whose per-packet work is counting each flow's packets
// in its queue, found at dequeue by the tag the enqueue gave (RoCC's flow
// table, ccalgo/rocc's CP): EnqueueWords (the key in the frame's byte
// order, readFlowWords) and DequeueFlow do what its OnEnqueue and OnDequeue
// do, and neither marks, stamps INT, emits feedback or moves NextTimer. The
// engine calls them in place of the two hooks,
// sparing each packet the hooks' DataPacket, PortState and Verdict and the
// CP timer's re-read; drainData hands the dequeues of the data frames it
// took over in DequeueFlows calls (dequeueBatch).
type flowCounter interface {
	EnqueueWords(a, b uint64) uint32
	DequeueFlow(tag uint32, key *ccalgo.FlowKey, queueBytes int64)
	DequeueFlows(tags []uint32, keys interface{ FlowKey(i int) *ccalgo.FlowKey }, emptied bool)
}

// deqBatch is dequeueBatch's record of data frames that left queue q, for
// a flowCounter CP: their tags and their places in the ring (their keys
// stay there until the next Enqueue).
type deqBatch struct {
	q    *dataQueue
	tags [64]uint32
	pos  [64]uint32 // the frame's index in q (q.head when it left)
}

// FlowKey is the key of the batch's i-th frame (DequeueFlows' keys).
func (d *deqBatch) FlowKey(i int) *ccalgo.FlowKey {
	return d.q.flow(d.pos[i])
}

// dequeueBatch runs g's flowCounter CP for the frames drainData just took
// from q (q.head was from): the data frames' dequeues in DequeueFlows calls
// of up to 64, in place of a DequeueFlow call per frame in drainData's loop.
// Nothing read or changed the CP in between (its dequeues emit nothing),
// and the queue, which still held the later frames while an earlier one
// left, can have been empty only after the last frame, if that one was
// data.
func (g *egress) dequeueBatch(q *dataQueue, from uint32, prio int) {
	d := g.deq
	d.q = q
	n := 0
	buf, mask, head := q.buf, q.mask, q.head
	for i := from; i != head; i++ {
		en := &buf[i&mask]
		if en.class != ClassData {
			continue
		}
		if n == len(d.tags) {
			g.fc.DequeueFlows(d.tags[:], d, false)
			n = 0
		}
		d.tags[n], d.pos[n] = en.tag, i
		n++
	}
	if n > 0 {
		last := &q.buf[(q.head-1)&q.mask]
		g.fc.DequeueFlows(d.tags[:n], d, last.class == ClassData && g.qPrio[prio] <= 0)
	}
}
