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
//   - sharded: the ports are dealt over R rx lcores (port i to rx lcore
//     i mod R) and T tx+CC lcores (egress port i to tx lcore i mod T). An rx
//     lcore receives and classifies its ports' frames (PollShard), carries
//     the Meta in the tailroom and passes each frame over an rte_ring to the
//     tx+CC lcore of its egress port (one ring per rx lcore and tx lcore);
//     tx+CC lcore k (PollTxShard) enqueues, runs its ports' CPs, shapes and
//     transmits. Each port's ingress counters stay with one rx lcore
//     (switchd.IngressShard), its egress state with one tx lcore
//     (switchd.Engine.ShardTx), so throughput grows with R and T.
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
	pipeline bool // pipeline or sharded: frames cross rte_rings

	// tx is the tx+CC side, one role per tx+CC lcore (rtc and pipeline: one,
	// serving every port).
	tx []*txRole

	// rtc
	rtcBufs lcoreBufs
	meta    switchd.Meta
	// pipeline roles
	rxb    lcoreBufs
	swb    lcoreBufs
	swMeta switchd.Meta
	stage  []*dpdk.Burst // per egress port, switching lcore
	nstage []int
	inRing []*dpdk.Ring // rx -> switching, per ingress port
	egRing []*dpdk.Ring // switching -> tx, per egress port (pipeline); every ring to a tx lcore (sharded)
	// mrx batches the rx of every port (rtc, or the pipeline's rx lcore)
	// into one cgo call; nil unless every port is a port.EthQueue.
	mrx *dpdk.MultiPort
	// sharded: one per rx lcore, and the tx role of each egress port.
	shards []*rxShard
	txOf   []uint8
	stats  struct{ ringDrops, noRoom atomic.Uint64 }
	closed bool
}

// txRole is one tx+CC lcore's side: the egress ports it serves (engine tx
// shard k), the rings it dequeues, and its bursts.
type txRole struct {
	k      int
	ports  []int
	in     []*dpdk.Ring
	b      lcoreBufs
	out    *dpdk.Burst
	spare  *dpdk.Burst
	nspare int
	items  []switchd.TxItem
	meta   switchd.Meta
	// pend holds, per port of the role (by its index in ports), the
	// generated frames (PFC, CNPs, CP feedback) in mbufs that its tx refused,
	// oldest first, at most pendCap: they go first at the port's next poll,
	// so that a momentarily full tx ring loses none (keepRefused).
	pend [][]*dpdk.Mbuf
	// gen lists, per port of the role, where in its tx burst collect put
	// the generated frames of this poll (ascending); ngen counts the ports
	// with a list to clear after the tx.
	gen  [][]uint16
	ngen int
	// mtx batches the tx of the role's ports into one cgo call; nil unless
	// every port is a port.EthQueue.
	mtx *dpdk.MultiPort
	// maxBursts bounds the bursts a poll takes from each ring: one per port
	// the ring's producer serves.
	maxBursts int
}

// rxShard is one rx lcore of the sharded mode: it receives and classifies the
// frames of its ports and passes them to the tx+CC lcores over rings[k], one
// per tx lcore.
type rxShard struct {
	ports  []int
	mrx    *dpdk.MultiPort // nil unless every port is a port.EthQueue
	b      lcoreBufs
	meta   switchd.Meta
	stage  []*dpdk.Burst
	nstage []int
	rings  []*dpdk.Ring
	ing    *switchd.IngressShard
}

// Config is how a Switch is wired: Pipeline selects the 3-lcore mode, RxLcores
// above 0 the sharded mode with that many rx lcores and TxLcores tx+CC lcores
// (default 1; at most one per port each); Burst and RingSize default to 32
// and 1024; Name prefixes the rte_ring names (unique per process).
type Config struct {
	Pipeline bool
	RxLcores int
	TxLcores int
	Burst    int
	RingSize uint32
	Name     string
}

// New builds a Switch for eng over already-started ports (ports[i] is engine
// port i) with pool for the frames the switch generates. In the sharded mode
// with several tx lcores it splits eng's egress ports (switchd.Engine.ShardTx)
// before any frame.
func New(eng *switchd.Engine, ports []port.Port, pool *dpdk.Mempool, c Config) (*Switch, error) {
	if len(ports) != eng.NumPorts() {
		return nil, fmt.Errorf("dataplane: %d ports for an engine of %d", len(ports), eng.NumPorts())
	}
	if pool == nil {
		return nil, fmt.Errorf("dataplane: no mempool")
	}
	if c.Pipeline && c.RxLcores > 0 {
		return nil, fmt.Errorf("dataplane: pipeline and sharded rx are two modes; pick one")
	}
	if c.RxLcores > len(ports) {
		return nil, fmt.Errorf("dataplane: %d rx lcores for %d ports: each rx lcore needs a port", c.RxLcores, len(ports))
	}
	if c.TxLcores > 1 && c.RxLcores == 0 {
		return nil, fmt.Errorf("dataplane: %d tx lcores: only the sharded mode (RxLcores > 0) has several", c.TxLcores)
	}
	if c.TxLcores > len(ports) {
		return nil, fmt.Errorf("dataplane: %d tx lcores for %d ports: each tx lcore needs a port", c.TxLcores, len(ports))
	}
	c.TxLcores = max(c.TxLcores, 1)
	if c.Burst <= 0 {
		c.Burst = 32
	}
	if c.RingSize == 0 {
		c.RingSize = 1024
	}
	if c.Name == "" {
		c.Name = "sw"
	}
	s := &Switch{eng: eng, ports: ports, pool: pool, burst: c.Burst, pipeline: c.Pipeline || c.RxLcores > 0}
	n := len(ports)
	groups := make([][]int, c.TxLcores)
	s.txOf = make([]uint8, n)
	for i := 0; i < n; i++ {
		k := i % c.TxLcores
		groups[k] = append(groups[k], i)
		s.txOf[i] = uint8(k)
	}
	if c.TxLcores > 1 {
		if err := eng.ShardTx(groups); err != nil {
			return nil, err
		}
	}
	// A port may send up to two bursts per poll: the frames a CP generates
	// (feedback, PFC) then do not leave a poll's data waiting for the next.
	txb := 2 * c.Burst
	for k, grp := range groups {
		r := &txRole{k: k, ports: grp, b: newLcoreBufs(c.Burst), out: dpdk.NewBurst(txb),
			spare: dpdk.NewBurst(c.Burst), items: make([]switchd.TxItem, txb), maxBursts: 1,
			pend: make([][]*dpdk.Mbuf, len(grp)), gen: make([][]uint16, len(grp))}
		for j := range grp {
			r.pend[j] = make([]*dpdk.Mbuf, 0, min(pendCap, c.Burst))
			r.gen[j] = make([]uint16, 0, txb)
		}
		if c.RxLcores > 0 {
			r.maxBursts = (n + c.RxLcores - 1) / c.RxLcores
		}
		s.tx = append(s.tx, r)
		var err error
		if r.mtx, err = s.multiPort(grp, txb); err != nil {
			s.Close()
			return nil, err
		}
	}
	var err error
	switch {
	case c.RxLcores > 0:
		err = s.newShards(c)
	case c.Pipeline:
		err = s.newPipeline(c)
	default:
		s.rtcBufs = newLcoreBufs(c.Burst)
		s.mrx, err = s.multiPort(nil, c.Burst)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// multiPort batches the rx or tx of ports (nil: every port), per frames each,
// when each is an ethdev queue; nil otherwise.
func (s *Switch) multiPort(ports []int, per int) (*dpdk.MultiPort, error) {
	if ports == nil {
		ports = make([]int, len(s.ports))
		for i := range ports {
			ports[i] = i
		}
	}
	pqs := make([]dpdk.PortQueue, len(ports))
	for j, i := range ports {
		q, ok := s.ports[i].(port.EthQueue)
		if !ok {
			return nil, nil // rings or other ports: one call per port
		}
		pqs[j] = dpdk.PortQueue{Port: q.Port, Queue: q.Queue}
	}
	return dpdk.NewMultiPort(pqs, per)
}

// newPipeline makes the pipeline's rings and bursts.
func (s *Switch) newPipeline(c Config) error {
	s.rxb, s.swb = newLcoreBufs(c.Burst), newLcoreBufs(c.Burst)
	n := len(s.ports)
	s.stage, s.nstage = make([]*dpdk.Burst, n), make([]int, n)
	for i := 0; i < n; i++ {
		s.stage[i] = dpdk.NewBurst(c.Burst)
		r, err := dpdk.NewRing(fmt.Sprintf("%s_in%d", c.Name, i), c.RingSize, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
		if err != nil {
			return err
		}
		s.inRing = append(s.inRing, r)
		r, err = dpdk.NewRing(fmt.Sprintf("%s_eg%d", c.Name, i), c.RingSize, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
		if err != nil {
			return err
		}
		s.egRing = append(s.egRing, r)
	}
	s.tx[0].in = s.egRing
	var err error
	s.mrx, err = s.multiPort(nil, c.Burst)
	return err
}

// newShards makes the sharded mode's rx lcores: port i goes to rx lcore
// i mod c.RxLcores, and each rx lcore gets a ring to every tx+CC lcore.
func (s *Switch) newShards(c Config) error {
	for k := 0; k < c.RxLcores; k++ {
		sh := &rxShard{b: newLcoreBufs(c.Burst)}
		s.shards = append(s.shards, sh)
		for i := k; i < len(s.ports); i += c.RxLcores {
			sh.ports = append(sh.ports, i)
		}
		var err error
		if sh.ing, err = s.eng.NewIngressShard(sh.ports); err != nil {
			return err
		}
		for _, r := range s.tx {
			ring, err := dpdk.NewRing(fmt.Sprintf("%s_rx%dtx%d", c.Name, k, r.k), c.RingSize, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
			if err != nil {
				return err
			}
			sh.rings = append(sh.rings, ring)
			sh.stage = append(sh.stage, dpdk.NewBurst(c.Burst))
			sh.nstage = append(sh.nstage, 0)
			s.egRing = append(s.egRing, ring)
			r.in = append(r.in, ring)
		}
		if sh.mrx, err = s.multiPort(sh.ports, c.Burst); err != nil {
			return err
		}
	}
	return nil
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
		if s.mrx != nil {
			// Frame reads the data address RxBurst stored, not the mbuf.
			base, n := i*s.mrx.Per, int(s.mrx.Count[i])
			for j, m := range s.mrx.Pkts[base : base+n] {
				f := s.mrx.Frame(base + j)
				if !s.eng.Classify(i, f, &s.meta) || !s.eng.Enqueue(now, &s.meta, f, handle(m)) {
					b.freeLater(m)
				}
			}
			work += n
			continue
		}
		pkts := b.in.Pkts[:p.RxBurst(b.in.Pkts)]
		for _, m := range pkts {
			f := m.Data()
			if !s.eng.Classify(i, f, &s.meta) || !s.eng.Enqueue(now, &s.meta, f, handle(m)) {
				b.freeLater(m)
			}
		}
		work += len(pkts)
	}
	b.flush()
	s.eng.ServiceIngress(now)
	return work + s.transmit(s.tx[0], now)
}

// pendCap bounds the generated frames a port keeps for its next poll when
// its tx refused them (txRole.pend; at most a burst): PFC frames, CNPs and CP
// feedback come a few at a time, so a port whose tx refuses more than that
// is not momentarily full, and what overflows is counted as drop_tx.
const pendCap = 16

// transmit runs the role's Service and its ports' shapers and sends what is
// due (tx+CC). A forwarded frame the device refuses is freed and counted as
// drop_tx; a generated one is kept for the port's next poll (keepRefused).
func (s *Switch) transmit(r *txRole, now int64) int {
	s.eng.ServiceShard(r.k, now)
	work := 0
	if r.mtx != nil {
		due := 0
		for j := range r.ports {
			cnt := s.collect(r, now, j, r.mtx.Segment(j))
			r.mtx.Count[j] = uint16(cnt)
			due += cnt
		}
		if due > 0 {
			work = r.mtx.TxBurst(false) // one cgo call for every port
			for j := range r.ports {
				if sent, cnt := int(r.mtx.Sent[j]), int(r.mtx.Count[j]); sent < cnt {
					s.keepRefused(r, j, r.mtx.Segment(j), sent, cnt)
				}
			}
		}
	} else {
		for j, p := range r.ports {
			cnt := s.collect(r, now, j, r.out.Pkts)
			if cnt == 0 {
				continue
			}
			sent := s.ports[p].TxBurst(r.out.Pkts[:cnt])
			if sent < cnt {
				s.keepRefused(r, j, r.out.Pkts, sent, cnt)
			}
			work += sent
		}
	}
	if r.ngen > 0 {
		for j := range r.gen {
			r.gen[j] = r.gen[j][:0]
		}
		r.ngen = 0
	}
	r.b.flush()
	return work
}

// collect runs the shaper of the role's port j and puts the mbufs due on
// the wire into out (len(out) >= len(r.items), two bursts): first the
// generated frames its tx refused at an earlier poll, then the frames
// Transmit gives, forwarded ones as they are, generated ones copied into
// spare mbufs. It notes where the generated frames are (r.gen) and returns
// how many mbufs it put.
func (s *Switch) collect(r *txRole, now int64, j int, out []*dpdk.Mbuf) int {
	p := r.ports[j]
	cnt := 0
	items := r.items
	if pend := r.pend[j]; len(pend) > 0 {
		cnt = copy(out, pend)
		for i := range cnt {
			r.noteGen(j, i)
		}
		clear(pend)
		r.pend[j] = pend[:0]
		items = items[:len(items)-cnt]
	}
	k := s.eng.Transmit(now, p, items)
	for _, it := range items[:k] {
		if it.H != 0 {
			out[cnt] = mbuf(it.H)
			cnt++
			continue
		}
		m := s.takeSpare(r)
		if m == nil {
			s.eng.CountTxDrop(p, 1)
			continue
		}
		room := m.Room()
		if len(room) < len(it.Frame) {
			r.b.freeLater(m)
			s.eng.CountTxDrop(p, 1)
			continue
		}
		copy(room, it.Frame)
		m.SetLen(len(it.Frame))
		r.noteGen(j, cnt)
		out[cnt] = m
		cnt++
	}
	clear(items[:k])
	return cnt
}

// noteGen notes that position i of port j's tx burst holds a generated frame.
func (r *txRole) noteGen(j, i int) {
	if len(r.gen[j]) == 0 {
		r.ngen++
	}
	r.gen[j] = append(r.gen[j], uint16(i))
}

// keepRefused deals with what the device refused of port j's tx burst,
// out[sent:cnt]: a forwarded frame is freed and counted as drop_tx, a
// generated one (r.gen) goes into the port's pending frames, to be sent
// first at its next poll: a PFC frame or a CP's feedback must not be lost
// to a tx ring that is full for a moment. When more wait than pendCap, the
// oldest are freed and counted as drop_tx (a newer pause, resume or rate
// supersedes an older).
func (s *Switch) keepRefused(r *txRole, j int, out []*dpdk.Mbuf, sent, cnt int) {
	p := r.ports[j]
	gen := r.gen[j]
	g := 0
	for g < len(gen) && int(gen[g]) < sent {
		g++
	}
	drops := 0
	pend := r.pend[j]
	for i := sent; i < cnt; i++ {
		if g == len(gen) || int(gen[g]) != i {
			r.b.freeLater(out[i])
			drops++
			continue
		}
		g++
		if len(pend) == cap(pend) {
			r.b.freeLater(pend[0])
			drops++
			copy(pend, pend[1:])
			pend = pend[:len(pend)-1]
		}
		pend = append(pend, out[i])
	}
	r.pend[j] = pend
	if drops > 0 {
		s.eng.CountTxDrop(p, drops)
	}
}

// takeSpare returns a fresh mbuf for a generated frame, refilling the role's
// spare burst with one bulk allocation when it is empty; nil when the pool is
// empty.
func (s *Switch) takeSpare(r *txRole) *dpdk.Mbuf {
	if r.nspare == 0 {
		if s.pool.AllocBulk(r.spare.Pkts) != nil {
			return nil
		}
		r.nspare = len(r.spare.Pkts)
	}
	r.nspare--
	return r.spare.Pkts[r.nspare]
}

// PollTx is the pipeline's tx+CC lcore (and the sharded mode's, with one):
// enqueue what the switching lcore routed, then CP timers, shaping and tx.
func (s *Switch) PollTx(now int64) int { return s.pollTx(s.tx[0], now) }

// PollTxShard is tx+CC lcore k of the sharded mode.
func (s *Switch) PollTxShard(k int, now int64) int { return s.pollTx(s.tx[k], now) }

func (s *Switch) pollTx(r *txRole, now int64) int {
	b := &r.b
	work := 0
	for _, ring := range r.in {
		// Up to a burst per port from each ring, as rtc receives a burst on
		// every port per poll: the shaping and tx of a poll then serve as
		// many frames as they do in rtc mode, not one burst's.
		for i := 0; i < r.maxBursts; i++ {
			n := ring.DequeueBurst(b.in.Pkts)
			for _, m := range b.in.Pkts[:n] {
				f := m.Data()
				r.meta.Get(m.Room()[len(f):])
				if !s.eng.Enqueue(now, &r.meta, f, handle(m)) {
					b.freeLater(m)
				}
			}
			work += n
			if n < len(b.in.Pkts) {
				break
			}
		}
	}
	b.flush()
	return work + s.transmit(r, now)
}

// Launch starts the switch's loops in g, reading time from clock: rtc on
// lcores[0]; pipeline on lcores[0] (rx), [1] (switching), [2] (tx+CC);
// sharded on lcores[0..R-1] (rx) and [R..R+T-1] (tx+CC).
func (s *Switch) Launch(g *lcore.Group, clock *lcore.TSCClock, lcores []uint) error {
	if r := len(s.shards); r > 0 {
		t := len(s.tx)
		if len(lcores) != r+t {
			return fmt.Errorf("dataplane: sharded mode with %d rx and %d tx lcores needs %d lcores, got %d", r, t, r+t, len(lcores))
		}
		for k := 0; k < r; k++ {
			if err := g.Launch(lcores[k], fmt.Sprintf("switch-rx%d", k), func() int { return s.PollShard(k, clock.Now()) }); err != nil {
				return err
			}
		}
		for k := 0; k < t; k++ {
			if err := g.Launch(lcores[r+k], fmt.Sprintf("switch-tx%d", k), func() int { return s.PollTxShard(k, clock.Now()) }); err != nil {
				return err
			}
		}
		return nil
	}
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
// spare mbufs, generated frames waiting for their port's tx, and what waits
// in the ports' rx queues), then its rings and bursts. Call it after the
// loops have stopped; the ports stay the caller's.
func (s *Switch) Close() {
	if s.closed {
		return
	}
	s.closed = true
	b := newLcoreBufs(s.burst)
	defer b.release()
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
	for _, sh := range s.shards {
		for t, st := range sh.stage {
			if sh.nstage[t] > 0 {
				dpdk.FreeBulk(st.Pkts[:sh.nstage[t]])
			}
			st.Free()
		}
		if sh.mrx != nil {
			sh.mrx.Free()
		}
		sh.b.release()
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
	for _, r := range s.tx {
		for j, pend := range r.pend {
			if len(pend) > 0 {
				dpdk.FreeBulk(pend)
				r.pend[j] = pend[:0]
			}
		}
		if r.nspare > 0 {
			dpdk.FreeBulk(r.spare.Pkts[:r.nspare])
			r.nspare = 0
		}
		r.spare.Free()
		r.out.Free()
		if r.mtx != nil {
			r.mtx.Free()
		}
		r.b.release()
	}
	if s.mrx != nil {
		s.mrx.Free()
	}
	if s.rxb.in != nil {
		s.rxb.release()
		s.swb.release()
	}
	if s.rtcBufs.in != nil {
		s.rtcBufs.release()
	}
}
