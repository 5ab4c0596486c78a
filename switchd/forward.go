package switchd

import (
	"encoding/binary"

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

// Classify parses a frame received on port in, routes it, decrements its TTL,
// rewrites its MACs for the egress port and fills m. It reports false when the
// frame is dropped (counted by reason); the caller then frees it. A PFC frame
// is ClassPFC with Out = In. Call it from the rx / switching lcore.
//
// The commonest frame, RoCEv2 data in an untagged frame without IPv4
// options that a host port accepts from its last checked source (or any
// port that checks no source), routed by a direct table's entry or an
// ECMP group, takes a fast path (wire.ClassifyData, the headers read at
// their fixed offsets); any other, and any such frame that would be
// dropped, goes through classify, which does everything from the start:
// the fast path changes nothing before it commits.
func (e *Engine) Classify(in int, frame []byte, m *Meta) bool {
	intOff, ok := wire.ClassifyData(frame)
	if !ok {
		return e.classify(in, frame, m)
	}
	h := (*[wire.DataMinLen]byte)(frame) // ClassifyData checked the length
	const ipOff, l4Off = wire.EthernetLen, wire.EthernetLen + wire.IPv4MinLen
	ig := &e.ing[in]
	src, dst := binary.BigEndian.Uint32(h[ipOff+12:]), binary.BigEndian.Uint32(h[ipOff+16:])
	if ig.trust&trustHost != 0 && !(ig.lastOK && src == ig.lastSrc) {
		return e.classify(in, frame, m) // hostRefusal decides
	}
	// The direct table's entry of a plain route, read here (route's first
	// case, without the call); route for the rest.
	out := -1
	t := &e.routes
	if d := dst>>8 - t.blockBase; d < uint32(len(t.blocks)) {
		if v := t.blocks[d]; v&entryGroup == 0 && v>>24 != 0 {
			out = int(v>>24) - 1
		}
	}
	if out < 0 {
		var r *route
		if out, r = t.route(dst); out < 0 {
			if r == nil {
				return e.classify(in, frame, m) // no route: counted there
			}
			// ecmpPort's hash of a UDP datagram.
			sport := binary.BigEndian.Uint16(h[l4Off:])
			out = int(t.ports[r.first+FlowHash(e.hashSeed, src, dst, sport, wire.RoCEv2Port, wire.IPProtoUDP)%r.n])
		}
	}
	if e.decTTL && !wire.IPv4(frame[ipOff:]).DecTTL() {
		return e.classify(in, frame, m) // TTL expired (DecTTL changed nothing): counted there
	}
	ig.c[cRxPackets]++
	ig.c[cRxBytes] += uint64(len(frame))
	copy(frame[0:12], e.addr[out].macs[:])
	prio := e.prio
	if e.dscpPrio {
		prio = h[ipOff+1] >> 5
	}
	m.In, m.Out, m.Class, m.Prio = uint8(in), uint8(out), ClassData, prio
	m.IPOff, m.L4Off, m.INTOff, m.RoCE = ipOff, l4Off, intOff, true
	return true
}

// classify is Classify for every frame.
func (e *Engine) classify(in int, frame []byte, m *Meta) bool {
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

// trustOf is port i's trust bits (ingress.trust) under s.
func trustOf(s *Spec, i int) uint8 {
	var t uint8
	if s.Ports[i].IgnorePFC {
		t |= trustNoPFC
	}
	if s.Trust != TrustTopology {
		return t
	}
	switch s.Ports[i].Faces {
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
//
// A lossy data or other frame admitted to its queue (the commonest case)
// takes a lean path: its push and counts, with the CP hooks out of line
// (enqueueHooks). Everything else (control and PFC frames, a lossless
// priority, a drop) goes through enqueue, which decides from the start:
// the lean path changes nothing before it knows the frame is admitted.
func (e *Engine) Enqueue(now int64, m *Meta, frame []byte, h Handle) bool {
	prio := m.Prio & 7
	if m.Class > ClassData || e.lossless&(1<<prio) != 0 {
		return e.enqueueLossless(now, m, frame, h)
	}
	g := &e.eg[m.Out]
	sh := &e.tx[g.sh]
	l := int64(len(frame))
	q := &g.q[prio]
	if g.bufLimit > 0 && g.qBytes+l > g.bufLimit || q.full() || sh.buf.on && !sh.buf.admitLossy(g.qPrio[prio], l) {
		return e.enqueue(now, m, frame, h) // dropped there, counted and traced
	}
	if int(q.tail-q.head) == len(q.buf) {
		q.grow()
	}
	en := q.pushEntry(m, frame, h)
	sh.active |= 1 << m.Out
	g.queued(prio, l)
	e.traceEnq(now, g, m, frame)
	if sh.buf.on {
		sh.buf.used += l
	}
	if m.Class == ClassData && g.enqWork {
		if g.fc == nil {
			e.enqueueHooks(now, g, sh, en, m, frame, prio)
		} else { // RoCC: enqueueHooks' first case, in line
			g.countFlow(en, prio, frame, m)
		}
	}
	return true
}

// pushEntry appends a data frame's entry to q, which has room (the caller
// grows a full ring: a few times per queue in a run), and returns it. The
// entry is written field by field (a composite literal is built on the stack and then copied, which
// stalls on store forwarding: this is the hottest store). Small enough to
// inline into both of Enqueue's paths.
func (q *dataQueue) pushEntry(m *Meta, frame []byte, h Handle) *qEntry {
	en := &q.buf[q.tail&q.mask]
	q.tail++
	en.setFrame(frame)
	en.h = h
	en.ipOff, en.intOff = m.IPOff, m.INTOff
	en.in, en.class = m.In, m.Class
	en.stamp = false
	return en
}

// queued counts l bytes just pushed into the port's queue prio: the
// non-empty priorities, the queue's bytes and the largest queue seen.
func (g *egress) queued(prio uint8, l int64) {
	g.nonEmpty |= 1 << prio
	g.qBytes += l
	g.qPrio[prio] += l
	if uint64(g.qBytes) > g.c[cQueueMax] {
		g.c[cQueueMax] = uint64(g.qBytes)
	}
}

// enqueue is Enqueue for every frame.
func (e *Engine) enqueue(now int64, m *Meta, frame []byte, h Handle) bool {
	g := &e.eg[m.Out]
	sh := &e.tx[g.sh]
	switch m.Class {
	case ClassPFC:
		e.receivePFC(now, g, frame)
		return false
	case ClassControl:
		if !g.ctl.Reserve() {
			g.c[cDropControl]++
			return false
		}
		g.ctl.Push(ctlEntry{h, frame})
		g.c[cControlFwd]++
		sh.active |= 1 << m.Out
		return true
	}
	l := int64(len(frame))
	prio := m.Prio & 7
	q := &g.q[prio]
	lossless := e.lossless&(1<<prio) != 0
	// One shard: xoffPorts has bit i set exactly while port i holds a
	// priority in XOFF (0, the common case, is tested first).
	if lossless && sh.xoffPorts != 0 && sh.acct == nil && sh.xoffPorts&(1<<(m.In&63)) != 0 {
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
	pause := false // shared buffer: admitAdd's call for XOFF
	if sh.buf.on {
		if lossless {
			ok := sh.admitInReserve(int(m.In), prio, l)
			if !ok {
				ok, pause = sh.buf.admitAdd(e.acctOf(sh, int(m.In)), prio, l)
			}
			if !ok {
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
	if int(q.tail-q.head) == len(q.buf) {
		q.grow()
	}
	en := q.pushEntry(m, frame, h)
	sh.active |= 1 << m.Out
	g.queued(prio, l)
	e.traceEnq(now, g, m, frame)
	if lossless {
		switch {
		case pause:
			// Counted at admission (shared buffer): the XOFF it called for
			// goes out after the frame's enqueue and its trace record, as
			// ingressAdd's would.
			e.pauseIngress(now, sh, int(m.In), prio)
		case sh.buf.on: // counted at admission
		default:
			e.ingressAdd(now, sh, int(m.In), prio, l)
		}
	} else if sh.buf.on {
		sh.buf.used += l
	}
	if m.Class == ClassData && g.enqWork {
		e.enqueueHooks(now, g, sh, en, m, frame, prio)
	}
	return true
}

// enqueueHooks is Enqueue's work for a data frame (entry en of priority prio)
// on a port with enqueue work (egress.enqWork): the flowCounter's count, or
// the entry's flow key (in its queue's flows ring) for a dequeue hook that
// reads it, or the entry's mark and flow key and the CP's OnEnqueue (skipped
// while the queue is quiet, ccalgo.QuietQueue). Without OnEnqueue no CP reads
// en.mark or en.tag before the dequeue sets them (onDequeue).
func (e *Engine) enqueueHooks(now int64, g *egress, sh *txShard, en *qEntry, m *Meta, frame []byte, prio uint8) {
	if g.fc != nil {
		g.countFlow(en, prio, frame, m)
		return
	}
	q := &g.q[prio]
	if !g.hookEnq { // a dequeue hook that reads the flow key
		readFlowKey(q.flow(q.tail-1), frame, m)
		return
	}
	en.mark = wire.MarkFromECN(frame[m.IPOff+1])
	en.tag = 0
	if g.needFlow {
		// The key stored field by field into both, not copied from one to
		// the other: a 16-byte load of five narrow stores just made would
		// stall on store forwarding.
		readFlowKey2(q.flow(q.tail-1), &g.dp.Flow, frame, m)
	}
	if g.qPrio[prio] <= g.quiet {
		return // OnEnqueue would do nothing
	}
	g.ps.QueueBytes = g.qPrio[prio]
	g.dp.WireBytes, g.dp.Mark, g.dp.Tag = len(frame), en.mark, 0
	v := g.cp.OnEnqueue(now, &g.dp, &g.ps, g.sink)
	sh.cpDirty |= 1 << m.Out
	if v.Mark > en.mark {
		e.applyMark(now, g, en, prio, v.Mark)
	}
	en.stamp, en.tag = v.StampINT, v.Tag
}

// countFlow is a flowCounter CP's (RoCC's) enqueue of data frame en, the
// last entry of queue prio: its flow table counts the packet, nothing else
// (en.mark stays unread); the queue's flows ring keeps the key for a dequeue
// whose tag went stale.
func (g *egress) countFlow(en *qEntry, prio uint8, frame []byte, m *Meta) {
	a, b := readFlowWords(frame, m)
	q := &g.q[prio]
	setFlowKey(q.flow(q.tail-1), a, b)
	en.tag = g.fc.EnqueueWords(a, b)
}
