package pacer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// The sentinels are the same values as ccalgo's, so hostd can pass an RP's
// WindowBytes and NextTimer straight through.
func TestConstantsMatchCCAlgo(t *testing.T) {
	if Never != ccalgo.Never || NoWindow != ccalgo.NoWindow {
		t.Fatalf("Never %d / NoWindow %d differ from ccalgo's %d / %d", Never, NoWindow, ccalgo.Never, ccalgo.NoWindow)
	}
}

func newScheduler(tb testing.TB, cfg Config) *Scheduler {
	tb.Helper()
	s, err := NewScheduler(cfg, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// checkInvariants verifies the scheduler's structures against the QPs' states
// at time now: every QP in exactly the structure its state names, list links and
// heap order consistent, and each state the one the QP's parameters call for.
func checkInvariants(tb testing.TB, s *Scheduler, now int64) {
	tb.Helper()
	n := 0
	prev := nilQP
	for i := s.head; i != nilQP; i = s.qps[i].next {
		if s.qps[i].state != Ready {
			tb.Fatalf("QP %d in the ready list has state %v", i, s.qps[i].state)
		}
		if s.qps[i].prev != prev {
			tb.Fatalf("QP %d: prev %d, want %d", i, s.qps[i].prev, prev)
		}
		prev = i
		if n++; n > len(s.qps) {
			tb.Fatal("ready list has a cycle")
		}
	}
	if s.tail != prev || n != s.nReady {
		tb.Fatalf("ready list: tail %d (want %d), length %d (nReady %d)", s.tail, prev, n, s.nReady)
	}
	for j := range s.heap {
		e := s.heap[j]
		if s.qps[e.qp].state != Waiting || s.pos[e.qp] != int32(j) {
			tb.Fatalf("heap[%d] = QP %d with state %v pos %d", j, e.qp, s.qps[e.qp].state, s.pos[e.qp])
		}
		if j > 0 && s.heap[j].before(&s.heap[(j-1)/4]) {
			tb.Fatalf("heap order broken at %d", j)
		}
	}
	n, prev = 0, nilQP
	for i := s.runHead; i != nilQP; i = s.qps[i].next {
		q := &s.qps[i]
		if q.state != Waiting || s.pos[i] != inRun || q.prev != prev {
			tb.Fatalf("run: QP %d with state %v pos %d prev %d (want %d)", i, q.state, s.pos[i], q.prev, prev)
		}
		if prev != nilQP && !waitsLess(s.qps[prev].key, s.qps[prev].seq, q.key, q.seq) {
			tb.Fatalf("run order broken at QP %d", i)
		}
		prev = i
		if n++; n > len(s.qps) {
			tb.Fatal("run has a cycle")
		}
	}
	if s.runTail != prev || n != s.nRun {
		tb.Fatalf("run: tail %d (want %d), length %d (nRun %d)", s.runTail, prev, n, s.nRun)
	}
	for i := range s.qps {
		q := &s.qps[i]
		want, key := s.want(q, now)
		switch q.state {
		case Ready:
			// A QP made ready stays ready: its credit only grows with time.
			if want != Ready {
				tb.Fatalf("QP %d is ready but should be %v", i, want)
			}
		case Waiting:
			k := q.key
			if s.pos[i] != inRun {
				k = s.heap[s.pos[i]].key
			}
			if want == Ready {
				// Due but not yet moved by Next: allowed.
				if k > now {
					tb.Fatalf("QP %d: key %d > now %d but ready", i, k, now)
				}
			} else if want != Waiting || k != key {
				tb.Fatalf("QP %d waits with key %d, want %v key %d", i, k, want, key)
			}
		default:
			if want != q.state {
				tb.Fatalf("QP %d is %v, want %v", i, q.state, want)
			}
		}
	}
	c := s.Counts()
	if c.Ready+c.Waiting+c.Parked != len(s.qps) {
		tb.Fatalf("counts %+v do not add up to %d", c, len(s.qps))
	}
}

// link is a virtual tx loop: a link of linkBps serializes each packet the
// scheduler picks; time is kept exactly in picoseconds (the tests use link rates
// and packet sizes with whole-picosecond serialization times) and the scheduler
// sees it truncated to nanoseconds, as a TSC-driven loop would.
type link struct {
	s       *Scheduler
	linkBps int64
	pkt     []int64 // packet size of each QP
	clockPs int64   // the link is free from this time on

	// Per QP, over packets sent at or after from: count, first and last times.
	from     int64
	n        []int64
	first    []int64
	last     []int64
	bytes    []int64 // bytes sent at or after from
	onSend   func(qp int, now int64)
	maxStall int64
}

func newLink(s *Scheduler, linkBps int64, pkt []int64) *link {
	n := s.MaxQPs()
	return &link{s: s, linkBps: linkBps, pkt: pkt, n: make([]int64, n), first: make([]int64, n), last: make([]int64, n), bytes: make([]int64, n)}
}

// run drives the link until virtual time until (ns).
func (l *link) run(until int64) {
	for {
		now := l.clockPs / 1000
		if now >= until {
			return
		}
		qp, ok := l.s.Next(now)
		if !ok {
			t := l.s.NextEligible(now)
			if t == Never || t >= until {
				l.clockPs = until * 1000
				return
			}
			if t*1000 > l.clockPs {
				l.clockPs = t * 1000
			}
			continue
		}
		size := l.pkt[qp]
		l.s.OnSent(qp, size, now)
		if now >= l.from {
			if l.n[qp] == 0 {
				l.first[qp] = now
			}
			l.n[qp]++
			l.last[qp] = now
			l.bytes[qp] += size
		}
		if l.onSend != nil {
			l.onSend(qp, now)
		}
		l.clockPs += size * 8 * 1e12 / l.linkBps
	}
}

// rate is the rate of QP qp measured between its first and last packet sent
// after l.from: (n-1) packets paid for over that interval. It is free of the
// +-1 packet quantization of counting bytes in a window.
func (l *link) rate(qp int) float64 {
	if l.n[qp] < 2 || l.last[qp] == l.first[qp] {
		return 0
	}
	return float64((l.n[qp]-1)*l.pkt[qp]) * 8 / float64(l.last[qp]-l.first[qp]) * 1e9
}

func TestSchedulerAchievedRate(t *testing.T) {
	const (
		g = 1e9
		m = 1e6
	)
	// rates builders
	same := func(n int, r float64) []float64 {
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = r
		}
		return rs
	}
	// linear spacing from lo, with the sum exactly total (rounded down per QP).
	linear := func(n int, lo, total float64) []float64 {
		d := (total - float64(n)*lo) / (float64(n) * float64(n-1) / 2)
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = math.Floor(lo + float64(i)*d)
		}
		return rs
	}
	tests := []struct {
		name    string
		linkBps int64
		rates   []float64
		pkt     int64
		burst   int64
		warm    int64 // ns
		dur     int64 // ns
	}{
		{"1 QP at 10 Mb/s", 100e9, same(1, 10*m), 1000, 2000, 1e6, 200e6},
		{"1 QP at 1 Gb/s", 100e9, same(1, g), 1000, 2000, 1e6, 20e6},
		{"1 QP at 33.3 Gb/s", 100e9, same(1, 33.3*g), 1000, 2000, 1e6, 5e6},
		{"1 QP at the link rate", 100e9, same(1, 100*g), 1000, 2000, 1e6, 5e6},
		{"100 QPs at 1 Gb/s: sum = link", 100e9, same(100, g), 1000, 4000, 2e6, 20e6},
		{"100 QPs, 10 Mb/s to 1.99 Gb/s: sum = link", 100e9, linear(100, 10*m, 100*g), 1000, 4000, 5e6, 100e6},
		{"100 QPs, 10 Mb/s to 1.9 Gb/s: sum = 95% link", 100e9, linear(100, 10*m, 95*g), 1000, 4000, 5e6, 100e6},
		{"10000 QPs at 10 Mb/s: sum = link", 100e9, same(10000, 10*m), 1000, 4000, 20e6, 100e6},
		{"10000 QPs, 10 Mb/s to 70 Mb/s on 400 Gb/s: sum = link", 400e9, linear(10000, 10*m, 400*g), 1000, 4000, 10e6, 50e6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.rates)
			sum := 0.0
			for _, r := range tc.rates {
				sum += r
			}
			if sum > float64(tc.linkBps) {
				t.Fatalf("bad case: sum of rates %g above the link %d", sum, tc.linkBps)
			}
			s := newScheduler(t, Config{MaxQPs: n, MaxPacketBytes: tc.pkt, RateBps: 0, BurstBytes: tc.burst})
			pkt := make([]int64, n)
			for i, r := range tc.rates {
				pkt[i] = tc.pkt
				s.SetRate(i, r, 0)
				s.AddBacklog(i, UnlimitedBacklog, 0)
			}
			l := newLink(s, tc.linkBps, pkt)
			l.from = tc.warm
			l.run(tc.warm + tc.dur)
			checkInvariants(t, s, l.clockPs/1000)
			worst, worstQP := 0.0, 0
			var total int64
			for i, r := range tc.rates {
				got := l.rate(i)
				if e := math.Abs(got/r - 1); e > worst {
					worst, worstQP = e, i
				}
				total += l.bytes[i]
				// Counting bytes in the window: off by at most the burst and
				// a packet at each end.
				want := r * float64(tc.dur) / 8e9
				if d := math.Abs(float64(l.bytes[i]) - want); d > float64(tc.burst+2*tc.pkt) {
					t.Errorf("QP %d sent %d B in the window, want %.0f +- %d", i, l.bytes[i], want, tc.burst+2*tc.pkt)
				}
			}
			agg := float64(total) * 8 / float64(tc.dur) * 1e9
			t.Logf("%d QPs: worst rate error %.4f%% (QP %d: %.6g of %.6g b/s, %d packets); aggregate %.4f Gb/s of %.4f offered",
				n, 100*worst, worstQP, l.rate(worstQP), tc.rates[worstQP], l.n[worstQP], agg/1e9, sum/1e9)
			if worst > 0.005 {
				t.Errorf("worst rate error %.4f%% > 0.5%%", 100*worst)
			}
			if agg > float64(tc.linkBps)*1.0001 {
				t.Errorf("aggregate %g above the link %d", agg, tc.linkBps)
			}
		})
	}
}

func TestSchedulerRateChangeNextPacket(t *testing.T) {
	const pkt = 1000
	tests := []struct {
		name     string
		r1, r2   float64
		burst    int64
		change   int64 // ns after the 10th packet
		wantNext int64 // ns after the change
		wantGap  int64 // between later packets
	}{
		// At 1 Gb/s a packet costs 8000 ns; 3000 ns later 5000 ns (625 B) of debt
		// remain, paid at the new rate.
		{"increase 1 -> 10 Gb/s", 1e9, 10e9, 0, 3000, 500, 800},
		{"decrease 1 Gb/s -> 100 Mb/s", 1e9, 100e6, 0, 3000, 50_000, 80_000},
		{"decrease with a burst banked", 1e9, 100e6, 10_000, 3000, 50_000, 80_000},
		{"increase to unlimited", 1e9, math.Inf(1), 0, 3000, 0, 0},
		{"stop", 1e9, 0, 0, 3000, -1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(t, Config{MaxQPs: 1, MaxPacketBytes: pkt, RateBps: tc.r1, BurstBytes: tc.burst})
			s.AddBacklog(0, UnlimitedBacklog, 0)
			// Send 10 packets at 1 Gb/s, each as soon as eligible.
			now := int64(0)
			for range 10 {
				now = s.NextEligible(now)
				if _, ok := s.Next(now); !ok {
					t.Fatalf("no QP at its eligibility time %d", now)
				}
				s.OnSent(0, pkt, now)
			}
			change := now + tc.change
			s.SetRate(0, tc.r2, change)
			checkInvariants(t, s, change)
			next := s.NextEligible(change)
			if tc.wantNext < 0 {
				if next != Never || s.State(0) != Stopped {
					t.Fatalf("after stop: next %d, state %v", next, s.State(0))
				}
				// Restarted 100 ns later, the 5000 ns of debt left are paid
				// from then on.
				s.SetRate(0, tc.r1, change+100)
				if got := s.NextEligible(change + 100); got != change+5100 {
					t.Fatalf("after restart: next eligible %d, want %d", got, change+5100)
				}
				return
			}
			if next-change != tc.wantNext {
				t.Fatalf("next packet %d ns after the change, want %d", next-change, tc.wantNext)
			}
			now = next
			for k := range 5 {
				if qp, ok := s.Next(now); !ok || qp != 0 {
					t.Fatalf("packet %d: QP not eligible at %d", k, now)
				}
				s.OnSent(0, pkt, now)
				n := s.NextEligible(now)
				if n-now != tc.wantGap {
					t.Fatalf("packet %d: gap %d, want %d", k, n-now, tc.wantGap)
				}
				now = n
			}
		})
	}
}

func TestSchedulerWindow(t *testing.T) {
	const (
		pkt     = 1000
		linkBps = 100e9
		rtt     = 10_000 // ns from send to ack
	)
	tests := []struct {
		name   string
		qps    int
		window int64
		rate   float64
	}{
		{"window 8 packets, unpaced", 1, 8 * pkt, math.Inf(1)},
		{"window 2.5 packets, unpaced", 4, 2500, math.Inf(1)},
		{"window below one packet", 3, 300, math.Inf(1)},
		{"window below rate", 10, 5 * pkt, 5e9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(t, Config{MaxQPs: tc.qps, MaxPacketBytes: pkt, RateBps: tc.rate, BurstBytes: pkt})
			pkts := make([]int64, tc.qps)
			for i := range pkts {
				pkts[i] = pkt
				s.SetWindow(i, tc.window, 0)
				s.AddBacklog(i, UnlimitedBacklog, 0)
			}
			l := newLink(s, linkBps, pkts)
			// Acks come back rtt after the send, in order.
			type ack struct {
				qp int
				at int64
			}
			var acks []ack
			blocked := 0
			l.onSend = func(qp int, now int64) {
				in := s.Inflight(qp)
				if in > tc.window && in != pkt {
					t.Fatalf("QP %d: %d B in flight with a window of %d", qp, in, tc.window)
				}
				acks = append(acks, ack{qp, now + rtt})
			}
			const end, from = 2_000_000, 200_000
			l.from = from
			for l.clockPs/1000 < end {
				// Run the link up to the next ack, then deliver the acks due.
				// A packet sent in this run is acked at rtt from its send or
				// later, so no ack falls inside the run.
				until := min(int64(end), l.clockPs/1000+rtt)
				if len(acks) > 0 {
					until = min(until, acks[0].at)
				}
				l.run(until)
				for i := range tc.qps {
					if s.State(i) == WindowBlocked {
						blocked++
					}
				}
				for len(acks) > 0 && acks[0].at <= until {
					s.OnAck(acks[0].qp, pkt, acks[0].at)
					acks = acks[1:]
				}
				checkInvariants(t, s, until)
			}
			if blocked == 0 {
				t.Fatal("no QP was ever blocked by its window")
			}
			// Each QP sends one window (whole packets, at least one) per RTT,
			// unless its rate is lower.
			perWin := max(tc.window/pkt, 1)
			for i := range tc.qps {
				want := min(float64(perWin*pkt)*8/rtt*1e9, tc.rate, linkBps/float64(tc.qps))
				got := float64(l.bytes[i]) * 8 / (end - from) * 1e9
				if got > want*1.005 || got < want*0.97 {
					t.Errorf("QP %d: rate %.4g b/s, want about %.4g", i, got, want)
				}
			}
		})
	}
}

func TestSchedulerHold(t *testing.T) {
	const pkt = 1000
	s := newScheduler(t, Config{MaxQPs: 2, MaxPacketBytes: pkt, RateBps: 1e9, BurstBytes: 0})
	s.AddBacklog(0, UnlimitedBacklog, 0)
	s.AddBacklog(1, UnlimitedBacklog, 0)
	// Both send one packet at 0: each owes 8000 ns.
	for range 2 {
		qp, ok := s.Next(0)
		if !ok {
			t.Fatal("no QP at 0")
		}
		s.OnSent(qp, pkt, 0)
	}
	// QP 0 halts at 2000 until 50,000: ACC Eq. 1, its next packet moves from
	// 8000 to 8000 + (50,000 - 2000).
	s.HoldUntil(0, 50_000, 2000)
	s.HoldUntil(0, 50_000, 2500) // same hold again: no change
	checkInvariants(t, s, 2500)
	if got := s.Bucket(0).ReadyAt(0); got != 56_000 {
		t.Fatalf("held QP ready at %d, want 56000", got)
	}
	sent := map[int][]int64{}
	for now := int64(2500); now < 100_000; now++ {
		if qp, ok := s.Next(now); ok {
			s.OnSent(qp, pkt, now)
			sent[qp] = append(sent[qp], now)
		}
	}
	if len(sent[0]) == 0 || sent[0][0] != 56_000 {
		t.Fatalf("held QP sent at %v, want the first at 56000", sent[0])
	}
	if len(sent[1]) == 0 || sent[1][0] != 8000 {
		t.Fatalf("other QP sent at %v, want the first at 8000 (not held)", sent[1])
	}
	// Cancel a hold early: the QP is eligible again at once when it had credit.
	s.HoldUntil(1, 1_000_000, 100_000)
	if s.State(1) != Waiting {
		t.Fatalf("held QP state %v, want waiting", s.State(1))
	}
	s.HoldUntil(1, 0, 200_000)
	if got := s.NextEligible(200_000); got != 200_000 {
		t.Fatalf("after cancelling the hold next eligible at %d, want 200000", got)
	}
	checkInvariants(t, s, 200_000)
}

// jain is Jain's fairness index of xs.
func jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(xs)) * s2)
}

func TestSchedulerRoundRobin(t *testing.T) {
	tests := []struct {
		name string
		qps  int
		rate float64 // each; the sum exceeds the link
	}{
		{"8 unpaced QPs", 8, math.Inf(1)},
		{"100 QPs at 10 Gb/s on 100 Gb/s", 100, 10e9},
		{"1000 QPs at 1 Gb/s on 100 Gb/s", 1000, 1e9},
	}
	const pkt, linkBps = 1000, 100e9
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(t, Config{MaxQPs: tc.qps, MaxPacketBytes: pkt, RateBps: tc.rate, BurstBytes: 2 * pkt})
			pkts := make([]int64, tc.qps)
			for i := range pkts {
				pkts[i] = pkt
				s.AddBacklog(i, UnlimitedBacklog, 0)
			}
			l := newLink(s, linkBps, pkts)
			// Once every QP is eligible all the time, service is strictly cyclic:
			// each window of qps consecutive packets holds every QP once.
			var order []int
			l.onSend = func(qp int, now int64) { order = append(order, qp) }
			l.from = 1e6
			l.run(5e6)
			seen := make([]int, tc.qps)
			start := len(order) / 2
			for k := start; k < start+5*tc.qps; k++ {
				if k >= start+tc.qps && order[k] != order[k-tc.qps] {
					t.Fatalf("packet %d: QP %d, but %d packets earlier QP %d: not round robin", k, order[k], tc.qps, order[k-tc.qps])
				}
				seen[order[k]]++
			}
			for i, c := range seen {
				if c != 5 {
					t.Fatalf("QP %d served %d times in 5 rounds", i, c)
				}
			}
			rates := make([]float64, tc.qps)
			for i := range rates {
				rates[i] = float64(l.bytes[i])
			}
			j := jain(rates)
			t.Logf("Jain index %.6f over %d QPs", j, tc.qps)
			if j < 0.9999 {
				t.Errorf("Jain index %.6f < 0.9999", j)
			}
		})
	}
}

func TestSchedulerIdleParking(t *testing.T) {
	s := newScheduler(t, Config{MaxQPs: 3, MaxPacketBytes: 1000, RateBps: math.Inf(1), BurstBytes: 0})
	if _, ok := s.Next(0); ok {
		t.Fatal("a QP with no backlog was returned")
	}
	if got := s.NextEligible(0); got != Never {
		t.Fatalf("NextEligible with all idle = %d, want Never", got)
	}
	s.AddBacklog(1, 2500, 10)
	var sent []int64
	for {
		qp, ok := s.Next(20)
		if !ok {
			break
		}
		if qp != 1 {
			t.Fatalf("Next returned idle QP %d", qp)
		}
		n := min(s.Backlog(qp), 1000)
		s.OnSent(qp, n, 20)
		sent = append(sent, n)
	}
	if fmt.Sprint(sent) != "[1000 1000 500]" || s.State(1) != Idle {
		t.Fatalf("sent %v, state %v; want [1000 1000 500] and idle", sent, s.State(1))
	}
	s.SetBacklog(2, 10, 30)
	if qp, ok := s.Next(30); !ok || qp != 2 {
		t.Fatalf("Next after SetBacklog = %d, %v", qp, ok)
	}
	s.SetBacklog(2, 0, 30)
	if _, ok := s.Next(30); ok || s.State(2) != Idle {
		t.Fatalf("QP with backlog set to 0 is %v", s.State(2))
	}
	s.Reset(1, 1e9, 0, 40)
	if s.State(1) != Idle || s.Inflight(1) != 0 || s.Bucket(1).RateBps() != 1e9 {
		t.Fatal("Reset did not restore the initial state")
	}
	checkInvariants(t, s, 40)
}

func TestNewSchedulerErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no QPs", Config{MaxQPs: 0, MaxPacketBytes: 1000}},
		{"too many QPs", Config{MaxQPs: 1<<30 + 1, MaxPacketBytes: 1000}},
		{"no packet size", Config{MaxQPs: 1}},
		{"negative burst", Config{MaxQPs: 1, MaxPacketBytes: 1000, BurstBytes: -1}},
		{"NaN rate", Config{MaxQPs: 1, MaxPacketBytes: 1000, RateBps: math.NaN()}},
		{"negative rate", Config{MaxQPs: 1, MaxPacketBytes: 1000, RateBps: -1}},
	}
	for _, tc := range tests {
		if _, err := NewScheduler(tc.cfg, 0); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestSchedulerRandomOps applies random sequences of every operation and checks
// the invariants after each.
func TestSchedulerRandomOps(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			runOps(t, 50, func() uint64 { return r.Uint64() }, 5000)
		})
	}
}

// FuzzScheduler is TestSchedulerRandomOps driven by the fuzzer's bytes.
func FuzzScheduler(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 200, 100, 50, 25})
	f.Fuzz(func(t *testing.T, data []byte) {
		i := 0
		next := func() uint64 {
			var v uint64
			for range 8 {
				v <<= 8
				if i < len(data) {
					v |= uint64(data[i])
				}
				i++
			}
			return v
		}
		runOps(t, 8, next, len(data)/8+1)
	})
}

// runOps applies steps random operations to a scheduler and checks its
// invariants after each, and that a twin that keeps every waiting QP in its
// heap (the order without the run) makes the same picks and states.
func runOps(t *testing.T, nqp int, rnd func() uint64, steps int) {
	cfg := Config{MaxQPs: nqp, MaxPacketBytes: 1500, RateBps: 10e9, BurstBytes: 3000}
	s, twin := newScheduler(t, cfg), newScheduler(t, cfg)
	twin.heapOnly = true
	now := int64(0)
	for range steps {
		v := rnd()
		now += int64(v >> 48 & 0xff)
		op(s, v, now)
		op(twin, v, now)
		checkInvariants(t, s, now)
		if twin.nRun != 0 {
			t.Fatal("the heap-only twin used its run")
		}
		qa, oka := s.Next(now)
		qb, okb := twin.Next(now)
		if qa != qb || oka != okb || s.NextEligible(now) != twin.NextEligible(now) || s.Counts() != twin.Counts() {
			t.Fatalf("Next %d,%v eligible %d %+v; heap only: %d,%v eligible %d %+v", qa, oka, s.NextEligible(now), s.Counts(),
				qb, okb, twin.NextEligible(now), twin.Counts())
		}
		for q := range nqp {
			if s.State(q) != twin.State(q) {
				t.Fatalf("QP %d: %v, heap only %v", q, s.State(q), twin.State(q))
			}
		}
		if q, ok := s.Next(now); ok {
			if st := s.State(q); st != Ready {
				t.Fatalf("Next returned QP %d in state %v", q, st)
			}
			if b := s.Bucket(q); b.ReadyAt(0) > now {
				t.Fatalf("Next returned QP %d before its eligibility %d (now %d)", q, b.ReadyAt(0), now)
			}
		}
	}
}

// op is one random operation of runOps, chosen by v, at now.
func op(s *Scheduler, v uint64, now int64) {
	rates := []float64{0, 1e6, 10e9, 100e9, math.Inf(1), math.NaN()}
	nqp := s.MaxQPs()
	qp := int(v>>8) % nqp
	arg := int64(v >> 32 & 0xffff)
	{
		switch v % 10 {
		case 0, 1, 2:
			if q, ok := s.Next(now); ok {
				if arg%3 == 0 {
					s.OnSentQueue(q, 64+arg%1437, arg%4000, arg%3000, now)
				} else {
					s.OnSent(q, 64+arg%1437, now)
				}
			}
		case 3:
			s.OnAck(qp, arg, now)
		case 4:
			s.SetRate(qp, rates[arg%int64(len(rates))], now)
		case 5:
			s.SetWindow(qp, []int64{NoWindow, 0, 1000, 5000, -1}[arg%5], now)
		case 6:
			s.HoldUntil(qp, now-100+arg, now)
		case 7:
			if arg%7 == 0 {
				s.AddBacklog(qp, UnlimitedBacklog, now)
			} else {
				s.AddBacklog(qp, arg, now)
			}
		case 8:
			if arg%2 == 0 {
				s.SetQueue(qp, arg%3000, arg%4000, now)
			} else {
				s.SetBacklog(qp, arg%3000, now)
				s.SetInflight(qp, arg%4000, now)
			}
		case 9:
			if arg%50 == 0 {
				s.Reset(qp, 1e9, arg%5000, now)
			} else {
				s.SetBurst(qp, arg%5000, now)
			}
		}
	}
}

// TestCombinedUpdatesMatchSeparate checks that OnSentQueue and SetQueue leave a
// scheduler exactly where the separate calls they replace (OnSent + SetBacklog +
// SetInflight, SetBacklog + SetInflight) leave a twin: same states, bytes in
// flight, backlogs, buckets and picks.
func TestCombinedUpdatesMatchSeparate(t *testing.T) {
	tests := []struct {
		name           string
		window         int64
		rate           float64
		inflight, back int64 // the host's own accounting after each packet
	}{
		{"unlimited", NoWindow, 10e9, 0, UnlimitedBacklog},
		{"window blocks", 3000, 10e9, 2500, UnlimitedBacklog},
		{"window fits", 3000, 10e9, 1000, UnlimitedBacklog},
		{"backlog runs out", NoWindow, 1e9, 1000, 0},
		{"slow rate waits", NoWindow, 1e6, 0, 5000},
		{"stopped", NoWindow, 0, 0, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{MaxQPs: 4, MaxPacketBytes: 1000, RateBps: 10e9, BurstBytes: 2000}
			a, b := newScheduler(t, cfg), newScheduler(t, cfg)
			for _, s := range []*Scheduler{a, b} {
				for qp := range 4 {
					s.AddBacklog(qp, UnlimitedBacklog, 0)
				}
				s.SetWindow(1, tc.window, 0)
				s.SetRate(1, tc.rate, 0)
			}
			now := int64(0)
			for step := range 50 {
				now += 300
				qa, oka := a.Next(now)
				qb, okb := b.Next(now)
				if qa != qb || oka != okb {
					t.Fatalf("step %d: Next %d,%v vs %d,%v", step, qa, oka, qb, okb)
				}
				if oka {
					a.OnSentQueue(qa, 1000, tc.inflight, tc.back, now)
					b.OnSent(qb, 1000, now)
					b.SetBacklog(qb, tc.back, now)
					b.SetInflight(qb, tc.inflight, now)
				}
				qp := step % 4
				a.SetQueue(qp, tc.back, int64(step*100), now)
				b.SetBacklog(qp, tc.back, now)
				b.SetInflight(qp, int64(step*100), now)
				for q := range 4 {
					if a.State(q) != b.State(q) || a.Inflight(q) != b.Inflight(q) || a.Backlog(q) != b.Backlog(q) ||
						*a.Bucket(q) != *b.Bucket(q) {
						t.Fatalf("step %d QP %d: %v/%d/%d vs %v/%d/%d", step, q, a.State(q), a.Inflight(q),
							a.Backlog(q), b.State(q), b.Inflight(q), b.Backlog(q))
					}
				}
				if a.NextEligible(now) != b.NextEligible(now) {
					t.Fatalf("step %d: NextEligible %d vs %d", step, a.NextEligible(now), b.NextEligible(now))
				}
			}
		})
	}
}

func TestSchedulerAllocs(t *testing.T) {
	const n = 1000
	s := newScheduler(t, Config{MaxQPs: n, MaxPacketBytes: 1000, RateBps: 1e9, BurstBytes: 2000})
	for i := range n {
		s.AddBacklog(i, UnlimitedBacklog, 0)
		s.SetWindow(i, 100_000, 0)
	}
	now := int64(0)
	k := 0
	tests := []struct {
		name string
		f    func()
	}{
		{"Next+OnSent", func() {
			now += 10
			if qp, ok := s.Next(now); ok {
				s.OnSent(qp, 1000, now)
			}
		}},
		{"OnAck", func() { k = (k + 1) % n; s.OnAck(k, 1000, now) }},
		{"SetRate", func() { k = (k + 1) % n; s.SetRate(k, float64(1e9+k), now) }},
		{"SetWindow", func() { k = (k + 1) % n; s.SetWindow(k, int64(50_000+k), now) }},
		{"HoldUntil", func() { k = (k + 1) % n; s.HoldUntil(k, now+int64(k), now) }},
		{"AddBacklog", func() { k = (k + 1) % n; s.AddBacklog(k, 1000, now) }},
		{"NextEligible", func() { _ = s.NextEligible(now) }},
		{"Next+OnSentQueue", func() {
			now += 10
			if qp, ok := s.Next(now); ok {
				s.OnSentQueue(qp, 1000, 5000, UnlimitedBacklog, now)
			}
		}},
		{"SetQueue", func() { k = (k + 1) % n; s.SetQueue(k, UnlimitedBacklog, int64(k), now) }},
	}
	for _, tc := range tests {
		if a := testing.AllocsPerRun(5000, tc.f); a != 0 {
			t.Errorf("%s allocates %v per call", tc.name, a)
		}
	}
}

// BenchmarkSchedule measures one scheduling decision (Next + OnSent) of a tx loop
// on a virtual 100 Gb/s link, 1000 B packets, the QPs' rates summing to the link.
func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("qps=%d", n), func(b *testing.B) {
			const pkt, linkBps = 1000, 100e9
			s := newScheduler(b, Config{MaxQPs: n, MaxPacketBytes: pkt, RateBps: linkBps / float64(n), BurstBytes: 2 * pkt})
			for i := range n {
				s.AddBacklog(i, UnlimitedBacklog, 0)
			}
			clockPs := int64(0)
			const serPs = pkt * 8 * 1e12 / linkBps
			b.ReportAllocs()
			for b.Loop() {
				for {
					now := clockPs / 1000
					qp, ok := s.Next(now)
					if ok {
						s.OnSent(qp, pkt, now)
						clockPs += serPs
						break
					}
					clockPs = max(clockPs, s.NextEligible(now)*1000)
				}
			}
		})
	}
}
