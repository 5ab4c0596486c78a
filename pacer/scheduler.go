// Package pacer paces the queue pairs (QPs) of a host: one TokenBucket per QP and a
// Scheduler that picks the QP that may send the next packet. It sits in hostd's tx
// lcore, between the reaction points of ccalgo (which set each QP's rate, window
// and halt) and the packet builder: the tx loop asks Next(now) for a QP, builds and
// transmits one packet of it, and reports it with OnSent; the rx side reports
// acknowledged bytes with OnAck. Time is an argument in nanoseconds (TSC converted
// to ns, or virtual time); the package never reads a clock.
//
// The Scheduler keeps every QP in exactly one place:
//
//   - Ready: a FIFO of QPs that may send now, served round robin (a QP that
//     remains eligible after sending goes to the tail);
//   - Waiting: ordered on the time the QP's bucket (or hold) makes it eligible,
//     ties broken in insertion order; Next moves the due ones to Ready. The
//     waiting QPs are held in two structures that together keep that order: a
//     run, a list already in order to which a QP is appended when it waits
//     no shorter than the last one appended (QPs paced alike, the common case
//     of many flows at one rate: O(1) in and out), and a min-heap for the
//     others (a 4-ary heap: O(log n));
//   - parked, in no structure: Idle (no data to send), WindowBlocked (bytes in
//     flight leave no room for the next packet), Stopped (rate 0). Only the event
//     that can unpark them (AddBacklog, OnAck, SetWindow, SetRate) looks at them.
//
// So a decision costs O(1) for the ready list and the run plus O(log n) per
// heap move, n the number of QPs in the heap, and nothing for parked QPs. The
// order QPs leave Waiting in is the heap-only order exactly (a test runs both
// side by side). Memory is allocated by NewScheduler for Config.MaxQPs QPs and
// by Grow for more; no other method allocates. A Scheduler is owned by one goroutine
// (the tx lcore); it is not safe for concurrent use.
//
// Sources and contracts:
//
//   - The QP's constraints are those of ccalgo.ReactionPoint: "the sender may
//     transmit when the pacer allows RateBps, bytes in flight stay below
//     WindowBytes, and now >= HaltUntil". hostd copies RateBps to SetRate,
//     WindowBytes to SetWindow and HaltUntil to HoldUntil after each RP event.
//   - The hold implements ACC's source halt (Zhang et al., "Revisiting
//     Congestion Control for Lossless Ethernet", NSDI 2024, Section 4.2,
//     Eq. 1, t_NextPkt <- t_NextPkt + t_Halt; Algorithm 1): the bucket earns
//     nothing while held, so the next packet leaves t_Halt later than it would
//     have.
//
// The pacer itself is not from a paper. Its choices, where the papers and the RP
// contract leave room:
//
//  1. Deficit pacing (TokenBucket): a packet may leave when the credit is >= 0
//     and is paid after it left, so the scheduler need not know packet sizes and
//     a burst of 0 gives even spacing at the exact rate.
//  2. A rate change applies from the next packet on: the debt of the packet just
//     sent is paid at the new rate from the time of the change, and a decrease
//     scales banked credit by new/old, so a cut is not undone by a burst earned
//     at the old rate. A rate of 0 stops the QP whatever credit it holds.
//  3. The window admits the next packet only if it fits entirely (inflight +
//     min(backlog, MaxPacketBytes) <= window), except that a positive window
//     always admits one packet when nothing is in flight, so a window smaller
//     than a packet (HPCC, RCC at high fan-in) still makes progress.
//  4. QPs that become eligible are served in the order of their eligibility
//     times, then round robin: a QP that stays eligible after a packet goes to
//     the tail.
//  5. Credit a QP earns while the link serves others is kept up to its burst
//     only: the burst must cover the tx loop's lateness (a few packets), or a QP
//     competing for a busy link falls short of its rate.
package pacer

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// NoWindow is the window of a QP that does not limit bytes in flight. It equals
// ccalgo.NoWindow.
const NoWindow int64 = math.MaxInt64

// UnlimitedBacklog is a backlog that never runs out (a long-running flow): sends
// do not decrease it.
const UnlimitedBacklog int64 = math.MaxInt64

// QPState says where the scheduler keeps a QP.
type QPState uint8

// The states of a QP; see the package documentation.
const (
	Idle          QPState = iota // no data to send
	WindowBlocked                // bytes in flight leave no room for the next packet
	Stopped                      // rate 0: waits for SetRate
	Waiting                      // waits for tokens or a hold to expire
	Ready                        // may send now
)

var stateNames = [...]string{"idle", "window-blocked", "stopped", "waiting", "ready"}

// String returns the state's name.
func (s QPState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("QPState(%d)", uint8(s))
}

// Config sizes a Scheduler and gives the initial parameters of every QP.
type Config struct {
	// MaxQPs is the number of QPs, numbered 0 to MaxQPs-1 (at most 1<<30).
	MaxQPs int
	// MaxPacketBytes is the largest packet a QP sends; the window check assumes
	// the next packet is min(backlog, MaxPacketBytes) bytes. Must be > 0.
	MaxPacketBytes int64
	// RateBps is the initial rate of every QP (bits/s; math.Inf(1) = unlimited).
	RateBps float64
	// BurstBytes is the initial burst of every QP. It should cover the time the tx
	// loop may serve a QP late (a few packets): credit beyond it is lost.
	BurstBytes int64
}

const nilQP int32 = -1

type qpSlot struct {
	tb       TokenBucket
	window   int64 // NoWindow when unlimited
	inflight int64
	backlog  int64  // UnlimitedBacklog when unlimited
	key      int64  // in the run: eligibility time, ns
	seq      uint32 // in the run: insertion order
	prev     int32  // ready list or run links
	next     int32
	state    QPState
}

type heapEntry struct {
	key int64  // eligibility time, ns
	seq uint32 // insertion order (serial-number arithmetic): ties served FIFO
	qp  int32
} // 16 bytes: the 4 children of a node fill one cache line

// Scheduler picks the QP that sends next among up to Config.MaxQPs QPs: round
// robin among those whose token bucket, window, backlog and hold allow a packet
// now. See the package documentation for the model.
type Scheduler struct {
	qps    []qpSlot
	heap   []heapEntry // Waiting QPs not in the run; cap >= MaxQPs
	pos    []int32     // heap index of each Waiting QP in the heap, inRun in the run, nilQP otherwise
	seq    uint32
	head   int32 // ready list, FIFO
	tail   int32
	nReady int
	// The run: Waiting QPs in (key, seq) order, linked through prev / next.
	runHead, runTail int32
	nRun             int
	heapOnly         bool // every Waiting QP in the heap (tests: the order without the run)
	maxPkt           int64
	rate             float64 // a new QP's bucket (Grow)
	burst            int64
}

// inRun is pos of a Waiting QP in the run.
const inRun int32 = -2

// NewScheduler allocates a Scheduler for cfg.MaxQPs QPs, all Idle, with the rate
// and burst of cfg and no window, at time now.
func NewScheduler(cfg Config, now int64) (*Scheduler, error) {
	switch {
	case cfg.MaxQPs <= 0 || cfg.MaxQPs > 1<<30:
		return nil, fmt.Errorf("pacer: MaxQPs %d out of range [1, 2^30]", cfg.MaxQPs)
	case cfg.MaxPacketBytes <= 0:
		return nil, fmt.Errorf("pacer: MaxPacketBytes %d must be > 0", cfg.MaxPacketBytes)
	case cfg.BurstBytes < 0:
		return nil, fmt.Errorf("pacer: BurstBytes %d must be >= 0", cfg.BurstBytes)
	case math.IsNaN(cfg.RateBps) || cfg.RateBps < 0:
		return nil, errors.New("pacer: RateBps must be >= 0")
	}
	s := &Scheduler{
		head:    nilQP,
		tail:    nilQP,
		runHead: nilQP,
		runTail: nilQP,
		maxPkt:  cfg.MaxPacketBytes,
		rate:    cfg.RateBps,
		burst:   cfg.BurstBytes,
	}
	s.Grow(cfg.MaxQPs, now)
	return s, nil
}

// Grow makes room for n QPs (n above MaxQPs; QPs MaxQPs .. n-1 start Idle
// with the rate and burst of the Config and no window, at time now). It
// allocates: a caller grows rarely (hostd, when every QP is in use).
func (s *Scheduler) Grow(n int, now int64) {
	old := len(s.qps)
	s.qps = append(s.qps, make([]qpSlot, n-old)...)
	s.pos = append(s.pos, make([]int32, n-old)...)
	s.heap = slices.Grow(s.heap, n-len(s.heap))
	for i := old; i < n; i++ {
		q := &s.qps[i]
		q.tb.Init(s.rate, s.burst, now)
		q.window = NoWindow
		q.prev, q.next = nilQP, nilQP
		s.pos[i] = nilQP
		q.state = Idle
	}
}

// MaxQPs is the number of QPs the scheduler holds.
func (s *Scheduler) MaxQPs() int { return len(s.qps) }

// Reset returns QP qp to its initial state at time now (a new flow on a reused
// slot): Idle, nothing in flight, no window, no hold, an empty bucket with the
// given rate and burst.
func (s *Scheduler) Reset(qp int, rateBps float64, burstBytes int64, now int64) {
	s.unlink(int32(qp))
	q := &s.qps[qp]
	q.tb.Init(rateBps, burstBytes, now)
	q.window = NoWindow
	q.inflight = 0
	q.backlog = 0
	q.state = Idle
}

// Next returns the QP that may send a packet now, and false if none may. The QP
// stays first in line until the caller reports the packet with OnSent, so Next
// without OnSent returns the same QP again. QPs become eligible in the order of
// their eligibility times and are then served round robin.
func (s *Scheduler) Next(now int64) (qp int, ok bool) {
	for s.nRun+len(s.heap) > 0 {
		q, key := s.firstWaiting()
		if key > now {
			break
		}
		if s.pos[q] == inRun {
			s.runRemove(q)
		} else {
			s.heapRemove(0)
		}
		s.pushReady(q)
	}
	if s.head == nilQP {
		return 0, false
	}
	return int(s.head), true
}

// firstWaiting is the Waiting QP that becomes eligible first, and its key;
// call it only when a QP waits.
func (s *Scheduler) firstWaiting() (int32, int64) {
	if s.nRun == 0 {
		return s.heap[0].qp, s.heap[0].key
	}
	r := &s.qps[s.runHead]
	if len(s.heap) > 0 && waitsLess(s.heap[0].key, s.heap[0].seq, r.key, r.seq) {
		return s.heap[0].qp, s.heap[0].key
	}
	return s.runHead, r.key
}

// NextEligible is the earliest time at which Next will return a QP, given no
// other call: now if one is ready (or due) at now, Never if every QP is parked.
// A tx loop sleeps or spins until then.
func (s *Scheduler) NextEligible(now int64) int64 {
	if s.head != nilQP {
		return now
	}
	if s.nRun+len(s.heap) == 0 {
		return Never
	}
	if _, k := s.firstWaiting(); k > now {
		return k
	}
	return now
}

// OnSent reports that QP qp sent a packet of bytes at time now: its bucket is
// debited, its bytes in flight and backlog updated, and it goes to the tail of the
// ready list if it may still send, or wherever its state says otherwise.
func (s *Scheduler) OnSent(qp int, bytes int64, now int64) {
	i := int32(qp)
	s.unlink(i)
	q := &s.qps[qp]
	q.tb.Take(bytes, now)
	if bytes > 0 {
		if q.inflight > math.MaxInt64-bytes {
			q.inflight = math.MaxInt64
		} else {
			q.inflight += bytes
		}
		if q.backlog != UnlimitedBacklog {
			q.backlog -= bytes
			if q.backlog < 0 {
				q.backlog = 0
			}
		}
	}
	s.place(i, now)
}

// OnSentQueue is OnSent for hosts that keep their own accounting of bytes in
// flight and backlog (hostd counts them in payload bytes, from its sequence
// numbers): QP qp sent a packet of bytes at time now, its bucket is debited by
// bytes, and its bytes in flight and backlog become inflight and backlog (as
// SetInflight and SetBacklog would set them). The QP is placed once, so the
// call costs what OnSent costs, not OnSent plus two updates.
func (s *Scheduler) OnSentQueue(qp int, bytes, inflight, backlog int64, now int64) {
	i := int32(qp)
	s.unlink(i)
	q := &s.qps[qp]
	q.tb.Take(bytes, now)
	q.inflight = max(inflight, 0)
	q.backlog = max(backlog, 0)
	s.place(i, now)
}

// SetQueue sets the backlog and the bytes in flight of QP qp at time now, as
// SetBacklog then SetInflight would, with a single update of its place.
func (s *Scheduler) SetQueue(qp int, backlog, inflight int64, now int64) {
	q := &s.qps[qp]
	q.backlog = max(backlog, 0)
	q.inflight = max(inflight, 0)
	s.update(int32(qp), now)
}

// OnAck reports that bytes of QP qp were acknowledged at time now; bytes in flight
// go down by that much (not below 0) and a QP blocked by its window may wake.
func (s *Scheduler) OnAck(qp int, bytes int64, now int64) {
	q := &s.qps[qp]
	if bytes <= 0 {
		return
	}
	q.inflight -= bytes
	if q.inflight < 0 {
		q.inflight = 0
	}
	if q.state == WindowBlocked {
		s.update(int32(qp), now)
	}
}

// SetInflight sets the bytes in flight of QP qp at time now, for hosts that
// compute them themselves (e.g. after a go-back-N rewind).
func (s *Scheduler) SetInflight(qp int, bytes int64, now int64) {
	if bytes < 0 {
		bytes = 0
	}
	s.qps[qp].inflight = bytes
	s.update(int32(qp), now)
}

// SetWindow sets the window of QP qp (bytes in flight allowed; NoWindow for no
// limit) at time now. A QP sends a packet only if it fits in the window, except
// that a window > 0 always admits one packet when nothing is in flight (so a
// window smaller than a packet still makes progress); a window <= 0 admits none.
func (s *Scheduler) SetWindow(qp int, window int64, now int64) {
	s.qps[qp].window = window
	s.update(int32(qp), now)
}

// SetRate sets the pacing rate of QP qp in bits/s at time now, effective for its
// next packet (TokenBucket.SetRate). 0 stops the QP; math.Inf(1) is unlimited.
func (s *Scheduler) SetRate(qp int, bps float64, now int64) {
	s.qps[qp].tb.SetRate(bps, now)
	s.update(int32(qp), now)
}

// SetBurst sets the burst of QP qp in bytes at time now.
func (s *Scheduler) SetBurst(qp int, bytes int64, now int64) {
	s.qps[qp].tb.SetBurst(bytes, now)
	s.update(int32(qp), now)
}

// HoldUntil forbids QP qp to send before until (ACC's source halt,
// ccalgo.ReactionPoint.HaltUntil); the hold also delays its next packet by the
// hold's length (TokenBucket.HoldUntil). Calling it again with the same until
// changes nothing; an until at or before now cancels the hold.
func (s *Scheduler) HoldUntil(qp int, until int64, now int64) {
	q := &s.qps[qp]
	if q.tb.hold == until {
		return
	}
	q.tb.HoldUntil(until, now)
	s.update(int32(qp), now)
}

// AddBacklog reports bytes more data to send on QP qp at time now (an Idle QP
// wakes). UnlimitedBacklog makes the backlog unlimited.
func (s *Scheduler) AddBacklog(qp int, bytes int64, now int64) {
	q := &s.qps[qp]
	if bytes <= 0 {
		return
	}
	if bytes == UnlimitedBacklog || q.backlog > UnlimitedBacklog-bytes {
		q.backlog = UnlimitedBacklog
	} else {
		q.backlog += bytes
	}
	s.update(int32(qp), now)
}

// SetBacklog sets the bytes QP qp has to send at time now (0 parks it as Idle;
// UnlimitedBacklog never runs out).
func (s *Scheduler) SetBacklog(qp int, bytes int64, now int64) {
	if bytes < 0 {
		bytes = 0
	}
	s.qps[qp].backlog = bytes
	s.update(int32(qp), now)
}

// State is where the scheduler keeps QP qp.
func (s *Scheduler) State(qp int) QPState { return s.qps[qp].state }

// Inflight is the bytes in flight of QP qp.
func (s *Scheduler) Inflight(qp int) int64 { return s.qps[qp].inflight }

// Backlog is the bytes QP qp has left to send.
func (s *Scheduler) Backlog(qp int) int64 { return s.qps[qp].backlog }

// Window is the window of QP qp.
func (s *Scheduler) Window(qp int) int64 { return s.qps[qp].window }

// Bucket gives read access to the token bucket of QP qp (rate, burst, hold,
// tokens); change it only through the Scheduler's methods.
func (s *Scheduler) Bucket(qp int) *TokenBucket { return &s.qps[qp].tb }

// Counts is the number of QPs in each state.
type Counts struct {
	Ready, Waiting, Parked int
}

// Counts returns how many QPs are ready, waiting for tokens, and parked.
func (s *Scheduler) Counts() Counts {
	w := s.nRun + len(s.heap)
	return Counts{Ready: s.nReady, Waiting: w, Parked: len(s.qps) - s.nReady - w}
}

// windowFits says whether QP q's next packet fits in its window.
func (s *Scheduler) windowFits(q *qpSlot) bool {
	if q.window == NoWindow {
		return true
	}
	if q.window <= 0 {
		return false
	}
	if q.inflight == 0 {
		return true
	}
	next := q.backlog
	if next > s.maxPkt {
		next = s.maxPkt
	}
	return q.inflight <= q.window-next
}

// want computes the state QP q should be in at now, and its eligibility time
// when Waiting.
func (s *Scheduler) want(q *qpSlot, now int64) (QPState, int64) {
	if q.backlog == 0 {
		return Idle, 0
	}
	if !s.windowFits(q) {
		return WindowBlocked, 0
	}
	t := q.tb.ReadyAt(0)
	if t == Never {
		return Stopped, 0
	}
	if t <= now {
		return Ready, 0
	}
	return Waiting, t
}

// update moves QP i to the state it should be in at now, keeping its place in the
// ready list or the heap's tie order when it stays there.
func (s *Scheduler) update(i int32, now int64) {
	q := &s.qps[i]
	st, key := s.want(q, now)
	switch {
	case st == q.state && st == Ready:
		return
	case st == q.state && st == Waiting:
		p := s.pos[i]
		if p == inRun {
			if q.key != key {
				// Out of the run, and back in at its new place with its
				// insertion order (as a heap entry keeps its seq).
				s.runRemove(i)
				s.wait(i, key, q.seq)
			}
		} else if s.heap[p].key != key {
			s.heap[p].key = key
			s.heapFix(p)
		}
		return
	}
	s.unlink(i)
	s.put(i, st, key)
}

// place puts an unlinked QP i where it belongs at now.
func (s *Scheduler) place(i int32, now int64) {
	st, key := s.want(&s.qps[i], now)
	s.put(i, st, key)
}

func (s *Scheduler) put(i int32, st QPState, key int64) {
	switch st {
	case Ready:
		s.pushReady(i)
	case Waiting:
		s.seq++
		s.wait(i, key, s.seq)
	default:
		s.qps[i].state = st
	}
}

// unlink takes QP i out of the ready list or the heap; it is left parked as Idle.
func (s *Scheduler) unlink(i int32) {
	q := &s.qps[i]
	switch q.state {
	case Ready:
		s.listRemove(&s.head, &s.tail, i)
		s.nReady--
	case Waiting:
		if s.pos[i] == inRun {
			s.runRemove(i)
		} else {
			s.heapRemove(s.pos[i])
		}
	}
	q.state = Idle
}

// wait makes QP i Waiting with key and insertion order seq: at the run's
// tail when it comes after every QP there (or the run is empty), else in
// the heap.
func (s *Scheduler) wait(i int32, key int64, seq uint32) {
	q := &s.qps[i]
	q.state = Waiting
	if s.heapOnly || (s.nRun > 0 && waitsLess(key, seq, s.qps[s.runTail].key, s.qps[s.runTail].seq)) {
		s.heapInsert(i, key, seq)
		return
	}
	q.key, q.seq = key, seq
	q.next = nilQP
	q.prev = s.runTail
	if s.runTail != nilQP {
		s.qps[s.runTail].next = i
	} else {
		s.runHead = i
	}
	s.runTail = i
	s.pos[i] = inRun
	s.nRun++
}

// runRemove takes QP i out of the run; it keeps state Waiting for the caller
// to change.
func (s *Scheduler) runRemove(i int32) {
	s.listRemove(&s.runHead, &s.runTail, i)
	s.pos[i] = nilQP
	s.nRun--
}

// listRemove takes QP i out of the doubly linked list (through the QPs' prev
// and next) that runs from *head to *tail: the ready list or the run.
func (s *Scheduler) listRemove(head, tail *int32, i int32) {
	q := &s.qps[i]
	if q.prev != nilQP {
		s.qps[q.prev].next = q.next
	} else {
		*head = q.next
	}
	if q.next != nilQP {
		s.qps[q.next].prev = q.prev
	} else {
		*tail = q.prev
	}
	q.prev, q.next = nilQP, nilQP
}

func (s *Scheduler) pushReady(i int32) {
	q := &s.qps[i]
	q.state = Ready
	q.next = nilQP
	q.prev = s.tail
	if s.tail != nilQP {
		s.qps[s.tail].next = i
	} else {
		s.head = i
	}
	s.tail = i
	s.nReady++
}

// The heap: a 4-ary min-heap on (key, seq); pos[qp] is each Waiting QP's index.
// Sifting moves a hole instead of swapping, so each level costs one entry copy
// and one pos write. A 4-ary heap has half the levels of a binary one, and the
// four children of a node share a cache line or two.

func (e *heapEntry) before(o *heapEntry) bool { return waitsLess(e.key, e.seq, o.key, o.seq) }

// waitsLess is the order of Waiting QPs: (key, seq) before (okey, oseq).
func waitsLess(key int64, seq uint32, okey int64, oseq uint32) bool {
	// Ties compare seq modulo 2^32, exact while the tied entries were inserted
	// less than 2^31 pushes apart; beyond that only their order could change.
	return key < okey || (key == okey && int32(seq-oseq) < 0)
}

// siftUp places e at or above position j (a hole) and returns its final index.
func (s *Scheduler) siftUp(j int32, e heapEntry) {
	h := s.heap
	for j > 0 {
		p := (j - 1) / 4
		if !e.before(&h[p]) {
			break
		}
		h[j] = h[p]
		s.pos[h[j].qp] = j
		j = p
	}
	h[j] = e
	s.pos[e.qp] = j
}

// siftDown places e at or below position j (a hole).
func (s *Scheduler) siftDown(j int32, e heapEntry) {
	h := s.heap
	n := int32(len(h))
	for {
		c := 4*j + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if h[k].before(&h[m]) {
				m = k
			}
		}
		if !h[m].before(&e) {
			break
		}
		h[j] = h[m]
		s.pos[h[j].qp] = j
		j = m
	}
	h[j] = e
	s.pos[e.qp] = j
}

// heapFix restores the order after the key at j changed.
func (s *Scheduler) heapFix(j int32) {
	e := s.heap[j]
	if j > 0 && e.before(&s.heap[(j-1)/4]) {
		s.siftUp(j, e)
	} else {
		s.siftDown(j, e)
	}
}

// heapInsert adds QP i to the heap with key and insertion order seq.
func (s *Scheduler) heapInsert(i int32, key int64, seq uint32) {
	j := int32(len(s.heap))
	s.heap = s.heap[:j+1] // within cap (MaxQPs): no allocation
	s.siftUp(j, heapEntry{key: key, seq: seq, qp: i})
}

// heapRemove removes the entry at position j; its QP keeps state Waiting for the
// caller to change. The last entry fills the hole: it moves up if it is before
// the hole's parent, otherwise the hole first sinks to a leaf along the smaller
// children (one comparison per child, none against the moved entry, which
// usually belongs near the bottom) and the entry then rises from there.
func (s *Scheduler) heapRemove(j int32) {
	last := int32(len(s.heap) - 1)
	s.pos[s.heap[j].qp] = nilQP
	e := s.heap[last]
	s.heap = s.heap[:last]
	if j == last {
		return
	}
	h := s.heap
	if j > 0 && e.before(&h[(j-1)/4]) {
		s.siftUp(j, e)
		return
	}
	for {
		c := 4*j + 1
		if c >= last {
			break
		}
		m := c
		end := min(c+4, last)
		for k := c + 1; k < end; k++ {
			if h[k].before(&h[m]) {
				m = k
			}
		}
		h[j] = h[m]
		s.pos[h[j].qp] = j
		j = m
	}
	s.siftUp(j, e)
}
