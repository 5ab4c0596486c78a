package fabric

import (
	"math"

	"github.com/ccbed/ccbed/node"
	"github.com/ccbed/ccbed/pcapw"
)

// lp is a logical process of the virtual-time driver: an agenda, a frame
// store, and a clock over some of the fabric's nodes and the wires into
// them. The serial driver (Virtual.Run) is one lp over every node; the
// parallel driver (parallel.go) one per partition. An lp runs only its own
// nodes' wake-ups and its own wires' arrivals; it writes only the sending
// half of the wires out of its nodes (free, counters, faults, capTx) and
// the receiving half of the wires into them (the frames in flight, capRx).
type lp struct {
	// nodes, wires, faults and portBase are the whole fabric's, shared by
	// every lp of a run.
	nodes    []node.Node
	wires    []wireDir
	faults   []wireFaults // per wire, nil when the spec injects no failures
	portBase []int        // wires of node n: portBase[n] + port
	frames   *frameStore
	// agenda: this lp's nodes' next wake-ups and the next arrivals of the
	// wires into them, and nothing else, so that an lp's agenda is sized by
	// its own part of the fabric. The fabric numbers its entries (node n is
	// entry n, wire w entry len(nodes) + w); glob is the fabric's number of
	// each of the agenda's entries, in the fabric's order (so that entries
	// of one time run in the same order in every lp as in the serial
	// driver), nil when they are the fabric's (the serial driver). The
	// wires hold their entries' numbers in their receiver's lp (ent, toEnt).
	agenda *agenda
	glob   []int32
	out    []node.Tx
	now    int64
	events int64
	// parity is the side of a cut wire's mailbox this lp posts into;
	// posted is the earliest arrival posted since the driver last reset it.
	parity int
	posted int64
}

// mailbox is the frames a cut wire's sender posted in one window, for the
// receiver's lp to take at the start of the next: their arrival times and
// lengths, and their bytes one after the other.
type mailbox struct {
	frames []mailFrame
	buf    []byte
}

// mailFrame is a frame in a mailbox.
type mailFrame struct {
	at  int64
	len int32
}

// schedule asks node n (agenda entry e) when it next needs to run and moves
// its wake-up there.
func (p *lp) schedule(n, e int) {
	w := p.nodes[n].NextWake(p.now)
	if w > MaxTimeNs {
		p.agenda.remove(e)
		return
	}
	p.agenda.set(e, w)
}

// step runs the fabric's entry id (the agenda's entry e) at p.now: node id's
// wake-up, or the arrival of the first frame in flight on wire id -
// len(nodes), which its node receives and answers at once.
func (p *lp) step(id, e int) {
	p.agenda.at(p.now)
	nn := len(p.nodes)
	if id < nn {
		p.transmit(id)
		p.schedule(id, e)
		return
	}
	wi := id - nn
	w := &p.wires[wi]
	f := w.front()
	h, l := node.Handle(f.h), int(f.len)
	w.pop()
	if w.q.Len() > 0 {
		p.agenda.set(e, w.front().at)
	} else {
		p.agenda.remove(e)
	}
	to := int(w.to)
	if w.capt != nil && w.capt.rx != nil {
		w.capt.rx.Append(p.now, p.frames.bytes(h)[:l], int(l), pcapw.DirInbound) // an error sticks: CloseCapture reports it
	}
	p.nodes[to].Receive(p.now, int(w.toPort), h, p.frames.bytes(h)[:l])
	p.transmit(to)
	p.schedule(to, int(w.toEnt))
}

// transmit runs node n's Transmit at now until it has nothing more, and puts
// each frame on its wire: in flight to the receiver, or, on a wire cut
// between two lps, into the wire's mailbox (a copy; the buffer goes back to
// this lp's store).
func (p *lp) transmit(n int) {
	for {
		k := p.nodes[n].Transmit(p.now, p.out)
		for i := range p.out[:k] {
			tx := &p.out[i]
			wi := p.portBase[n] + tx.Port
			w := &p.wires[wi]
			w.free = math.Max(float64(p.now), w.free) + float64(tx.Len+frameOverhead)*w.nsPerByte
			w.frames++
			w.bytes += uint64(tx.Len)
			at := int64(math.Ceil(w.free + w.delayNs))
			if w.capt != nil || p.faults != nil || w.mail != nil {
				if p.special(wi, tx, at) {
					continue
				}
			}
			w.q.Reserve() // wireLimit is never reached
			w.q.Push(inflight{h: uint32(tx.H), len: int32(tx.Len), at: at})
			if w.q.Len() == 1 {
				p.agenda.set(int(w.ent), at) // not cut: this lp receives from w
			}
		}
		if k < len(p.out) {
			return
		}
	}
}

// special is transmit's handling of a frame entering wire wi (at: its
// arrival) when the wire is captured, may lose frames, or is cut between two
// lps; true when the frame does not go into flight on w (lost, or posted to
// the wire's mailbox).
func (p *lp) special(wi int, tx *node.Tx, at int64) bool {
	w := &p.wires[wi]
	if w.capt != nil && w.capt.tx != nil {
		w.capt.tx.Append(p.now, p.frames.bytes(tx.H)[:tx.Len], int(tx.Len), pcapw.DirOutbound)
	}
	if p.faults != nil && p.lose(wi, p.now, at) {
		p.frames.Free(tx.H) // it took its time on the wire; nobody receives it
		return true
	}
	if w.mail != nil {
		m := &w.mail[p.parity]
		m.buf = append(m.buf, p.frames.bytes(tx.H)[:tx.Len]...)
		m.frames = append(m.frames, mailFrame{at: at, len: int32(tx.Len)})
		p.frames.Free(tx.H)
		p.posted = min(p.posted, at)
		return true
	}
	return false
}

// take moves the frames posted on side parity of the mailboxes of wires in
// (wires cut into this lp) into flight, each into a buffer of this lp's
// store, in the order their sender posted them.
func (p *lp) take(in []int32, parity int) {
	for _, wi := range in {
		w := &p.wires[wi]
		m := &w.mail[parity]
		off := 0
		for _, f := range m.frames {
			h, b := p.frames.Alloc()
			off += copy(b, m.buf[off:off+int(f.len)])
			w.push(inflight{h: uint32(h), len: f.len, at: f.at})
			if w.q.Len() == 1 {
				p.agenda.set(int(w.ent), f.at)
			}
		}
		m.frames, m.buf = m.frames[:0], m.buf[:0]
	}
}
