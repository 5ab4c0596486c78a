// Package dataplane connects the switchd engine to DPDK: mbufs, ports (port.Port)
// and lcores. It is a thin adapter (docs/fabric.md, "The node interface"); the
// switching logic lives in package switchd.
//
// Two lcore modes (the RoCC testbed's switch, Menikkumbura et al., "Congestion
// Control for Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS
// 2023, Section VI-B, had the three-lcore pipeline):
//
//   - run-to-completion: PollRTC does rx of every port, Classify and Enqueue,
//     then Service and Transmit of every port, on one lcore;
//   - pipeline: PollRx (rx lcore) moves received bursts into one rte_ring per
//     ingress port; PollSwitch (switching lcore) classifies them, writes the
//     switchd.Meta into the mbuf's tailroom and moves them into one rte_ring per
//     egress port; PollTx (tx+CC lcore) enqueues them into the engine's egress
//     queues, runs the CPs, shapes and transmits.
//
// Every Poll has the signature func(now int64) int (now from an lcore.TSCClock),
// so that a testbed can poll several engines from one lcore loop; each returns
// the packets it handled. Burst arrays live in C memory (dpdk.NewBurst), one set
// per lcore role; nothing in a Poll allocates, locks or logs. When every port
// is a port.EthQueue, the rx of all ports is one cgo call and their tx another
// (dpdk.MultiPort); other ports get one call each.
//
// Ownership: the Switch owns every mbuf it received until it transmits or frees
// it. Close (after the loops stopped) frees everything it still holds, so that
// the pool's in-use count returns to its start value.
package dataplane

import (
	"fmt"
	"sync/atomic"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
)

// Stats are the adapter's own counters (the engine's are in Snapshot).
type Stats struct {
	RingDrops uint64 `json:"ring_drops"` // pipeline: an inter-lcore ring was full
	NoRoom    uint64 `json:"no_room"`    // pipeline: no tailroom for the metadata
}

// lcoreBufs are the burst arrays one lcore role uses.
type lcoreBufs struct {
	in    *dpdk.Burst // received / dequeued
	free  *dpdk.Burst // mbufs to free, flushed once per poll
	nfree int
}

func newLcoreBufs(n int) lcoreBufs {
	return lcoreBufs{in: dpdk.NewBurst(n), free: dpdk.NewBurst(n)}
}

func (b *lcoreBufs) freeLater(m *dpdk.Mbuf) {
	if b.nfree == len(b.free.Pkts) {
		b.flush()
	}
	b.free.Pkts[b.nfree] = m
	b.nfree++
}

func (b *lcoreBufs) flush() {
	if b.nfree > 0 {
		dpdk.FreeBulk(b.free.Pkts[:b.nfree])
		b.nfree = 0
	}
}

func (b *lcoreBufs) release() {
	b.flush()
	b.in.Free()
	b.free.Free()
}

// Switch runs a switchd.Engine over ports.
type Switch struct {
	eng      *switchd.Engine
	ports    []port.Port
	pool     *dpdk.Mempool
	burst    int
	pipeline bool

	// tx+CC role (also rtc)
	txb    lcoreBufs
	out    *dpdk.Burst
	spare  *dpdk.Burst
	nspare int
	items  []switchd.TxItem
	meta   switchd.Meta

	// pipeline roles
	rxb    lcoreBufs
	swb    lcoreBufs
	swMeta switchd.Meta
	stage  []*dpdk.Burst // per egress port, switching lcore
	nstage []int
	inRing []*dpdk.Ring // rx -> switching, per ingress port
	egRing []*dpdk.Ring // switching -> tx, per egress port
	rxRR   int
	// mrx / mtx batch the rx (rtc or pipeline rx lcore) and the tx (tx+CC
	// lcore) of every port into one cgo call each; nil unless every port is
	// a port.EthQueue.
	mrx, mtx *dpdk.MultiPort
	stats    struct{ ringDrops, noRoom atomic.Uint64 }
	closed   bool
	rtcBufs  lcoreBufs
}

// Config is how a Switch is wired: Pipeline selects the 3-lcore mode; Burst and
// RingSize default to 32 and 1024; Name prefixes the rte_ring names (unique per
// process).
type Config struct {
	Pipeline bool
	Burst    int
	RingSize uint32
	Name     string
}

// New builds a Switch for eng over already-started ports (ports[i] is engine
// port i) with pool for the frames the switch generates.
func New(eng *switchd.Engine, ports []port.Port, pool *dpdk.Mempool, c Config) (*Switch, error) {
	if len(ports) != eng.NumPorts() {
		return nil, fmt.Errorf("dataplane: %d ports for an engine of %d", len(ports), eng.NumPorts())
	}
	if pool == nil {
		return nil, fmt.Errorf("dataplane: no mempool")
	}
	if c.Burst <= 0 {
		c.Burst = 32
	}
	if c.RingSize == 0 {
		c.RingSize = 1024
	}
	if c.Name == "" {
		c.Name = "sw"
	}
	s := &Switch{
		eng: eng, ports: ports, pool: pool, burst: c.Burst, pipeline: c.Pipeline,
		txb: newLcoreBufs(c.Burst), out: dpdk.NewBurst(c.Burst), spare: dpdk.NewBurst(c.Burst),
		items: make([]switchd.TxItem, c.Burst),
	}
	if !c.Pipeline {
		s.rtcBufs = newLcoreBufs(c.Burst)
		return s.batched()
	}
	s.rxb, s.swb = newLcoreBufs(c.Burst), newLcoreBufs(c.Burst)
	n := len(ports)
	s.stage, s.nstage = make([]*dpdk.Burst, n), make([]int, n)
	for i := 0; i < n; i++ {
		s.stage[i] = dpdk.NewBurst(c.Burst)
		r, err := dpdk.NewRing(fmt.Sprintf("%s_in%d", c.Name, i), c.RingSize, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.inRing = append(s.inRing, r)
		r, err = dpdk.NewRing(fmt.Sprintf("%s_eg%d", c.Name, i), c.RingSize, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.egRing = append(s.egRing, r)
	}
	return s.batched()
}

// batched finishes New: it sets up the batched rx / tx when the ports allow.
func (s *Switch) batched() (*Switch, error) {
	if err := s.batchPorts(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Engine is the engine the switch runs.
func (s *Switch) Engine() *switchd.Engine { return s.eng }

func handle(m *dpdk.Mbuf) switchd.Handle { return switchd.Handle(dpdk.MbufAddr(m)) }

func mbuf(h switchd.Handle) *dpdk.Mbuf { return dpdk.MbufAt(uintptr(h)) }

// PollRTC is one run-to-completion iteration: rx, switch and enqueue on every
// port, then CP timers, shaping and tx on every port.
func (s *Switch) PollRTC(now int64) int {
	b := &s.rtcBufs
	work := 0
	if s.mrx != nil {
		s.mrx.RxBurst()
	}
	for i, p := range s.ports {
		var pkts []*dpdk.Mbuf
		if s.mrx != nil {
			pkts = s.mrx.Segment(i)[:s.mrx.Count[i]]
		} else {
			pkts = b.in.Pkts[:p.RxBurst(b.in.Pkts)]
		}
		n := len(pkts)
		for _, m := range pkts {
			f := m.Data()
			if s.eng.Classify(i, f, &s.meta) && s.eng.Enqueue(now, &s.meta, f, handle(m)) {
				continue
			}
			b.freeLater(m)
		}
		work += n
	}
	b.flush()
	s.eng.ServiceIngress(now)
	return work + s.transmit(now)
}

// transmit runs Service and every port's shaper and sends what is due (tx+CC).
func (s *Switch) transmit(now int64) int {
	s.eng.Service(now)
	work := 0
	if s.mtx != nil {
		due := 0
		for p := range s.ports {
			cnt := s.collect(now, p, s.mtx.Segment(p))
			s.mtx.Count[p] = uint16(cnt)
			due += cnt
		}
		if due > 0 {
			work = s.mtx.TxBurst(true) // one cgo call for every port
			for p := range s.ports {
				if d := int(s.mtx.Count[p]) - int(s.mtx.Sent[p]); d > 0 {
					s.eng.CountTxDrop(p, d)
				}
			}
		}
		s.txb.flush()
		return work
	}
	for p, pt := range s.ports {
		cnt := s.collect(now, p, s.out.Pkts)
		if cnt == 0 {
			continue
		}
		sent := pt.TxBurst(s.out.Pkts[:cnt])
		if sent < cnt {
			dpdk.FreeBulk(s.out.Pkts[sent:cnt])
			s.eng.CountTxDrop(p, cnt-sent)
		}
		work += sent
	}
	s.txb.flush()
	return work
}

// collect runs port p's shaper and puts the mbufs due on the wire into out
// (len(out) >= burst): forwarded frames as they are, generated ones copied
// into spare mbufs. It returns how many.
func (s *Switch) collect(now int64, p int, out []*dpdk.Mbuf) int {
	k := s.eng.Transmit(now, p, s.items)
	cnt := 0
	for _, it := range s.items[:k] {
		if it.H != 0 {
			out[cnt] = mbuf(it.H)
			cnt++
			continue
		}
		m := s.takeSpare()
		if m == nil {
			s.eng.CountTxDrop(p, 1)
			continue
		}
		room := m.Room()
		if len(room) < len(it.Frame) {
			s.txb.freeLater(m)
			s.eng.CountTxDrop(p, 1)
			continue
		}
		copy(room, it.Frame)
		m.SetLen(len(it.Frame))
		out[cnt] = m
		cnt++
	}
	clear(s.items[:k])
	return cnt
}

// batchPorts sets up mrx and mtx when every port is an ethdev queue.
func (s *Switch) batchPorts() error {
	pqs := make([]dpdk.PortQueue, len(s.ports))
	for i, p := range s.ports {
		q, ok := p.(port.EthQueue)
		if !ok {
			return nil // rings or other ports: one call per port
		}
		pqs[i] = dpdk.PortQueue{Port: q.Port, Queue: q.Queue}
	}
	var err error
	if s.mtx, err = dpdk.NewMultiPort(pqs, s.burst); err != nil {
		return err
	}
	s.mrx, err = dpdk.NewMultiPort(pqs, s.burst)
	return err
}

// takeSpare returns a fresh mbuf for a generated frame, refilling the spare
// burst with one bulk allocation when it is empty; nil when the pool is empty.
func (s *Switch) takeSpare() *dpdk.Mbuf {
	if s.nspare == 0 {
		if s.pool.AllocBulk(s.spare.Pkts) != nil {
			return nil
		}
		s.nspare = len(s.spare.Pkts)
	}
	s.nspare--
	return s.spare.Pkts[s.nspare]
}

// PollRx is the pipeline's rx lcore: one burst from each port into its ring.
func (s *Switch) PollRx(now int64) int {
	work := 0
	if s.mrx != nil {
		s.mrx.RxBurst()
	}
	for i, p := range s.ports {
		var pkts []*dpdk.Mbuf
		if s.mrx != nil {
			pkts = s.mrx.Segment(i)[:s.mrx.Count[i]]
		} else {
			pkts = s.rxb.in.Pkts[:p.RxBurst(s.rxb.in.Pkts)]
		}
		n := len(pkts)
		if n == 0 {
			continue
		}
		k := s.inRing[i].EnqueueBurst(pkts)
		if k < n {
			dpdk.FreeBulk(pkts[k:n])
			s.stats.ringDrops.Add(uint64(n - k))
		}
		work += n
	}
	return work
}

// PollSwitch is the pipeline's switching lcore: classify and route each frame,
// carry its Meta in the mbuf's tailroom, and pass it to its egress ring.
func (s *Switch) PollSwitch(now int64) int {
	b := &s.swb
	work := 0
	for i, r := range s.inRing {
		n := r.DequeueBurst(b.in.Pkts)
		for _, m := range b.in.Pkts[:n] {
			f := m.Data()
			if !s.eng.Classify(i, f, &s.swMeta) {
				b.freeLater(m)
				continue
			}
			room := m.Room()
			if len(room) < len(f)+switchd.MetaLen {
				s.stats.noRoom.Add(1)
				b.freeLater(m)
				continue
			}
			s.swMeta.Put(room[len(f):])
			o := int(s.swMeta.Out)
			if s.nstage[o] == len(s.stage[o].Pkts) {
				s.flushStage(o)
			}
			s.stage[o].Pkts[s.nstage[o]] = m
			s.nstage[o]++
		}
		work += n
	}
	for o := range s.stage {
		s.flushStage(o)
	}
	b.flush()
	s.eng.ServiceIngress(now)
	return work
}

func (s *Switch) flushStage(o int) {
	n := s.nstage[o]
	if n == 0 {
		return
	}
	k := s.egRing[o].EnqueueBurst(s.stage[o].Pkts[:n])
	if k < n {
		dpdk.FreeBulk(s.stage[o].Pkts[k:n])
		s.stats.ringDrops.Add(uint64(n - k))
	}
	s.nstage[o] = 0
}

// PollTx is the pipeline's tx+CC lcore: enqueue what the switching lcore
// routed, then CP timers, shaping and tx.
func (s *Switch) PollTx(now int64) int {
	b := &s.txb
	work := 0
	for _, r := range s.egRing {
		n := r.DequeueBurst(b.in.Pkts)
		for _, m := range b.in.Pkts[:n] {
			f := m.Data()
			s.meta.Get(m.Room()[len(f):])
			if !s.eng.Enqueue(now, &s.meta, f, handle(m)) {
				b.freeLater(m)
			}
		}
		work += n
	}
	b.flush()
	return work + s.transmit(now)
}

// Launch starts the switch's loops in g, reading time from clock: rtc on
// lcores[0]; pipeline on lcores[0] (rx), [1] (switching), [2] (tx+CC).
func (s *Switch) Launch(g *lcore.Group, clock *lcore.TSCClock, lcores []uint) error {
	if !s.pipeline {
		if len(lcores) < 1 {
			return fmt.Errorf("dataplane: rtc mode needs 1 lcore")
		}
		return g.Launch(lcores[0], "switch-rtc", func() int { return s.PollRTC(clock.Now()) })
	}
	if len(lcores) < 3 {
		return fmt.Errorf("dataplane: pipeline mode needs 3 lcores, got %d", len(lcores))
	}
	if err := g.Launch(lcores[0], "switch-rx", func() int { return s.PollRx(clock.Now()) }); err != nil {
		return err
	}
	if err := g.Launch(lcores[1], "switch-sw", func() int { return s.PollSwitch(clock.Now()) }); err != nil {
		return err
	}
	return g.Launch(lcores[2], "switch-tx", func() int { return s.PollTx(clock.Now()) })
}

// Stats returns the adapter's counters.
func (s *Switch) Stats() Stats {
	return Stats{RingDrops: s.stats.ringDrops.Load(), NoRoom: s.stats.noRoom.Load()}
}

// Close frees every mbuf the switch holds (engine queues, delay lines, rings,
// spare mbufs, and what waits in the ports' rx queues), then its rings and
// bursts. Call it after the loops have stopped; the ports stay the caller's.
func (s *Switch) Close() {
	if s.closed {
		return
	}
	s.closed = true
	b := &s.txb
	s.eng.Drain(func(h switchd.Handle) { b.freeLater(mbuf(h)) })
	b.flush()
	for o := range s.stage {
		if s.stage[o] == nil {
			continue
		}
		if s.nstage[o] > 0 {
			dpdk.FreeBulk(s.stage[o].Pkts[:s.nstage[o]])
			s.nstage[o] = 0
		}
		s.stage[o].Free()
	}
	for _, r := range append(append([]*dpdk.Ring(nil), s.inRing...), s.egRing...) {
		for n := r.DequeueBurst(b.in.Pkts); n > 0; n = r.DequeueBurst(b.in.Pkts) {
			dpdk.FreeBulk(b.in.Pkts[:n])
		}
		r.Free()
	}
	for _, p := range s.ports {
		port.Drain(p, b.in.Pkts)
	}
	if s.nspare > 0 {
		dpdk.FreeBulk(s.spare.Pkts[:s.nspare])
		s.nspare = 0
	}
	s.spare.Free()
	s.out.Free()
	if s.mrx != nil {
		s.mrx.Free()
	}
	if s.mtx != nil {
		s.mtx.Free()
	}
	b.release()
	if s.pipeline {
		s.rxb.release()
		s.swb.release()
	} else {
		s.rtcBufs.release()
	}
}
