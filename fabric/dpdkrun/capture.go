package dpdkrun

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/port"
)

// tapSlots is the number of frames a capture ring holds (a power of two):
// about 18 ms of a 1 Gb/s port's 1 KB frames in both directions, 1.8 ms at
// 10 Gb/s; the writer drains the rings every tapDrainEvery. When the rings
// of every captured port would take more than tapBudget bytes, they get
// fewer slots, down to minTapSlots.
const (
	tapSlots      = 1 << 12
	minTapSlots   = 1 << 9
	tapBudget     = 128 << 20
	tapDrainEvery = time.Millisecond
)

// tapRingSlots is the slots of each of ports rings of room bytes a slot.
func tapRingSlots(ports, room int) int {
	n := tapSlots
	for n > minTapSlots && n*room*ports > tapBudget {
		n /= 2
	}
	return n
}

// tapRing carries one captured port's frames from the lcore that polls the
// port to the writer goroutine: a single-producer, single-consumer ring of
// fixed-size slots in Go memory. The lcore copies the first bytes of each
// frame into the next free slot, with the burst's time and the frame's
// length, and publishes the slots by moving head; the writer appends them to
// the port's pcap file and moves tail. When the ring is full the lcore counts
// the frame in dropped and goes on: a capture never stalls the dataplane.
type tapRing struct {
	room int // bytes kept of a frame
	// polled is the time of the lcore's last poll of the port, stored after
	// what that poll captured is published: a frame published later is
	// stamped no earlier (drain's watermark). Written by the lcore only.
	polled  atomic.Int64
	mask    uint64        // slots - 1
	data    []byte        // the slots, room bytes each
	meta    []tapMeta     // per slot
	head    atomic.Uint64 // slots published; written by the lcore only
	tail    atomic.Uint64 // slots consumed; written by the writer only
	dropped atomic.Uint64 // frames that found no free slot; written by the lcore only
}

// tapMeta is a slot's frame: its time (the capture clock's ns), its length
// on the wire, the bytes kept and its direction at the port.
type tapMeta struct {
	ns             int64
	wireLen, bytes int32
	dir            pcapw.Direction
}

// newTapRing makes a ring of slots slots (a power of two) of room bytes.
func newTapRing(slots, room int) *tapRing {
	return &tapRing{room: room, mask: uint64(slots - 1), data: make([]byte, slots*room), meta: make([]tapMeta, slots)}
}

// stage copies the frames of pkts into the free slots after head, as many as
// fit, without publishing them, and returns how many it copied.
func (r *tapRing) stage(ns int64, pkts []*dpdk.Mbuf, dir pcapw.Direction) int {
	head := r.head.Load()
	k := min(len(pkts), int(r.mask+1-(head-r.tail.Load())))
	for i, m := range pkts[:k] {
		s := int((head + uint64(i)) & r.mask)
		d := m.Data()
		n := copy(r.data[s*r.room:(s+1)*r.room], d)
		r.meta[s] = tapMeta{ns: ns, wireLen: int32(len(d)), bytes: int32(n), dir: dir}
	}
	return k
}

// publish hands the writer the first sent of k staged frames: sent frames of
// the burst went through, and those of them beyond k found no slot.
func (r *tapRing) publish(k, sent int) {
	if sent > k {
		r.dropped.Add(uint64(sent - k))
	}
	if n := min(k, sent); n > 0 {
		r.head.Store(r.head.Load() + uint64(n))
	}
}

// drain appends the published frames to p, their times made relative to t0
// (frames before it, during the set-up, at 0), and frees their slots.
func (r *tapRing) drain(p *pcapw.Port, t0 int64) {
	tail, head := r.tail.Load(), r.head.Load()
	for ; tail != head; tail++ {
		r.write(p, tail, t0)
	}
	r.tail.Store(tail)
}

// write appends the frame of slot number i to p.
func (r *tapRing) write(p *pcapw.Port, i uint64, t0 int64) {
	s := int(i & r.mask)
	m := &r.meta[s]
	p.Append(max(m.ns-t0, 0), r.data[s*r.room:s*r.room+int(m.bytes)], int(m.wireLen), m.dir) // an error sticks: Close reports it
}

// drainMerged appends the published frames of rings, which share a file
// (ports[i] is rings[i]'s), in time order: up to the watermark, the
// earliest time any ring's lcore may still stamp a frame (every ring's last
// poll, read before the rings' heads), or every frame when final (the lcores
// have stopped). Frames past the watermark wait for the next drain, so the
// file's times never decrease.
func drainMerged(rings []*tapRing, ports []*pcapw.Port, heads []uint64, t0 int64, final bool) {
	mark := int64(math.MaxInt64)
	if !final {
		for _, r := range rings {
			mark = min(mark, r.polled.Load())
		}
	}
	for i, r := range rings {
		heads[i] = r.head.Load()
	}
	for {
		next, at := -1, int64(math.MaxInt64)
		for i, r := range rings {
			if t := r.tail.Load(); t != heads[i] {
				if ns := r.meta[t&r.mask].ns; ns <= mark && ns < at {
					next, at = i, ns
				}
			}
		}
		if next < 0 {
			return
		}
		r := rings[next]
		t := r.tail.Load()
		r.write(ports[next], t, t0)
		r.tail.Store(t + 1)
	}
}

// tapPort is a captured port: a port.Port that copies what crosses it into
// its ring, stamped with clock's time at the burst (as the engines' time is).
// Received frames are copied after RxBurst; frames to transmit before
// TxBurst, since afterwards they belong to the cable, and only those TxBurst
// took are published. Ports not captured are not wrapped: capture off costs
// the dataplane nothing.
type tapPort struct {
	port.Port
	ring  *tapRing
	clock *lcore.TSCClock
}

var _ port.Port = (*tapPort)(nil)

// RxBurst receives from the port and captures what it received.
func (p *tapPort) RxBurst(pkts []*dpdk.Mbuf) int {
	n := p.Port.RxBurst(pkts)
	now := p.clock.Now()
	if n > 0 {
		p.ring.publish(p.ring.stage(now, pkts[:n], pcapw.DirInbound), n)
	}
	p.ring.polled.Store(now)
	return n
}

// TxBurst captures the frames, transmits them and keeps those sent.
func (p *tapPort) TxBurst(pkts []*dpdk.Mbuf) int {
	if len(pkts) == 0 {
		return p.Port.TxBurst(pkts)
	}
	now := p.clock.Now()
	k := p.ring.stage(now, pkts, pcapw.DirOutbound)
	sent := p.Port.TxBurst(pkts)
	p.ring.publish(k, sent)
	p.ring.polled.Store(now)
	return sent
}

// capture is a run's capture: the files, and each captured port's tap.
type capture struct {
	set  *fabric.CaptureSet
	taps []*tapPort // taps[i] writes set.Ports[i]
	at   map[fabric.CapturePort]*tapPort
	// groups are the rings and ports of each file with several ports
	// (set.Groups), merged in time order; single holds the taps of files
	// of one port each.
	groups []tapGroup
	single []int
}

// tapGroup is the rings of the ports that share a file.
type tapGroup struct {
	rings []*tapRing
	ports []*pcapw.Port
	heads []uint64
}

// openCapture opens c's files and makes a tap for each port, keeping at most
// room bytes of a frame (the mempool's data room: no frame is longer).
func openCapture(t *fabric.Topology, c *fabric.Capture, room int, clock *lcore.TSCClock) (*capture, error) {
	set, err := fabric.OpenCapture(t, c)
	if err != nil {
		return nil, err
	}
	if c.Snaplen > 0 {
		room = min(room, c.Snaplen)
	}
	cp := &capture{set: set, at: map[fabric.CapturePort]*tapPort{}}
	slots := tapRingSlots(len(c.Ports), room)
	for _, p := range c.Ports {
		tp := &tapPort{ring: newTapRing(slots, room), clock: clock}
		cp.taps = append(cp.taps, tp)
		cp.at[p] = tp
	}
	for _, g := range set.Groups {
		if len(g) == 1 {
			cp.single = append(cp.single, g[0])
			continue
		}
		tg := tapGroup{heads: make([]uint64, len(g))}
		for _, i := range g {
			tg.rings = append(tg.rings, cp.taps[i].ring)
			tg.ports = append(tg.ports, set.Ports[i])
		}
		cp.groups = append(cp.groups, tg)
	}
	return cp, nil
}

// ports returns node n's ports, a tap in place of each captured one.
func (c *capture) ports(n int, ps []port.Port) []port.Port {
	if c == nil {
		return ps
	}
	out := append([]port.Port(nil), ps...)
	for p := range out {
		if tp := c.at[fabric.CapturePort{Node: n, Port: p}]; tp != nil {
			tp.Port = out[p]
			out[p] = tp
		}
	}
	return out
}

// drain moves what the taps captured into the files; final: the lcores
// have stopped, everything goes.
func (c *capture) drain(t0 int64, final bool) {
	for _, i := range c.single {
		c.taps[i].ring.drain(c.set.Ports[i], t0)
	}
	for _, g := range c.groups {
		drainMerged(g.rings, g.ports, g.heads, t0, final)
	}
}

// close drains the taps (after the loops stopped) and closes the files.
func (c *capture) close(t0 int64) ([]fabric.CaptureFile, error) {
	c.drain(t0, true)
	for i, tp := range c.taps {
		c.set.Files[i].Dropped = tp.ring.dropped.Load()
	}
	return c.set.Close()
}
