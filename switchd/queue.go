package switchd

import (
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/node"
)

// Handle is the driver's integer name of a frame's buffer (an mbuf's address
// on DPDK, an index in virtual time; node.Handle). The engine stores it and
// gives it back in TxItems or to Drain; it never dereferences it. 0 is no
// frame.
type Handle = node.Handle

// qEntry is one frame in an egress data FIFO: 32 bytes, two to a cache
// line (TestQEntrySize). A fabric's switches hold thousands of queues, and
// the slot a frame takes is rarely still cached when the frame comes, so its
// size is what Enqueue writes per frame into lines it must fetch. The
// frame's bytes are kept as their first byte and length (8 + 4 bytes in
// place of a 24-byte slice header: see frame); its priority is its queue's
// index; the flow key, which only a CP that reads flows needs, is in the
// queue's flows ring beside it.
type qEntry struct {
	p      *byte  // the frame's first byte (unsafe.SliceData)
	h      Handle // the frame's buffer, given back with it
	n      uint32 // the frame's length
	tag    uint32 // the CP's Verdict.Tag at enqueue (ccalgo.DataPacket.Tag)
	ipOff  uint16
	intOff uint16
	in     uint8
	class  Class
	mark   ccalgo.Mark
	stamp  bool // a CP asked for an INT record at enqueue
}

// setFrame stores frame in the entry.
func (en *qEntry) setFrame(frame []byte) {
	en.p, en.n = unsafe.SliceData(frame), uint32(len(frame))
}

// frame is the entry's frame, as setFrame was given it (its capacity cut to
// its length).
//
// unsafe: the slice header is cut to a pointer and a length, the only
// difference from keeping the slice (the entry holds a real pointer, which
// keeps a Go buffer alive for the collector as the slice did; a DPDK mbuf's
// data is C memory either way), so that an entry is 32 bytes. unsafe.Slice
// rebuilds exactly the bytes the slice had: same start, its length. This
// method and setFrame are the only places the engine uses the package this
// way.
func (en *qEntry) frame() []byte { return unsafe.Slice(en.p, en.n) }

// dataQueue is a ring of qEntry (power of two) that starts empty, takes
// initialQueueSlots at its first frame and doubles, up to limit entries, when
// it fills: a switch of 64 ports with 8 priority queues each and megabyte
// buffers holds room for the frames it has actually queued, not for the worst
// case on every queue. A doubling allocates; it happens a few times per queue
// in a run, never in a steady state.
//
// On a port whose CP reads flow keys, or counts flows, flows is not nil
// (keepKeys, at New: empty until the first grow) and flows[i] is the flow
// key of buf[i], sized with buf; elsewhere flows stays nil and no flow key
// is stored. A dataQueue is 64 bytes (TestQEntrySize), and the port's
// queues start on a line (egress is line-aligned, txPort.q at 64): Enqueue
// reads its queue's head, tail and limit from one line.
type dataQueue struct {
	buf        []qEntry
	mask       uint32
	head, tail uint32
	limit      uint32
	flows      []ccalgo.FlowKey
}

// initialQueueSlots is a queue's first capacity.
const initialQueueSlots = 256

func newDataQueue(limit int) dataQueue {
	return dataQueue{limit: uint32(nextPow2(limit))}
}

// keepKeys makes the queue keep its entries' flow keys (flows not nil).
func (q *dataQueue) keepKeys() { q.flows = []ccalgo.FlowKey{} }

// keys reports whether the queue keeps its entries' flow keys.
func (q *dataQueue) keys() bool { return q.flows != nil }

func (q *dataQueue) len() int      { return int(q.tail - q.head) }
func (q *dataQueue) full() bool    { return q.tail-q.head >= q.limit }
func (q *dataQueue) peek() *qEntry { return &q.buf[q.head&q.mask] }

// flow is the flow key of the entry at index i (a running index, as head
// and tail; keys set).
func (q *dataQueue) flow(i uint32) *ccalgo.FlowKey { return &q.flows[i&q.mask] }

// grow doubles the ring (or makes its first slots), keeping the entries'
// order. Enqueue calls it when the ring is full, then takes the slot at tail.
func (q *dataQueue) grow() {
	nb := make([]qEntry, max(2*len(q.buf), min(int(q.limit), initialQueueSlots)))
	n := copy(nb, q.buf[q.head&q.mask:])
	copy(nb[n:], q.buf[:q.head&q.mask])
	if q.keys() {
		nf := make([]ccalgo.FlowKey, len(nb))
		n := copy(nf, q.flows[q.head&q.mask:])
		copy(nf[n:], q.flows[:q.head&q.mask])
		q.flows = nf
	}
	q.tail -= q.head
	q.head = 0
	q.buf, q.mask = nb, uint32(len(nb)-1)
}

// pop removes the head and returns a copy of it (see drop).
func (q *dataQueue) pop() qEntry {
	v := *q.peek()
	q.drop()
	return v
}

// drop removes the head, clearing the slot's references so the ring keeps no
// frame alive. A queue that becomes empty restarts at slot 0: a queue that
// drains as fast as it fills (the common case) then keeps reusing its first,
// cache-hot slots instead of sweeping the whole ring (up to 1<<17 entries,
// megabytes) through the cache one new line per packet.
func (q *dataQueue) drop() {
	e := &q.buf[q.head&q.mask]
	e.h, e.p = 0, nil
	q.head++
	if q.head == q.tail {
		q.head, q.tail = 0, 0
	}
}

// ctlEntry is a forwarded control frame, known by handle, waiting in its
// egress port's ctl FIFO.
type ctlEntry struct {
	h Handle
	f []byte
}

// ringStart is the slots a port's ctl FIFO or delay line starts with: a
// switch port holds what its traffic uses, not its bound.
const ringStart = 16

// genSlotLen is the room of one generated control frame (the largest, a P4QCN
// feedback packet with a VLAN tag, is 94 bytes).
const genSlotLen = 128

// genQueue holds the control frames the switch itself builds (feedback, PFC)
// for one port, in engine memory: written at wr, handed to the shaper at sched,
// freed at done once the adapter has copied them out.
//
// It starts with a few slots and doubles, up to limit, when every slot is in use
// (see dataQueue).
type genQueue struct {
	buf             []byte
	lens            []uint16
	mask            uint32
	wr, sched, done uint32
	limit           int
}

// genStart is the slots a genQueue starts with.
const genStart = 16

func newGenQueue(limit int) genQueue {
	limit = nextPow2(limit)
	n := min(limit, genStart)
	return genQueue{buf: make([]byte, n*genSlotLen), lens: make([]uint16, n), mask: uint32(n - 1), limit: limit}
}

// slot returns the room of the next frame, or nil when every slot is in use.
func (g *genQueue) slot() []byte {
	if int(g.wr-g.done) >= len(g.lens) {
		if len(g.lens) >= g.limit {
			return nil
		}
		g.grow()
	}
	i := int(g.wr & g.mask)
	return g.buf[i*genSlotLen : (i+1)*genSlotLen]
}

// grow doubles the slots: each slot in use moves to its index's place in the
// larger ring (the indexes run free, so done, sched and wr stay valid).
func (g *genQueue) grow() {
	n := 2 * len(g.lens)
	nb, nl := make([]byte, n*genSlotLen), make([]uint16, n)
	nm := uint32(n - 1)
	for i := g.done; i != g.wr; i++ {
		o, p := int(i&g.mask), int(i&nm)
		copy(nb[p*genSlotLen:(p+1)*genSlotLen], g.buf[o*genSlotLen:(o+1)*genSlotLen])
		nl[p] = g.lens[o]
	}
	g.buf, g.lens, g.mask = nb, nl, nm
}

// commit makes the frame of length n written into slot() ready to send.
func (g *genQueue) commit(n int) {
	g.lens[g.wr&g.mask] = uint16(n)
	g.wr++
}

func (g *genQueue) pending() bool { return g.sched != g.wr }

// next hands the oldest ready frame to the shaper.
func (g *genQueue) next() []byte {
	i := int(g.sched & g.mask)
	g.sched++
	return g.buf[i*genSlotLen : i*genSlotLen+int(g.lens[i])]
}

// dlEntry is a frame on the wire: released to the adapter at `at`.
type dlEntry struct {
	h     Handle // 0: a generated frame (a genQueue slot)
	frame []byte
	at    int64
}

// A port's delay line (egress.dl) is the ring.FIFO of frames that left the
// shaper and wait out the propagation delay (or, without one, the end of
// the Transmit call), oldest first.

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
