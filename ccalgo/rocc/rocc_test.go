package rocc

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/cctest"
)

func env10G() ccalgo.Env { return ccalgo.Env{LinkBps: 10e9, ID: 0x0a000001} }

func newTestCP(tb testing.TB, env ccalgo.Env) *CP {
	tb.Helper()
	c, err := NewCP(DefaultParams(env), env)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func fx(units float64) int64 { return int64(math.Round(units * (1 << FracBits))) }

func units(f int64) float64 { return float64(f) / (1 << FracBits) }

func TestDefaultParams(t *testing.T) {
	cases := []struct {
		link             float64
		fMax             int64
		qref, qmid, qmax int64
		alpha, beta      float64
	}{
		{10e9, 1000, 75_000, 150_000, 210_000, 0.3, 1.5},
		{40e9, 4000, 150_000, 300_000, 360_000, 0.3, 1.5},
		{100e9, 10000, 300_000, 600_000, 660_000, 0.45, 2.25},
		{25e9, 2500, 112_500, 225_000, 285_000, 0.3, 1.5},         // midway 10..40
		{70e9, 7000, 225_000, 450_000, 510_000, 0.375, 1.875},     // midway 40..100
		{1e9, 100, 7_500, 15_000, 21_000, 0.3, 1.5},               // proportional below 10G
		{200e9, 20000, 600_000, 1_200_000, 1_320_000, 0.45, 2.25}, // proportional above 100G
	}
	for _, tc := range cases {
		p := DefaultParams(ccalgo.Env{LinkBps: tc.link})
		if p.DeltaFBps != 10e6 || p.DeltaQBytes != 600 || p.FMin != 10 || p.T != 40_000 ||
			p.FlowTableSize != 1024 || p.RPTimer != 0 {
			t.Errorf("%g: fixed defaults wrong: %+v", tc.link, p)
		}
		d, err := p.derive(tc.link)
		if err != nil {
			t.Fatalf("%g: %v", tc.link, err)
		}
		if p.FMax != 0 || d.fMax != tc.fMax || p.QRefBytes != tc.qref || p.QMidBytes != tc.qmid || p.QMaxBytes != tc.qmax {
			t.Errorf("%g: got F_max %d (derived %d) Q %d/%d/%d, want 0 (%d) %d/%d/%d", tc.link, p.FMax, d.fMax,
				p.QRefBytes, p.QMidBytes, p.QMaxBytes, tc.fMax, tc.qref, tc.qmid, tc.qmax)
		}
		// F_max follows a Delta_F changed after the defaults (a scaled testbed).
		p.DeltaFBps = 1e6
		if d, err := p.derive(tc.link); err != nil || d.fMax != 10*tc.fMax {
			t.Errorf("%g: F_max with Delta_F 1 Mb/s = %d (%v), want %d", tc.link, d.fMax, err, 10*tc.fMax)
		}
		if math.Abs(p.Alpha-tc.alpha) > 1e-12 || math.Abs(p.Beta-tc.beta) > 1e-12 {
			t.Errorf("%g: alpha/beta %g/%g, want %g/%g", tc.link, p.Alpha, p.Beta, tc.alpha, tc.beta)
		}
		if _, err := p.derive(tc.link); err != nil {
			t.Errorf("%g: defaults do not validate: %v", tc.link, err)
		}
	}
}

func TestDerivedUnits(t *testing.T) {
	d, err := DefaultParams(env10G()).derive(10e9)
	if err != nil {
		t.Fatal(err)
	}
	if d.qRef != 125 || d.qMid != 250 || d.qMax != 350 || d.fMin != 10 || d.fMax != 1000 || d.rpTimer != 80_000 {
		t.Fatalf("derived %+v", d)
	}
	if d.alphaFx != 19661 || d.betaFx != 98304 {
		t.Fatalf("fixed-point gains %d %d", d.alphaFx, d.betaFx)
	}
}

func TestParamValidation(t *testing.T) {
	cases := []struct {
		name  string
		param string
		mod   func(p *Params)
	}{
		{"deltaF", "delta_f_bps", func(p *Params) { p.DeltaFBps = 0 }},
		{"deltaF NaN", "delta_f_bps", func(p *Params) { p.DeltaFBps = math.NaN() }},
		{"deltaQ", "delta_q_bytes", func(p *Params) { p.DeltaQBytes = -1 }},
		{"T", "t_ns", func(p *Params) { p.T = 0 }},
		{"rp timer", "rp_timer_ns", func(p *Params) { p.RPTimer = -5 }},
		{"fmin", "f_min", func(p *Params) { p.FMin = 0 }},
		{"fmax below fmin", "f_max", func(p *Params) { p.FMax = 10 }},
		{"q order", "q_ref_bytes/q_mid_bytes/q_max_bytes", func(p *Params) { p.QMidBytes = p.QRefBytes }},
		{"q order 2", "q_ref_bytes/q_mid_bytes/q_max_bytes", func(p *Params) { p.QMaxBytes = p.QMidBytes - 1 }},
		{"q collapse in chunks", "delta_q_bytes", func(p *Params) { p.DeltaQBytes = 100_000 }},
		{"alpha", "alpha", func(p *Params) { p.Alpha = 0 }},
		{"beta", "beta", func(p *Params) { p.Beta = -1 }},
		{"table", "flow_table_size", func(p *Params) { p.FlowTableSize = 0 }},
		{"table big", "flow_table_size", func(p *Params) { p.FlowTableSize = MaxFlowTableSize + 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams(env10G())
			tc.mod(p)
			_, err := NewCP(p, env10G())
			var pe *ccalgo.ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("NewCP error %v, want ParamError on %s", err, tc.param)
			}
			if _, err := NewRP(p, env10G()); err == nil {
				t.Fatalf("NewRP accepted bad %s", tc.param)
			}
		})
	}
	// F_max = 0 means link / Delta_F.
	p := DefaultParams(env10G())
	p.FMax = 0
	c, err := NewCP(p, env10G())
	if err != nil || c.d.fMax != 1000 {
		t.Fatalf("F_max 0: %v %+v", err, c)
	}
}

func TestAutoTune(t *testing.T) {
	c := newTestCP(t, env10G()) // F_max = 1000
	cases := []struct {
		f     float64
		shift uint // log2(ratio): level = 2 << shift
	}{
		{1000, 0}, {500, 0}, // F >= F_max/2: loop never runs, ratio 1
		{499.99, 1}, {250, 1},
		{249.5, 2}, {125, 2},
		{124, 3}, {62.5, 3},
		{62.4, 4}, {31.25, 4},
		{31.2, 5}, {10, 5}, // level stops at 64, ratio 32
	}
	for _, tc := range cases {
		c.f = fx(tc.f)
		if got := c.autoTune(); got != tc.shift {
			t.Errorf("F = %g: shift %d (ratio %d), want %d (ratio %d)", tc.f, got, 1<<got, tc.shift, 1<<tc.shift)
		}
	}
}

// TestAlgorithm1 checks single steps of CALCULATE_FAIR_RATE against values
// computed by hand from Algorithm 1 with the 10 Gb/s defaults: F_max = 1000,
// F_min = 10, Q_ref = 125, Q_mid = 250, Q_max = 350, alpha~ = 0.3, beta~ = 1.5.
func TestAlgorithm1(t *testing.T) {
	cases := []struct {
		name         string
		f            float64
		qOld, qCur   int64
		want         float64
		mdMax, mdMid uint64
	}{
		{"PI ratio 1", 600, 120, 130, 600 - 0.3*5 - 1.5*10, 0, 0},
		{"PI ratio 2", 400, 120, 130, 400 - 0.15*5 - 0.75*10, 0, 0},
		{"PI queue below ref raises F", 333, 100, 100, 333 + 0.15*25, 0, 0},
		{"PI draining queue raises F", 600, 200, 150, 600 - 0.3*25 + 1.5*50, 0, 0},
		{"PI ratio 32 from F_min", 10, 0, 0, 10 + 0.3/32*125, 0, 0},
		{"MD Q_max -> F_min", 600, 340, 350, 10, 1, 0},
		{"MD Q_max wins over Q_mid", 600, 0, 400, 10, 1, 0},
		{"no MD at F = F_max/8", 125, 350, 350, 125 - 0.075*225, 0, 0},
		{"MD growth -> F/2", 600, 50, 300, 300, 0, 1},
		{"MD growth on odd F", 301, 0, 250, 150.5, 0, 1},
		{"no MD growth at low F", 100, 0, 250, 100 - 0.0375*125 - 0.1875*250, 0, 0},
		{"growth just below Q_mid", 600, 0, 249, 600 - 0.3*124 - 1.5*249, 0, 0},
		{"upper bound", 990, 0, 0, 1000, 0, 0},
		{"lower bound", 20, 100, 340, 10, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCP(t, env10G())
			c.f, c.qOld = fx(tc.f), tc.qOld
			c.calculate(tc.qCur)
			if got := units(c.f); math.Abs(got-tc.want) > 2e-3 {
				t.Errorf("F = %.5f, want %.5f", got, tc.want)
			}
			if c.qOld != tc.qCur {
				t.Errorf("Q_old = %d, want %d", c.qOld, tc.qCur)
			}
			if c.stats.MDMax != tc.mdMax || c.stats.MDMid != tc.mdMid {
				t.Errorf("MD counters %d/%d, want %d/%d", c.stats.MDMax, c.stats.MDMid, tc.mdMax, tc.mdMid)
			}
		})
	}
}

// TestAlgorithm1Sequence runs three computations in a row, checking that Q_old
// carries over and that the level follows F.
func TestAlgorithm1Sequence(t *testing.T) {
	c := newTestCP(t, env10G())
	port := &ccalgo.PortState{LinkBps: 10e9}
	var sink cctest.CountingSink
	steps := []struct {
		at    int64
		queue int64 // bytes
		want  float64
	}{
		// Q_cur = 150, Q_old = 0: growth 150 < Q_mid, PI at ratio 1.
		{40_000, 90_000, 1000 - 0.3*25 - 1.5*150}, // 767.5
		// Q_cur = 400 >= Q_max and F = 767.5 > 125: F_min.
		{80_000, 240_000, 10},
		// Q_cur = 100, Q_old = 400, F = 10 (level 64, ratio 32).
		{120_000, 60_000, 10 + 0.3/32*25 + 1.5/32*300},
	}
	for i, s := range steps {
		if c.NextTimer() != s.at {
			t.Fatalf("step %d: NextTimer %d, want %d", i, c.NextTimer(), s.at)
		}
		port.QueueBytes = s.queue
		c.OnTimer(s.at, port, &sink)
		if got := units(c.f); math.Abs(got-s.want) > 2e-3 {
			t.Fatalf("step %d: F = %.4f, want %.4f", i, got, s.want)
		}
	}
	if c.Stats().Updates != 3 {
		t.Fatalf("updates %d", c.Stats().Updates)
	}
}

func TestTimerGrid(t *testing.T) {
	c := newTestCP(t, env10G())
	port := &ccalgo.PortState{}
	var sink cctest.CountingSink
	c.OnTimer(39_999, port, &sink) // early: nothing
	if c.Stats().Updates != 0 || c.NextTimer() != 40_000 {
		t.Fatalf("early call ran: %+v next %d", c.Stats(), c.NextTimer())
	}
	c.OnTimer(40_000, port, &sink)
	if c.NextTimer() != 80_000 {
		t.Fatalf("next %d", c.NextTimer())
	}
	c.OnTimer(210_000, port, &sink) // late: skip to the grid point after now
	if c.NextTimer() != 240_000 || c.Stats().Updates != 2 {
		t.Fatalf("late: next %d updates %d", c.NextTimer(), c.Stats().Updates)
	}
}

func key(i int) ccalgo.FlowKey {
	return ccalgo.FlowKey{SrcIP: 0x0a000000 + uint32(i), DstIP: 0x0a0000ff, SrcPort: uint16(1000 + i), DstPort: 4791, DestQP: uint32(i)}
}

func TestCPFeedback(t *testing.T) {
	env := env10G()
	c := newTestCP(t, env)
	port := &ccalgo.PortState{LinkBps: 10e9}
	var sink cctest.RecordingSink
	pkt := func(i int) *ccalgo.DataPacket { return &ccalgo.DataPacket{Flow: key(i), WireBytes: 1062} }
	enq := func(i int) { port.QueueBytes += 1062; c.OnEnqueue(0, pkt(i), port, &sink) }
	deq := func(i int) { port.QueueBytes -= 1062; c.OnDequeue(0, pkt(i), port, &sink) }
	flowsMessaged := func() map[ccalgo.FlowKey]bool {
		t.Helper()
		got := map[ccalgo.FlowKey]bool{}
		for _, fb := range sink.Feedback {
			wantUnits := c.FairRateUnits()
			if fb.Kind != ccalgo.FeedbackRoCCRate || fb.CPID != env.ID || fb.RateUnits != wantUnits ||
				fb.DeltaFBps != 10e6 || fb.RateBps != float64(wantUnits)*10e6 || c.FairRateBps() != fb.RateBps {
				t.Fatalf("bad message %+v (F %d)", fb, wantUnits)
			}
			if got[fb.Flow] {
				t.Fatalf("two messages to %v", fb.Flow)
			}
			got[fb.Flow] = true
		}
		sink.Reset()
		return got
	}

	// Empty queue: F is computed, no message.
	c.OnTimer(40_000, port, &sink)
	if len(sink.Feedback) != 0 || c.FairRateUnits() != 1000 {
		t.Fatalf("empty queue: %d messages, F %d", len(sink.Feedback), c.FairRateUnits())
	}
	// Interval 1: flows 1, 2, 2, 3 enter; flow 1 leaves again. All three were
	// seen in the interval: all get the rate.
	enq(1)
	enq(2)
	enq(2)
	enq(3)
	deq(1)
	if c.FlowsTracked() != 3 {
		t.Fatalf("tracked %d, want 3", c.FlowsTracked())
	}
	c.OnTimer(80_000, port, &sink)
	if got := flowsMessaged(); len(got) != 3 || !got[key(1)] || !got[key(2)] || !got[key(3)] {
		t.Fatalf("interval 1: messages to %v, want flows 1, 2, 3", got)
	}
	// Interval 2: nothing enters; flows 2 and 3 still have packets queued.
	if c.FlowsTracked() != 2 {
		t.Fatalf("tracked %d after the interval, want 2", c.FlowsTracked())
	}
	c.OnTimer(120_000, port, &sink)
	if got := flowsMessaged(); len(got) != 2 || !got[key(2)] || !got[key(3)] {
		t.Fatalf("interval 2: messages to %v, want flows 2, 3", got)
	}
	// Flow 2 keeps its entry while one of its two packets is queued.
	deq(2)
	if c.FlowsTracked() != 2 {
		t.Fatalf("tracked %d after one of two packets left", c.FlowsTracked())
	}
	deq(2)
	deq(3)
	if c.FlowsTracked() != 0 || port.QueueBytes != 0 {
		t.Fatalf("tracked %d queue %d", c.FlowsTracked(), port.QueueBytes)
	}
	c.OnTimer(160_000, port, &sink)
	if len(sink.Feedback) != 0 {
		t.Fatalf("messages with an empty queue")
	}
	// A flow that passed through an emptied queue gets nothing either.
	enq(4)
	deq(4)
	c.OnTimer(200_000, port, &sink)
	if len(sink.Feedback) != 0 || c.FlowsTracked() != 0 {
		t.Fatalf("empty queue at T: %d messages, %d tracked", len(sink.Feedback), c.FlowsTracked())
	}
	if c.Stats().Messages != 5 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

func TestCPClearsCountsOnEmptyQueue(t *testing.T) {
	c := newTestCP(t, env10G())
	port := &ccalgo.PortState{QueueBytes: 1000}
	var sink cctest.CountingSink
	// Two packets of flow 1 counted, but the port says the queue emptied after one
	// dequeue (a packet the CP never saw leave): the count must not survive the
	// interval.
	c.OnEnqueue(0, &ccalgo.DataPacket{Flow: key(1)}, port, &sink)
	c.OnEnqueue(0, &ccalgo.DataPacket{Flow: key(1)}, port, &sink)
	port.QueueBytes = 0
	c.OnDequeue(0, &ccalgo.DataPacket{Flow: key(1)}, port, &sink)
	if c.table.packets(new(key(1))) != 0 || c.FlowsTracked() != 1 {
		t.Fatalf("packets %d tracked %d", c.table.packets(new(key(1))), c.FlowsTracked())
	}
	c.OnTimer(c.NextTimer(), port, &sink)
	if c.FlowsTracked() != 0 {
		t.Fatalf("tracked %d after an interval with an empty queue", c.FlowsTracked())
	}
}

// TestFlowTableModel drives the table with random enqueues, dequeues and interval
// ends, many hash collisions included, against a map.
func TestFlowTableModel(t *testing.T) {
	type entry struct {
		pkts int32
		seen bool
	}
	for _, capacity := range []int{1, 8, 1024} {
		ft := newFlowTable(capacity)
		model := map[ccalgo.FlowKey]*entry{}
		rng := rand.New(rand.NewPCG(1, uint64(capacity)))
		nkeys := 3 * capacity
		type queued struct {
			k   ccalgo.FlowKey
			tag uint32 // tag(add)
		}
		var queue []queued // packets in the table's counts
		for step := range 20000 {
			switch op := rng.IntN(100); {
			case op < 2:
				ft.endInterval()
				for k, e := range model {
					e.seen = false
					if e.pkts == 0 {
						delete(model, k)
					}
				}
			case op < 4:
				// The queue drained: what the model still counts as
				// queued is gone, as the CP's queueEmpty assumes.
				ft.queueEmpty()
				queue = queue[:0]
				for k, e := range model {
					e.pkts = 0
					if !e.seen {
						delete(model, k)
					}
				}
			case op < 51 || len(queue) == 0:
				k := key(rng.IntN(nkeys))
				e, known := model[k]
				tag := ft.add(wordsOf(&k))
				ok := tag != 0
				if want := known || len(model) < capacity; ok != want {
					t.Fatalf("cap %d step %d: add ok %v, want %v", capacity, step, ok, want)
				}
				if ok {
					if !known {
						e = &entry{}
						model[k] = e
					}
					e.pkts++
					e.seen = true
					queue = append(queue, queued{k, tag})
				}
			default:
				i := rng.IntN(len(queue))
				k, tag := queue[i].k, queue[i].tag
				queue[i] = queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				// The engine gives the tag back (removeTag); a packet
				// without one is looked up (remove).
				if rng.IntN(4) == 0 {
					ft.remove(&k)
				} else {
					ft.removeTag(tag, &k)
				}
				e := model[k]
				if e.pkts--; e.pkts == 0 && !e.seen {
					delete(model, k)
				}
			}
			if ft.Len() != len(model) {
				t.Fatalf("cap %d step %d: len %d, model %d", capacity, step, ft.Len(), len(model))
			}
			if step%97 == 0 {
				for k, e := range model {
					if got := ft.packets(&k); got != e.pkts {
						t.Fatalf("cap %d step %d: %v has %d, model %d", capacity, step, k, got, e.pkts)
					}
				}
				for i := range nkeys { // flows that left (parked or freed) are untracked
					if k := key(i); model[k] == nil && ft.packets(&k) != 0 {
						t.Fatalf("cap %d step %d: %v has %d, not in the model", capacity, step, k, ft.packets(&k))
					}
				}
				seen := map[ccalgo.FlowKey]bool{}
				for p, ei := range ft.dense {
					s := &ft.entries[ei]
					e := model[s.w.key()]
					if s.pos != int32(p) || seen[s.w.key()] || e == nil || e.seen != s.seen || ft.slots[s.slot] != ei+1 {
						t.Fatalf("cap %d step %d: dense list broken at %d", capacity, step, p)
					}
					seen[s.w.key()] = true
				}
			}
		}
		ft.remove(new(key(nkeys + 5))) // unknown flow: ignored
		if ft.Len() != len(model) {
			t.Fatal("removing an unknown flow changed the table")
		}
		ft.queueEmpty()
		ft.endInterval()
		if ft.Len() != 0 {
			t.Fatalf("cap %d: %d entries left after an empty queue and an interval", capacity, ft.Len())
		}
		// The flows that left are parked (they keep their hash slots)
		// until new flows need their entries; every entry is free or
		// parked, and each parked one in its slot.
		parked := 0
		for i := range ft.slots {
			if k := ft.slots[i] - 1; k >= 0 {
				if e := &ft.entries[k]; e.pos >= 0 || !e.parked || e.slot != uint32(i) {
					t.Fatalf("cap %d: slot %d holds entry %d, %+v", capacity, i, k, *e)
				}
				parked++
			}
		}
		if len(ft.free)+parked != capacity {
			t.Fatalf("cap %d: %d entries free and %d parked after emptying", capacity, len(ft.free), parked)
		}
		for ft.unpark() {
		}
		if len(ft.free) != capacity {
			t.Fatalf("cap %d: %d entries free after freeing the parked ones", capacity, len(ft.free))
		}
		for i := range ft.slots {
			if ft.slots[i] != 0 {
				t.Fatalf("cap %d: slot %d still occupied", capacity, i)
			}
		}
	}
}

// TestFlowTableTagsMatchLookup drives two tables with the same random
// enqueues, dequeues, empty queues and interval ends, one finding each
// dequeued packet's flow by its tag (removeTag, or removeTags for a run of
// dequeues), the other by its key (remove), and wants them identical after
// every step: same flows in the same order (the order rate messages go in),
// same counts and flags. Packets outlive an empty queue here (as with
// several priorities sharing the CP, where one priority's queue empties
// while another's holds packets), so tags go stale: their flow left the
// table, its entry freed, reused by another flow or by the same one again.
func TestFlowTableTagsMatchLookup(t *testing.T) {
	for _, capacity := range []int{1, 4, 64} {
		byTag, byKey := newFlowTable(capacity), newFlowTable(capacity)
		rng := rand.New(rand.NewPCG(7, uint64(capacity)))
		var queue []queuedPacket
		stale := 0
		for step := range 50000 {
			switch op := rng.IntN(100); {
			case op < 3:
				byTag.endInterval()
				byKey.endInterval()
			case op < 6:
				byTag.queueEmpty()
				byKey.queueEmpty()
			case op < 52 || len(queue) == 0:
				k := key(rng.IntN(2 * capacity))
				a, b := byTag.add(wordsOf(&k)), byKey.add(wordsOf(&k))
				if a != b {
					t.Fatalf("cap %d step %d: add gave %#x and %#x", capacity, step, a, b)
				}
				queue = append(queue, queuedPacket{k, a})
			default:
				// A run of dequeues, from the front (as a queue drains)
				// or one from anywhere.
				var run []queuedPacket
				if rng.IntN(2) == 0 {
					run = queue[:1+rng.IntN(len(queue))]
					queue = queue[len(run):]
				} else {
					i := rng.IntN(len(queue))
					run = []queuedPacket{queue[i]}
					queue = append(queue[:i], queue[i+1:]...)
				}
				tags := make([]uint32, len(run))
				for i, q := range run {
					tags[i] = q.tag
					if e := &byTag.entries[uint16(q.tag)]; q.tag != 0 && uint32(e.gen) != q.tag>>16 {
						stale++
					}
					byKey.remove(&q.k)
				}
				if len(run) == 1 && rng.IntN(2) == 0 {
					byTag.removeTag(run[0].tag, &run[0].k)
				} else {
					byTag.removeTags(tags, queuedKeys(run))
				}
			}
			if len(byTag.dense) != len(byKey.dense) || byTag.queued != byKey.queued {
				t.Fatalf("cap %d step %d: %d and %d flows, %d and %d queued", capacity, step, len(byTag.dense), len(byKey.dense), byTag.queued, byKey.queued)
			}
			for d, k := range byTag.dense {
				a, b := &byTag.entries[k], &byKey.entries[byKey.dense[d]]
				if a.w != b.w || a.pkts != b.pkts || a.seen != b.seen {
					t.Fatalf("cap %d step %d: flow %d is %+v by tag, %+v by key", capacity, step, d, a, b)
				}
			}
		}
		if stale == 0 {
			t.Fatalf("cap %d: no stale tag exercised", capacity)
		}
	}
}

// queuedPacket is a packet in a test's model of a queue: its key and tag.
type queuedPacket struct {
	k   ccalgo.FlowKey
	tag uint32
}

// queuedKeys gives removeTags the keys of a run of queued packets.
type queuedKeys []queuedPacket

func (q queuedKeys) FlowKey(i int) *ccalgo.FlowKey { return &q[i].k }

// TestFlowWords: a key packed into the table's two words unpacks to
// itself, and keys differing in any one field differ in their words.
func TestFlowWords(t *testing.T) {
	keys := []ccalgo.FlowKey{
		{},
		key(7),
		{SrcIP: 0xffffffff, DstIP: 0xffffffff, SrcPort: 0xffff, DstPort: 0xffff, DestQP: 0xffffffff},
		{SrcIP: 1}, {DstIP: 1}, {SrcPort: 1}, {DstPort: 1}, {DestQP: 1},
		{SrcIP: 0x80000000, DestQP: 0x00ffffff},
	}
	seen := map[flowWords]ccalgo.FlowKey{}
	for _, k := range keys {
		w := wordsOf(&k)
		if w.key() != k {
			t.Errorf("%+v packs to %x and unpacks to %+v", k, w, w.key())
		}
		if o, dup := seen[w]; dup {
			t.Errorf("%+v and %+v pack alike", k, o)
		}
		seen[w] = k
	}
}

func TestFlowTableFull(t *testing.T) {
	p := DefaultParams(env10G())
	p.FlowTableSize = 2
	c, err := NewCP(p, env10G())
	if err != nil {
		t.Fatal(err)
	}
	port := &ccalgo.PortState{QueueBytes: 3000}
	var sink cctest.RecordingSink
	for i := range 3 {
		c.OnEnqueue(0, &ccalgo.DataPacket{Flow: key(i)}, port, &sink)
	}
	c.OnTimer(40_000, port, &sink)
	if len(sink.Feedback) != 2 || c.Stats().TableFull != 1 {
		t.Fatalf("%d messages, %+v", len(sink.Feedback), c.Stats())
	}
}

func TestRegistry(t *testing.T) {
	s, err := ccalgo.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleCP|ccalgo.RoleRP {
		t.Fatalf("roles %b", s.Roles())
	}
	env := env10G()
	p, ok := s.DefaultParams(env).(*Params)
	if d, err := p.derive(env.LinkBps); !ok || err != nil || d.fMax != 1000 {
		t.Fatalf("DefaultParams %T %+v", s.DefaultParams(env), p)
	}
	if _, err := s.NewCP(p, env); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewCP(nil, env); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewRP(p, env); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewCP(struct{}{}, env); err == nil {
		t.Fatal("wrong params type accepted")
	}
}

func newTestRP(tb testing.TB) *RP {
	tb.Helper()
	r, err := NewRP(DefaultParams(env10G()), env10G())
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func rateMsg(cp uint32, units uint32) *ccalgo.Feedback {
	return &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, CPID: cp, RateUnits: units, DeltaFBps: 10e6, RateBps: float64(units) * 10e6}
}

// TestRPAcceptance checks line 4 of Algorithm 2 on message sequences.
func TestRPAcceptance(t *testing.T) {
	type msg struct {
		cp    uint32
		units uint32
	}
	cases := []struct {
		name     string
		msgs     []msg
		wantRate float64
		wantCP   uint32
		accepted uint64
	}{
		{"first message below line rate", []msg{{1, 300}}, 3e9, 1, 1},
		{"lower rate from another CP", []msg{{1, 300}, {2, 200}}, 2e9, 2, 2},
		{"higher rate from another CP ignored", []msg{{1, 300}, {2, 400}}, 3e9, 1, 1},
		{"higher rate from the same CP", []msg{{1, 300}, {1, 500}}, 5e9, 1, 2},
		{"equal rate from another CP", []msg{{1, 300}, {2, 300}}, 3e9, 2, 2},
		{"most congested CP keeps control", []msg{{1, 300}, {2, 100}, {1, 200}, {2, 150}}, 1.5e9, 2, 3},
		{"line rate message", []msg{{1, 1000}}, 10e9, 1, 1},
		{"above line rate: rejected first", []msg{{1, 2000}}, 10e9, 0, 0},
		{"above line rate from CP_cur: capped", []msg{{1, 500}, {1, 2000}}, 10e9, 1, 2},
		{"zero rate ignored", []msg{{1, 300}, {1, 0}}, 3e9, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRP(t)
			for i, m := range tc.msgs {
				r.OnFeedback(int64(i)*1000, rateMsg(m.cp, m.units))
			}
			cp, lim := r.Limited()
			if r.RateBps() != tc.wantRate || cp != tc.wantCP || r.Stats().Accepted != tc.accepted {
				t.Fatalf("rate %g CP %d (limited %v) accepted %d; want %g %d %d",
					r.RateBps(), cp, lim, r.Stats().Accepted, tc.wantRate, tc.wantCP, tc.accepted)
			}
			if lim != (tc.accepted > 0) {
				t.Fatalf("limited %v", lim)
			}
		})
	}
	// Other feedback kinds are not RoCC rate messages.
	r := newTestRP(t)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, RateUnits: 1, DeltaFBps: 10e6})
	if r.RateBps() != 10e9 || r.NextTimer() != ccalgo.Never {
		t.Fatal("QCN feedback changed the RoCC RP")
	}
	// DeltaFBps = 0: the rate comes from RateBps.
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, CPID: 9, RateBps: 1e9})
	if r.RateBps() != 1e9 {
		t.Fatalf("RateBps-only message: rate %g", r.RateBps())
	}
}

// TestRPTimer checks TIMER_EXPIRED: doubling every period (2 T = 80 us by
// default) up to R_max, then removal of the limiter; an accepted message resets
// the timer.
func TestRPTimer(t *testing.T) {
	r := newTestRP(t)
	if r.NextTimer() != ccalgo.Never || r.RateBps() != 10e9 {
		t.Fatal("fresh RP is limited")
	}
	r.OnFeedback(1000, rateMsg(7, 100)) // 1 Gb/s
	if r.NextTimer() != 81_000 {
		t.Fatalf("timer %d, want 81000", r.NextTimer())
	}
	r.OnTimer(80_999) // early: nothing
	if r.RateBps() != 1e9 {
		t.Fatal("early expiry")
	}
	// A message from the same CP at t = 50 us resets the timer to 130 us.
	r.OnFeedback(50_000, rateMsg(7, 100))
	if r.NextTimer() != 130_000 {
		t.Fatalf("reset timer %d", r.NextTimer())
	}
	steps := []struct {
		at      int64
		rate    float64
		limited bool
		next    int64
	}{
		{130_000, 2e9, true, 210_000},
		{210_000, 4e9, true, 290_000},
		{290_000, 8e9, true, 370_000},
		{370_000, 10e9, true, 450_000}, // capped at R_max
		{450_000, 10e9, false, ccalgo.Never},
	}
	for _, s := range steps {
		r.OnTimer(s.at)
		_, lim := r.Limited()
		if r.RateBps() != s.rate || lim != s.limited || r.NextTimer() != s.next {
			t.Fatalf("t=%d: rate %g limited %v next %d; want %g %v %d",
				s.at, r.RateBps(), lim, r.NextTimer(), s.rate, s.limited, s.next)
		}
	}
	st := r.Stats()
	if st.Doublings != 4 || st.Removals != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Without a limiter any rate not above line rate is accepted again.
	r.OnFeedback(500_000, rateMsg(3, 900))
	if cp, lim := r.Limited(); !lim || cp != 3 || r.RateBps() != 9e9 {
		t.Fatal("message after removal not accepted")
	}
	// Custom period.
	p := DefaultParams(env10G())
	p.RPTimer = 55_000
	r2, err := NewRP(p, env10G())
	if err != nil {
		t.Fatal(err)
	}
	r2.OnFeedback(0, rateMsg(1, 10))
	if r2.NextTimer() != 55_000 {
		t.Fatalf("custom period: next %d", r2.NextTimer())
	}
}

func TestNewRPNeedsLineRate(t *testing.T) {
	if _, err := NewRP(DefaultParams(env10G()), ccalgo.Env{}); err == nil {
		t.Fatal("RP without a line rate accepted")
	}
}

// fill puts n flows with one packet each into c's table.
func fill(c *CP, port *ccalgo.PortState, n int) {
	for i := range n {
		c.OnEnqueue(0, &ccalgo.DataPacket{Flow: key(i), WireBytes: 1062}, port, nil)
	}
}

func TestZeroAllocs(t *testing.T) {
	c := newTestCP(t, env10G())
	port := &ccalgo.PortState{LinkBps: 10e9, QueueBytes: 100_000}
	var sink cctest.CountingSink
	fill(c, port, 100)
	pkt := &ccalgo.DataPacket{Flow: key(5000), WireBytes: 1062}
	churn := &ccalgo.DataPacket{Flow: key(6000), WireBytes: 1062}
	now := int64(0)
	cases := []struct {
		name string
		f    func()
	}{
		{"CP OnEnqueue+OnDequeue", func() {
			c.OnEnqueue(now, pkt, port, &sink)
			c.OnDequeue(now, pkt, port, &sink)
		}},
		{"CP OnTimer (100 messages)", func() {
			now = c.NextTimer()
			c.OnTimer(now, port, &sink)
		}},
		{"CP a flow's packet, its leaving and its return", func() {
			// The flow's packet leaves, the computation parks it (no
			// packet queued), the next run's packet lists it again.
			churn.Tag = c.OnEnqueue(now, churn, port, &sink).Tag
			c.OnDequeue(now, churn, port, &sink)
			now = c.NextTimer()
			c.OnTimer(now, port, &sink)
		}},
		{"CP NextTimer+FairRateBps", func() { _ = c.NextTimer(); _ = c.FairRateBps() }},
	}
	r := newTestRP(t)
	fb := rateMsg(1, 300)
	rt := int64(0)
	cases = append(cases,
		struct {
			name string
			f    func()
		}{"RP OnFeedback+OnTimer", func() {
			rt += 100_000
			r.OnFeedback(rt, fb)
			r.OnTimer(r.NextTimer())
			_ = r.RateBps()
		}})
	for _, tc := range cases {
		if a := testing.AllocsPerRun(1000, tc.f); a != 0 {
			t.Errorf("%s: %v allocs per run", tc.name, a)
		}
	}
	if sink.N == 0 {
		t.Fatal("OnTimer emitted nothing")
	}
}

func BenchmarkCPEnqueueDequeue(b *testing.B) {
	c := newTestCP(b, env10G())
	port := &ccalgo.PortState{LinkBps: 10e9, QueueBytes: 100_000}
	fill(c, port, 100)
	var keys [64]ccalgo.DataPacket
	for i := range keys {
		keys[i] = ccalgo.DataPacket{Flow: key(i), WireBytes: 1062}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pkt := &keys[i&63]
		c.OnEnqueue(0, pkt, port, nil)
		c.OnDequeue(0, pkt, port, nil)
	}
}

func BenchmarkCPOnTimer(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run("flows="+strconv.Itoa(n), func(b *testing.B) {
			c := newTestCP(b, env10G())
			port := &ccalgo.PortState{LinkBps: 10e9, QueueBytes: 75_000}
			fill(c, port, n)
			var sink cctest.CountingSink
			b.ReportAllocs()
			for b.Loop() {
				c.OnTimer(c.NextTimer(), port, &sink)
			}
		})
	}
}

// BenchmarkCPIntervalCycle is a CP whose queue drains within each
// interval: n flows send a packet each, which leaves, then the fair-rate
// computation sends n rate messages and the flows leave the table, to come
// back with their next packets (the flow table's churn per rate message).
func BenchmarkCPIntervalCycle(b *testing.B) {
	for _, n := range []int{16, 100} {
		b.Run("flows="+strconv.Itoa(n), func(b *testing.B) {
			c := newTestCP(b, env10G())
			port := &ccalgo.PortState{LinkBps: 10e9, QueueBytes: 75_000}
			pkts := make([]ccalgo.DataPacket, n)
			for i := range pkts {
				pkts[i] = ccalgo.DataPacket{Flow: key(i), WireBytes: 1062}
			}
			var sink cctest.CountingSink
			b.ReportAllocs()
			for b.Loop() {
				for i := range pkts {
					pkts[i].Tag = c.OnEnqueue(0, &pkts[i], port, nil).Tag
				}
				for i := range pkts {
					c.OnDequeue(0, &pkts[i], port, nil)
				}
				c.OnTimer(c.NextTimer(), port, &sink)
			}
			if c.FlowsTracked() != 0 || sink.N == 0 {
				b.Fatalf("%d flows tracked, %d messages", c.FlowsTracked(), sink.N)
			}
		})
	}
}

func BenchmarkRPOnFeedback(b *testing.B) {
	r := newTestRP(b)
	fb := rateMsg(1, 300)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 1000
		r.OnFeedback(now, fb)
	}
}

func BenchmarkRPOnTimer(b *testing.B) {
	r := newTestRP(b)
	fb := rateMsg(1, 10)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		if r.NextTimer() == ccalgo.Never {
			r.OnFeedback(now, fb)
		}
		now = r.NextTimer()
		r.OnTimer(now)
	}
}

// burstSink records what it is given as cctest.RecordingSink does, with the
// rate messages of a computation taken in one EmitRates call each.
type burstSink struct {
	cctest.RecordingSink
	bursts int
}

func (s *burstSink) EmitRates(now int64, fb *ccalgo.Feedback, flows []ccalgo.FlowKey) {
	s.bursts++
	for _, k := range flows {
		m := *fb
		m.Flow = k
		s.Emit(now, &m)
	}
}

// TestCPRateBursts: a RateSink gets, burst by burst, the messages a plain
// sink gets one by one (same flows, order and contents), over intervals
// whose tables grow, shrink and empty.
func TestCPRateBursts(t *testing.T) {
	env := env10G()
	plain, burst := newTestCP(t, env), newTestCP(t, env)
	var ps cctest.RecordingSink
	var bs burstSink
	port := &ccalgo.PortState{LinkBps: 10e9}
	bursts := 0
	for iv := 1; iv <= 12; iv++ {
		for i := 0; i < (iv*7)%23; i++ { // 0 to 22 packets over up to 20 flows
			pkt := &ccalgo.DataPacket{Flow: key((iv*i + i) % 20), WireBytes: 1062}
			port.QueueBytes += 1062
			plain.OnEnqueue(0, pkt, port, &ps)
			burst.OnEnqueue(0, pkt, port, &bs)
			if i%3 == 2 {
				port.QueueBytes -= 1062
				plain.OnDequeue(0, pkt, port, &ps)
				burst.OnDequeue(0, pkt, port, &bs)
			}
		}
		now := int64(iv) * 40_000
		before := len(bs.Feedback)
		plain.OnTimer(now, port, &ps)
		burst.OnTimer(now, port, &bs)
		if len(bs.Feedback) > before {
			bursts++
		}
	}
	if bursts == 0 || bs.bursts != bursts || len(ps.Feedback) != len(bs.Feedback) {
		t.Fatalf("%d bursts (%d calls), %d messages, plain %d", bursts, bs.bursts, len(bs.Feedback), len(ps.Feedback))
	}
	for i := range ps.Feedback {
		if ps.Feedback[i] != bs.Feedback[i] {
			t.Fatalf("message %d: %+v, plain %+v", i, bs.Feedback[i], ps.Feedback[i])
		}
	}
}
