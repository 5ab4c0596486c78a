package hostd

import (
	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// receiver is the rx side of an Engine: the in-order check of every incoming
// flow, the scheme's NP, the ACKs, NAKs and CNPs owed, and the decoding of
// control frames into events for the sender that owns their QP (evOut). One
// goroutine (the rx lcore) owns it.
type receiver struct {
	r *resolved
	shardPlace
	evOut []*evRing // the rings to the engines' tx sides, by engine index
	// evOne is the array of evOut and of the tx side's evIn when the
	// engine is its host's only one (oneShard): one ring joins its sides,
	// its own (evOwn) or, for a while, one a Node lends it (useRing).
	evOne [1]*evRing
	evOwn *evRing

	np       ccalgo.NotificationPoint
	table    *flowTable
	rflows   []recvFlow // grows up to maxRx (growRx)
	maxRx    int
	freeRx   []int32     // unused receiver slots
	doneQ    []doneEntry // ring of completed receiver flows, oldest first
	doneHead int
	doneLen  int
	evictAge int64           // a completed receiver flow may be evicted this long after its last packet
	fr       wire.Frame      // at 8 mod 16 in the engine (pad before it when fields move it): see TestFrameScratchPlace
	fb       ccalgo.Feedback // CP feedback decoded, before it goes to its QP's engine
	da       ccalgo.DataArrival
	rc       RxCounters
	// acks caches the ACK headers of the flows this side acknowledges
	// (BuildControl), direct-mapped by the data sender's address and QP; a
	// slot that does not match is rebuilt, so it only saves work.
	acks [ackTemplates]wire.AckTemplate
	// frp and dap are the scratch Receive decodes a frame into and hands
	// the NP a data arrival in: fr and da, or a scratch the engines of one
	// driver share (NewNodes).
	frp *wire.Frame
	dap *ccalgo.DataArrival
}

// ackTemplates is the receiver's ACK template slots: a host receives from a
// few flows at once at the loads studied.
const ackTemplateBits, ackTemplates = 3, 1 << ackTemplateBits

// init builds the rx side of an engine at sh's place among its host's
// engines.
func (rx *receiver) init(r *resolved, sh shardSpec, place shardPlace) error {
	rx.r, rx.shardPlace, rx.evOut = r, place, sh.out
	rx.frp, rx.dap = &rx.fr, &rx.da
	if r.scheme.NewNP != nil {
		var err error
		if rx.np, err = r.scheme.NewNP(r.params, r.env); err != nil {
			return err
		}
	}
	// The receiver's tables start small and double as flows arrive, up to
	// MaxRxFlows (growRx): a host holds what it uses, slots taken in the same
	// order as from tables allocated whole.
	rx.maxRx = r.cfg.MaxRxFlows
	n := min(r.cfg.MaxRxFlows, initialSlots)
	rx.table = newFlowTable(n)
	rx.doneQ = make([]doneEntry, n)
	rx.growRx(n)
	rx.evictAge = 4 * r.rto
	return nil
}

// doneEntry names a receiver flow that completed its message; epoch tells
// whether the slot has been reused since.
type doneEntry struct {
	slot  int32
	epoch uint32
}

// recvFlow is the receiver state of one incoming flow (source IP, QP number).
type recvFlow struct {
	key        uint64
	used       bool
	epoch      uint32
	srcIP      uint32
	qpn        uint32
	exp        uint64 // next packet number expected
	bytes      uint64 // payload bytes received in order
	msn        uint32
	sinceAck   uint32
	nakSent    bool
	done       bool
	nakPkt     uint64
	nakTime    int64
	frames     uint64
	frameBytes uint64
	first      int64
	last       int64
	firstTS    int64 // send timestamps of the first and last in-order packets
	lastTS     int64
}

// RxFlow is what the receiver measured of one incoming flow.
type RxFlow struct {
	SrcIP      uint32
	QPN        uint32
	Bytes      uint64 // payload bytes delivered in order
	Frames     uint64 // data frames received (duplicates and gaps included)
	FrameBytes uint64 // their bytes
	FirstNs    int64  // first and last data frame arrival
	LastNs     int64
	// FirstSendNs and LastSendNs are the sender's timestamps of the first and
	// last packets delivered in order: the sender's time base.
	FirstSendNs int64
	LastSendNs  int64
	Messages    uint32 // messages completed
}

// Receive handles one frame received at now. Data frames run the NP and the
// receiver's in-order check and fill out with the ACK / NAK and CNP owed
// (returned count, also out.N); control frames (ACK, NAK, CNP, RoCC rate
// message, P4QCN / QCN feedback, PFC) become events for the tx side and owe
// nothing. Malformed and foreign frames are counted and ignored. frame is only
// read, and not kept.
func (rx *receiver) Receive(now int64, frame []byte, out *Controls) int {
	out.N = 0
	rx.rc.Frames++
	fr := rx.frp
	if err := wire.Decode(frame, fr); err != nil {
		rx.rc.Malformed++
		return 0
	}
	if fr.Kind == wire.KindPFC {
		rx.rc.PFC++
		// PFC is link local: only the switch port at the other end sends it,
		// and never VLAN-tagged (a MAC Control frame's Length/Type is 88-08
		// right after the source address, IEEE 802.3 Clause 31), whatever
		// the trust.
		if fr.Eth.HasVLAN() || rx.r.trusted && fr.Eth.Src() != rx.r.gateway {
			rx.rc.Refused.PFC++
			return 0
		}
		if ps := rx.r.prios; ps&(ps-1) != 0 {
			// Flows of several priorities: an event per paused one.
			for p := 0; p < 8; p++ {
				if ps&(1<<p) != 0 && fr.PFC.Enabled(p) {
					rx.postPause(now+wire.QuantaNs(fr.PFC.PauseQuanta(p), rx.r.linkBps), uint32(p))
				}
			}
			return 0
		}
		p := rx.r.pfcPrio
		if !fr.PFC.Enabled(p) {
			return 0
		}
		rx.postPause(now+wire.QuantaNs(fr.PFC.PauseQuanta(p), rx.r.linkBps), uint32(p))
		return 0
	}
	if fr.Kind == wire.KindOther {
		rx.rc.Other++
		return 0
	}
	if fr.IP.Dst() != rx.r.ip {
		rx.rc.NotForUs++
		return 0
	}
	var kind evKind
	switch fr.Kind {
	case wire.KindData:
		return rx.rxData(now, frame, out)
	case wire.KindAck:
		rx.rc.Acks++
		kind = evAck
	case wire.KindNak:
		rx.rc.Naks++
		kind = evNak
	case wire.KindCNP:
		rx.rc.CNPs++
		kind = evCNP
	case wire.KindRoCCRate:
		rx.rc.RoCCRate++
		kind = evFeedback
	case wire.KindP4QCN:
		rx.rc.P4QCN++
		kind = evFeedback
	case wire.KindQCN:
		rx.rc.QCN++
		kind = evFeedback
	default:
		rx.rc.Other++
		return 0
	}
	if rx.r.trusted && kind == evFeedback && !rx.fromTrustedCP(fr) {
		switch fr.Kind {
		case wire.KindRoCCRate:
			rx.rc.Refused.RoCCRate++
		case wire.KindP4QCN:
			rx.rc.Refused.P4QCN++
		default:
			rx.rc.Refused.QCN++
		}
		return 0
	}
	// The QP the frame names, and so the engine whose tx side owns it.
	var qpn uint32
	switch fr.Kind {
	case wire.KindRoCCRate:
		fr.Rate.Feedback(&rx.fb)
		qpn = rx.fb.Flow.DestQP
	case wire.KindP4QCN:
		fr.Feedback.Feedback(&rx.fb, ccalgo.FeedbackP4QCN, fr.BTH.DestQP())
		qpn = rx.fb.Flow.DestQP
	case wire.KindQCN:
		fr.Feedback.Feedback(&rx.fb, ccalgo.FeedbackQCN, fr.BTH.DestQP())
		qpn = rx.fb.Flow.DestQP
	default: // ACK, NAK, CNP
		qpn = fr.BTH.DestQP()
	}
	ring := rx.evOut[0]
	if len(rx.evOut) > 1 {
		ring = rx.evOut[rx.owner(qpn)]
	}
	ev := ring.Slot()
	if ev == nil {
		rx.rc.EventsDropped++
		return 0
	}
	ev.kind = kind
	ev.src = fr.IP.Src()
	ev.qpn = qpn
	switch fr.Kind {
	case wire.KindAck, wire.KindNak:
		ev.psn = fr.BTH.PSN()
		// The echo fields, as if zeroed then filled: the slot's INT hops
		// beyond the new stack are cleared, not the whole stack.
		f := &ev.ack.Fields
		if fr.Ext != nil {
			fr.Ext.Fields(f) // every field but INT
		} else {
			f.EchoTS, f.Mark, f.Window, f.ActiveFlows, f.RecvBytes = 0, 0, 0, 0, 0
		}
		old := f.INT.NHops
		f.INT.NHops = 0
		if fr.INT != nil {
			fr.INT.Stack(&f.INT)
		}
		if old > f.INT.NHops {
			clear(f.INT.Hops[f.INT.NHops:old])
		}
	case wire.KindRoCCRate, wire.KindP4QCN, wire.KindQCN:
		ev.fb = rx.fb
	}
	ring.Commit()
	return 0
}

// owner is the index of the engine whose tx side owns QP number qpn (its
// shard bits); a number no engine gives goes to this engine's own tx side,
// which counts it stale.
func (rx *receiver) owner(qpn uint32) int {
	k := int(qpn>>rx.slotBits) & int(rx.shardMask)
	if k >= len(rx.evOut) {
		return rx.shard
	}
	return k
}

// fromTrustedCP reports whether the CP feedback fr (RoCC rate, P4QCN or QCN)
// comes from a trusted CP: its source address and the CP id it carries both
// lie in TrustedCPs.
func (rx *receiver) fromTrustedCP(fr *wire.Frame) bool {
	var id uint32
	if fr.Kind == wire.KindRoCCRate {
		id = fr.Rate.CPID()
	} else {
		id = fr.Feedback.CPID()
	}
	return rx.r.cps.has(fr.IP.Src()) && rx.r.cps.has(id)
}

func (rx *receiver) rxData(now int64, frame []byte, out *Controls) int {
	fr := rx.frp
	rx.rc.Data++
	rx.rc.DataBytes += uint64(len(frame))
	src := fr.IP.Src()
	bth := fr.BTH
	qpn := bth.DestQP()
	key := uint64(src)<<32 | uint64(qpn)
	idx, found := rx.table.find(key)
	var slot int32
	if found {
		slot = rx.table.vals[idx] - 1
	} else {
		if slot = rx.allocRx(now); slot < 0 {
			rx.rc.FlowTableFull++
			return 0
		}
		idx, _ = rx.table.find(key) // an eviction may have moved entries
		rx.table.insertAt(idx, key, slot)
	}
	rf := &rx.rflows[slot]
	op := bth.Opcode()
	psn := bth.PSN()
	if !found || (rf.done && psn == 0 && wire.IsFirstOpcode(op)) {
		// A new flow, or a completed (source, QP) reused by the sender for a
		// new message stream.
		rx.rc.NewFlows++
		ep := rf.epoch + 1
		*rf = recvFlow{key: key, used: true, epoch: ep, srcIP: src, qpn: qpn, first: now}
	}
	rf.frames++
	rf.frameBytes += uint64(len(frame))
	rf.last = now
	pn := int64(rf.exp) + signext24(psn-uint32(rf.exp))
	payload := len(fr.Payload) - wire.DataHeaderLen
	last := wire.IsLastOpcode(op)

	d := rx.dap
	d.QP = slot
	d.Seq = rf.bytes
	if pn != int64(rf.exp) {
		d.Seq = uint64(max(int64(rf.bytes)+(pn-int64(rf.exp))*int64(rx.r.mtu), 0))
	}
	d.PayloadBytes = payload
	d.WireBytes = len(frame)
	d.SendTS = fr.Data.SendTS()
	d.Mark = wire.MarkFromECN(fr.IP.ECN())
	d.FirstOfMessage = wire.IsFirstOpcode(op)
	d.LastOfMessage = last
	d.INT.NHops = 0
	if fr.INT != nil {
		fr.INT.Stack(&d.INT)
	}
	c := &out.C[0]
	ack := &c.Fields
	*ack = ccalgo.AckFields{}
	cnp := false
	if rx.np != nil {
		cnp = rx.np.OnData(now, d, ack)
	}
	if ack.EchoTS == 0 {
		ack.EchoTS = d.SendTS
	}
	ack.Mark = ack.Mark.Max(d.Mark)
	if fr.INT != nil && ack.INT.NHops == 0 {
		ack.INT = d.INT
	}

	var kind ControlKind
	switch {
	case pn == int64(rf.exp):
		rx.rc.InOrder++
		if rf.exp == 0 {
			rf.firstTS = d.SendTS
		}
		rf.lastTS = d.SendTS
		rf.exp++
		rf.bytes += uint64(max(payload, 0))
		rf.nakSent = false
		rf.sinceAck++
		if last {
			rf.msn++
			rf.done = true
			rx.markDone(slot, rf.epoch)
		}
		if rf.sinceAck >= rx.r.ackEvery || last || bth.AckReq() {
			kind = CtlAck
		}
	case pn > int64(rf.exp):
		rx.rc.OutOfOrder++
		if !rf.nakSent || rf.nakPkt != rf.exp || now-rf.nakTime >= rx.r.nakIv {
			rf.nakSent, rf.nakPkt, rf.nakTime = true, rf.exp, now
			kind = CtlNak
		}
	default:
		// A duplicate of delivered data (a go-back-N resend, or an ACK was
		// lost): acknowledge again so that the sender moves on.
		rx.rc.Duplicate++
		if last || bth.AckReq() || rf.sinceAck+1 >= rx.r.ackEvery {
			kind = CtlAck
		} else {
			rf.sinceAck++
		}
	}
	n := 0
	if kind != 0 {
		c.Kind = kind
		rx.fillEp(&c.Ep, fr)
		c.Spec = wire.AckSpec{DestQP: qpn, MSN: rf.msn, EchoINT: fr.INT != nil}
		if fr.INT != nil {
			c.Spec.PathID = fr.INT.PathID()
		}
		if kind == CtlAck {
			c.Spec.PSN = uint32(rf.exp-1) & psnMask
			c.Spec.Syndrome = wire.SyndromeAckNoCred
			rf.sinceAck = 0
			rx.rc.AcksOwed++
		} else {
			c.Spec.PSN = uint32(rf.exp) & psnMask
			c.Spec.Syndrome = wire.SyndromeNAKSeq
			rx.rc.NaksOwed++
		}
		n++
	}
	if cnp {
		cc := &out.C[n]
		cc.Kind = CtlCNP
		rx.fillEp(&cc.Ep, fr)
		cc.Spec = wire.AckSpec{DestQP: qpn}
		rx.rc.CNPsOwed++
		n++
	}
	out.N = n
	return n
}

// allocRx returns a free receiver slot, evicting the flow that completed first
// if it completed at least evictAge ago (so that a resend of its tail, after a
// lost ACK, still finds it); -1 when none can be had.
func (rx *receiver) allocRx(now int64) int32 {
	if len(rx.freeRx) == 0 && len(rx.rflows) < rx.maxRx {
		rx.growRx(min(2*len(rx.rflows), rx.maxRx))
	}
	if n := len(rx.freeRx); n > 0 {
		s := rx.freeRx[n-1]
		rx.freeRx = rx.freeRx[:n-1]
		return s
	}
	for rx.doneLen > 0 {
		d := rx.doneQ[rx.doneHead]
		rf := &rx.rflows[d.slot]
		if rf.done && rf.epoch == d.epoch && now-rf.last < rx.evictAge {
			return -1 // the oldest completion is still too recent
		}
		rx.doneHead = (rx.doneHead + 1) % len(rx.doneQ)
		rx.doneLen--
		if !rf.done || rf.epoch != d.epoch {
			continue // restarted since: not a candidate
		}
		rx.table.remove(rf.key)
		rf.used = false
		rx.rc.Evicted++
		return d.slot
	}
	return -1
}

// growRx makes n receiver slots (n > len(rx.rflows)): the new ones free, the
// lowest taken first, and the flow table rehashed to stay at most half full.
// It allocates, at most log2(MaxRxFlows/16) times in an engine's life, when a
// new flow finds every slot taken: never in a steady state.
func (rx *receiver) growRx(n int) {
	old := len(rx.rflows)
	rx.rflows = append(rx.rflows, make([]recvFlow, n-old)...)
	free := make([]int32, len(rx.freeRx), n)
	copy(free, rx.freeRx)
	for i := n - 1; i >= old; i-- {
		free = append(free, int32(i))
	}
	rx.freeRx = free
	if t := rx.table; 2*n > len(t.keys) {
		rx.table = newFlowTable(n)
		for i, v := range t.vals {
			if v != 0 {
				at, _ := rx.table.find(t.keys[i])
				rx.table.insertAt(at, t.keys[i], v-1)
			}
		}
	}
}

// markDone queues a completed receiver flow for eviction.
func (rx *receiver) markDone(slot int32, epoch uint32) {
	if rx.doneLen == len(rx.doneQ) && len(rx.doneQ) < rx.maxRx {
		rx.doneQ = growRing(rx.doneQ, rx.doneHead, rx.doneLen, min(2*len(rx.doneQ), rx.maxRx))
		rx.doneHead = 0
	}
	if rx.doneLen == len(rx.doneQ) {
		rx.doneHead = (rx.doneHead + 1) % len(rx.doneQ)
		rx.doneLen--
	}
	rx.doneQ[(rx.doneHead+rx.doneLen)%len(rx.doneQ)] = doneEntry{slot: slot, epoch: epoch}
	rx.doneLen++
}

// fillEp addresses a control frame back to the sender of the data frame fr.
func (rx *receiver) fillEp(ep *wire.Endpoints, fr *wire.Frame) {
	*ep = wire.Endpoints{
		DstMAC:  fr.Eth.Src(),
		SrcMAC:  rx.r.mac,
		SrcIP:   rx.r.ip,
		DstIP:   fr.IP.Src(),
		SrcPort: fr.UDP.SrcPort(),
		DSCP:    fr.IP.DSCP(),
		ICRC:    rx.r.icrc,
	}
	if fr.Eth.HasVLAN() { // the data's 802.1Q tag, echoed
		ep.VLAN, ep.PCP, ep.VLANID = true, fr.Eth.PCP(), fr.Eth.VLANID()
	}
}

// BuildControl writes c into b and returns the frame length, 0 when b is too
// small (counted). Called by the side that owns b (the rx side in 2-lcore mode).
func (rx *receiver) BuildControl(b []byte, c *Control) int {
	var n int
	var err error
	if c.Kind == CtlCNP {
		n, err = wire.BuildCNP(b, &c.Ep, c.Spec.DestQP)
	} else {
		qp := c.Spec.DestQP
		t := &rx.acks[((c.Ep.DstIP^qp)*0x9e3779b1)>>(32-ackTemplateBits)]
		if !t.Matches(&c.Ep, qp, c.Spec.EchoINT) {
			t.Init(&c.Ep, qp, c.Spec.EchoINT)
		}
		n, err = t.Build(b, &c.Spec, &c.Fields)
	}
	if err != nil {
		rx.rc.BuildErrors++
		return 0
	}
	return n
}

// postPause hands a pause of priority p until t to every engine's tx side: a
// pause stops the whole NIC's data of that priority.
func (rx *receiver) postPause(t int64, p uint32) {
	for _, r := range rx.evOut {
		if ev := r.Slot(); ev != nil {
			ev.kind = evPause
			ev.t = t
			ev.qpn = p
			r.Commit()
		} else {
			rx.rc.EventsDropped++
		}
	}
}

// RxFlows is what the receiver measured of each incoming flow (rx side).
func (rx *receiver) RxFlows() []RxFlow {
	var out []RxFlow
	for i := range rx.rflows {
		rf := &rx.rflows[i]
		if !rf.used {
			continue
		}
		out = append(out, RxFlow{SrcIP: rf.srcIP, QPN: rf.qpn, Bytes: rf.bytes, Frames: rf.frames,
			FrameBytes: rf.frameBytes, FirstNs: rf.first, LastNs: rf.last, Messages: rf.msn,
			FirstSendNs: rf.firstTS, LastSendNs: rf.lastTS})
	}
	return out
}
