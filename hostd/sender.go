package hostd

import (
	"fmt"
	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/pacer"
	"github.com/ccbed/ccbed/wire"
	"math/rand/v2"
)

// sender is the tx side of an Engine: the QP slots and their RPs, the pacer
// and the NIC's line-rate bucket, the flows waiting for a QP and the
// workload generators, the RTO sweep, and the results (rate samples, FCTs).
// It reads the events its receivers post on its rings (evIn) in Service, and
// nothing else of theirs. One goroutine (the tx lcore) owns it.
type sender struct {
	r *resolved
	shardPlace

	sched  *pacer.Scheduler
	nic    pacer.TokenBucket // line-rate ceiling of the NIC
	qps    []sendQP
	tmpls  []wire.DataTemplate // each QP slot's data frame headers, built at its flow's start
	onSend bool                // the scheme's RP has an OnSend (ccalgo.SendHook)
	free   []int32
	maxQPs int // the bound of qps (growQPs)
	active []int32
	timers timerHeap            // in the sender, not behind a pointer: Service reads it at every call
	rpTmpl ccalgo.ReactionPoint // pristine RP to reset a QP's RP from (ccalgo.Resetter); nil: rebuild
	evIn   []*evRing            // events for this side: one ring from each engine's rx side

	starts     []pendingFlow // static and incast flows, by start time
	startIdx   int
	pending    []pendingFlow // ring of flows waiting for a free QP; grows up to maxPending
	maxPending int
	pendHead   int
	pendLen    int
	wls        []wlState
	rng        *rand.Rand
	jrng       *rand.Rand // pacing jitter (its own stream: workloads do not change with it)

	pause int64 // PFC: no data before this time (one priority: Spec.PFCPriority's)
	// prioPause is each priority's pause end when the host's flows use
	// several priorities (resolved.prios): a pause holds only its
	// priority's QPs (pausePriority).
	prioPause [8]int64

	nextSweep int64
	nextSamp  int64
	lastSamp  int64
	samples   []RateSample
	fcts      []FCT
	tc        TxCounters

	// leaveICRC: the QPs' templates leave the ICRC field as the buffer
	// holds it (Engine.LeaveICRC).
	leaveICRC bool
}

// init builds the tx side of an engine at sh's place among its host's
// engines, at time now.
func (tx *sender) init(r *resolved, now int64, sh shardSpec, place shardPlace) error {
	c := &r.cfg
	tx.r, tx.shardPlace, tx.evIn = r, place, sh.in
	// The QP slots start at 16 and double when a flow finds them all in use
	// (growQPs), up to MaxQPs; QP numbers keep MaxQPs' slot bits.
	nqp := min(c.MaxQPs, initialSlots)
	sched, err := pacer.NewScheduler(pacer.Config{
		MaxQPs:         nqp,
		MaxPacketBytes: int64(r.mtu),
		RateBps:        r.linkBps,
		BurstBytes:     r.burst,
	}, now)
	if err != nil {
		return fmt.Errorf("hostd: %w", err)
	}
	tx.sched = sched
	// The NIC bucket holds one tx burst of full frames (the adapter hands the
	// port 32 frames at a time): the line rate holds over any longer interval,
	// and a tx loop that polls a little late does not lose line capacity.
	// An engine of several (NewEngines) paces its share of the line rate.
	tx.nic.Init(r.linkBps/float64(sh.count), int64(c.NICBurstFrames)*int64(maxFrame(r.mtu)+vlanLen(r.tagPCP)+phyOverhead), now)
	tx.maxQPs = c.MaxQPs
	tx.timers = *newTimerHeap(0)
	tmpl, err := r.scheme.NewRP(r.params, r.env)
	if err != nil {
		return err
	}
	if _, ok := tmpl.(ccalgo.Resetter); ok {
		tx.rpTmpl = tmpl
	}
	tx.onSend = true
	if h, ok := tmpl.(ccalgo.SendHook); ok {
		tx.onSend = h.SendHook()
	}
	if err := tx.growQPs(nqp, now); err != nil {
		return err
	}
	tx.initFlows(now, sh)
	// The result slices start with room for a run's usual rows, so that an
	// lcore rarely allocates for them, and double beyond (up to their bounds;
	// reserving the bounds whole costs 100 MB a host). With GrowResults they
	// start small: a fabric of hundreds of hosts reserves little up front.
	rows, fcts := 1<<16, 1<<14
	if c.GrowResults {
		rows, fcts = initialSlots, initialSlots
	}
	tx.samples = make([]RateSample, 0, min(r.maxSamples, rows))
	tx.fcts = make([]FCT, 0, min(c.MaxFCTs, fcts))
	tx.nextSweep = now + r.rto/4
	tx.nextSamp = now + r.sampleNs
	tx.lastSamp = now
	return nil
}

// sendQP is the sender state of one QP slot (one flow at a time).
type sendQP struct {
	// What sending a packet reads and writes comes first, in two cache
	// lines or so: 1,000 QPs served in turn do not fit a core's L2.
	rp     ccalgo.ReactionPoint
	sndNxt uint64 // next packet number to send
	sndUna uint64 // packets below this are acknowledged
	sndMax uint64 // highest packet number sent + 1
	size   uint64 // message bytes; 0 = unlimited
	npkts  uint64 // packets of the message; 0 = unlimited
	ipID   uint16 // IPv4 identification of the next packet
	active bool
	prio   uint8 // the flow's priority (0-7)
	// rtoShift doubles the retransmission timeout after each timeout without
	// progress (exponential backoff, at most maxRTOShift doublings), so that
	// timeouts shorter than a full queue's delay do not resend a window into
	// that queue again and again; an ACK that advances snd_una resets it.
	rtoShift uint8
	actIdx   int32
	progress int64 // last time snd_una advanced, or sending resumed from idle
	rate     float64
	window   int64
	halt     int64
	timer    int64
	capBps   float64

	gen     uint32
	qpn     uint32
	flowID  int64
	ep      wire.Endpoints // ep.IPID unused: ipID
	start   int64          // arrival (post) time of the message
	sampled uint64
	// backPSN is the packet number the last NAK sent the QP back to, and
	// backUntil the end of that go-back's RTT: with trust "topology", a NAK
	// for backPSN before backUntil is refused (onAck).
	backPSN   uint64
	backUntil int64
}

// seqBytes is the byte offset of packet number pn of a QP.
func (tx *sender) seqBytes(s *sendQP, pn uint64) uint64 {
	b := pn * uint64(tx.r.mtu)
	if s.size > 0 && b > s.size {
		return s.size
	}
	return b
}

// ChargeControl accounts a control frame of n bytes sent at now against the
// NIC's line rate (control frames are never held back by it).
func (tx *sender) ChargeControl(now int64, n int) {
	tx.nic.Take(int64(n+phyOverhead), now)
	tx.tc.ControlFrames++
	tx.tc.ControlBytes += uint64(n)
}

// Service does the tx side's work due at now, other than sending data: it
// applies the events from the rx side (ACK, NAK, CNP, feedback, PFC) to the QPs
// and their RPs, runs due RP timers, starts due flows and workload arrivals,
// checks retransmission timeouts and takes rate samples. It returns the number
// of events and timers handled.
func (tx *sender) Service(now int64) int { return tx.service(now, true) }

// service is Service, which reads the event rings only if events (a Node
// that knows its engine has none spares the ring's two cache lines).
func (tx *sender) service(now int64, events bool) int {
	n := 0
	for _, r := range tx.evIn {
		if !events {
			break
		}
		for k := 0; k < 1024; k++ {
			ev := r.Peek()
			if ev == nil {
				break
			}
			tx.handleEvent(now, ev)
			r.Pop()
			n++
		}
	}
	for tx.timers.len() > 0 {
		qp, t := tx.timers.top()
		if t > now {
			break
		}
		s := &tx.qps[qp]
		tx.timers.set(qp, ccalgo.Never)
		s.timer = ccalgo.Never
		if s.rp.NextTimer() <= now {
			s.rp.OnTimer(now)
		}
		tx.syncRP(qp, s, now)
		n++
	}
	tx.startFlows(now)
	if now >= tx.nextSweep {
		tx.sweepRTO(now)
		tx.nextSweep = now + max(tx.r.rto/4, 1)
	}
	if now >= tx.nextSamp {
		tx.sample(now)
	}
	return n
}

// pausePriority holds the QPs of priority p until t (a pause of 0 quanta,
// t = now, releases them): the pause of a host whose flows use several
// priorities, each QP held until the later of its RP's halt and its
// priority's pause.
func (tx *sender) pausePriority(now int64, p uint8, t int64) {
	tx.prioPause[p] = t
	for _, qp := range tx.active {
		if s := &tx.qps[qp]; s.prio == p {
			tx.sched.HoldUntil(int(qp), max(s.halt, t), now)
		}
	}
}

// qpOf returns the active QP slot that qpn names, or -1.
func (tx *sender) qpOf(qpn uint32) int32 {
	slot := int32(qpn & (1<<tx.slotBits - 1))
	if int(slot) >= len(tx.qps) {
		return -1
	}
	s := &tx.qps[slot]
	if !s.active || s.qpn != qpn {
		return -1
	}
	return slot
}

func (tx *sender) handleEvent(now int64, ev *event) {
	if ev.kind == evPause {
		tx.tc.PauseFrames++
		if ps := tx.r.prios; ps&(ps-1) != 0 {
			tx.pausePriority(now, uint8(ev.qpn&7), ev.t)
			return
		}
		tx.pause = ev.t
		return
	}
	qp := tx.qpOf(ev.qpn)
	if qp < 0 {
		tx.tc.StaleEvents++
		return
	}
	s := &tx.qps[qp]
	// CNPs, ACKs and NAKs come from the flow's receiver.
	if tx.r.trusted && ev.kind != evFeedback && ev.src != s.ep.DstIP {
		switch ev.kind {
		case evAck:
			tx.tc.Refused.Ack++
		case evNak:
			tx.tc.Refused.Nak++
		default:
			tx.tc.Refused.CNP++
		}
		return
	}
	switch ev.kind {
	case evAck, evNak:
		tx.onAck(now, qp, s, ev)
		return
	case evCNP:
		s.rp.OnCNP(now)
	case evFeedback:
		s.rp.OnFeedback(now, &ev.fb)
	}
	tx.syncRP(qp, s, now)
}

func (tx *sender) onAck(now int64, qp int32, s *sendQP, ev *event) {
	nak := ev.kind == evNak
	pn := int64(s.sndUna) + signext24(ev.psn-uint32(s.sndUna))
	through := pn + 1 // ACK: every packet up to pn arrived
	if nak {
		through = pn // NAK: every packet below pn arrived; resend from pn
	}
	// A PSN-sequence-error NAK carries the PSN the responder expects next:
	// every packet below it arrived, and the requester resends from it, go
	// back N (InfiniBand Architecture Specification Vol. 1, Chapter 9,
	// reliable connected service; RoCEv2 per its Annex A17). A genuine one
	// names a packet sent and not yet acknowledged, in [snd_una, snd_max):
	// the responder saw a later packet, so it was sent.
	if through < 0 || uint64(through) > s.sndMax || ((nak || tx.r.trusted) && uint64(through) < s.sndUna) ||
		(nak && tx.r.trusted && uint64(through) == s.sndMax) {
		// Trusted, an ACK outside [snd_una, snd_max] or a NAK outside
		// [snd_una, snd_max) is refused: the receiver acknowledges in
		// order, on one path, so no ACK it sends falls behind one that
		// arrived before it.
		switch {
		case !tx.r.trusted:
			tx.tc.BadAcks++
		case nak:
			tx.tc.Refused.Nak++
		default:
			tx.tc.Refused.Ack++
		}
		return
	}
	th := uint64(through)
	if nak && tx.r.trusted && th == s.backPSN && now < s.backUntil {
		// At most one go-back for a PSN per base RTT (Spec.BaseRTTNs,
		// the configured base RTT, not a measured one: a forger cannot
		// stretch it): a second NAK for the PSN the QP just went back to
		// cannot have seen the resent packets yet. snd_una is already
		// at it (the first NAK acknowledged everything below), so
		// refusing it loses nothing.
		tx.tc.Refused.NakRepeat++
		return
	}
	var newly int64
	if th > s.sndUna {
		newly = int64(tx.seqBytes(s, th) - tx.seqBytes(s, s.sndUna))
		s.sndUna = th
		s.progress = now
		s.rtoShift = 0
	}
	if s.sndNxt < s.sndUna {
		s.sndNxt = s.sndUna
	}
	if nak && th < s.sndNxt {
		s.sndNxt = th // go back N
		s.backPSN, s.backUntil = th, now+tx.r.baseRTT
		tx.tc.NakRewinds++
	}
	a := &ev.ack // the rx side filled a.Fields
	a.AckedSeq = tx.seqBytes(s, s.sndUna)
	a.NewlyAcked = newly
	a.SndNxt = tx.seqBytes(s, s.sndNxt)
	a.RTT = 0
	if ts := a.Fields.EchoTS; ts > 0 && now > ts {
		a.RTT = now - ts
	}
	if nak {
		s.rp.OnNak(now, a)
	} else {
		s.rp.OnAck(now, a)
	}
	if s.npkts > 0 && s.sndUna >= s.npkts {
		tx.complete(now, qp, s)
		return
	}
	tx.syncQueue(qp, s, now)
	tx.syncRP(qp, s, now)
}

// queueOf is the QP's backlog and bytes in flight, as the scheduler keeps them.
func (tx *sender) queueOf(s *sendQP) (backlog, inflight int64) {
	una, nxt := tx.seqBytes(s, s.sndUna), tx.seqBytes(s, s.sndNxt)
	backlog = pacer.UnlimitedBacklog
	if s.size != 0 {
		backlog = int64(s.size - nxt)
	}
	return backlog, int64(nxt - una)
}

// syncQueue tells the scheduler the QP's bytes in flight and backlog (one
// update of its place).
func (tx *sender) syncQueue(qp int32, s *sendQP, now int64) {
	backlog, inflight := tx.queueOf(s)
	tx.sched.SetQueue(int(qp), backlog, inflight, now)
}

// syncRP copies the RP's rate, window, halt and timer to the pacer and the timer
// heap where they changed.
func (tx *sender) syncRP(qp int32, s *sendQP, now int64) {
	r := s.rp.RateBps()
	if !(r > 0) {
		r = 0
	}
	if s.capBps > 0 && s.capBps < r {
		r = s.capBps
	}
	if r > tx.r.linkBps {
		r = tx.r.linkBps
	}
	if r != s.rate {
		s.rate = r
		tx.sched.SetRate(int(qp), r, now)
	}
	if w := s.rp.WindowBytes(); w != s.window {
		s.window = w
		tx.sched.SetWindow(int(qp), w, now)
	}
	if h := s.rp.HaltUntil(); h != s.halt {
		s.halt = h
		if ps := tx.r.prios; ps&(ps-1) != 0 {
			h = max(h, tx.prioPause[s.prio]) // a PFC pause of its priority holds it too
		}
		tx.sched.HoldUntil(int(qp), h, now)
	}
	if t := s.rp.NextTimer(); t != s.timer {
		s.timer = t
		tx.timers.set(qp, t)
	}
}

// CanSend reports whether NextData would build a packet at now.
func (tx *sender) CanSend(now int64) bool {
	if now < tx.pause {
		return false
	}
	tx.nic.Advance(now)
	return tx.nic.Eligible(now) && tx.sched.NextEligible(now) <= now
}

// NextData builds into b the next data packet the pacer allows at now and
// returns its length, or 0 when no QP may send (paused by PFC, the line rate,
// every QP's rate, window, halt or backlog). The packet counts as sent: a caller
// that fails to transmit it counts a drop, and go-back-N recovers it.
func (tx *sender) NextData(now int64, b []byte) int {
	if now < tx.pause {
		return 0
	}
	tx.nic.Advance(now)
	if !tx.nic.Eligible(now) {
		return 0
	}
	q, ok := tx.sched.Next(now)
	if !ok {
		return 0
	}
	return tx.send(now, int32(q), b)
}

// NextDataBurst builds up to len(bufs) data packets the pacer allows at now,
// the i-th into bufs[i] with its length in lens[i] (len(lens) >= len(bufs)),
// and returns how many it built: the packets, counters and pacer state of as
// many NextData calls at now, for one call (the PFC and NIC checks once, no
// call per packet into the caller). The packets count as sent, as NextData's.
func (tx *sender) NextDataBurst(now int64, bufs [][]byte, lens []int) int {
	if now < tx.pause {
		return 0
	}
	tx.nic.Advance(now)
	lens = lens[:len(bufs)]
	k := 0
	for k < len(bufs) && tx.nic.Eligible(now) {
		q, ok := tx.sched.Next(now)
		if !ok {
			break
		}
		n := tx.send(now, int32(q), bufs[k])
		if n == 0 {
			break
		}
		lens[k] = n
		k++
	}
	return k
}

// send builds into b the next packet of QP qp, which the pacer picked at now,
// and returns its length (0 when b is too small, counted).
func (tx *sender) send(now int64, qp int32, b []byte) int {
	s := &tx.qps[qp]
	pn := s.sndNxt
	payload := tx.r.mtu
	if s.size > 0 {
		payload = int(min(uint64(payload), s.size-tx.seqBytes(s, pn)))
	}
	last := s.npkts > 0 && pn == s.npkts-1
	var op uint8
	switch {
	case pn == 0 && last:
		op = wire.OpSendOnly
	case pn == 0:
		op = wire.OpSendFirst
	case last:
		op = wire.OpSendLast
	default:
		op = wire.OpSendMiddle
	}
	// The QP's template holds the headers BuildData would write for s.ep,
	// s.qpn and the INT choice.
	n, err := tx.tmpls[qp].Build(b, s.ipID, op, uint32(pn)&psnMask, last, now, wire.DataHeaderLen+payload)
	if err != nil {
		tx.tc.BuildErrors++
		return 0
	}
	s.ipID++
	if s.sndUna == s.sndNxt {
		s.progress = now // the retransmission timer starts with the first outstanding packet
	}
	tx.nic.Take(int64(n+phyOverhead), now)
	if tx.onSend {
		s.rp.OnSend(now, tx.seqBytes(s, pn), payload)
	}
	if pn < s.sndMax {
		tx.tc.RetxFrames++
	}
	s.sndNxt++
	s.sndMax = max(s.sndMax, s.sndNxt)
	tx.tc.DataFrames++
	tx.tc.DataBytes += uint64(n)
	tx.tc.PayloadBytes += uint64(payload)
	// One scheduler update for the packet: the bucket pays n frame bytes (or,
	// with pacing jitter, n times a factor of mean 1), the backlog and bytes
	// in flight are the QP's own (payload) accounting.
	charge := int64(n)
	if j := tx.r.cfg.PacingJitter; j > 0 && s.rate < tx.r.linkBps {
		charge = int64(float64(n) * (1 + j*(2*tx.jrng.Float64()-1)))
	}
	backlog, inflight := tx.queueOf(s)
	tx.sched.OnSentQueue(int(qp), charge, inflight, backlog, now)
	if tx.onSend {
		// Without OnSend the RP is as the last syncRP left it.
		tx.syncRP(qp, s, now)
	}
	return n
}

// NextWake is the earliest time the tx side has something to do, given no
// received frame: a send, a timer, a flow start, a sweep or a sample.
func (tx *sender) NextWake(now int64) int64 {
	t := min(tx.nextSweep, tx.nextSamp)
	if tx.timers.len() > 0 {
		_, tt := tx.timers.top()
		t = min(t, tt)
	}
	if tx.startIdx < len(tx.starts) {
		t = min(t, tx.starts[tx.startIdx].start)
	}
	for i := range tx.wls {
		if w := &tx.wls[i]; w.next < w.stop {
			t = min(t, w.next)
		}
	}
	if d := tx.sched.NextEligible(now); d != pacer.Never {
		d = max(d, tx.pause)
		tx.nic.Advance(now)
		d = max(d, tx.nic.ReadyAt(0))
		t = min(t, d)
	}
	return max(t, now)
}

// maxRTOShift bounds the retransmission timeout's backoff at 64 x rto_us.
const maxRTOShift = 6

// sweepRTO goes back to snd_una on every QP with packets outstanding and no
// progress for the RTO.
func (tx *sender) sweepRTO(now int64) {
	for _, qp := range tx.active {
		s := &tx.qps[qp]
		if s.sndUna < s.sndMax && now-s.progress >= tx.r.rto<<s.rtoShift {
			tx.tc.Timeouts++
			s.sndNxt = s.sndUna
			s.progress = now
			if s.rtoShift < maxRTOShift {
				s.rtoShift++
			}
			tx.syncQueue(qp, s, now)
		}
	}
}
