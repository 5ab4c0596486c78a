package switchd

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/ring"
	"github.com/ccbed/ccbed/wire"
)

// Engine is the switch. Build it with New; see the package doc for which lcore
// may call which method.
type Engine struct {
	n        int
	routes   RouteTable
	addr     []portAddr
	ing      []ingress
	eg       []egress
	ip       uint32
	switchID uint16
	hashSeed uint32 // ECMP: this switch's hash seed
	// roccRate is the frame of this switch's RoCC rate messages (read only
	// after New, shared by the tx shards).
	roccRate wire.RoCCRateTemplate
	decTTL   bool
	prio     uint8
	overhead int

	pfcOn       bool
	honor       bool
	xoffBytes   int64
	xonBytes    int64
	pauseQuanta uint16
	dscpPrio    bool                      // priorities from the DSCP, not the VLAN tag
	lossless    uint8                     // PFC's lossless priorities (bit p); 0 with PFC off
	strict      uint8                     // priorities served strictly, highest first
	quantum     [wire.PFCPriorities]int32 // DWRR quantum per priority

	// pfcWant, with PFC and several tx shards (ShardTx), has bit 8k+p of
	// pfcWant[i] set while shard k's count of ingress port i holds priority
	// p in XOFF: the shard owning port i pauses upstream while any shard
	// wants it (syncPFC). nil otherwise.
	pfcWant []atomic.Uint64
	// tx is the tx+CC state, one shard per tx+CC lcore (ShardTx); egress
	// port p belongs to tx[eg[p].sh].
	tx []txShard

	sampleNs     int64
	nextPubIn    int64
	publishEvery int64
}

// PublishEveryNs is how often (engine time) counters are published.
const PublishEveryNs = 1_000_000

// New builds an engine from a spec (CheckWith checks its values first, and
// building each port's CP its parameters; every port needs its MAC: a
// caller with devices fills it from the device first).
func New(s *Spec) (*Engine, error) {
	if err := s.CheckWith(specErr); err != nil {
		return nil, err
	}
	for i := range s.Ports {
		if s.Ports[i].MAC == (wire.MAC{}) {
			return nil, fmt.Errorf("switchd: port %s: no MAC (fill it from the device)", s.Ports[i].Name)
		}
	}
	rt, err := s.RouteTable()
	if err != nil {
		return nil, err
	}
	n := len(s.Ports)
	e := &Engine{
		n:            n,
		routes:       *rt,
		addr:         make([]portAddr, n),
		ing:          make([]ingress, n),
		eg:           newEgress(n),
		ip:           s.IP,
		switchID:     s.ID,
		hashSeed:     uint32(s.ID)*0x9e3779b9 ^ s.IP,
		decTTL:       s.DecrementTTL,
		prio:         s.PFC.Priority,
		overhead:     s.FrameOverheadBytes,
		pfcOn:        s.PFC.Enabled,
		honor:        s.PFC.Honor,
		xoffBytes:    s.PFC.XOFFBytes,
		xonBytes:     s.PFC.XOFFBytes - s.PFC.XONOffsetBytes,
		pauseQuanta:  s.PFC.PauseQuanta,
		dscpPrio:     s.PriorityFromDSCP,
		publishEvery: PublishEveryNs,
		tx: []txShard{{cpMin: ccalgo.Never, samples: NewSampleRing(s.SampleBuffer),
			pfcEvents: NewRing[PFCEvent](max(s.SampleBuffer, minPFCEventRing))}},
	}
	e.roccRate.Init(&wire.Endpoints{SrcIP: s.IP})
	if e.pfcOn {
		for _, p := range s.PFC.Lossless() {
			e.lossless |= 1 << p
		}
	}
	for _, p := range s.Queues.Strict {
		e.strict |= 1 << p
	}
	for p := range e.quantum {
		w := 1
		if len(s.Queues.Weights) > 0 {
			w = s.Queues.Weights[p]
		}
		e.quantum[p] = int32(w * s.Queues.QuantumBytes)
	}
	if s.Buffer.Mode == BufferShared {
		e.tx[0].buf = newSharedBuffer(s)
	}
	for i := range s.Ports {
		pc := &s.Ports[i]
		mac, peer := pc.MAC, pc.PeerMAC
		copy(e.addr[i].macs[:6], peer[:])
		copy(e.addr[i].macs[6:], mac[:])
		e.ing[i].trust, e.ing[i].pfcFrom = trustOf(s, i), peer
		e.ing[i].lastOK = e.routes.hasPort(0, i) // lastSrc 0
		cp, err := s.newCP(i)
		if err != nil {
			return nil, err
		}
		link := pc.LinkBps
		g := &e.eg[i]
		*g = egress{portParts: portParts{
			txPort: txPort{
				nsPerByte: 8e9 / link,
				burstNs:   max(float64(s.BurstBytes)*8e9/link, 1),
				delayNs:   pc.DelayNs,
				bufLimit:  s.bufLimit(i),
				ctl:       ring.NewFIFO[ctlEntry](ringStart, 1024),
				gen:       newGenQueue(4096),
			},
			cpPort: cpPort{
				intCode: intCode(link),
				cp:      cp,
				ps:      ccalgo.PortState{LinkBps: link, LastOff: math.MinInt64},
			},
			portID:  portID{idx: i, name: pc.Name, scheme: s.SchemeOf(i), mac: mac, peer: peer, linkBps: link},
			mmuPort: mmuPort{refreshNs: wire.QuantaNs(s.PFC.PauseQuanta, link) / 2},
		}}
		g.dl = ring.NewFIFO[dlEntry](ringStart, max(1024, int(float64(g.delayNs)*link/8e9/60)*2))
		qb := s.bufLimit(i)
		if qb == 0 {
			qb = s.Buffer.SizeBytes
		}
		for p := range g.q {
			g.q[p] = newDataQueue(int(min(qb/60+1, 1<<17)))
		}
		if e.tx[0].buf.on {
			g.acct.setHeadroom(s.Headroom(i))
		}
		e.tx[0].ports |= 1 << i
		g.sink = &feedbackSink{e: e, from: i}
		g.cpNext = ccalgo.Never
		if cp != nil {
			g.fair, _ = cp.(ccalgo.FairRateReporter)
			g.hookEnq, g.hookDeq = cpHooks(cp)
			fb, ok := cp.(ccalgo.FlowBlind)
			g.needFlow = (g.hookEnq || g.hookDeq) && !(ok && fb.FlowBlind())
			if g.fc, _ = cp.(flowCounter); g.fc != nil {
				g.deq = new(deqBatch)
			}
			g.quiet = -1
			if qq, ok := cp.(ccalgo.QuietQueue); ok {
				g.quiet = qq.QuietBytes()
			}
			if io, ok := cp.(ccalgo.INTOnly); ok && io.INTOnly() {
				g.stampAll, g.needFlow = true, false
			}
			g.enqWork = g.fc != nil || !g.stampAll && (g.hookEnq || g.needFlow)
			if g.needFlow || g.fc != nil {
				for p := range g.q {
					g.q[p].keepKeys()
				}
			}
			e.tx[0].cpDirty |= 1 << i
		}
	}
	e.setAcctAt(&e.tx[0])
	e.sampleNs = s.SampleNs
	if e.sampleNs == 0 {
		e.sampleNs = 100_000
		if cp := e.eg[0].cp; cp != nil {
			if t := cp.NextTimer(); t > 0 && t != ccalgo.Never && e.eg[0].fair != nil {
				e.sampleNs = t // RoCC's first timer is at T
			}
		}
	}
	e.tx[0].nextSample = e.sampleNs
	return e, nil
}

// Start sets the engine's time origin: the first telemetry sample is one
// period after now, counters publish from now, and every shaper starts idle at
// now. Call it once before the first frame (New assumes 0).
func (e *Engine) Start(now int64) {
	for k := range e.tx {
		e.tx[k].nextSample = now + e.sampleNs
		e.tx[k].nextPubTx = now
	}
	e.nextPubIn = now
	for i := range e.eg {
		e.eg[i].busyUntil = float64(now)
	}
}

// NumPorts is the number of ports.
func (e *Engine) NumPorts() int { return e.n }

// SampleNs is the telemetry sampling period.
func (e *Engine) SampleNs() int64 { return e.sampleNs }

// Samples is the ring the tx+CC side writes queue / fair-rate samples into
// (the first shard's, see SampleRings, when ShardTx split the ports).
func (e *Engine) Samples() *SampleRing { return e.tx[0].samples }

// minPFCEventRing is the least room of a shard's ring of PFC events: a
// lossless priority in a storm changes state every few microseconds.
const minPFCEventRing = 4096

// PFCEvents is the ring the tx+CC side writes XOFF and XON events into (the
// first shard's, see PFCEventRings, when ShardTx split the ports).
func (e *Engine) PFCEvents() *Ring[PFCEvent] { return e.tx[0].pfcEvents }

// QueueBytes is port p's egress data queue now (tx+CC lcore, or after stop).
func (e *Engine) QueueBytes(p int) int64 { return e.eg[p].qBytes }

// Drain hands every frame the engine still holds (queued, on the delay line)
// to free and empties the queues. Call it only when no lcore runs the engine.
func (e *Engine) Drain(free func(Handle)) int {
	n := 0
	for i := range e.eg {
		g := &e.eg[i]
		for p := range g.q {
			for g.q[p].len() > 0 {
				en := g.q[p].pop()
				free(en.h)
				n++
			}
		}
		g.qBytes, g.qPrio, g.nonEmpty, g.deficit = 0, [wire.PFCPriorities]int64{}, 0, [wire.PFCPriorities]int32{}
		for g.ctl.Len() > 0 {
			free(g.ctl.Pop().h)
			n++
		}
		for g.dl.Len() > 0 {
			if d := g.dl.Front(); d.h != 0 {
				free(d.h)
				n++
			}
			g.dl.Drop()
		}
		g.gen.sched, g.gen.done, g.genRel = g.gen.wr, g.gen.wr, 0
		g.acct.clear()
		g.xoff = 0
	}
	for k := range e.tx {
		sh := &e.tx[k]
		sh.buf.used, sh.active, sh.xoffPorts, sh.xoffIn = 0, 0, 0, 0
		for i := range sh.acct {
			sh.acct[i].clear()
			sh.xoff[i] = 0
		}
		for _, m := range sh.inbox {
			if m != nil {
				m.drain(func(uint8, []byte) {})
			}
		}
	}
	for i := range e.pfcWant {
		e.pfcWant[i].Store(0)
	}
	e.PublishEgress()
	e.PublishIngress()
	return n
}
