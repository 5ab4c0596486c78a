package switchd

import (
	"fmt"
	"math/bits"
)

// Service runs the tx+CC side's periodic work due at now: CP timers (RoCC's
// fair-rate update and rate messages), PFC pause refreshes, telemetry samples and
// counter publication. Call it from the tx+CC lcore once per loop; with
// several tx shards (ShardTx) each lcore calls ServiceShard instead.
func (e *Engine) Service(now int64) {
	for k := range e.tx {
		e.ServiceShard(k, now)
	}
}

// ServiceShard is Service for the ports of tx shard k, and delivers the
// feedback other shards' CPs sent toward them. Call it from shard k's lcore.
func (e *Engine) ServiceShard(k int, now int64) {
	sh := &e.tx[k]
	if len(e.tx) > 1 {
		e.deliver(sh)
	}
	e.readTimers(sh)
	if sh.cpMin <= now {
		for a := sh.ports; a != 0; a &= a - 1 {
			i := bits.TrailingZeros64(a)
			g := &e.eg[i]
			if g.cpNext <= now {
				g.ps.QueueBytes = g.qBytes
				g.cp.OnTimer(now, &g.ps, g.sink)
				sh.cpDirty |= 1 << i
			}
		}
	}
	if e.pfcWant != nil {
		e.syncPFC(now, sh)
	}
	for a := sh.xoffPorts; a != 0; a &= a - 1 {
		g := &e.eg[bits.TrailingZeros64(a)]
		for x := g.xoff; x != 0; x &= x - 1 {
			p := uint8(bits.TrailingZeros8(x))
			if now < g.refreshAt[p] {
				continue
			}
			// The shared buffer's threshold moves with other ports' use: a
			// pause due for refresh may have become a resume (with several
			// shards, syncPFC decided that above).
			if e.pfcWant == nil && e.shouldResume(sh, &g.acct, p) {
				e.setXON(now, g, p)
			} else {
				e.sendPause(now, g, p, e.pauseQuanta)
			}
		}
	}
	if sh.xonRetryPorts != 0 {
		e.retryXON(now, sh)
	}
	if now >= sh.nextSample {
		for a := sh.ports; a != 0; a &= a - 1 {
			i := bits.TrailingZeros64(a)
			g := &e.eg[i]
			s := Sample{TNs: now, Port: i, QueueBytes: g.qBytes, FairRateBps: -1, PrioBytes: g.qPrio}
			if g.fair != nil {
				s.FairRateBps = g.fair.FairRateBps()
			}
			sh.samples.push(&s)
		}
		sh.nextSample += e.sampleNs
		if sh.nextSample <= now {
			sh.nextSample = now + e.sampleNs
		}
	}
	if now >= sh.nextPubTx {
		e.publishEgress(sh.ports)
		sh.nextPubTx = now + e.publishEvery
	}
}

// ServiceIngress publishes the Classify side's counters when due. Call it from
// the lcore that calls Classify once per loop.
func (e *Engine) ServiceIngress(now int64) {
	if now >= e.nextPubIn {
		e.PublishIngress()
		e.nextPubIn = now + e.publishEvery
	}
}

// IngressShard is the Classify side of a subset of the ports, for one rx
// lcore of a switch whose ingress ports are spread over several (each port's
// ingress counters are written by one lcore only): that lcore calls Classify
// for its ports' frames and the shard's Service, in place of ServiceIngress.
type IngressShard struct {
	e       *Engine
	ports   []int
	nextPub int64
}

// NewIngressShard returns the shard of ports (each in 0..NumPorts-1; no port in
// two shards, which the caller ensures).
func (e *Engine) NewIngressShard(ports []int) (*IngressShard, error) {
	for _, p := range ports {
		if p < 0 || p >= e.n {
			return nil, fmt.Errorf("switchd: ingress shard: port %d of %d", p, e.n)
		}
	}
	return &IngressShard{e: e, ports: append([]int(nil), ports...)}, nil
}

// Service publishes the shard's ingress counters when due (ServiceIngress for
// the shard's ports). Call it from the shard's lcore once per loop.
func (s *IngressShard) Service(now int64) {
	if now >= s.nextPub {
		for _, p := range s.ports {
			s.e.ing[p].pub.store(&s.e.ing[p].c)
		}
		s.nextPub = now + s.e.publishEvery
	}
}

// samplesDropped sums the samples every shard's ring dropped.
func (e *Engine) samplesDropped() uint64 {
	var n uint64
	for k := range e.tx {
		n += e.tx[k].samples.Dropped()
	}
	return n
}

// pfcEventsDropped sums the PFC events every shard's ring dropped.
func (e *Engine) pfcEventsDropped() uint64 {
	var n uint64
	for k := range e.tx {
		n += e.tx[k].pfcEvents.Dropped()
	}
	return n
}

// CountTxDrop counts n frames of port p that the adapter could not send (NIC
// ring full, no mbuf for a generated frame). tx+CC lcore.
func (e *Engine) CountTxDrop(p, n int) { e.eg[p].c[cDropTx] += uint64(n) }

// PublishEgress makes the tx+CC side's counters visible to Snapshot. Call it
// from the tx+CC lcore, or once the loops have stopped.
func (e *Engine) PublishEgress() {
	for k := range e.tx {
		e.publishEgress(e.tx[k].ports)
	}
}

// publishEgress publishes the egress counters of the ports in mask.
func (e *Engine) publishEgress(mask uint64) {
	for a := mask; a != 0; a &= a - 1 {
		g := &e.eg[bits.TrailingZeros64(a)]
		g.c[cQueueBytes] = uint64(g.qBytes)
		g.c[cRingGrowthBytes] = g.ringGrowthBytes()
		if g.fair != nil {
			g.c[cFairRateBps] = uint64(g.fair.FairRateBps())
		}
		g.pub.store(&g.c)
		for p := range g.qPrio {
			g.pubPrio[p].Store(g.qPrio[p])
		}
		g.pubXOFF.Store(uint32(g.xoff))
		g.pubPaused.Store(uint32(g.pausedMask))
	}
}

// RingGrowthBytes is what the switch's egress rings have allocated by
// growing, as last published (PublishEgress; the lcores publish as they
// run). A ring doubles when a queue gets deeper than it has been, a few
// times per port in a run: that is the data plane's memory, bounded by the
// queues' limits, not control-plane garbage. Any goroutine.
func (e *Engine) RingGrowthBytes() uint64 {
	var n uint64
	for i := range e.eg {
		n += e.eg[i].pub[cRingGrowthBytes].Load()
	}
	return n
}

// PublishIngress makes the Classify side's counters visible to Snapshot.
func (e *Engine) PublishIngress() {
	for i := range e.ing {
		e.ing[i].pub.store(&e.ing[i].c)
	}
}

// Snapshot returns every port's counters as last published. Any goroutine.
func (e *Engine) Snapshot() Snapshot {
	s := Snapshot{Ports: make([]PortCounters, e.n), SamplesDropped: e.samplesDropped(), PFCEventsDropped: e.pfcEventsDropped()}
	for i := range s.Ports {
		pc := &s.Ports[i]
		pc.Port, pc.Name, pc.Scheme = i, e.eg[i].name, e.eg[i].scheme
		pc.fill(&e.ing[i].pub, &e.eg[i].pub)
		g := &e.eg[i]
		for p := range pc.QueuePrioBytes {
			pc.QueuePrioBytes[p] = g.pubPrio[p].Load()
		}
		pc.XOFFMask, pc.PausedMask = uint8(g.pubXOFF.Load()), uint8(g.pubPaused.Load())
	}
	return s
}
