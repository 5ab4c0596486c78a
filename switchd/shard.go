package switchd

import (
	"fmt"
	"sync/atomic"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/ring"
	"github.com/ccbed/ccbed/wire"
)

// txShard is the tx+CC state of a set of egress ports that one lcore serves:
// Enqueue, Transmit and ServiceShard for those ports touch only their own
// egress structs and their shard's. An engine has one shard holding every
// port unless ShardTx split them.
type txShard struct {
	ports uint64 // bit p: egress port p is the shard's
	// active has bit p set while port p holds frames (queued, generated, on
	// the delay line): Transmit and NextWake visit only those ports.
	active uint64
	// cpDirty has bit p set when port p's CP ran a hook or its timer since its
	// NextTimer was last read into cpNext; cpMin is the earliest cpNext. The
	// engine reads a CP's timer again only after the CP ran.
	cpDirty uint64
	cpMin   int64

	nextSample, nextPubTx int64
	samples               *SampleRing
	pfcEvents             *Ring[PFCEvent]
	// buf is the shard's buffer: the whole buffer with one shard, a slice of
	// it in proportion to the shard's ports with several (like the buffer of
	// each pipeline of a multi-pipeline switch ASIC).
	buf sharedBuffer
	ep  wire.Endpoints // scratch for generated packets
	// inbox[k] holds the feedback frames shard k's CPs built for this
	// shard's ports (nil for k itself): a CP's feedback leaves by the port
	// toward the flow's source, which another shard may own.
	inbox []*mailbox
	// outbox[k] is shard k's inbox[this shard].
	outbox []*mailbox
	// xoffPorts has bit p set while a priority of ingress port p (one of
	// the shard's ports) is in XOFF: its pause is refreshed, or turned into
	// a resume, at refreshAt.
	xoffPorts uint64
	// xonRetryPorts has bit p set while port p holds an XON to send again
	// (mmuPort.xonRetry).
	xonRetryPorts uint64
	// With PFC and several shards: k is the shard's index; acct[i] counts
	// ingress port i's lossless bytes queued on the shard's ports, and
	// xoff[i] the priorities of i this count holds in XOFF (published in
	// Engine.pfcWant); xoffIn has bit i set while xoff[i] is not 0. nil and
	// 0 with one shard, whose counts are the ports' own (egress.acct).
	k      int
	acct   []ingressAcct
	xoff   []uint8
	xoffIn uint64
	// acctAt[i] is the count of ingress port i the shard keeps (acctOf):
	// &acct[i] with several shards under PFC, the port's own otherwise; an
	// array indexed by a masked port, so that the per-frame look-up needs
	// no bounds check.
	acctAt [MaxPorts]*ingressAcct
	// released[i] is what drainData's loop took off the queue it drains
	// from ingress port i while port i held no priority in XOFF in this
	// shard's view, counted off once after the loop (releaseBatch).
	released [64]int64
}

// admitInReserve is admitAdd's common case, small enough to inline: it
// admits and counts a lossless frame of l bytes of priority prio from
// ingress port in (in the shard's count) when, after it, the priority is
// within its reserve, no headroom is in use and the dynamic threshold is
// above 0 (the free shared pool at least minFree), and the frame fits the
// empty headroom: then admitLossless admits it, add puts it in the reserve
// and shouldPause is false. When it reports false nothing was counted: the
// caller calls admitAdd.
func (sh *txShard) admitInReserve(in int, prio uint8, l int64) bool {
	a, b := sh.acctAt[in&(MaxPorts-1)], &sh.buf
	prio &= wire.PFCPriorities - 1
	if nb := a[prio].in + l; nb <= b.reserve && a[prio].hdrm == 0 && l <= a[prio].headroom && b.pool-b.used >= b.minFree {
		a[prio].in = nb
		return true
	}
	return false
}

// enqueueLossless is Enqueue for a frame its lean path does not take (a
// control or PFC frame, or data of a lossless priority). The commonest of
// those under PFC, a lossless data frame that admitInReserve admits into a
// shared buffer, takes a path as lean as Enqueue's for lossy data: no
// priority of its ingress port in XOFF in the shard's view (so no sinceXOFF
// count), its queue not full (a shared buffer drops a lossless frame only
// there or past its headroom), counted at admission with no call for XOFF;
// then its push and counts. Anything else goes through enqueue, which
// decides from the start: this path changes nothing before it knows the
// frame is admitted. Kept apart from Enqueue so that neither path's
// registers crowd the other's.
func (e *Engine) enqueueLossless(now int64, m *Meta, frame []byte, h Handle) bool {
	prio := m.Prio & 7
	g := &e.eg[m.Out]
	sh := &e.tx[g.sh]
	l := int64(len(frame))
	q := &g.q[prio]
	if m.Class > ClassData || !sh.buf.on || sh.xoffPorts&(1<<(m.In&63)) != 0 || q.full() || !sh.admitInReserve(int(m.In), prio, l) {
		return e.enqueue(now, m, frame, h)
	}
	if int(q.tail-q.head) == len(q.buf) {
		q.grow()
	}
	en := q.pushEntry(m, frame, h)
	sh.active |= 1 << m.Out
	g.queued(prio, l)
	e.traceEnq(now, g, m, frame)
	if m.Class == ClassData && g.enqWork {
		e.enqueueHooks(now, g, sh, en, m, frame, prio)
	}
	return true
}

// drainLossless is drainData's loop for a lossless priority on a port whose
// CP has no hooks: it moves frames from q into out while the shaper (its
// clock bu, a frame of l bytes taking (l + ovh) x nspb) is free at t and out
// has room, and stops before a frame from an ingress port in xoff (holding a
// priority in XOFF in the shard's view), whose release may send an XON:
// drainData's general loop takes it. The other frames' bytes go into
// sh.released by ingress port (one add per run of frames from the same
// port), for releaseBatch. It returns the shaper's clock, the frames and
// their bytes, and the ingress ports with bytes in sh.released. A function
// of its own, so that its loop keeps its state in registers.
func (sh *txShard) drainLossless(q *dataQueue, out []TxItem, bu, t, ovh, nspb float64, xoff uint64) (float64, int, int, uint64) {
	n, bytes := 0, 0
	var ports uint64
	// run bytes from ingress port cur (64: none yet) not yet in sh.released.
	cur, run := uint8(64), int64(0)
	head, tail := q.head, q.tail
	for n < len(out) && bu <= t && head != tail {
		en := &q.buf[head&q.mask]
		if in := en.in & 63; in != cur {
			if xoff&(1<<in) != 0 {
				break
			}
			sh.released[cur&63] += run
			cur, run = in, 0
			ports |= 1 << in
		}
		l := int(en.n)
		run += int64(l)
		it := &out[n]
		it.H, it.Frame = en.h, en.frame()
		en.h, en.p = 0, nil
		head++
		bu += (float64(l) + ovh) * nspb
		bytes += l
		n++
	}
	q.head = head
	sh.released[cur&63] += run
	return bu, n, bytes, ports
}

// setAcctAt fills sh.acctAt (after sh.acct is made, or left nil).
func (e *Engine) setAcctAt(sh *txShard) {
	sh.acctAt = [MaxPorts]*ingressAcct{}
	for i := 0; i < e.n; i++ {
		if sh.acct != nil {
			sh.acctAt[i] = &sh.acct[i]
		} else {
			sh.acctAt[i] = &e.eg[i].acct
		}
	}
}

// mailboxSlots is the room of a mailbox between two shards, in frames.
const mailboxSlots = 1024

// mailbox is a single-producer single-consumer ring of generated control
// frames, each with the egress port it leaves by, from one shard's lcore to
// another's.
type mailbox struct{ r *ring.SPSC[mailSlot] }

// mailSlot is a frame in a mailbox: n bytes of b, leaving by port.
type mailSlot struct {
	n    uint16
	port uint8
	b    [genSlotLen]byte
}

func newMailbox(n int) *mailbox { return &mailbox{ring.New[mailSlot](n)} }

// slot is the room of the next frame (producer), nil when the mailbox is full.
func (m *mailbox) slot() []byte {
	s := m.r.Slot()
	if s == nil {
		return nil
	}
	return s.b[:]
}

// commit publishes the frame of n bytes written into slot, for port p.
func (m *mailbox) commit(p uint8, n int) {
	s := m.r.Slot()
	s.n, s.port = uint16(n), p
	m.r.Commit()
}

// drain hands every frame committed so far to fn, oldest first (consumer).
func (m *mailbox) drain(fn func(p uint8, frame []byte)) {
	m.r.Drain(func(s *mailSlot) { fn(s.port, s.b[:s.n]) })
}

// MaxPFCShards bounds the tx shards of a switch with PFC: every shard's want
// of XOFF for a port's 8 priorities shares one 64-bit word (Engine.pfcWant).
const MaxPFCShards = 8

// ShardTx deals the egress ports over len(groups) tx+CC lcores: groups[k] are
// the ports shard k serves, and every port is in one group. Call it after New
// and before Start and the first frame. The lcore of shard k then calls
// Enqueue for frames leaving by its ports, Transmit for its ports and
// ServiceShard(k) (in place of Service); the shards share nothing on the
// per-packet path. Each shard gets a slice of a shared buffer in proportion
// to its ports, and its own sample ring (SampleRings). Feedback a CP sends
// toward a port of another shard crosses over a mailbox that the owner empties
// at its ServiceShard.
//
// PFC (at most MaxPFCShards shards): a lossless frame is counted against its
// ingress port by the shard of its egress port, and each shard decides XOFF
// and XON from its own count (the static xoff_bytes, or the dynamic threshold
// of its slice of a shared buffer, with the port's whole headroom), as the
// MMU of each pipeline of a multi-pipeline switch ASIC would. The shard owning
// the ingress port pauses it upstream while any shard wants it paused: at
// once for its own count, else at its next ServiceShard, up to one poll of
// that lcore later than with one shard. A port's frames spread over k shards
// may fill up to k times xoff_bytes before one shard's count crosses it.
func (e *Engine) ShardTx(groups [][]int) error {
	if len(groups) == 0 || len(groups) > MaxPorts {
		return fmt.Errorf("switchd: %d tx shards: want 1..%d", len(groups), MaxPorts)
	}
	if len(groups) > 1 && e.tracing() {
		return fmt.Errorf("switchd: %d tx shards with a trace: a trace needs one (SetTrace)", len(groups))
	}
	if len(groups) > MaxPFCShards && e.pfcOn {
		return fmt.Errorf("switchd: %d tx+CC lcores with PFC: at most %d", len(groups), MaxPFCShards)
	}
	seen := make([]bool, e.n)
	for k, grp := range groups {
		if len(grp) == 0 {
			return fmt.Errorf("switchd: tx shard %d has no port", k)
		}
		for _, p := range grp {
			if p < 0 || p >= e.n || seen[p] {
				return fmt.Errorf("switchd: tx shard %d: port %d out of range or in two shards", k, p)
			}
			seen[p] = true
		}
	}
	for p, ok := range seen {
		if !ok {
			return fmt.Errorf("switchd: port %d in no tx shard", p)
		}
	}
	old := e.tx[0]
	e.tx = make([]txShard, len(groups))
	for k, grp := range groups {
		sh := &e.tx[k]
		sh.cpMin = ccalgo.Never
		sh.nextSample, sh.nextPubTx = old.nextSample, old.nextPubTx
		sh.samples, sh.pfcEvents = old.samples, old.pfcEvents
		if k > 0 {
			sh.samples = NewSampleRing(old.samples.r.Cap())
			sh.pfcEvents = NewRing[PFCEvent](old.pfcEvents.r.Cap())
		}
		sh.buf = old.buf
		if sh.buf.on {
			sh.buf.pool = old.buf.pool * int64(len(grp)) / int64(e.n)
		}
		for _, p := range grp {
			sh.ports |= 1 << p
			e.eg[p].sh = uint8(k)
			if e.eg[p].cp != nil {
				sh.cpDirty |= 1 << p
			}
		}
		sh.active = old.active & sh.ports
		sh.inbox, sh.outbox = make([]*mailbox, len(groups)), make([]*mailbox, len(groups))
		sh.k = k
		if e.pfcOn && len(groups) > 1 {
			// Each shard counts the lossless bytes of every ingress port
			// queued on its ports, with the port's whole headroom.
			sh.acct, sh.xoff = make([]ingressAcct, e.n), make([]uint8, e.n)
			for i := range sh.acct {
				sh.acct[i].setHeadroom(e.eg[i].acct[0].headroom)
			}
		}
		e.setAcctAt(sh)
	}
	if e.pfcOn && len(groups) > 1 {
		e.pfcWant = make([]atomic.Uint64, e.n)
	}
	for k := range e.tx {
		for j := range e.tx {
			if j != k {
				m := newMailbox(mailboxSlots)
				e.tx[k].inbox[j], e.tx[j].outbox[k] = m, m
			}
		}
	}
	return nil
}

// TxShards is the number of tx+CC shards (1 unless ShardTx split the ports).
func (e *Engine) TxShards() int { return len(e.tx) }

// SampleRings are the rings the shards write queue / fair-rate samples into,
// one per shard (Samples is the first).
func (e *Engine) SampleRings() []*SampleRing {
	r := make([]*SampleRing, len(e.tx))
	for k := range e.tx {
		r[k] = e.tx[k].samples
	}
	return r
}

// PFCEventRings are the rings the shards write PFC events into, one per
// shard (PFCEvents is the first).
func (e *Engine) PFCEventRings() []*Ring[PFCEvent] {
	r := make([]*Ring[PFCEvent], len(e.tx))
	for k := range e.tx {
		r[k] = e.tx[k].pfcEvents
	}
	return r
}

// deliver empties shard sh's inbox into its ports' generated-control queues.
func (e *Engine) deliver(sh *txShard) {
	for _, m := range sh.inbox {
		if m == nil || m.r.Empty() {
			continue
		}
		m.drain(func(p uint8, frame []byte) {
			g := &e.eg[p]
			b := g.gen.slot()
			if b == nil {
				g.c[cDropControl]++
				return
			}
			g.gen.commit(copy(b, frame))
			sh.active |= 1 << p
		})
	}
}
