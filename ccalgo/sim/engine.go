package sim

import (
	"fmt"
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// packet is a data packet in flight (host NIC, switch queue or last link).
type packet struct {
	at       float64 // exact arrival time of the last bit at the next node, ns
	seq      uint64
	sendTS   int64
	flow     int32
	payload  int32
	wire     int32
	mark     ccalgo.Mark
	first    bool
	last     bool
	stampINT bool
	int      ccalgo.INTStack
}

// flowState is the sender and receiver state of one flow.
type flowState struct {
	cfg  Flow
	host int32
	rp   ccalgo.ReactionPoint
	key  ccalgo.FlowKey
	size uint64 // 0 = unlimited

	started, done bool
	sndNxt        uint64
	sndUna        uint64
	sndMax        uint64  // highest byte sent + 1
	lastSend      float64 // exact start of the last transmission, ns
	lastBits      float64 // wire bits of the last transmission
	lastSendInt   int64
	lastProgress  int64
	timerAt       int64 // pending RP timer event, Never if none
	timerRaw      int64 // the RP's NextTimer that timerAt was scheduled for
	rtoAt         int64 // pending RTO event, Never if none

	// receiver side
	rcvNxt    uint64
	rcvCount  int
	nakSeq    uint64
	nakTime   int64
	nakSent   bool
	delivered int64
	lastSampl int64   // delivered at the previous sample
	gap       float64 // factor on the next paced gap (PacingJitter), 1 without jitter
	unacked   int     // in-order packets received since the last ACK
	delAckAt  int64   // pending delayed-ACK event, Never if none
	pendAck   ccalgo.AckFields
}

// host is one sender NIC.
type host struct {
	flows  []int32
	rr     int
	busy   bool
	freeAt float64 // exact end of the last transmission, ns
	wakeAt int64   // pending wake event, Never if none
}

type sim struct {
	cfg      Config
	res      *Result
	ev       eventHeap
	now      int64
	baseRTT  int64
	rto      int64
	nakIv    int64
	ackDelay int64
	rng      uint64 // xorshift state for PacingJitter

	cp      ccalgo.CongestionPoint
	fairRep ccalgo.FairRateReporter
	np      ccalgo.NotificationPoint
	cpTimer int64
	cpRaw   int64
	port    ccalgo.PortState

	flows []flowState
	hosts []host

	pkts    []packet
	pktFree []int32
	acks    []ccalgo.AckEvent
	ackFree []int32
	fbs     []ccalgo.Feedback
	fbFree  []int32

	// bottleneck FIFO: ring of packet indexes
	q                 []int32
	qHead, qLen       int
	linkBusy          bool
	linkFreeAt        float64
	hostNsPerBit      float64
	linkNsPerBit      float64
	sample            int
	noRPRate          []float64 // per flow: rate used when the scheme has no RP
	scratchD          ccalgo.DataArrival
	scratchAck        ccalgo.AckFields
	scratchDP         ccalgo.DataPacket
	sink              feedbackSink
	rpTimersScheduled int64
}

// feedbackSink is the FeedbackSink the CP emits into.
type feedbackSink struct{ s *sim }

// Emit schedules fb's delivery to its flow's source one LinkDelay from now.
func (fs feedbackSink) Emit(now int64, fb *ccalgo.Feedback) {
	s := fs.s
	fi := int(fb.Flow.DestQP) - 1
	if fi < 0 || fi >= len(s.flows) || s.flows[fi].key.SrcIP != fb.Flow.SrcIP {
		return // not one of ours: a real switch would route it elsewhere
	}
	s.res.Feedbacks++
	slot := s.allocFb()
	s.fbs[slot] = *fb
	s.ev.push(now+s.cfg.LinkDelay, evFeedback, int32(fi), slot)
}

func newSim(cfg Config) (*sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.fillDefaults()
	sch, err := ccalgo.Lookup(cfg.Scheme)
	if err != nil {
		return nil, err
	}
	wire := cfg.MTU + cfg.HeaderBytes
	s := &sim{cfg: cfg}
	s.sink.s = s
	s.hostNsPerBit = 1e9 / cfg.HostBps
	s.linkNsPerBit = 1e9 / cfg.LinkBps
	s.baseRTT = int64(math.Round(float64(4*cfg.LinkDelay) + float64(wire*8)*(s.hostNsPerBit+s.linkNsPerBit)))
	drain := int64(float64(cfg.BufferBytes*8) * s.linkNsPerBit)
	switch {
	case cfg.RTO > 0:
		s.rto = cfg.RTO
	case cfg.RTO == 0 && cfg.BufferBytes > 0:
		s.rto = 2*(s.baseRTT+drain) + 100_000
	default:
		s.rto = 0
	}
	s.rng = cfg.Seed*0x9e3779b97f4a7c15 | 1
	s.ackDelay = cfg.AckDelay
	if s.ackDelay == 0 {
		s.ackDelay = s.baseRTT
	}
	s.nakIv = cfg.NakInterval
	if s.nakIv == 0 {
		s.nakIv = 2 * (s.baseRTT + drain)
	}

	nf := len(cfg.Flows)
	envCP := ccalgo.Env{LinkBps: cfg.LinkBps, BaseRTT: s.baseRTT, MTU: cfg.MTU,
		MaxFlows: nf, ExpectedFlows: cfg.ExpectedFlows, ID: 1}
	envHost := envCP
	envHost.LinkBps = cfg.HostBps
	params := func(env ccalgo.Env) any {
		if cfg.Params != nil {
			return cfg.Params
		}
		return sch.DefaultParams(env)
	}
	if sch.NewCP != nil {
		if s.cp, err = sch.NewCP(params(envCP), envCP); err != nil {
			return nil, err
		}
		s.fairRep, _ = s.cp.(ccalgo.FairRateReporter)
	}
	if sch.NewNP != nil {
		// The receiver's NIC is the bottleneck link itself: its line rate is C.
		if s.np, err = sch.NewNP(params(envCP), envCP); err != nil {
			return nil, err
		}
	}
	s.flows = make([]flowState, nf)
	s.noRPRate = make([]float64, nf)
	var rpParams any
	if sch.NewRP != nil {
		rpParams = params(envHost)
	}
	for i, f := range cfg.Flows {
		fs := &s.flows[i]
		fs.cfg = f
		fs.host = int32(f.Src)
		fs.size = uint64(f.Bytes)
		fs.lastSend = math.Inf(-1)
		fs.gap = 1
		fs.timerAt = ccalgo.Never
		fs.timerRaw = ccalgo.Never
		fs.rtoAt = ccalgo.Never
		fs.delAckAt = ccalgo.Never
		fs.key = ccalgo.FlowKey{
			SrcIP:   0x0a000001 + uint32(f.Src), // 10.0.0.(src+1)
			DstIP:   0x0a0000fe,                 // 10.0.0.254, the receiver
			SrcPort: uint16(49152 + i%16384),
			DstPort: 4791,
			DestQP:  uint32(i + 1),
		}
		if sch.NewRP != nil {
			if fs.rp, err = sch.NewRP(rpParams, envHost); err != nil {
				return nil, fmt.Errorf("sim: flow %d: %w", i, err)
			}
		}
		r := cfg.HostBps
		if f.MaxRateBps > 0 && f.MaxRateBps < r {
			r = f.MaxRateBps
		}
		s.noRPRate[i] = r
		for len(s.hosts) <= f.Src {
			s.hosts = append(s.hosts, host{wakeAt: ccalgo.Never})
		}
		s.hosts[f.Src].flows = append(s.hosts[f.Src].flows, int32(i))
	}
	s.port = ccalgo.PortState{LinkBps: cfg.LinkBps, LastOff: math.MinInt64}
	s.cpTimer = ccalgo.Never
	s.cpRaw = ccalgo.Never

	ns := int(cfg.Duration / cfg.SampleEvery)
	r := &Result{
		T:             make([]int64, 0, ns),
		Queue:         make([]int64, 0, ns),
		Goodput:       make([][]float64, nf),
		RPRate:        make([][]float64, nf),
		Window:        make([][]int64, nf),
		Delivered:     make([]int64, nf),
		FCT:           make([]int64, nf),
		Retransmitted: make([]int64, nf),
		BaseRTT:       s.baseRTT,
		SampleEvery:   cfg.SampleEvery,
	}
	if s.fairRep != nil {
		r.FairRate = make([]float64, 0, ns)
	}
	for i := range nf {
		r.Goodput[i] = make([]float64, 0, ns)
		r.RPRate[i] = make([]float64, 0, ns)
		r.Window[i] = make([]int64, 0, ns)
		r.FCT[i] = -1
	}
	s.res = r
	s.q = make([]int32, 1024)
	s.ev.ev = make([]event, 0, 1024+8*nf)
	return s, nil
}

func (s *sim) run() {
	for i := range s.flows {
		s.ev.push(s.flows[i].cfg.Start, evFlowStart, int32(i), 0)
	}
	if s.cfg.SampleEvery <= s.cfg.Duration {
		s.ev.push(s.cfg.SampleEvery, evSample, 0, 0)
	}
	s.syncCPTimer()
	for len(s.ev.ev) > 0 {
		e := s.ev.pop()
		if e.t > s.cfg.Duration {
			break
		}
		s.now = e.t
		s.res.Events++
		s.dispatch(e)
	}
	for i := range s.flows {
		s.res.Delivered[i] = s.flows[i].delivered
	}
}

func (s *sim) dispatch(e event) {
	switch e.kind {
	case evFlowStart:
		f := &s.flows[e.a]
		f.started = true
		f.lastProgress = s.now
		s.kick(f.host)
	case evHostFree:
		s.hosts[e.a].busy = false
		s.kick(e.a)
	case evHostWake:
		h := &s.hosts[e.a]
		if h.wakeAt != e.t {
			return // superseded
		}
		h.wakeAt = ccalgo.Never
		s.kick(e.a)
	case evSwitchArrive:
		s.switchArrive(e.b)
	case evLinkFree:
		s.linkBusy = false
		if s.qLen > 0 {
			s.startTx()
		}
	case evRxArrive:
		s.rxArrive(e.b)
	case evAck, evNak:
		s.ackArrive(e.a, e.b, e.kind == evNak)
	case evCNP:
		f := &s.flows[e.a]
		if f.rp != nil {
			f.rp.OnCNP(s.now)
			s.afterRP(e.a)
		}
	case evFeedback:
		f := &s.flows[e.a]
		if f.rp != nil {
			f.rp.OnFeedback(s.now, &s.fbs[e.b])
		}
		s.fbFree = append(s.fbFree, e.b)
		if f.rp != nil {
			s.afterRP(e.a)
		}
	case evRPTimer:
		f := &s.flows[e.a]
		if f.timerAt != e.t {
			return
		}
		f.timerAt = ccalgo.Never
		if f.rp.NextTimer() <= s.now {
			f.rp.OnTimer(s.now)
		}
		s.afterRP(e.a)
	case evCPTimer:
		if s.cpTimer != e.t {
			return
		}
		s.cpTimer = ccalgo.Never
		s.cpRaw = ccalgo.Never
		if s.cp.NextTimer() <= s.now {
			s.port.QueueBytes = s.queueBytes()
			s.cp.OnTimer(s.now, &s.port, s.sink)
		}
		s.syncCPTimer()
	case evRTO:
		s.rtoCheck(e.a, e.t)
	case evDelayedAck:
		f := &s.flows[e.a]
		if f.delAckAt != e.t {
			return
		}
		f.delAckAt = ccalgo.Never
		if f.unacked > 0 {
			s.sendAck(e.a, &f.pendAck, false)
		}
	case evSample:
		s.takeSample()
		if next := s.now + s.cfg.SampleEvery; next <= s.cfg.Duration {
			s.ev.push(next, evSample, 0, 0)
		}
	}
}

// queueBytes is the bottleneck queue, as kept in port.QueueBytes.
func (s *sim) queueBytes() int64 { return s.port.QueueBytes }

// afterRP re-reads the RP's timer and lets the flow's host send if it now may.
func (s *sim) afterRP(fi int32) {
	s.syncRPTimer(fi)
	s.kick(s.flows[fi].host)
}

func (s *sim) syncRPTimer(fi int32) {
	f := &s.flows[fi]
	if f.rp == nil {
		return
	}
	t := f.rp.NextTimer()
	if t == f.timerRaw && (t == ccalgo.Never || f.timerAt != ccalgo.Never) {
		return
	}
	f.timerRaw = t
	f.timerAt = t
	if t != ccalgo.Never {
		f.timerAt = max(t, s.now)
		s.ev.push(f.timerAt, evRPTimer, fi, 0)
	}
}

func (s *sim) syncCPTimer() {
	if s.cp == nil {
		return
	}
	t := s.cp.NextTimer()
	if t == s.cpRaw && (t == ccalgo.Never || s.cpTimer != ccalgo.Never) {
		return
	}
	s.cpRaw = t
	s.cpTimer = t
	if t != ccalgo.Never {
		s.cpTimer = max(t, s.now)
		s.ev.push(s.cpTimer, evCPTimer, 0, 0)
	}
}

// rate is the flow's pacing rate: min(RP rate, application cap).
func (s *sim) rate(fi int) float64 {
	f := &s.flows[fi]
	if f.rp == nil {
		return s.noRPRate[fi]
	}
	r := f.rp.RateBps()
	if f.cfg.MaxRateBps > 0 && f.cfg.MaxRateBps < r {
		r = f.cfg.MaxRateBps
	}
	return r
}

// sendable reports whether flow fi has data and window to send; if so, readyAt is
// the earliest exact time the pacer and the halt allow (may be +Inf for rate 0).
func (s *sim) sendable(fi int) (ok bool, readyAt float64) {
	f := &s.flows[fi]
	if !f.started || (f.size > 0 && f.sndNxt >= f.size) {
		return false, 0
	}
	if f.rp != nil {
		if w := f.rp.WindowBytes(); w != ccalgo.NoWindow && int64(f.sndNxt-f.sndUna) >= w {
			return false, 0
		}
	}
	r := s.rate(fi)
	if !(r > 0) {
		return false, 0
	}
	readyAt = f.lastSend + f.lastBits*1e9/r*f.gap
	if f.rp != nil {
		if h := float64(f.rp.HaltUntil()); h > readyAt {
			readyAt = h
		}
	}
	return true, readyAt
}

// kick lets host hi start a packet if its NIC is idle and a flow may send; else it
// schedules a wake-up at the earliest pacing or halt time.
func (s *sim) kick(hi int32) {
	h := &s.hosts[hi]
	if h.busy {
		return
	}
	now := float64(s.now)
	earliest := math.Inf(1)
	n := len(h.flows)
	for k := 0; k < n; k++ {
		j := (h.rr + k) % n
		fi := int(h.flows[j])
		ok, ready := s.sendable(fi)
		if !ok {
			continue
		}
		if ready <= now {
			h.rr = (j + 1) % n
			s.send(hi, fi, ready)
			return
		}
		earliest = min(earliest, ready)
	}
	if math.IsInf(earliest, 1) {
		return
	}
	t := int64(math.Ceil(earliest))
	if t < h.wakeAt || h.wakeAt < s.now {
		h.wakeAt = t
		s.ev.push(t, evHostWake, hi, 0)
	}
}

// send transmits the next packet of flow fi from host hi. ready is the exact time
// the pacer allowed it; the transmission starts at the latest of ready, the end of
// the NIC's last packet and now - 1 ns (events fire on whole nanoseconds).
func (s *sim) send(hi int32, fi int, ready float64) {
	h := &s.hosts[hi]
	f := &s.flows[fi]
	start := max(float64(s.now)-1, h.freeAt, ready)
	payload := s.cfg.MTU
	if f.size > 0 && f.size-f.sndNxt < uint64(payload) {
		payload = int(f.size - f.sndNxt)
	}
	wire := payload + s.cfg.HeaderBytes
	pi := s.allocPkt()
	p := &s.pkts[pi]
	*p = packet{
		seq:     f.sndNxt,
		sendTS:  s.now,
		flow:    int32(fi),
		payload: int32(payload),
		wire:    int32(wire),
		first:   f.sndNxt == 0,
		last:    f.size > 0 && f.sndNxt+uint64(payload) == f.size,
	}
	bits := float64(wire * 8)
	h.freeAt = start + bits*s.hostNsPerBit
	h.busy = true
	p.at = h.freeAt + float64(s.cfg.LinkDelay)
	s.ev.push(int64(math.Ceil(h.freeAt)), evHostFree, hi, 0)
	s.ev.push(int64(math.Ceil(p.at)), evSwitchArrive, 0, pi)
	if f.sndNxt < f.sndMax {
		s.res.Retransmitted[fi] += int64(min(uint64(payload), f.sndMax-f.sndNxt))
	}
	f.lastSend = start
	f.lastBits = bits
	if j := s.cfg.PacingJitter; j > 0 {
		f.gap = 1 + j*(2*s.uniform()-1)
	}
	f.lastSendInt = s.now
	if f.rp != nil {
		f.rp.OnSend(s.now, f.sndNxt, payload)
	}
	f.sndNxt += uint64(payload)
	f.sndMax = max(f.sndMax, f.sndNxt)
	if s.rto > 0 && f.rtoAt == ccalgo.Never {
		f.rtoAt = s.now + s.rto
		s.ev.push(f.rtoAt, evRTO, int32(fi), 0)
	}
	s.syncRPTimer(int32(fi))
}

func (s *sim) switchArrive(pi int32) {
	p := &s.pkts[pi]
	if s.cfg.BufferBytes > 0 && s.port.QueueBytes+int64(p.wire) > s.cfg.BufferBytes {
		s.res.Drops++
		s.freePkt(pi)
		return
	}
	if s.qLen == len(s.q) {
		s.growQueue()
	}
	s.q[(s.qHead+s.qLen)%len(s.q)] = pi
	s.qLen++
	s.port.QueueBytes += int64(p.wire)
	s.res.MaxQueue = max(s.res.MaxQueue, s.port.QueueBytes)
	if s.cp != nil {
		s.fillDP(p)
		v := s.cp.OnEnqueue(s.now, &s.scratchDP, &s.port, s.sink)
		s.applyVerdict(p, v)
		s.syncCPTimer()
	}
	if !s.linkBusy {
		s.startTx()
	}
}

func (s *sim) fillDP(p *packet) {
	s.scratchDP = ccalgo.DataPacket{Flow: s.flows[p.flow].key, WireBytes: int(p.wire), Mark: p.mark}
}

func (s *sim) applyVerdict(p *packet, v ccalgo.Verdict) {
	if m := p.mark.Max(v.Mark); m != p.mark {
		switch m {
		case ccalgo.MarkCE:
			s.res.MarkedCE++
		case ccalgo.MarkUE:
			s.res.MarkedUE++
		}
		p.mark = m
	}
	if v.StampINT {
		p.stampINT = true
	}
}

func (s *sim) growQueue() {
	nq := make([]int32, 2*len(s.q))
	for i := 0; i < s.qLen; i++ {
		nq[i] = s.q[(s.qHead+i)%len(s.q)]
	}
	s.q = nq
	s.qHead = 0
}

// startTx dequeues the head of the bottleneck FIFO onto the link.
func (s *sim) startTx() {
	pi := s.q[s.qHead]
	s.qHead = (s.qHead + 1) % len(s.q)
	s.qLen--
	p := &s.pkts[pi]
	s.port.QueueBytes -= int64(p.wire)
	if s.cp != nil {
		s.fillDP(p)
		v := s.cp.OnDequeue(s.now, &s.scratchDP, &s.port, s.sink)
		s.applyVerdict(p, v)
		s.syncCPTimer()
	}
	if p.stampINT {
		p.int.Push(ccalgo.INTHop{
			LinkBps: s.cfg.LinkBps,
			TS:      uint32(s.now % ccalgo.INTTSWrap),
			TxBytes: uint32(s.port.TxBytes%ccalgo.INTTxBytesWrap) &^ (ccalgo.INTTxBytesUnit - 1),
			QLen:    uint32(min(s.port.QueueBytes, ccalgo.INTQLenMax)) / ccalgo.INTQLenUnit * ccalgo.INTQLenUnit,
		})
	}
	s.port.TxBytes += uint64(p.wire)
	s.res.Dequeued++
	start := max(s.linkFreeAt, p.at)
	end := start + float64(p.wire*8)*s.linkNsPerBit
	s.linkFreeAt = end
	s.linkBusy = true
	p.at = end + float64(s.cfg.LinkDelay)
	s.ev.push(int64(math.Ceil(end)), evLinkFree, 0, 0)
	s.ev.push(int64(math.Ceil(p.at)), evRxArrive, 0, pi)
}

// rxArrive is the receiver: NP, in-order delivery, ACK / NAK / CNP.
func (s *sim) rxArrive(pi int32) {
	p := &s.pkts[pi]
	fi := p.flow
	f := &s.flows[fi]
	s.scratchAck = ccalgo.AckFields{}
	cnp := false
	if s.np != nil {
		s.scratchD = ccalgo.DataArrival{
			QP: fi, Seq: p.seq, PayloadBytes: int(p.payload), WireBytes: int(p.wire),
			SendTS: p.sendTS, Mark: p.mark, FirstOfMessage: p.first, LastOfMessage: p.last,
			INT: p.int,
		}
		cnp = s.np.OnData(s.now, &s.scratchD, &s.scratchAck)
	} else {
		s.scratchAck.EchoTS = p.sendTS
		s.scratchAck.Mark = p.mark
	}
	if cnp {
		s.res.CNPs++
		s.ev.push(s.now+2*s.cfg.LinkDelay, evCNP, fi, 0)
	}
	ack, nak := false, false
	switch {
	case p.seq == f.rcvNxt:
		f.rcvNxt += uint64(p.payload)
		f.delivered += int64(p.payload)
		f.nakSent = false
		f.rcvCount++
		ack = f.rcvCount%s.cfg.AckEvery == 0 || p.last
	case p.seq > f.rcvNxt:
		if !f.nakSent || f.nakSeq != f.rcvNxt || s.now-f.nakTime >= s.nakIv {
			nak = true
			f.nakSent, f.nakSeq, f.nakTime = true, f.rcvNxt, s.now
			s.res.NAKs++
		}
	default: // duplicate of delivered data: discard, acknowledge as usual
		f.rcvCount++
		ack = f.rcvCount%s.cfg.AckEvery == 0 || p.last
	}
	switch {
	case ack || nak:
		s.sendAck(fi, &s.scratchAck, nak)
	case p.seq < f.rcvNxt: // in order (or duplicate) and held back: arm the delayed ACK
		f.unacked++
		f.pendAck = s.scratchAck
		if f.delAckAt == ccalgo.Never {
			f.delAckAt = s.now + s.ackDelay
			s.ev.push(f.delAckAt, evDelayedAck, fi, 0)
		}
	}
	s.freePkt(pi)
}

// sendAck sends the receiver's ACK (or NAK) for flow fi with the given echo fields.
func (s *sim) sendAck(fi int32, fields *ccalgo.AckFields, nak bool) {
	f := &s.flows[fi]
	if !nak {
		f.unacked = 0
	}
	slot := s.allocAck()
	s.acks[slot] = ccalgo.AckEvent{AckedSeq: f.rcvNxt, Fields: *fields}
	kind := evAck
	if nak {
		kind = evNak
	}
	s.ev.push(s.now+2*s.cfg.LinkDelay, kind, fi, slot)
}

func (s *sim) ackArrive(fi, slot int32, nak bool) {
	f := &s.flows[fi]
	a := &s.acks[slot]
	if a.AckedSeq > f.sndUna {
		a.NewlyAcked = int64(a.AckedSeq - f.sndUna)
		f.sndUna = a.AckedSeq
		f.lastProgress = s.now
	}
	if f.sndUna > f.sndNxt {
		f.sndNxt = f.sndUna
	}
	if nak && a.AckedSeq < f.sndNxt {
		f.sndNxt = a.AckedSeq // go back N
	}
	a.SndNxt = f.sndNxt
	if a.Fields.EchoTS > 0 {
		a.RTT = s.now - a.Fields.EchoTS
	}
	if f.size > 0 && !f.done && f.sndUna >= f.size {
		f.done = true
		s.res.FCT[fi] = s.now - f.cfg.Start
	}
	if f.rp != nil {
		if nak {
			f.rp.OnNak(s.now, a)
		} else {
			f.rp.OnAck(s.now, a)
		}
		s.syncRPTimer(fi)
	}
	s.ackFree = append(s.ackFree, slot)
	s.kick(f.host)
}

func (s *sim) rtoCheck(fi int32, t int64) {
	f := &s.flows[fi]
	if f.rtoAt != t {
		return
	}
	f.rtoAt = ccalgo.Never
	if f.sndUna >= f.sndNxt && f.sndUna >= f.sndMax {
		return // nothing outstanding; the next send re-arms
	}
	last := max(f.lastProgress, f.lastSendInt)
	if s.now-last >= s.rto {
		s.res.Timeouts++
		f.sndNxt = f.sndUna
		f.lastProgress = s.now
		s.kick(f.host)
		last = s.now
	}
	f.rtoAt = last + s.rto
	s.ev.push(f.rtoAt, evRTO, fi, 0)
}

func (s *sim) takeSample() {
	r := s.res
	r.T = append(r.T, s.now)
	r.Queue = append(r.Queue, s.port.QueueBytes)
	if s.fairRep != nil {
		r.FairRate = append(r.FairRate, s.fairRep.FairRateBps())
	}
	scale := 8e9 / float64(s.cfg.SampleEvery)
	for i := range s.flows {
		f := &s.flows[i]
		r.Goodput[i] = append(r.Goodput[i], float64(f.delivered-f.lastSampl)*scale)
		f.lastSampl = f.delivered
		r.RPRate[i] = append(r.RPRate[i], s.rate(i))
		w := ccalgo.NoWindow
		if f.rp != nil {
			w = f.rp.WindowBytes()
		}
		r.Window[i] = append(r.Window[i], w)
	}
}

func (s *sim) allocPkt() int32 {
	if n := len(s.pktFree); n > 0 {
		i := s.pktFree[n-1]
		s.pktFree = s.pktFree[:n-1]
		return i
	}
	s.pkts = append(s.pkts, packet{})
	return int32(len(s.pkts) - 1)
}

func (s *sim) freePkt(i int32) { s.pktFree = append(s.pktFree, i) }

func (s *sim) allocAck() int32 {
	if n := len(s.ackFree); n > 0 {
		i := s.ackFree[n-1]
		s.ackFree = s.ackFree[:n-1]
		return i
	}
	s.acks = append(s.acks, ccalgo.AckEvent{})
	return int32(len(s.acks) - 1)
}

func (s *sim) allocFb() int32 {
	if n := len(s.fbFree); n > 0 {
		i := s.fbFree[n-1]
		s.fbFree = s.fbFree[:n-1]
		return i
	}
	s.fbs = append(s.fbs, ccalgo.Feedback{})
	return int32(len(s.fbs) - 1)
}

// uniform returns a deterministic pseudo-random number in [0, 1) (xorshift64*).
func (s *sim) uniform() float64 {
	s.rng ^= s.rng >> 12
	s.rng ^= s.rng << 25
	s.rng ^= s.rng >> 27
	return float64((s.rng*0x2545f4914f6cdd1d)>>11) / (1 << 53)
}
