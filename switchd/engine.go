package switchd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// Class is how the switch treats a frame.
type Class uint8

// Frame classes.
const (
	// ClassOther goes through the data FIFO without CP hooks: ICMP, RoCEv2
	// ACK / NAK, anything IPv4 that is not UDP.
	ClassOther Class = iota
	// ClassData is UDP: RoCEv2 data, and other UDP (iperf3 -u, the traffic of
	// RoCC's Section VI-B testbed). It goes through the data FIFO and the CP.
	ClassData
	// ClassControl is CNPs, RoCC rate messages and P4QCN / QCN feedback: they
	// go ahead of data and are never paused.
	ClassControl
	// ClassPFC is a PFC frame received on Meta.In: Enqueue applies it to that
	// port's egress and the caller frees it.
	ClassPFC
)

// Meta is what Classify found out about a frame and Enqueue needs. It is small
// and fixed-size so that the pipeline adapter carries it with the mbuf
// (Put / Get, MetaLen bytes).
type Meta struct {
	In, Out uint8
	Class   Class
	Prio    uint8  // PFC priority
	IPOff   uint16 // IPv4 header
	L4Off   uint16 // UDP header (ClassData); 0 otherwise
	INTOff  uint16 // INT stack of a RoCEv2 data packet; 0 when none
	RoCE    bool   // a BTH follows the UDP header (DestQP is part of the flow key)
}

// MetaLen is the encoded size of a Meta.
const MetaLen = 11

// Put encodes m into b[:MetaLen].
func (m *Meta) Put(b []byte) {
	_ = b[MetaLen-1]
	b[0], b[1], b[2], b[3] = m.In, m.Out, uint8(m.Class), m.Prio
	binary.LittleEndian.PutUint16(b[4:], m.IPOff)
	binary.LittleEndian.PutUint16(b[6:], m.L4Off)
	binary.LittleEndian.PutUint16(b[8:], m.INTOff)
	b[10] = 0
	if m.RoCE {
		b[10] = 1
	}
}

// Get decodes b[:MetaLen] into m.
func (m *Meta) Get(b []byte) {
	_ = b[MetaLen-1]
	m.In, m.Out, m.Class, m.Prio = b[0], b[1], Class(b[2]), b[3]
	m.IPOff = binary.LittleEndian.Uint16(b[4:])
	m.L4Off = binary.LittleEndian.Uint16(b[6:])
	m.INTOff = binary.LittleEndian.Uint16(b[8:])
	m.RoCE = b[10] != 0
}

// TxItem is a frame Transmit hands to the adapter for the wire: a frame known by
// its Handle (the adapter sends that buffer; Frame is its bytes, possibly
// modified in place), or, with H 0, a frame the switch generated, whose
// bytes in Frame stay valid until the next Transmit call on the same port (the
// adapter copies them into a fresh buffer).
type TxItem struct {
	H     Handle
	Frame []byte
}

// ingress is the Classify side of a port.
type ingress struct {
	// trust is what the port accepts (trustHost, trustPFCPeer, trustNoPFC
	// bits; 0: everything), pfcFrom the one source of its PFC frames with
	// trustPFCPeer. Read-only after New.
	trust   uint8
	pfcFrom wire.MAC
	// lastSrc is the source address of the last frame whose source a
	// trustHost port checked, lastOK whether the route to it leads back
	// to the port: a host sends from one address, so the route lookup
	// runs once for its frames (routes are read-only after New).
	lastOK  bool
	lastSrc uint32
	c       counters
	pub     published
}

// Trust bits of an ingress port (ingress.trust).
const (
	// trustHost: the port faces a host. RoCEv2 data, CNPs, ACKs and NAKs
	// are accepted only from the host's own address (the route to their
	// source leads back to this port: strict reverse-path filtering, RFC
	// 3704 Sec. 2.2), CP feedback never (Engine.hostRefusal).
	trustHost uint8 = 1 << iota
	// trustPFCPeer: PFC frames are accepted only from the peer's MAC.
	trustPFCPeer
	// trustNoPFC: PFC frames are refused (ports[].ignore_pfc).
	trustNoPFC
)

// portAddr is a port's addresses, read-only after New: macs is the MAC
// header's first 12 bytes for a frame leaving by the port (the peer's MAC,
// then the port's).
type portAddr struct {
	macs [12]byte
}

// egress is the tx+CC side of a port.
type egress struct {
	// The fields Enqueue and Transmit touch for every frame come first, so
	// that they share a few cache lines (a fabric's switches have hundreds
	// of ports, and a port's state is rarely still cached when its next frame
	// comes).
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
	// hookEnq / hookDeq: cp's OnEnqueue / OnDequeue may do work (false
	// when the method is ccalgo.CPBase's no-op, see cpHooks, and without a
	// cp): the engine then skips the per-packet interface call, and with
	// neither, the flow key and mark of the queue entry.
	hookEnq, hookDeq bool
	// needFlow: a hook reads the packet's flow key (not ccalgo.FlowBlind).
	needFlow bool
	sh       uint8 // the tx shard serving the port (Engine.tx)
	// pfcSeen: the port has received a PFC frame; until then it cannot be
	// paused and Transmit skips the pause bookkeeping.
	pfcSeen bool
	// tr is the per-packet trace's sink, every port's (SetTrace); nil: off.
	tr      *tracer
	q       [wire.PFCPriorities]dataQueue // one data queue per priority
	qPrio   [wire.PFCPriorities]int64     // bytes in each
	deficit [wire.PFCPriorities]int32     // DWRR deficit counters
	dl      delayLine
	ctl     handleRing
	gen     genQueue
	cp      ccalgo.CongestionPoint
	ps      ccalgo.PortState
	dp      ccalgo.DataPacket
	sink    ccalgo.FeedbackSink

	idx       int
	name      string
	scheme    string
	mac, peer wire.MAC
	linkBps   float64
	intCode   uint8 // linkBps's B code in an INT record (wire.LinkSpeedCode)

	// cpNext is cp.NextTimer() as last read (see Engine.cpDirty).
	cpNext int64
	fair   ccalgo.FairRateReporter
	// fc is cp as a flowCounter (RoCC), called in place of its hooks, and
	// deq dequeueBatch's record of its dequeues; nil for other CPs.
	fc  flowCounter
	deq *deqBatch

	// PFC received: data of priority i is held until pausedUntil[i].
	pausedUntil [wire.PFCPriorities]int64
	pauseStart  int64
	// PFC sent: acct counts the bytes in the switch that entered on this
	// port (one tx shard; with several, each shard counts its own, see
	// txShard.acct); xoff is the priorities this port holds in XOFF (bit
	// p), each paused upstream again at refreshAt.
	acct      ingressAcct
	xoff      uint8
	refreshAt [wire.PFCPriorities]int64
	refreshNs int64
	// sinceXOFF is the bytes of lossless priority p that entered on this
	// port while it held p in XOFF (admitted or dropped): what the peer
	// sent after the pause was queued, recorded at the XON
	// (recordAfterXOFF). One tx shard only.
	sinceXOFF [wire.PFCPriorities]int64

	c   counters
	pub published
	// pubPrio, pubXOFF and pubPaused are qPrio, xoff and pausedMask as
	// PublishEgress last copied them (per-priority gauges for Snapshot: the
	// metrics endpoint's queue and PFC state); never written per frame.
	pubPrio            [wire.PFCPriorities]atomic.Int64
	pubXOFF, pubPaused atomic.Uint32
}

// feedbackSink turns a CP's feedback into a packet toward the flow's source.
type feedbackSink struct {
	e    *Engine
	from int
}

// Emit builds fb's packet into the generated-control queue of the port toward
// fb.Flow.SrcIP. It runs on the tx+CC lcore.
func (s *feedbackSink) Emit(now int64, fb *ccalgo.Feedback) {
	s.e.emitFeedback(s.from, fb)
}

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
	lossless    uint8                     // PFC's lossless priorities (bit p), with pfcOn
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
	// noDrain makes Transmit skip drainData (tests: the general loop is the
	// reference drainData must match).
	noDrain bool
}

// PublishEveryNs is how often (engine time) counters are published.
const PublishEveryNs = 1_000_000

// New builds an engine from a validated config (every port needs its MAC: a
// caller with devices fills it from the device first).
func New(cfg *Config) (*Engine, error) {
	if err := cfg.Validate(nil); err != nil {
		return nil, err
	}
	rt, err := cfg.RouteTable()
	if err != nil {
		return nil, err
	}
	n := len(cfg.Ports)
	ip, _ := wire.ParseIPv4(cfg.Switch.IP)
	e := &Engine{
		n:            n,
		routes:       *rt,
		addr:         make([]portAddr, n),
		ing:          make([]ingress, n),
		eg:           make([]egress, n),
		ip:           ip,
		switchID:     cfg.Switch.ID,
		hashSeed:     uint32(cfg.Switch.ID)*0x9e3779b9 ^ ip,
		decTTL:       cfg.Switch.DecrementTTL,
		prio:         cfg.PFC.Priority,
		overhead:     cfg.Switch.FrameOverheadBytes,
		pfcOn:        cfg.PFC.Enabled,
		honor:        cfg.PFC.Honor,
		xoffBytes:    cfg.PFC.XOFFBytes,
		xonBytes:     cfg.PFC.XOFFBytes - cfg.PFC.XONOffsetBytes,
		pauseQuanta:  cfg.PFC.PauseQuanta,
		dscpPrio:     cfg.Switch.PriorityFrom == "dscp",
		publishEvery: PublishEveryNs,
		tx: []txShard{{cpMin: ccalgo.Never, samples: NewSampleRing(cfg.Telemetry.SampleBuffer),
			pfcEvents: NewRing[PFCEvent](max(cfg.Telemetry.SampleBuffer, minPFCEventRing))}},
	}
	e.roccRate.Init(&wire.Endpoints{SrcIP: ip})
	for _, p := range cfg.Lossless() {
		e.lossless |= 1 << p
	}
	for _, p := range cfg.Queues.Strict {
		e.strict |= 1 << p
	}
	for p := range e.quantum {
		w := 1
		if len(cfg.Queues.Weights) > 0 {
			w = cfg.Queues.Weights[p]
		}
		e.quantum[p] = int32(w * cfg.Queues.QuantumBytes)
	}
	if cfg.Buffer.Mode == BufferShared {
		e.tx[0].buf = newSharedBuffer(cfg)
	}
	for i := range cfg.Ports {
		pc := &cfg.Ports[i]
		if pc.MAC == "" {
			return nil, fmt.Errorf("switchd: port %s: no MAC (fill it from the device)", pc.Name)
		}
		mac, err := wire.ParseMAC(pc.MAC)
		if err != nil {
			return nil, fmt.Errorf("switchd: port %s: %w", pc.Name, err)
		}
		peer, _ := wire.ParseMAC(pc.PeerMAC)
		copy(e.addr[i].macs[:6], peer[:])
		copy(e.addr[i].macs[6:], mac[:])
		e.ing[i].trust, e.ing[i].pfcFrom = trustOf(cfg, i), peer
		e.ing[i].lastOK = e.routes.hasPort(0, i) // lastSrc 0
		cp, err := cfg.newCP(i, nil)
		if err != nil {
			return nil, err
		}
		link := cfg.LinkBps(i)
		g := &e.eg[i]
		*g = egress{
			idx:       i,
			name:      pc.Name,
			scheme:    cfg.SchemeOf(i),
			mac:       mac,
			peer:      peer,
			linkBps:   link,
			intCode:   intCode(link),
			nsPerByte: 8e9 / link,
			burstNs:   max(float64(cfg.Switch.BurstBytes)*8e9/link, 1),
			delayNs:   int64(math.Round(pc.DelayUs * 1e3)),
			bufLimit:  pc.BufferBytes,
			ctl:       newHandleRing(1024),
			gen:       newGenQueue(4096),
			cp:        cp,
			ps:        ccalgo.PortState{LinkBps: link, LastOff: math.MinInt64},
			refreshNs: wire.QuantaNs(cfg.PFC.PauseQuanta, link) / 2,
		}
		g.dl = newDelayLine(max(1024, int(float64(g.delayNs)*link/8e9/60)*2))
		qb := pc.BufferBytes
		if qb == 0 {
			qb = cfg.Buffer.SizeBytes
		}
		for p := range g.q {
			g.q[p] = newDataQueue(int(min(qb/60+1, 1<<17)))
		}
		if e.tx[0].buf.on {
			g.acct.headroom = cfg.Headroom(i)
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
			e.tx[0].cpDirty |= 1 << i
		}
	}
	e.setAcctAt(&e.tx[0])
	e.sampleNs = int64(math.Round(cfg.Telemetry.SampleUs * 1e3))
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

// CP returns port p's congestion point (nil for a plain FIFO port).
func (e *Engine) CP(p int) ccalgo.CongestionPoint { return e.eg[p].cp }

// QueueBytes is port p's egress data queue now (tx+CC lcore, or after stop).
func (e *Engine) QueueBytes(p int) int64 { return e.eg[p].qBytes }

// Classify parses a frame received on port in, routes it, decrements its TTL,
// rewrites its MACs for the egress port and fills m. It reports false when the
// frame is dropped (counted by reason); the caller then frees it. A PFC frame
// is ClassPFC with Out = In. Call it from the rx / switching lcore.
func (e *Engine) Classify(in int, frame []byte, m *Meta) bool {
	ig := &e.ing[in]
	ig.c[cRxPackets]++
	ig.c[cRxBytes] += uint64(len(frame))
	// wire.Classify runs Decode's checks without building views: the offsets
	// are all the switch needs.
	var s wire.Summary
	err := wire.Classify(frame, &s)
	if s.IPOff == 0 {
		switch {
		case s.Kind == wire.KindPFC:
			// A MAC Control frame is never VLAN-tagged (IEEE 802.3 Clause
			// 31, Annex 31D: its Length/Type is 88-08 right after the
			// source address): a tagged one is no pause, whatever the trust.
			if wire.Ethernet(frame).HasVLAN() || ig.trust&(trustPFCPeer|trustNoPFC) != 0 && !ig.acceptsPFC(frame) {
				ig.c[cRefusedPFC]++
				return false
			}
			*m = Meta{In: uint8(in), Out: uint8(in), Class: ClassPFC}
			return true
		case err == wire.ErrTruncated: // no whole Ethernet header
			ig.c[cDropMalformed]++
		default: // not IPv4, or MAC control that is not a whole PFC frame
			ig.c[cDropNotIPv4]++
		}
		return false
	}
	if err != nil && err != wire.ErrFragment {
		ig.c[cDropMalformed]++
		return false
	}
	hl := int(s.IPOff)
	ip := wire.IPv4(frame[hl:]) // Classify checked it, also for a fragment
	// A host port's own data, ACKs, NAKs and CNPs (kinds KindData ..
	// KindCNP) from the source it last checked pass here, inline;
	// hostRefusal looks at the rest.
	if ig.trust&trustHost != 0 && !(s.Kind-wire.KindData <= wire.KindCNP-wire.KindData && ig.lastOK && ip.Src() == ig.lastSrc) {
		if c := e.hostRefusal(ig, in, frame, ip, &s); c != notRefused {
			ig.c[c]++
			return false
		}
	}
	out, r := e.routes.route(ip.Dst())
	if out < 0 {
		if r == nil {
			ig.c[cDropNoRoute]++
			return false
		}
		out = e.ecmpPort(frame, ip, &s, r)
	}
	if e.decTTL && !ip.DecTTL() {
		ig.c[cDropTTL]++
		return false
	}
	// One 12-byte copy: the next hop's MAC, then the port's.
	copy(frame[0:12], e.addr[out].macs[:])
	// Meta field by field, each written once: the enqueue that reads it
	// right after (rtc) then loads what one store wrote.
	class, prio := ClassOther, e.prio
	var l4Off, intOff uint16
	roce := false
	switch {
	case e.dscpPrio:
		prio = frame[hl+1] >> 5 // the DSCP's class selector bits
	case hl != wire.EthernetLen:
		prio = frame[wire.EthernetLen] >> 5 // the VLAN tag's PCP
	}
	if err == nil { // not a fragment (forwarded as is)
		switch s.Kind {
		case wire.KindData:
			class, l4Off, roce, intOff = ClassData, s.L4Off, true, s.INTOff
		case wire.KindCNP, wire.KindRoCCRate, wire.KindP4QCN, wire.KindQCN:
			class = ClassControl
		case wire.KindAck, wire.KindNak:
		default:
			if s.L4Off != 0 {
				class, l4Off = ClassData, s.L4Off
			}
		}
	}
	m.In, m.Out, m.Class, m.Prio = uint8(in), uint8(out), class, prio
	m.IPOff, m.L4Off, m.INTOff, m.RoCE = s.IPOff, l4Off, intOff, roce
	return true
}

// trustOf is port i's trust bits (ingress.trust) under cfg.
func trustOf(cfg *Config, i int) uint8 {
	var t uint8
	if cfg.Ports[i].IgnorePFC {
		t |= trustNoPFC
	}
	if cfg.Switch.Trust != TrustTopology {
		return t
	}
	switch cfg.Ports[i].Faces {
	case FacesHost:
		t |= trustHost | trustPFCPeer
	case FacesSwitch:
		t |= trustPFCPeer
	}
	return t
}

// acceptsPFC reports whether the port takes a PFC frame: the port obeys PFC
// and, with trustPFCPeer, the frame comes from the peer's MAC (PFC is link
// local: only the station at the other end of the link sends it).
func (ig *ingress) acceptsPFC(frame []byte) bool {
	return ig.trust&trustNoPFC == 0 && (ig.trust&trustPFCPeer == 0 || wire.MAC(frame[6:12]) == ig.pfcFrom)
}

// hostRefusal is the counter of a frame from host-facing port in (ingress
// ig) that the host may not send (s from wire.Classify, ip its IPv4 header),
// or notRefused.
// A host sends RoCEv2 data (any BTH opcode but the control ones), CNPs, ACKs
// and NAKs from its own address only: the route to the source leads back to
// in (strict reverse-path filtering, RFC 3704 Sec. 2.2); CP feedback never
// (hosts have no CP). Other IPv4 traffic (not RoCEv2, or a fragment) passes.
func (e *Engine) hostRefusal(ig *ingress, in int, frame []byte, ip wire.IPv4, s *wire.Summary) counter {
	switch s.Kind {
	case wire.KindData, wire.KindAck, wire.KindNak, wire.KindCNP:
	case wire.KindRoCCRate, wire.KindP4QCN, wire.KindQCN:
		return refusedCounter[s.Kind]
	default: // KindOther: RoCEv2 with a BTH opcode ccbed does not use is data too
		if s.L4Off == 0 || binary.BigEndian.Uint16(frame[s.L4Off+2:]) != wire.RoCEv2Port {
			return notRefused
		}
	}
	if src := ip.Src(); src != ig.lastSrc {
		ig.lastSrc, ig.lastOK = src, e.routes.hasPort(src, in)
	}
	if ig.lastOK {
		return notRefused
	}
	return refusedCounter[s.Kind]
}

// notRefused is hostRefusal's answer for a frame the host may send (no
// counter: cRxPackets is never a refusal).
const notRefused = cRxPackets

// refusedCounter is the counter of a refused frame, by kind (KindOther: a
// RoCEv2 frame with another BTH opcode, counted as data).
var refusedCounter = [...]counter{
	wire.KindOther:    cRefusedData,
	wire.KindData:     cRefusedData,
	wire.KindAck:      cRefusedAck,
	wire.KindNak:      cRefusedNak,
	wire.KindCNP:      cRefusedCNP,
	wire.KindRoCCRate: cRefusedRoCCRate,
	wire.KindP4QCN:    cRefusedP4QCN,
	wire.KindQCN:      cRefusedQCN,
	wire.KindPFC:      cRefusedPFC,
}

// ecmpPort is the port of ECMP group r a frame's 5-tuple hashes to (IP
// addresses, protocol and, for UDP, the ports).
func (e *Engine) ecmpPort(frame []byte, ip wire.IPv4, s *wire.Summary, r *route) int {
	var sport, dport uint16
	if s.L4Off != 0 {
		l4 := frame[s.L4Off:]
		sport, dport = binary.BigEndian.Uint16(l4[0:]), binary.BigEndian.Uint16(l4[2:])
	}
	h := FlowHash(e.hashSeed, ip.Src(), ip.Dst(), sport, dport, ip.Protocol())
	return int(e.routes.ports[r.first+h%r.n])
}

// flowKey reads a data frame's flow key at the offsets of m.
func flowKey(frame []byte, m *Meta) ccalgo.FlowKey {
	var k ccalgo.FlowKey
	readFlowKey(&k, frame, m)
	return k
}

// readFlowKey is flowKey writing into *k (no struct copy on the hot path).
// The headers are read through array pointers, one length check each.
func readFlowKey(k *ccalgo.FlowKey, frame []byte, m *Meta) {
	ip := (*[wire.IPv4MinLen]byte)(frame[m.IPOff:])
	l4 := (*[4]byte)(frame[m.L4Off:]) // the UDP ports
	k.SrcIP = binary.BigEndian.Uint32(ip[12:])
	k.DstIP = binary.BigEndian.Uint32(ip[16:])
	k.SrcPort = binary.BigEndian.Uint16(l4[0:])
	k.DstPort = binary.BigEndian.Uint16(l4[2:])
	k.DestQP = 0
	if m.RoCE {
		bth := (*[8]byte)(frame[int(m.L4Off)+wire.UDPLen:])
		k.DestQP = binary.BigEndian.Uint32(bth[4:]) & 0xffffff
	}
}

// readFlowKey2 is readFlowKey writing the key into both a and b.
func readFlowKey2(a, b *ccalgo.FlowKey, frame []byte, m *Meta) {
	ip := (*[wire.IPv4MinLen]byte)(frame[m.IPOff:])
	l4 := (*[4]byte)(frame[m.L4Off:]) // the UDP ports
	src, dst := binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:])
	sp, dp := binary.BigEndian.Uint16(l4[0:]), binary.BigEndian.Uint16(l4[2:])
	var qp uint32
	if m.RoCE {
		bth := (*[8]byte)(frame[int(m.L4Off)+wire.UDPLen:])
		qp = binary.BigEndian.Uint32(bth[4:]) & 0xffffff
	}
	a.SrcIP, a.DstIP, a.SrcPort, a.DstPort, a.DestQP = src, dst, sp, dp, qp
	b.SrcIP, b.DstIP, b.SrcPort, b.DstPort, b.DestQP = src, dst, sp, dp, qp
}

// Enqueue puts a classified frame into its egress port's queue: control frames
// into the control queue, data into the FIFO (drop-tail at the buffer limit),
// with PFC ingress accounting and the CP's OnEnqueue. It reports whether the
// engine took the frame; on false the caller frees it (a drop, counted, or a
// PFC frame, applied). Call it from the tx+CC lcore.
func (e *Engine) Enqueue(now int64, m *Meta, frame []byte, h Handle) bool {
	g := &e.eg[m.Out]
	sh := &e.tx[g.sh]
	switch m.Class {
	case ClassPFC:
		e.receivePFC(now, g, frame)
		return false
	case ClassControl:
		if !g.ctl.reserve() {
			g.c[cDropControl]++
			return false
		}
		g.ctl.push(h, frame)
		g.c[cControlFwd]++
		sh.active |= 1 << m.Out
		return true
	}
	l := int64(len(frame))
	prio := m.Prio & 7
	q := &g.q[prio]
	lossless := e.pfcOn && e.lossless&(1<<prio) != 0
	// One shard: xoffPorts has bit i set exactly while port i holds a
	// priority in XOFF.
	if lossless && sh.acct == nil && sh.xoffPorts&(1<<m.In) != 0 {
		if ig := &e.eg[m.In]; ig.xoff&(1<<prio) != 0 {
			ig.sinceXOFF[prio] += l
		}
	}
	// The port's cap holds every frame of a static buffer, and only the lossy
	// ones of a shared buffer: there a lossless frame is dropped only when
	// its ingress's headroom is full (egress admission always passes, as
	// in the HPCC simulator's switch MMU).
	if (g.bufLimit > 0 && g.qBytes+l > g.bufLimit && !(lossless && sh.buf.on)) || q.full() {
		g.c[cDropBuffer]++
		e.traceDrop(now, g, m, frame)
		return false
	}
	if sh.buf.on {
		if lossless {
			if !sh.buf.admitLossless(e.acctOf(sh, int(m.In)), prio, l) {
				// Counted at the ingress port, whose counters the
				// shard owns only when it is the one shard.
				if sh.acct == nil {
					e.eg[m.In].c[cDropHeadroom]++
				} else {
					g.c[cDropHeadroom]++
				}
				e.traceDrop(now, g, m, frame)
				return false
			}
		} else if !sh.buf.admitLossy(g.qPrio[prio], l) {
			g.c[cDropBuffer]++
			e.traceDrop(now, g, m, frame)
			return false
		}
	}
	// The push inline (q.push is over the inliner's budget): a full ring
	// grows, a few times per queue in a run.
	if int(q.tail-q.head) == len(q.buf) {
		q.grow()
	}
	// Field by field: a composite literal is built on the stack and then
	// copied, which stalls on store forwarding; this is the hottest store.
	en := &q.buf[q.tail&q.mask]
	q.tail++
	en.h, en.frame = h, frame
	en.ipOff, en.intOff = m.IPOff, m.INTOff
	en.in, en.prio, en.class = m.In, prio, m.Class
	en.stamp = false
	sh.active |= 1 << m.Out
	g.nonEmpty |= 1 << prio
	g.qBytes += l
	g.qPrio[prio] += l
	e.traceEnq(now, g, m, frame)
	if uint64(g.qBytes) > g.c[cQueueMax] {
		g.c[cQueueMax] = uint64(g.qBytes)
	}
	if lossless {
		if !sh.addInReserve(int(m.In), prio, l) {
			e.ingressAdd(now, sh, int(m.In), prio, l)
		}
	} else if sh.buf.on {
		sh.buf.used += l
	}
	if m.Class != ClassData || !(g.hookEnq || g.hookDeq) {
		// No CP hook reads this entry's flow or mark (en.flow and en.mark
		// are read only for data with hooks).
		return true
	}
	if g.fc != nil {
		// RoCC: its flow table counts the packet, nothing else (en.mark
		// stays unread).
		readFlowKey(&en.flow, frame, m)
		en.tag = g.fc.EnqueueFlow(&en.flow)
		return true
	}
	en.mark = wire.MarkFromECN(frame[m.IPOff+1])
	en.tag = 0
	switch {
	case !g.needFlow: // a flow-blind CP: en.flow and dp.Flow stay unset
	case !g.hookEnq:
		readFlowKey(&en.flow, frame, m)
	default:
		// The key stored field by field into both, not copied from one to
		// the other: a 16-byte load of five narrow stores just made would
		// stall on store forwarding.
		readFlowKey2(&en.flow, &g.dp.Flow, frame, m)
	}
	if g.hookEnq {
		g.ps.QueueBytes = g.qPrio[prio]
		g.dp.WireBytes, g.dp.Mark, g.dp.Tag = len(frame), en.mark, 0
		v := g.cp.OnEnqueue(now, &g.dp, &g.ps, g.sink)
		sh.cpDirty |= 1 << m.Out
		if v.Mark > en.mark {
			e.applyMark(now, g, en, v.Mark)
		}
		en.stamp, en.tag = v.StampINT, v.Tag
	}
	return true
}

// applyMark raises the entry's ECN mark to m (never lowering it), updating the
// IPv4 checksum incrementally. A packet that is not ECN-capable is not marked.
func (e *Engine) applyMark(now int64, g *egress, en *qEntry, m ccalgo.Mark) {
	nm := en.mark.Max(m)
	if nm == en.mark {
		return
	}
	ip := wire.IPv4(en.frame[en.ipOff:])
	if ip.ECN() == wire.ECNNotECT {
		g.c[cNotECT]++
		return
	}
	ip.SetECN(wire.ECNForMark(nm))
	en.mark = nm
	if nm == ccalgo.MarkCE {
		g.c[cMarkedCE]++
	} else {
		g.c[cMarkedUE]++
	}
	e.traceMark(now, g, en)
}

// Transmit runs port p's shaper at now and fills out with the frames due on the
// wire, control frames first; it returns how many. Data waits while its
// priority is paused by PFC. Call it from the tx+CC lcore.
func (e *Engine) Transmit(now int64, p int, out []TxItem) int {
	g := &e.eg[p]
	g.gen.done += g.genRel
	g.genRel = 0
	if g.pfcSeen {
		e.updatePause(now, g)
	}
	t := float64(now)
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
	direct := g.delayNs == 0 && g.dl.len() == 0
	// The shaper's clock lives in a register through the loop (a store and
	// reload of g.busyUntil per frame would chain every frame's float add
	// behind store forwarding); g.busyUntil is current whenever a dequeue
	// may read it (INT's TS) and after the loop.
	bu := g.busyUntil
shape:
	for bu <= t && g.dl.reserve() {
		var h Handle
		var frame []byte
		switch {
		case g.gen.pending():
			frame = g.gen.next()
		case g.ctl.len() > 0:
			h, frame = g.ctl.pop()
		case g.nonEmpty&^g.pausedMask != 0:
			// One data queue busy (not lossless under PFC), frames going
			// straight into out: drainData's loop, back here once a CP's
			// feedback waits or out is full.
			if direct && n < len(out) && g.nonEmpty&(g.nonEmpty-1) == 0 && !e.noDrain {
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
		g.dl.push(h, frame, at)
	}
	g.busyUntil = bu
	n += e.release(now, g, out[n:])
	if g.nonEmpty == 0 && g.ctl.len() == 0 && !g.gen.pending() && g.dl.len() == 0 {
		e.tx[g.sh].active &^= 1 << p
	}
	return n
}

// release moves the frames of g's delay line that are due at now into out,
// oldest first, and returns how many.
func (e *Engine) release(now int64, g *egress, out []TxItem) int {
	n := 0
	for n < len(out) && g.dl.len() > 0 {
		d := g.dl.front()
		if d.at > now {
			break
		}
		it := &out[n]
		it.H, it.Frame = d.h, d.frame
		if d.h == 0 {
			g.genRel++
		}
		g.dl.drop()
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
// dequeueData does (an XON may follow any frame). It stops where that choice
// matters again: a CP hook emitted feedback, or an XON was sent, out of this
// port (it goes before the next data frame). It returns the shaper's clock
// and the frames it put into out (at least one: the caller checked the
// shaper is free).
func (e *Engine) drainData(now int64, g *egress, bu, t float64, out []TxItem) (float64, int) {
	prio := bits.TrailingZeros8(g.nonEmpty)
	q := &g.q[prio]
	ovh, nspb := float64(e.overhead), g.nsPerByte
	sh := &e.tx[g.sh]
	lossless := e.pfcOn && e.lossless&(1<<prio) != 0
	from := q.head // RoCC: its dequeues after the loop (dequeueBatch)
	n, bytes := 0, 0
	for n < len(out) && bu <= t && q.head != q.tail {
		en := &q.buf[q.head&q.mask]
		l := len(en.frame)
		g.qBytes -= int64(l)
		g.qPrio[prio] -= int64(l)
		if lossless && !sh.releaseInReserve(int(en.in), en.prio, int64(l)) {
			e.ingressRelease(now, sh, int(en.in), en.prio, int64(l))
		}
		if (g.hookDeq || en.stamp) && g.deq == nil {
			g.busyUntil = bu // INT's TS
			e.dequeueHooks(now, g, en, prio)
		}
		it := &out[n]
		it.H, it.Frame = en.h, en.frame
		en.h, en.frame = 0, nil
		q.head++
		bu += (float64(l) + ovh) * nspb
		g.ps.TxBytes += uint64(l)
		bytes += l
		n++
		if g.gen.pending() {
			break
		}
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
	e.traceDrained(now, g, q, from, out[:n])
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
			if l := int32(len(g.q[p].peek().frame)); g.deficit[p] >= l {
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
	t := e.nextPubIn
	for k := range e.tx {
		sh := &e.tx[k]
		e.readTimers(sh)
		t = min(t, sh.nextSample, sh.nextPubTx, sh.cpMin)
	}
	for k := range e.tx {
		for a := e.tx[k].xoffPorts; a != 0; a &= a - 1 {
			g := &e.eg[bits.TrailingZeros64(a)]
			for x := g.xoff; x != 0; x &= x - 1 {
				t = min(t, g.refreshAt[bits.TrailingZeros8(x)])
			}
		}
	}
	for a := e.Active(); a != 0; a &= a - 1 {
		g := &e.eg[bits.TrailingZeros64(a)]
		free := int64(math.Ceil(g.busyUntil))
		switch {
		case g.gen.pending() || g.ctl.len() > 0:
			t = min(t, free)
		case g.nonEmpty != 0:
			// The earliest a queue holding frames is unpaused (pausedUntil
			// is 0, or past, for one that is not paused).
			w := int64(math.MaxInt64)
			for ne := g.nonEmpty; ne != 0; ne &= ne - 1 {
				w = min(w, g.pausedUntil[bits.TrailingZeros8(ne)])
			}
			t = min(t, max(free, w))
		}
		if g.dl.len() > 0 {
			t = min(t, g.dl.front().at)
		}
	}
	return max(t, now)
}

// dequeueData takes the head of data queue prio for the wire: CP OnDequeue,
// marks, INT record, buffer and PFC accounting.
func (e *Engine) dequeueData(now int64, g *egress, prio int) (Handle, []byte) {
	q := &g.q[prio]
	en := q.peek()
	h, frame := en.h, en.frame
	l := int64(len(frame))
	g.qBytes -= l
	g.qPrio[prio] -= l
	sh := &e.tx[g.sh]
	if e.pfcOn && e.lossless&(1<<prio) != 0 {
		e.ingressRelease(now, sh, int(en.in), en.prio, l)
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

// dequeueHooks runs what a data frame leaving queue prio needs once the
// queue no longer counts it: the CP's OnDequeue and its mark, and the INT
// record asked for at enqueue or now.
func (e *Engine) dequeueHooks(now int64, g *egress, en *qEntry, prio int) {
	if en.class == ClassData && g.fc != nil {
		g.fc.DequeueFlow(en.tag, &en.flow, g.qPrio[prio])
		return
	}
	if en.class == ClassData && g.hookDeq {
		g.ps.QueueBytes = g.qPrio[prio]
		if g.needFlow { // a flow-blind CP's en.flow was never set
			g.dp.Flow = en.flow
		}
		g.dp.WireBytes, g.dp.Mark, g.dp.Tag = len(en.frame), en.mark, en.tag
		v := g.cp.OnDequeue(now, &g.dp, &g.ps, g.sink)
		e.tx[g.sh].cpDirty |= 1 << g.idx
		if v.Mark > en.mark { // applyMark never lowers a mark
			e.applyMark(now, g, en, v.Mark)
		}
		if v.StampINT || en.stamp {
			e.stampINT(g, en)
		}
	} else if en.stamp {
		e.stampINT(g, en)
	}
}

// intCode is the B code of a link of bps in this switch's INT records.
func intCode(bps float64) uint8 {
	c, _ := wire.LinkSpeedCode(bps)
	return c
}

// stampINT pushes this hop's INT record (HPCC Section 4.1): B, TS = the time
// the packet starts on the wire, txBytes = bytes the port sent before this
// packet, qLen = queue after the dequeue.
//
// TS is the shaper's clock (busyUntil as the frame starts), not the poll's
// time: the frames one late poll releases together (a shaper burst) start one
// serialisation time apart on the link, and TS must say so, or the pairs (TS,
// txBytes) give a txRate above the link rate (HPCC Eq. 2 then over-reacts).
func (e *Engine) stampINT(g *egress, en *qEntry) {
	if en.intOff == 0 {
		g.c[cINTFull]++
		return
	}
	q := max(g.qBytes, 0)
	hop := ccalgo.INTHop{
		TS:      uint32(uint64(int64(g.busyUntil)) % ccalgo.INTTSWrap),
		TxBytes: uint32(g.ps.TxBytes % ccalgo.INTTxBytesWrap),
		QLen:    uint32(min(q, ccalgo.INTQLenMax)),
	}
	if wire.INT(en.frame[en.intOff:]).PushCode(g.intCode, &hop, e.switchID) {
		g.c[cINTStamped]++
	} else {
		g.c[cINTFull]++
	}
}

// updatePause keeps the paused priorities, PortState.Paused / LastOff (TCD)
// and the port's paused time: the port counts as paused while a received pause
// holds a priority with frames queued (or, with none queued, pfc.priority).
func (e *Engine) updatePause(now int64, g *egress) {
	g.pausedMask = 0
	for p, u := range g.pausedUntil {
		if u > now {
			g.pausedMask |= 1 << p
		}
	}
	held := g.nonEmpty
	if held == 0 {
		held = 1 << e.prio
	}
	var until int64
	for m := held; m != 0; m &= m - 1 {
		until = max(until, g.pausedUntil[bits.TrailingZeros8(m)])
	}
	if g.pausedMask&held != 0 {
		if !g.ps.Paused {
			g.ps.Paused = true
			g.pauseStart = now
		}
		g.ps.LastOff = now
		return
	}
	if g.ps.Paused {
		end := max(until, g.pauseStart)
		g.c[cPausedNs] += uint64(end - g.pauseStart)
		g.ps.Paused = false
		g.ps.LastOff = end
	}
}

// receivePFC applies a PFC frame received on g's port: data of each enabled
// priority is held for its quanta at g's line rate; 0 resumes it.
func (e *Engine) receivePFC(now int64, g *egress, frame []byte) {
	pfc := wire.PFC(wire.Ethernet(frame).Payload())
	g.pfcSeen = true
	paused := false
	for i := 0; i < wire.PFCPriorities; i++ {
		if !pfc.Enabled(i) {
			continue
		}
		q := pfc.PauseQuanta(i)
		if q != 0 {
			paused = true
		}
		if !e.honor {
			continue
		}
		if q == 0 {
			g.pausedUntil[i] = min(g.pausedUntil[i], now)
		} else {
			g.pausedUntil[i] = now + wire.QuantaNs(q, g.linkBps)
		}
	}
	if paused {
		g.c[cPausesRecv]++
	} else {
		g.c[cResumesRecv]++
	}
	e.updatePause(now, g)
}

// acctOf is the lossless count of ingress port in that shard sh keeps: the
// port's own with one shard.
func (e *Engine) acctOf(sh *txShard, in int) *ingressAcct {
	return sh.acctAt[in]
}

// ingressAdd counts l more bytes of lossless priority prio from port in inside
// the switch (in shard sh: the frame's egress port's) and sends XOFF upstream
// when they cross the threshold: the static xoff_bytes, or the shared
// buffer's dynamic one. With several shards the shard's own count decides,
// and the pause follows at once when the shard owns port in, else at the
// next ServiceShard of port in's shard (syncPFC).
func (e *Engine) ingressAdd(now int64, sh *txShard, in int, prio uint8, l int64) {
	a := e.acctOf(sh, in)
	if buf := &sh.buf; buf.on {
		// Within the reserve, no headroom in use and a threshold above 0
		// (the common case under light load): buf.add keeps the frame in
		// the reserve and shouldPause is false, so nothing more happens.
		if nb := a.inBytes[prio] + l; nb <= buf.reserve && a.hdrmBytes[prio] == 0 && buf.pool-buf.used >= buf.minFree {
			a.inBytes[prio] = nb
			return
		}
		buf.add(a, prio, l)
	} else if a.inBytes[prio] += l; a.inBytes[prio] <= e.xoffBytes {
		return // shouldPause is false
	}
	if sh.acct == nil {
		if g := &e.eg[in]; g.xoff&(1<<prio) == 0 && e.shouldPause(sh, a, prio) {
			e.setXOFF(now, g, prio)
		}
		return
	}
	if sh.xoff[in]&(1<<prio) == 0 && e.shouldPause(sh, a, prio) {
		sh.xoff[in] |= 1 << prio
		sh.xoffIn |= 1 << in
		e.pfcWant[in].Or(1 << (8*sh.k + int(prio)))
		if int(e.eg[in].sh) == sh.k {
			e.syncPort(now, in)
		}
	}
}

// ingressRelease counts l bytes leaving and sends XON below the resume level
// (with several shards, as ingressAdd sends XOFF).
func (e *Engine) ingressRelease(now int64, sh *txShard, in int, prio uint8, l int64) {
	a := e.acctOf(sh, in)
	if buf := &sh.buf; buf.on {
		if a.hdrmBytes[prio] == 0 && a.inBytes[prio] <= buf.reserve {
			a.inBytes[prio] -= l // buf.remove: nothing in the headroom or the shared pool
		} else {
			buf.remove(a, prio, l)
		}
	} else {
		a.inBytes[prio] -= l
	}
	if sh.acct == nil {
		if sh.xoffPorts&(1<<in) == 0 {
			return // port in holds no priority in XOFF
		}
		if g := &e.eg[in]; g.xoff&(1<<prio) != 0 && e.shouldResume(sh, a, prio) {
			e.setXON(now, g, prio)
		}
		return
	}
	if sh.xoff[in]&(1<<prio) != 0 && e.shouldResume(sh, a, prio) {
		e.shardResume(sh, in, prio)
		if int(e.eg[in].sh) == sh.k {
			e.syncPort(now, in)
		}
	}
}

// shardResume withdraws shard sh's want of XOFF for priority prio of port in.
func (e *Engine) shardResume(sh *txShard, in int, prio uint8) {
	sh.xoff[in] &^= 1 << prio
	if sh.xoff[in] == 0 {
		sh.xoffIn &^= 1 << in
	}
	e.pfcWant[in].And(^(uint64(1) << (8*sh.k + int(prio))))
}

// syncPFC, with several shards, runs on shard sh's lcore at ServiceShard:
// the shard's own wants of XOFF that the shared buffer's moving threshold
// now lets go, then, for each of its ports, the pauses every shard's wants
// call for: XOFF for a priority some shard wants held, XON for one that no
// shard wants any more.
func (e *Engine) syncPFC(now int64, sh *txShard) {
	for a := sh.xoffIn; a != 0; a &= a - 1 {
		in := bits.TrailingZeros64(a)
		for x := sh.xoff[in]; x != 0; x &= x - 1 {
			p := uint8(bits.TrailingZeros8(x))
			if e.shouldResume(sh, &sh.acct[in], p) {
				e.shardResume(sh, in, p)
			}
		}
	}
	for a := sh.ports; a != 0; a &= a - 1 {
		e.syncPort(now, bits.TrailingZeros64(a))
	}
}

// syncPort sends the pauses port i's wants call for (syncPFC), on the lcore
// of the shard owning port i.
func (e *Engine) syncPort(now int64, i int) {
	w := e.pfcWant[i].Load()
	w |= w >> 32
	w |= w >> 16
	w |= w >> 8
	want, g := uint8(w), &e.eg[i]
	for x := want &^ g.xoff; x != 0; x &= x - 1 {
		e.setXOFF(now, g, uint8(bits.TrailingZeros8(x)))
	}
	for x := g.xoff &^ want; x != 0; x &= x - 1 {
		e.setXON(now, g, uint8(bits.TrailingZeros8(x)))
	}
}

// setXOFF puts priority prio of ingress port g into XOFF and pauses upstream.
func (e *Engine) setXOFF(now int64, g *egress, prio uint8) {
	g.xoff |= 1 << prio
	e.tx[g.sh].xoffPorts |= 1 << g.idx
	g.c[cPFCOnsets]++
	g.c[cPFCOnsetsPrio+counter(prio)]++
	g.sinceXOFF[prio] = 0
	e.pfcEvent(now, g, prio, true)
	e.sendPause(now, g, prio, e.pauseQuanta)
}

// pfcEvent records an XOFF or XON of priority prio of ingress port g.
func (e *Engine) pfcEvent(now int64, g *egress, prio uint8, xoff bool) {
	sh := &e.tx[g.sh]
	sh.pfcEvents.push(&PFCEvent{TNs: now, Port: int32(g.idx), Prio: prio, XOFF: xoff,
		IngressBytes: e.acctOf(sh, int(g.idx)).inBytes[prio]})
	e.tracePFC(now, g, prio, xoff, e.acctOf(sh, int(g.idx)).inBytes[prio])
}

// setXON resumes priority prio of ingress port g upstream.
func (e *Engine) setXON(now int64, g *egress, prio uint8) {
	g.xoff &^= 1 << prio
	if g.xoff == 0 {
		e.tx[g.sh].xoffPorts &^= 1 << g.idx
	}
	if e.pfcWant == nil {
		e.recordAfterXOFF(g, prio)
	}
	e.pfcEvent(now, g, prio, false)
	e.sendPause(now, g, prio, 0)
}

// recordAfterXOFF counts the bytes priority prio of ingress port g took
// between its XOFF and its XON into the port's histogram and maximum
// (PortCounters.PFCAfterXOFFHist): the peer's reaction to a pause, which
// the headroom must hold.
func (e *Engine) recordAfterXOFF(g *egress, prio uint8) {
	n := g.sinceXOFF[prio]
	g.sinceXOFF[prio] = 0
	g.c[cAfterXOFFHist+counter(AfterXOFFBucket(n))]++
	if uint64(n) > g.c[cAfterXOFFMax] {
		g.c[cAfterXOFFMax] = uint64(n)
	}
}

// shouldPause reports whether lossless priority prio of count a (shard sh's)
// calls for XOFF.
func (e *Engine) shouldPause(sh *txShard, a *ingressAcct, prio uint8) bool {
	if buf := &sh.buf; buf.on {
		return buf.shouldPause(a, prio)
	}
	return a.inBytes[prio] > e.xoffBytes
}

// shouldResume reports whether the paused lossless priority prio of count a
// (shard sh's) may resume.
func (e *Engine) shouldResume(sh *txShard, a *ingressAcct, prio uint8) bool {
	if buf := &sh.buf; buf.on {
		return buf.shouldResume(a, prio)
	}
	return a.inBytes[prio] < e.xonBytes
}

// sendPause queues a PFC frame for priority prio out of g's port (upstream).
func (e *Engine) sendPause(now int64, g *egress, prio uint8, quanta uint16) {
	g.refreshAt[prio] = now + g.refreshNs
	b := g.gen.slot()
	if b == nil {
		g.c[cDropControl]++
		if quanta != 0 {
			g.refreshAt[prio] = now // retry at the next Service
		}
		return
	}
	var qs [wire.PFCPriorities]uint16
	qs[prio] = quanta
	n, _ := wire.BuildPFC(b, g.mac, 1<<prio, &qs)
	g.gen.commit(n)
	e.tx[g.sh].active |= 1 << g.idx
	if quanta != 0 {
		g.c[cPausesSent]++
		g.c[cPausesSentPrio+counter(prio)]++
	} else {
		g.c[cResumesSent]++
	}
}

// emitFeedback builds a CP's feedback packet toward the flow's source.
func (e *Engine) emitFeedback(from int, fb *ccalgo.Feedback) {
	out := e.routes.LookupHash(fb.Flow.SrcIP,
		FlowHash(e.hashSeed, e.ip, fb.Flow.SrcIP, fb.Flow.DstPort, fb.Flow.SrcPort, 0))
	if out < 0 {
		e.eg[from].c[cFeedbackNoPort]++
		return
	}
	g, cp := &e.eg[out], &e.eg[from]
	sh := &e.tx[cp.sh]
	// A port of another shard: the frame crosses over that shard's mailbox
	// (drops counted at the congestion point's port, the one this lcore
	// owns).
	var mb *mailbox
	var b []byte
	if g.sh == cp.sh {
		b = g.gen.slot()
	} else {
		mb = sh.outbox[g.sh]
		b = mb.slot()
	}
	if b == nil {
		if mb == nil {
			g.c[cDropControl]++
		} else {
			cp.c[cDropControl]++
		}
		return
	}
	var n int
	var err error
	if fb.Kind == ccalgo.FeedbackRoCCRate {
		// From the template: BuildFeedback's frame for these endpoints.
		n, err = e.roccRate.Build(b, &g.peer, &g.mac, fb.Flow.SrcIP, fb)
	} else {
		sh.ep = wire.Endpoints{
			DstMAC: g.peer, SrcMAC: g.mac,
			SrcIP: e.ip, DstIP: fb.Flow.SrcIP,
			SrcPort: fb.Flow.DstPort,
		}
		n, err = wire.BuildFeedback(b, &sh.ep, fb)
	}
	if err != nil {
		cp.c[cDropControl]++
		return
	}
	if mb != nil {
		mb.commit(uint8(out), n)
	} else {
		g.gen.commit(n)
		sh.active |= 1 << out
	}
	// Feedback is counted at the congestion point that generated it (the
	// port whose queue the flow congests), not at the port it leaves by.
	switch fb.Kind {
	case ccalgo.FeedbackRoCCRate:
		cp.c[cRoCCRateSent]++
	case ccalgo.FeedbackP4QCN:
		cp.c[cP4QCNSent]++
	case ccalgo.FeedbackQCN:
		cp.c[cQCNSent]++
	}
}

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

// readTimers reads the timers of shard sh's CPs that ran since they were last
// read, and keeps the earliest of its ports' in cpMin.
func (e *Engine) readTimers(sh *txShard) {
	if sh.cpDirty == 0 {
		return
	}
	// Only a timer that moved later on the port that held the minimum needs
	// a scan of every port; an earlier or unchanged one updates it in place.
	rescan := false
	for a := sh.cpDirty; a != 0; a &= a - 1 {
		p := bits.TrailingZeros64(a)
		g := &e.eg[p]
		old := g.cpNext
		g.cpNext = g.cp.NextTimer()
		switch {
		case g.cpNext < sh.cpMin:
			sh.cpMin = g.cpNext
		case g.cpNext > old && old == sh.cpMin:
			rescan = true
		}
	}
	sh.cpDirty = 0
	if rescan {
		m := ccalgo.Never
		for a := sh.ports; a != 0; a &= a - 1 {
			m = min(m, e.eg[bits.TrailingZeros64(a)].cpNext)
		}
		sh.cpMin = m
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

// ringGrowthBytes is what the port's rings have allocated by growing since
// the engine was built. A ring doubles when it fills, so its growth follows
// from its size: one that started with n0 slots and now has n allocated
// 2n0 + 4n0 + ... + n = 2(n - n0) slots; a data queue, which starts with
// none, allocated n1 = min(limit, initialQueueSlots) slots first, then
// doubled: 2n - n1.
func (g *egress) ringGrowthBytes() uint64 {
	doubled := func(n, n0 int, size uintptr) uintptr { return 2 * uintptr(n-n0) * size }
	b := doubled(len(g.dl.buf), min(g.dl.limit, ringStart), unsafe.Sizeof(dlEntry{})) +
		doubled(len(g.ctl.h), min(g.ctl.limit, ringStart), unsafe.Sizeof(Handle(0))+unsafe.Sizeof([]byte(nil))) +
		doubled(len(g.gen.lens), min(g.gen.limit, genStart), genSlotLen+2)
	for i := range g.q {
		if q := &g.q[i]; len(q.buf) > 0 {
			b += (2*uintptr(len(q.buf)) - uintptr(min(q.limit, initialQueueSlots))) * unsafe.Sizeof(qEntry{})
		}
	}
	return uint64(b)
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
		for g.ctl.len() > 0 {
			h, _ := g.ctl.pop()
			free(h)
			n++
		}
		for g.dl.len() > 0 {
			if d := g.dl.front(); d.h != 0 {
				free(d.h)
				n++
			}
			g.dl.drop()
		}
		g.gen.sched, g.gen.done, g.genRel = g.gen.wr, g.gen.wr, 0
		g.acct.inBytes, g.acct.hdrmBytes, g.xoff = [wire.PFCPriorities]int64{}, [wire.PFCPriorities]int64{}, 0
	}
	for k := range e.tx {
		sh := &e.tx[k]
		sh.buf.used, sh.active, sh.xoffPorts, sh.xoffIn = 0, 0, 0, 0
		for i := range sh.acct {
			sh.acct[i].inBytes, sh.acct[i].hdrmBytes, sh.xoff[i] = [wire.PFCPriorities]int64{}, [wire.PFCPriorities]int64{}, 0
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
