package switchd

import (
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/ring"
	"github.com/ccbed/ccbed/wire"
)

// TxItem is a frame Transmit hands to the adapter for the wire: a frame known by
// its Handle (the adapter sends that buffer; Frame is its bytes, possibly
// modified in place), or, with H 0, a frame the switch generated, whose
// bytes in Frame stay valid until the next Transmit call on the same port (the
// adapter copies them into a fresh buffer).
type TxItem struct {
	H     Handle
	Frame []byte
}

// egress is the tx+CC side of a port, by concern: the port device
// (txPort: shaper, queues, DWRR and the pauses it received, as ns-3's
// QbbNetDevice), the congestion point's glue (cpPort), the port's identity
// (portID), its share of the MMU's PFC (mmuPort: the XOFF it sends
// upstream; acct: the ingress accounting) and its counters (portStats).
// The parts are embedded, so that g.qBytes, g.cp or g.xoff name their
// fields directly; their order keeps the fields Enqueue and Transmit touch
// for every frame in the first lines: txPort's head, then cpPort's (a
// fabric's switches have hundreds of ports, and a port's state is rarely
// still cached when its next frame comes).
//
// An egress is whole cache lines (the padding after portParts), and
// Engine.eg starts on a line (New), so that every port's parts sit on the
// same lines: txPort's head on one, each priority of acct on half of one.
type egress struct {
	portParts
	_ [(64 - unsafe.Sizeof(portParts{})%64) % 64]byte
	// acct counts the bytes in the switch that entered on this port, as an
	// ingress port (PFC; one tx shard: with several, each shard counts its
	// own, see txShard.acct). Every lossless frame's admission and release
	// touch its priority's 32 bytes.
	acct ingressAcct
}

// newEgress makes n ports' egress state, starting on a cache line: at least
// 32 KiB, which the runtime allocates as a large object, page-aligned (a
// smaller object holding pointers starts 8 bytes into its slot, behind the
// allocator's header, and would put every port's lines 8 bytes off: a
// switch of 8 ports is 22 KB). TestPortLayout checks it.
func newEgress(n int) []egress {
	size := unsafe.Sizeof(egress{})
	return make([]egress, n, max(n, int((32<<10+size)/size)))
}

// portParts is egress but its accounting.
type portParts struct {
	txPort
	cpPort
	portID
	mmuPort
	portStats
	// tr is the per-packet trace's sink, every port's (SetTrace); nil: off.
	tr *tracer
}

// txPort is a port's device: the shaper, the data queues with their DWRR
// scheduler, the control and generated queues, the delay line, and the
// pauses received from the peer. Its head (one cache line: the shaper, the
// queue totals and the masks) is what every frame touches.
type txPort struct {
	busyUntil float64 // shaper: virtual time the link finishes what it was given
	nsPerByte float64
	burstNs   float64
	delayNs   int64
	qBytes    int64  // data bytes queued, every priority
	bufLimit  int64  // cap on qBytes; 0: none
	genRel    uint32 // generated frames released by the last Transmit, freed at the next
	// nonEmpty has bit p set while data queue p holds frames; pausedMask the
	// priorities a received PFC frame holds (as of the last Transmit).
	nonEmpty, pausedMask uint8
	rr                   uint8 // DWRR: the priority whose turn it is
	sh                   uint8 // the tx shard serving the port (Engine.tx)
	// pfcSeen: the port has received a PFC frame; until then it cannot be
	// paused and Transmit skips the pause bookkeeping.
	pfcSeen bool
	q       [wire.PFCPriorities]dataQueue // one data queue per priority
	qPrio   [wire.PFCPriorities]int64     // bytes in each
	deficit [wire.PFCPriorities]int32     // DWRR deficit counters
	dl      ring.FIFO[dlEntry]            // the delay line (queue.go)
	ctl     ring.FIFO[ctlEntry]           // forwarded control frames
	gen     genQueue
	// PFC received: data of priority i is held until pausedUntil[i].
	pausedUntil [wire.PFCPriorities]int64
	pauseStart  int64
}

// cpPort is the glue between a port and its congestion point: what the
// engine hands the CP's hooks (ps, dp, sink) and what it learnt of the CP
// at New, to skip what the CP does not need.
type cpPort struct {
	// hookEnq / hookDeq: cp's OnEnqueue / OnDequeue may do work (false
	// when the method is ccalgo.CPBase's no-op, see cpHooks, and without a
	// cp): the engine then skips the per-packet interface call, and with
	// neither, the flow key and mark of the queue entry.
	hookEnq, hookDeq bool
	// needFlow: a hook reads the packet's flow key (not ccalgo.FlowBlind).
	needFlow bool
	// stampAll: cp is ccalgo.INTOnly: every data frame gets its INT record
	// at dequeue, and neither hook is called.
	stampAll bool
	// enqWork: a data frame's enqueue has hook work (enqueueHooks): the
	// flowCounter's count, OnEnqueue, or the flow key a dequeue hook reads.
	enqWork bool
	// quiet is cp's ccalgo.QuietQueue bytes (-1 without the claim): a hook
	// is skipped for a packet whose queue is at most quiet.
	quiet   int64
	intCode uint8 // the link's B code in an INT record (wire.LinkSpeedCode)
	cp      ccalgo.CongestionPoint
	ps      ccalgo.PortState
	dp      ccalgo.DataPacket
	sink    ccalgo.FeedbackSink
	// fc is cp as a flowCounter (RoCC), called in place of its hooks, and
	// deq dequeueBatch's record of its dequeues; nil for other CPs.
	fc  flowCounter
	deq *deqBatch
	// cpNext is cp.NextTimer() as last read (see Engine.cpDirty).
	cpNext int64
	fair   ccalgo.FairRateReporter
}

// portID is who a port is: read-only after New.
type portID struct {
	idx       int
	name      string
	scheme    string
	mac, peer wire.MAC
	linkBps   float64
}

// mmuPort is the port's part of the MMU's PFC, as an ingress port: the
// pauses it sends upstream (the bytes in the switch that entered on it are
// egress.acct).
type mmuPort struct {
	// PFC sent: xoff is the priorities this port holds in XOFF (bit p),
	// each paused upstream again at refreshAt.
	xoff      uint8
	refreshAt [wire.PFCPriorities]int64
	refreshNs int64
	// xonRetry is the priorities whose XON found the control queue full:
	// Service sends it again (txShard.xonRetryPorts) until one is queued or
	// an XOFF of the same priority supersedes it. Without the retry the
	// peer would stay paused until its pause ran out.
	xonRetry uint8
	// sinceXOFF is the bytes of lossless priority p that entered on this
	// port while it held p in XOFF (admitted or dropped): what the peer
	// sent after the pause was queued, recorded at the XON
	// (recordAfterXOFF). One tx shard only.
	sinceXOFF [wire.PFCPriorities]int64
}

// portStats is the egress side's counters and what PublishEgress last
// copied of them.
type portStats struct {
	c   counters
	pub published
	// pubPrio, pubXOFF and pubPaused are qPrio, xoff and pausedMask as
	// PublishEgress last copied them (per-priority gauges for Snapshot: the
	// metrics endpoint's queue and PFC state); never written per frame.
	pubPrio            [wire.PFCPriorities]atomic.Int64
	pubXOFF, pubPaused atomic.Uint32
}

// Transmit runs port p's shaper at now and fills out with the frames due on the
// wire, control frames first; it returns how many. Data waits while its
// priority is paused by PFC. Call it from the tx+CC lcore.
func (e *Engine) Transmit(now int64, p int, out []TxItem) int {
	return e.transmit(now, p, out, true)
}

// transmit is Transmit, taking drainData's lane when drain is true (always,
// but in tests, where the general loop is the reference drainData must
// match).
func (e *Engine) transmit(now int64, p int, out []TxItem, drain bool) int {
	g := &e.eg[p]
	t := float64(now)
	if g.sending(t) {
		return 0
	}
	g.gen.done += g.genRel
	g.genRel = 0
	if g.pfcSeen {
		e.updatePause(now, g)
	}
	if g.busyUntil < t-g.burstNs {
		g.busyUntil = t - g.burstNs
	}
	// Without a propagation delay a frame leaving the shaper is due at once:
	// while nothing older waits on the delay line it goes straight into out,
	// skipping the delay line's store and load. What an earlier call left
	// on the line (its out was full) is due as well, and goes first: then
	// the line is empty again, and frames go straight out.
	n := 0
	if g.delayNs == 0 {
		n = e.release(now, g, out)
	}
	direct := g.delayNs == 0 && g.dl.Len() == 0
	// The shaper's clock lives in a register through the loop (a store and
	// reload of g.busyUntil per frame would chain every frame's float add
	// behind store forwarding); g.busyUntil is current whenever a dequeue
	// may read it (INT's TS) and after the loop.
	bu := g.busyUntil
shape:
	for bu <= t && g.dl.Reserve() {
		var h Handle
		var frame []byte
		switch {
		case g.gen.pending():
			frame = g.gen.next()
		case g.ctl.Len() > 0:
			c := g.ctl.Pop()
			h, frame = c.h, c.f
		case g.nonEmpty&^g.pausedMask != 0:
			// One data queue busy (not lossless under PFC), frames going
			// straight into out: drainData's loop, back here once a CP's
			// feedback waits or out is full.
			if direct && n < len(out) && g.nonEmpty&(g.nonEmpty-1) == 0 && drain {
				var k int
				bu, k = e.drainData(now, g, bu, t, out[n:])
				n += k
				continue
			}
			g.busyUntil = bu
			h, frame = e.dequeueData(now, g, e.pick(g))
		default:
			break shape
		}
		bu += float64(len(frame)+e.overhead) * g.nsPerByte
		g.ps.TxBytes += uint64(len(frame))
		g.c[cTxPackets]++
		g.c[cTxBytes] += uint64(len(frame))
		if direct && n < len(out) {
			it := &out[n]
			it.H, it.Frame = h, frame
			if h == 0 {
				g.genRel++
			}
			n++
			continue
		}
		at := now
		if g.delayNs > 0 {
			at = int64(bu) + g.delayNs
		}
		g.dl.Push(dlEntry{h: h, frame: frame, at: at})
	}
	g.busyUntil = bu
	n += e.release(now, g, out[n:])
	if g.nonEmpty == 0 && g.ctl.Len() == 0 && !g.gen.pending() && g.dl.Len() == 0 {
		e.tx[g.sh].active &^= 1 << p
	}
	return n
}

// sending reports that a Transmit of g at t would take nothing and release
// nothing, so that it may return at once: the shaper still busy, nothing on
// the delay line, no pause to update and no generated frame to account
// (most calls of a switch whose ports are all sending at line rate).
func (g *egress) sending(t float64) bool {
	return g.busyUntil > t && g.genRel == 0 && !g.pfcSeen && g.dl.Len() == 0
}

// release moves the frames of g's delay line that are due at now into out,
// oldest first, and returns how many.
func (e *Engine) release(now int64, g *egress, out []TxItem) int {
	n := 0
	for n < len(out) && g.dl.Len() > 0 {
		d := g.dl.Front()
		if d.at > now {
			break
		}
		it := &out[n]
		it.H, it.Frame = d.h, d.frame
		if d.h == 0 {
			g.genRel++
		}
		g.dl.Drop()
		n++
	}
	return n
}

// drainData is Transmit's loop for its commonest case: one data queue holds
// frames, no control or generated frame waits, and frames leaving the shaper
// go straight into out. It takes frames from that queue while the shaper (its
// clock bu) is free at t and out has room, exactly as Transmit's loop and
// dequeueData would, without their per-frame choice of what to send next, and
// with the tx counters and the lossy shared buffer's use summed once. A
// lossless priority under PFC releases each frame's ingress count as
// dequeueData does (an XON may follow any frame): on a port without CP hooks
// the frames of ingress ports not in XOFF in bursts (drainLossless,
// releaseBatch), the rest one by one. It stops where that choice
// matters again: a CP hook emitted feedback, or an XON was sent, out of this
// port (it goes before the next data frame). It returns the shaper's clock
// and the frames it put into out (at least one: the caller checked the
// shaper is free).
func (e *Engine) drainData(now int64, g *egress, bu, t float64, out []TxItem) (float64, int) {
	prio := bits.TrailingZeros8(g.nonEmpty)
	q := &g.q[prio]
	ovh, nspb := float64(e.overhead), g.nsPerByte
	sh := &e.tx[g.sh]
	lossless := e.lossless&(1<<prio) != 0
	from := q.head // RoCC: its dequeues after the loop (dequeueBatch)
	n, bytes := 0, 0
	var batched uint64 // ingress ports with bytes in sh.released
	// Ingress ports holding a priority in XOFF in the shard's view; only
	// ingressRelease (an XON) changes it inside the loop.
	xoff := sh.xoffPorts | sh.xoffIn
	// No CP work at dequeue: no hook, or a dequeue hook alone on a queue
	// quiet at the start (it stays quiet through the loop: the queue only
	// shrinks); without an enqueue hook no entry asks for an INT record. A
	// flowCounter's dequeues come after the loop (dequeueBatch) of a lossy
	// priority; a lossless one releases its ingress counts in
	// drainLossless, up to a frame from a port in XOFF.
	quiet := !g.hookEnq && !g.stampAll && (!g.hookDeq || g.qPrio[prio] <= g.quiet)
	plain := quiet && g.deq == nil || !lossless && g.deq != nil
	if plain {
		// Nothing in the loop below but the frames' own work: no hook (so
		// no INT stamp, no feedback: nothing becomes pending on the port),
		// no ingress count to release one by one, and the queue's byte
		// counts read by none of it, so they are summed once.
		if lossless {
			bu, n, bytes, batched = sh.drainLossless(q, out, bu, t, ovh, nspb, xoff)
		} else {
			for n < len(out) && bu <= t && q.head != q.tail {
				en := &q.buf[q.head&q.mask]
				l := int(en.n)
				it := &out[n]
				it.H, it.Frame = en.h, en.frame()
				en.h, en.p = 0, nil
				q.head++
				bu += (float64(l) + ovh) * nspb
				bytes += l
				n++
			}
		}
		g.qBytes -= int64(bytes)
		g.qPrio[prio] -= int64(bytes)
		g.ps.TxBytes += uint64(bytes)
	} else if !lossless && g.stampAll {
		bu, n, bytes = e.drainINT(g, q, prio, bu, t, out)
	}
	for n < len(out) && bu <= t && q.head != q.tail {
		en := &q.buf[q.head&q.mask]
		l := int(en.n)
		g.qBytes -= int64(l)
		g.qPrio[prio] -= int64(l)
		if lossless {
			// A port with no priority in XOFF has no XON to decide: its
			// frames' bytes are counted off together after the loop.
			// Otherwise each frame's release may send an XON.
			if in := en.in & 63; xoff&(1<<in) == 0 {
				sh.released[in] += int64(l)
				batched |= 1 << in
			} else {
				e.ingressRelease(now, sh, int(in), uint8(prio), int64(l))
				xoff = sh.xoffPorts | sh.xoffIn
			}
		}
		if (g.hookDeq || g.stampAll || en.stamp) && g.deq == nil {
			g.busyUntil = bu // INT's TS
			e.dequeueHooks(now, g, en, prio)
		}
		it := &out[n]
		it.H, it.Frame = en.h, en.frame()
		en.h, en.p = 0, nil
		q.head++
		bu += (float64(l) + ovh) * nspb
		g.ps.TxBytes += uint64(l)
		bytes += l
		n++
		if g.gen.pending() {
			break
		}
	}
	if batched != 0 {
		e.releaseBatch(sh, batched, uint8(prio))
	}
	if g.deq != nil {
		g.dequeueBatch(q, from, prio)
	}
	if q.head == q.tail {
		q.head, q.tail = 0, 0
		g.nonEmpty &^= 1 << prio
		g.deficit[prio] = 0
	}
	if buf := &sh.buf; buf.on && !lossless {
		buf.used -= int64(bytes)
	}
	g.c[cTxPackets] += uint64(n)
	g.c[cTxBytes] += uint64(bytes)
	e.traceDrained(now, g, q, uint8(prio), from, out[:n])
	return bu, n
}

// pick is the data queue the scheduler serves next among those holding frames
// and not paused (the caller checked there is one): the highest strict
// priority, else deficit-weighted round robin (Shreedhar and Varghese) among
// the others. A queue alone skips the deficit bookkeeping.
func (e *Engine) pick(g *egress) int {
	elig := g.nonEmpty &^ g.pausedMask
	if s := elig & e.strict; s != 0 {
		return bits.Len8(s) - 1
	}
	if elig&(elig-1) == 0 {
		return bits.TrailingZeros8(elig)
	}
	for {
		p := g.rr
		if elig&(1<<p) != 0 {
			if l := int32(g.q[p].peek().n); g.deficit[p] >= l {
				g.deficit[p] -= l
				return int(p)
			}
		}
		g.rr = (p + 1) & 7
		if elig&(1<<g.rr) != 0 {
			g.deficit[g.rr] += e.quantum[g.rr]
		}
	}
}

// Active is the set of ports holding frames (bit p: port p): the ports a
// driver must call Transmit on. Ports outside it have nothing to send.
func (e *Engine) Active() uint64 {
	var a uint64
	for k := range e.tx {
		a |= e.tx[k].active
	}
	return a
}

// NextWake is the earliest time at or after now at which the engine has work:
// a frame due on a port's wire (its shaper free, its priority not paused, its
// delay over), a CP timer, a PFC refresh, a telemetry sample or a counter
// publication. Frames received before then may bring it forward. tx+CC side.
func (e *Engine) NextWake(now int64) int64 {
	// Shards by index, not range: a range over the slice of large structs
	// costs a copy of its header and more per call (the fabric calls
	// NextWake after every event of a switch).
	t := e.nextPubIn
	var active, xoffPorts uint64
	for k := 0; k < len(e.tx); k++ {
		sh := &e.tx[k]
		if sh.cpDirty != 0 { // readTimers' own check, spared its call
			e.readTimers(sh)
		}
		t = min(t, sh.nextSample, sh.nextPubTx, sh.cpMin)
		active |= sh.active
		xoffPorts |= sh.xoffPorts
	}
	for a := xoffPorts; a != 0; a &= a - 1 {
		g := &e.eg[bits.TrailingZeros64(a)]
		for x := g.xoff; x != 0; x &= x - 1 {
			t = min(t, g.refreshAt[bits.TrailingZeros8(x)])
		}
	}
	for a := active; a != 0; a &= a - 1 {
		g := &e.eg[bits.TrailingZeros64(a)]
		switch {
		case g.gen.pending() || g.ctl.Len() > 0:
			t = min(t, int64(math.Ceil(g.busyUntil)))
		case g.nonEmpty != 0:
			// The earliest a queue holding frames is unpaused (pausedUntil
			// is 0, or past, for one that is not paused).
			w := int64(math.MaxInt64)
			for ne := g.nonEmpty; ne != 0; ne &= ne - 1 {
				w = min(w, g.pausedUntil[bits.TrailingZeros8(ne)])
			}
			t = min(t, max(int64(math.Ceil(g.busyUntil)), w))
		}
		if g.dl.Len() > 0 {
			t = min(t, g.dl.Front().at)
		}
	}
	return max(t, now)
}

// dequeueData takes the head of data queue prio for the wire: CP OnDequeue,
// marks, INT record, buffer and PFC accounting.
func (e *Engine) dequeueData(now int64, g *egress, prio int) (Handle, []byte) {
	q := &g.q[prio]
	en := q.peek()
	h, frame := en.h, en.frame()
	l := int64(len(frame))
	g.qBytes -= l
	g.qPrio[prio] -= l
	sh := &e.tx[g.sh]
	if e.lossless&(1<<prio) != 0 {
		e.ingressRelease(now, sh, int(en.in), uint8(prio), l)
	} else if sh.buf.on {
		sh.buf.used -= l
	}
	e.dequeueHooks(now, g, en, prio)
	e.traceDeq(now, g, en, prio)
	q.drop()
	if q.len() == 0 {
		g.nonEmpty &^= 1 << prio
		g.deficit[prio] = 0
	}
	return h, frame
}

// ringGrowthBytes is what the port's rings have allocated by growing since
// the engine was built. A ring doubles when it fills, so its growth follows
// from its size: one that started with n0 slots and now has n allocated
// 2n0 + 4n0 + ... + n = 2(n - n0) slots; a data queue, which starts with
// none, allocated n1 = min(limit, initialQueueSlots) slots first, then
// doubled: 2n - n1.
func (g *egress) ringGrowthBytes() uint64 {
	doubled := func(n, n0 int, size uintptr) uintptr { return 2 * uintptr(n-n0) * size }
	b := uintptr(g.dl.GrownSlots())*unsafe.Sizeof(dlEntry{}) +
		uintptr(g.ctl.GrownSlots())*unsafe.Sizeof(ctlEntry{}) +
		doubled(len(g.gen.lens), min(g.gen.limit, genStart), genSlotLen+2)
	for i := range g.q {
		if q := &g.q[i]; len(q.buf) > 0 {
			size := unsafe.Sizeof(qEntry{})
			if q.keys() {
				size += unsafe.Sizeof(ccalgo.FlowKey{})
			}
			b += (2*uintptr(len(q.buf)) - uintptr(min(int(q.limit), initialQueueSlots))) * size
		}
	}
	return uint64(b)
}
