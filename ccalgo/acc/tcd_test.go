package acc

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

func newTestCP(tb testing.TB) *CP {
	tb.Helper()
	return newTestCPAt(tb, DefaultMarkAt)
}

// newTestCPAt is newTestCP marking at markAt.
func newTestCPAt(tb testing.TB, markAt string) *CP {
	tb.Helper()
	// 100 Gb/s port, MTU 1000: threshold 2000 B, max(T_on) 24 us.
	p := DefaultParams(testEnv)
	p.MarkAt = markAt
	c, err := NewCP(p)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestTCDStates classifies in the hook of each mark_at. queue is the queue the
// packet leaves behind at dequeue, or finds at enqueue; at enqueue the port's
// queue holds the packet too.
func TestTCDStates(t *testing.T) {
	const now = 1_000_000
	never := int64(math.MinInt64)
	for _, c := range []struct {
		name       string
		queue      int64
		paused     bool
		lastOff    int64
		seenPaused int64 // time the CP's timer saw the port paused; 0: never
		pktMark    ccalgo.Mark
		want       TCDState
		mark       ccalgo.Mark
	}{
		{"empty", 0, false, never, 0, ccalgo.MarkNone, NonCongestion, ccalgo.MarkNone},
		{"at threshold", 2000, false, never, 0, ccalgo.MarkNone, NonCongestion, ccalgo.MarkNone},
		{"at threshold paused", 2000, true, now, 0, ccalgo.MarkNone, NonCongestion, ccalgo.MarkNone},
		{"above, never paused", 2001, false, never, 0, ccalgo.MarkNone, Congestion, ccalgo.MarkCE},
		{"above, paused now", 5000, true, now - 100, 0, ccalgo.MarkNone, Undetermined, ccalgo.MarkUE},
		{"above, OFF 1us ago", 5000, false, now - 1_000, 0, ccalgo.MarkNone, Undetermined, ccalgo.MarkUE},
		{"above, OFF just under max(T_on) ago", 5000, false, now - 23_999, 0, ccalgo.MarkNone, Undetermined, ccalgo.MarkUE},
		{"above, ON exactly max(T_on)", 5000, false, now - 24_000, 0, ccalgo.MarkNone, Congestion, ccalgo.MarkCE},
		{"above, ON long", 5000, false, now - 100_000, 0, ccalgo.MarkNone, Congestion, ccalgo.MarkCE},
		{"LastOff old but pause seen by the timer", 5000, false, now - 100_000, now - 5_000, ccalgo.MarkNone, Undetermined, ccalgo.MarkUE},
		{"pause seen long ago", 5000, false, never, now - 30_000, ccalgo.MarkNone, Congestion, ccalgo.MarkCE},
		{"undetermined on a CE packet", 5000, false, now - 1_000, 0, ccalgo.MarkCE, Undetermined, ccalgo.MarkUE},
	} {
		for _, at := range []string{ccalgo.MarkAtDequeue, ccalgo.MarkAtEnqueue} {
			t.Run(at+"/"+c.name, func(t *testing.T) {
				cp := newTestCPAt(t, at)
				pkt := &ccalgo.DataPacket{WireBytes: 1062, Mark: c.pktMark}
				port := &ccalgo.PortState{QueueBytes: c.queue, LinkBps: 100e9, LastOff: c.lastOff, Paused: c.paused}
				if c.seenPaused != 0 {
					cp.OnTimer(c.seenPaused, &ccalgo.PortState{QueueBytes: c.queue, Paused: true, LastOff: c.lastOff}, nil)
				}
				var v, other ccalgo.Verdict
				if at == ccalgo.MarkAtEnqueue {
					port.QueueBytes += int64(pkt.WireBytes)
					v = cp.OnEnqueue(now, pkt, port, nil)
					other = cp.OnDequeue(now, pkt, port, nil)
				} else {
					other = cp.OnEnqueue(now, pkt, port, nil)
					v = cp.OnDequeue(now, pkt, port, nil)
				}
				if other.Mark != ccalgo.MarkNone {
					t.Fatalf("the hook that does not mark marked %v", other.Mark)
				}
				if cp.State() != c.want || v.Mark != c.mark {
					t.Fatalf("state %v mark %v, want %v %v", cp.State(), v.Mark, c.want, c.mark)
				}
				// The engine applies Mark.Max: UE never lowers CE.
				if got := c.pktMark.Max(v.Mark); got < c.pktMark {
					t.Fatalf("mark lowered to %v", got)
				}
				wantUE := uint64(0)
				if c.mark == ccalgo.MarkUE && c.pktMark != ccalgo.MarkCE {
					wantUE = 1
				}
				wantCE := uint64(0)
				if c.mark == ccalgo.MarkCE {
					wantCE = 1
				}
				if cp.MarkedCE != wantCE || cp.MarkedUE != wantUE {
					t.Fatalf("counters CE %d UE %d, want %d %d", cp.MarkedCE, cp.MarkedUE, wantCE, wantUE)
				}
			})
		}
	}
}

// TestTCDMarkAt: mark_at picks the hook that classifies and marks, PacketHooks
// reports that hook alone, and any other value is rejected by the CP's
// validation, directly and through the registry.
func TestTCDMarkAt(t *testing.T) {
	for _, c := range []struct {
		markAt   string
		enq, deq bool
	}{
		{ccalgo.MarkAtDequeue, false, true},
		{ccalgo.MarkAtEnqueue, true, false},
	} {
		t.Run(c.markAt, func(t *testing.T) {
			cp := newTestCPAt(t, c.markAt)
			if enq, deq := cp.PacketHooks(); enq != c.enq || deq != c.deq {
				t.Fatalf("PacketHooks = %v, %v, want %v, %v", enq, deq, c.enq, c.deq)
			}
			// A queue far above the threshold, never paused: congestion.
			pkt := &ccalgo.DataPacket{WireBytes: 1062}
			port := &ccalgo.PortState{QueueBytes: 50_000, LinkBps: 100e9, LastOff: math.MinInt64}
			enq := cp.OnEnqueue(1_000_000, pkt, port, nil)
			deq := cp.OnDequeue(1_000_000, pkt, port, nil)
			if got := enq.Mark == ccalgo.MarkCE; got != c.enq {
				t.Errorf("OnEnqueue marked %v", enq.Mark)
			}
			if got := deq.Mark == ccalgo.MarkCE; got != c.deq {
				t.Errorf("OnDequeue marked %v", deq.Mark)
			}
			if cp.MarkedCE != 1 {
				t.Errorf("%d packets marked CE, want 1", cp.MarkedCE)
			}
		})
	}
	s, err := ccalgo.Lookup(SchemeName)
	if err != nil {
		t.Fatal(err)
	}
	if p := DefaultParams(testEnv); p.MarkAt != ccalgo.MarkAtDequeue {
		t.Fatalf("default mark_at %q, want %q", p.MarkAt, ccalgo.MarkAtDequeue)
	}
	for _, bad := range []string{"", "both", "Enqueue", "ingress"} {
		p := DefaultParams(testEnv)
		p.MarkAt = bad
		_, err1 := NewCP(p)
		_, err2 := s.NewCP(p, testEnv)
		for _, err := range []error{err1, err2} {
			var pe *ccalgo.ParamError
			if !errors.As(err, &pe) || pe.Param != "mark_at" || !strings.Contains(err.Error(), `"enqueue" or "dequeue"`) {
				t.Errorf("mark_at %q: err = %v, want a ParamError naming mark_at", bad, err)
			}
		}
		// The RP does not read mark_at.
		if _, err := NewRP(p, testEnv); err != nil {
			t.Errorf("mark_at %q: NewRP: %v", bad, err)
		}
	}
}

// TestTCDTransitions runs a port through ON, OFF (PFC pause) and ON again.
func TestTCDTransitions(t *testing.T) {
	cp := newTestCP(t)
	port := &ccalgo.PortState{LinkBps: 100e9, LastOff: math.MinInt64, QueueBytes: 10_000}
	pkt := &ccalgo.DataPacket{WireBytes: 1062}
	steps := []struct {
		now    int64
		paused bool
		want   TCDState
	}{
		{10_000, false, Congestion},
		{20_000, true, Undetermined}, // paused: seen at the call
		{25_000, false, Undetermined},
		{20_000 + 23_999, false, Undetermined},
		{20_000 + 24_000, false, Congestion},
		{60_000, true, Undetermined},
		{60_000 + 24_000, false, Congestion},
	}
	for i, s := range steps {
		port.Paused = s.paused
		if s.paused {
			cp.OnTimer(s.now, port, nil)
		}
		cp.OnDequeue(s.now, pkt, port, nil)
		if cp.State() != s.want {
			t.Fatalf("step %d at %d: %v, want %v", i, s.now, cp.State(), s.want)
		}
	}
}

func TestNP(t *testing.T) {
	np := NewNP()
	for _, m := range []ccalgo.Mark{ccalgo.MarkNone, ccalgo.MarkUE, ccalgo.MarkCE} {
		var ack ccalgo.AckFields
		cnp := np.OnData(5, &ccalgo.DataArrival{SendTS: 1234, Mark: m}, &ack)
		if cnp || ack.Mark != m || ack.EchoTS != 1234 {
			t.Fatalf("mark %v: cnp %v ack %+v", m, cnp, ack)
		}
	}
}

func TestDefaultParams(t *testing.T) {
	for _, c := range []struct {
		env                   ccalgo.Env
		period, maxTOn, thr   int64
		riLow, riHigh, minBps float64
	}{
		{ccalgo.Env{LinkBps: 100e9, BaseRTT: 4170, MTU: 1000}, 4170, 24_000, 2000, 400e6, 4e9, 100e6},
		{ccalgo.Env{LinkBps: 10e9, BaseRTT: 0, MTU: 4000}, 50_000, 240_000, 8000, 40e6, 400e6, 10e6},
	} {
		p := DefaultParams(c.env)
		if p.PeriodNs != c.period || p.MaxTOnNs != c.maxTOn || p.QueueThresholdBytes != c.thr ||
			!near(p.RILowBps, c.riLow) || !near(p.RIHighBps, c.riHigh) || !near(p.MinRateBps, c.minBps) ||
			p.PThresh != 1 || p.CEFraction != 0.9 || p.LowPeriods != 2 || p.InitRateBps != c.env.LinkBps ||
			p.MarkAt != ccalgo.MarkAtDequeue {
			t.Errorf("DefaultParams(%+v) = %+v", c.env, p)
		}
	}
}

func TestParamErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Params)
		cp   bool
	}{
		{"period_ns", func(p *Params) { p.PeriodNs = 0 }, false},
		{"ce_fraction", func(p *Params) { p.CEFraction = 1 }, false},
		{"ri_low_bps", func(p *Params) { p.RILowBps = math.NaN() }, false},
		{"ri_high_bps", func(p *Params) { p.RIHighBps = -1 }, false},
		{"ri_low_periods", func(p *Params) { p.LowPeriods = -1 }, false},
		{"p_thresh", func(p *Params) { p.PThresh = -1 }, false},
		{"min_rate_bps", func(p *Params) { p.MinRateBps = 0 }, false},
		{"init_rate_bps", func(p *Params) { p.InitRateBps = 200e9 }, false},
		{"ack_bytes", func(p *Params) { p.AckBytes = 0 }, false},
		{"header_bytes", func(p *Params) { p.HeaderBytes = -1 }, false},
		{"queue_threshold_bytes", func(p *Params) { p.QueueThresholdBytes = -1 }, true},
		{"max_t_on_ns", func(p *Params) { p.MaxTOnNs = -1 }, true},
		{"mark_at", func(p *Params) { p.MarkAt = "sometimes" }, true},
	} {
		p := DefaultParams(testEnv)
		c.edit(p)
		var err error
		if c.cp {
			_, err = NewCP(p)
		} else {
			_, err = NewRP(p, testEnv)
		}
		var pe *ccalgo.ParamError
		if !errors.As(err, &pe) || pe.Param != c.name {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
}

func TestScheme(t *testing.T) {
	s, err := ccalgo.Lookup(SchemeName)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleCP|ccalgo.RoleNP|ccalgo.RoleRP {
		t.Fatalf("roles %v", s.Roles())
	}
	if _, err := s.NewRP(s.DefaultParams(testEnv), testEnv); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewCP(nil, testEnv); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewNP(struct{}{}, testEnv); err == nil {
		t.Fatal("wrong params type accepted")
	}
	if _, err := s.NewRP(nil, ccalgo.Env{}); err == nil {
		t.Fatal("zero line rate accepted")
	}
}

func TestCPNPAllocs(t *testing.T) {
	for _, at := range []string{ccalgo.MarkAtDequeue, ccalgo.MarkAtEnqueue} {
		cp := newTestCPAt(t, at)
		np := NewNP()
		port := &ccalgo.PortState{LinkBps: 100e9, LastOff: math.MinInt64}
		pkt := &ccalgo.DataPacket{WireBytes: 1062}
		d := &ccalgo.DataArrival{SendTS: 1, Mark: ccalgo.MarkCE}
		var ack ccalgo.AckFields
		var now int64
		n := testing.AllocsPerRun(1000, func() {
			now += 100
			port.QueueBytes = now % 9000
			port.Paused = now%700 == 0
			cp.OnEnqueue(now, pkt, port, nil)
			cp.OnDequeue(now, pkt, port, nil)
			cp.OnTimer(now, port, nil)
			ack = ccalgo.AckFields{}
			np.OnData(now, d, &ack)
		})
		if n != 0 {
			t.Fatalf("mark_at %s: CP/NP hooks allocate %v per run", at, n)
		}
	}
}

func BenchmarkCPOnEnqueue(b *testing.B) {
	cp := newTestCPAt(b, ccalgo.MarkAtEnqueue)
	port := &ccalgo.PortState{LinkBps: 100e9, LastOff: math.MinInt64, QueueBytes: 5000}
	pkt := &ccalgo.DataPacket{WireBytes: 1062}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cp.OnEnqueue(int64(i), pkt, port, nil)
	}
}

func BenchmarkCPOnDequeue(b *testing.B) {
	cp := newTestCP(b)
	port := &ccalgo.PortState{LinkBps: 100e9, LastOff: math.MinInt64, QueueBytes: 5000}
	pkt := &ccalgo.DataPacket{WireBytes: 1062}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cp.OnDequeue(int64(i), pkt, port, nil)
	}
}

func BenchmarkCPOnTimer(b *testing.B) {
	cp := newTestCP(b)
	port := &ccalgo.PortState{LinkBps: 100e9, LastOff: math.MinInt64, Paused: true}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cp.OnTimer(int64(i), port, nil)
	}
}

func BenchmarkNPOnData(b *testing.B) {
	np := NewNP()
	d := &ccalgo.DataArrival{SendTS: 1, Mark: ccalgo.MarkUE}
	var ack ccalgo.AckFields
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		np.OnData(int64(i), d, &ack)
	}
}
