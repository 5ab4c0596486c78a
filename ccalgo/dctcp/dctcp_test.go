package dctcp_test

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/cctest"
	"github.com/ccbed/ccbed/ccalgo/dctcp"
)

const us = int64(1000)

var env10 = ccalgo.Env{LinkBps: 10e9, BaseRTT: 6 * us, MTU: 1000, MaxFlows: 4, ExpectedFlows: 4}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDefaults(t *testing.T) {
	tests := []struct {
		link float64
		k    int64
	}{{10e9, 30_000}, {25e9, 75_000}, {40e9, 120_000}, {100e9, 300_000}}
	for _, tc := range tests {
		p := dctcp.DefaultParams(ccalgo.Env{LinkBps: tc.link})
		if p.KBytes != tc.k || p.G != 1.0/16 || p.InitAlpha != 1 || p.MarkAt != ccalgo.MarkAtEnqueue {
			t.Errorf("%g: %+v, want K %d g 1/16 alpha 1 mark_at enqueue", tc.link, *p, tc.k)
		}
	}
}

func TestParamErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*dctcp.Params)
	}{
		{"negative K", func(p *dctcp.Params) { p.KBytes = -1 }},
		{"g zero", func(p *dctcp.Params) { p.G = 0 }},
		{"g above 1", func(p *dctcp.Params) { p.G = 2 }},
		{"alpha NaN", func(p *dctcp.Params) { p.InitAlpha = math.NaN() }},
		{"negative window", func(p *dctcp.Params) { p.InitWindowBytes = -5 }},
		{"mark_at empty", func(p *dctcp.Params) { p.MarkAt = "" }},
		{"mark_at unknown", func(p *dctcp.Params) { p.MarkAt = "egress" }},
	}
	s, _ := ccalgo.Lookup("dctcp")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := dctcp.DefaultParams(env10)
			tc.mod(p)
			_, e1 := s.NewCP(p, env10)
			_, e3 := s.NewRP(p, env10)
			if e1 == nil && e3 == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := s.NewNP(new(int), env10); err == nil {
		t.Error("wrong params type accepted")
	}
}

// TestCPStepMarking: CE above K, in the hook mark_at names, on the queue the
// packet finds at enqueue (port.QueueBytes holds it too) or leaves behind at
// dequeue; the other hook never marks and PacketHooks reports the marking one
// alone.
func TestCPStepMarking(t *testing.T) {
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	for _, at := range []string{ccalgo.MarkAtEnqueue, ccalgo.MarkAtDequeue} {
		t.Run(at, func(t *testing.T) {
			p := dctcp.DefaultParams(env10)
			p.MarkAt = at
			cp := cctest.Must[*dctcp.CP](t)(dctcp.NewCP(p, env10))
			cctest.CheckMarkAt(t, cp, at, &pkt, []cctest.MarkCase{
				{Q: 0, Want: ccalgo.MarkNone}, {Q: 29_999, Want: ccalgo.MarkNone}, {Q: 30_000, Want: ccalgo.MarkNone},
				{Q: 30_001, Want: ccalgo.MarkCE}, {Q: 1 << 20, Want: ccalgo.MarkCE}})
		})
	}
}

func TestNPEcho(t *testing.T) {
	for _, m := range []ccalgo.Mark{ccalgo.MarkNone, ccalgo.MarkCE} {
		var ack ccalgo.AckFields
		d := ccalgo.DataArrival{SendTS: 1234, Mark: m}
		if cnp := (dctcp.NP{}).OnData(5000, &d, &ack); cnp || ack.Mark != m || ack.EchoTS != 1234 {
			t.Errorf("mark %v: cnp %v ack %+v", m, cnp, ack)
		}
	}
}

// TestRPWindow checks equations (1) and (2) and the additive increase against
// hand-computed values: BDP = 10 Gb/s * 6 us = 7500 B, alpha = 1, g = 1/16.
func TestRPWindow(t *testing.T) {
	rp, err := dctcp.NewRP(dctcp.DefaultParams(env10), env10)
	if err != nil {
		t.Fatal(err)
	}
	if rp.WindowBytes() != 7500 || rp.RateBps() != 10e9 {
		t.Fatalf("initial window %d rate %g", rp.WindowBytes(), rp.RateBps())
	}
	w, alpha := 7500.0, 1.0
	steps := []struct {
		acked, newly, sndNxt int64
		mark                 bool
		apply                func()
	}{
		// Unmarked: W += MTU * 1000 / W. The observation window ends at 7000.
		{1000, 1000, 7000, false, func() { w += 1000 * 1000 / w }},
		// First mark: cut with alpha = 1, no further cut until 8000 is acked.
		{2000, 1000, 8000, true, func() { w *= 1 - alpha/2 }},
		// Passes 7000: F = 1/3 of 3 ACKs; still reducing, unmarked: grow.
		{7000, 5000, 9000, false, func() { alpha = 15.0/16*alpha + 1.0/16/3; w += 1000 * 5000 / w }},
		// Marked, inside the reduction (6999 < 8000 not passed yet): no cut.
		{7500, 500, 9000, true, func() {}},
		// Passes 8000: the reduction ends, the mark cuts with the new alpha.
		{8000, 500, 10000, true, func() { w *= 1 - alpha/2 }},
		// Passes 9000: window of 3 ACKs, 2 marked.
		{9000, 1000, 11000, false, func() { alpha = 15.0/16*alpha + 1.0/16*2/3; w += 1000 * 1000 / w }},
	}
	for i, s := range steps {
		a := ccalgo.AckEvent{AckedSeq: uint64(s.acked), NewlyAcked: s.newly, SndNxt: uint64(s.sndNxt)}
		if s.mark {
			a.Fields.Mark = ccalgo.MarkCE
		}
		rp.OnAck(int64(i)*us, &a)
		s.apply()
		if rp.WindowBytes() != int64(w) || !near(rp.Alpha(), alpha) {
			t.Fatalf("step %d: W %d alpha %.6f, want %d %.6f", i, rp.WindowBytes(), rp.Alpha(), int64(w), alpha)
		}
	}
	// A NAK halves W once per window.
	rp.OnNak(10*us, &ccalgo.AckEvent{AckedSeq: 12000, SndNxt: 20000})
	w /= 2
	rp.OnNak(11*us, &ccalgo.AckEvent{AckedSeq: 12000, SndNxt: 20000})
	if rp.WindowBytes() != int64(w) {
		t.Errorf("after NAKs W %d, want %d", rp.WindowBytes(), int64(w))
	}
	// Floor at one MTU.
	for k := 0; k < 100; k++ {
		rp.OnNak(int64(20+k)*us, &ccalgo.AckEvent{AckedSeq: uint64(30000 + 1000*k), SndNxt: uint64(30000 + 1000*k)})
	}
	if rp.WindowBytes() != 1000 {
		t.Errorf("W %d, want the 1000 B floor", rp.WindowBytes())
	}
}

func TestZeroAllocs(t *testing.T) {
	p := dctcp.DefaultParams(env10)
	cp, _ := dctcp.NewCP(p, env10)
	p2 := dctcp.DefaultParams(env10)
	p2.MarkAt = ccalgo.MarkAtDequeue
	cpDeq, _ := dctcp.NewCP(p2, env10)
	rp, _ := dctcp.NewRP(p, env10)
	var np dctcp.NP
	port := ccalgo.PortState{QueueBytes: 40_000}
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	d := ccalgo.DataArrival{Mark: ccalgo.MarkCE}
	var ack ccalgo.AckFields
	seq := uint64(0)
	tests := map[string]func(){
		"CP.OnEnqueue": func() { cp.OnEnqueue(0, &pkt, &port, nil) },
		"CP.OnDequeue": func() { cpDeq.OnDequeue(0, &pkt, &port, nil) },
		"NP.OnData":    func() { np.OnData(0, &d, &ack) },
		"RP.OnAck": func() {
			seq += 1000
			a := ccalgo.AckEvent{AckedSeq: seq, NewlyAcked: 1000, SndNxt: seq + 8000}
			a.Fields.Mark = ccalgo.Mark(seq/1000%2) * ccalgo.MarkCE / 2 * 2
			rp.OnAck(0, &a)
		},
		"RP.OnNak": func() { rp.OnNak(0, &ccalgo.AckEvent{AckedSeq: seq, SndNxt: seq}) },
	}
	for name, f := range tests {
		if a := testing.AllocsPerRun(1000, f); a != 0 {
			t.Errorf("%s: %v allocs", name, a)
		}
	}
}

func BenchmarkCPOnEnqueue(b *testing.B) {
	cp, _ := dctcp.NewCP(dctcp.DefaultParams(env10), env10)
	port := ccalgo.PortState{QueueBytes: 40_000}
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		port.QueueBytes = int64(i % 60_000)
		cp.OnEnqueue(0, &pkt, &port, nil)
	}
}

func BenchmarkCPOnDequeue(b *testing.B) {
	p := dctcp.DefaultParams(env10)
	p.MarkAt = ccalgo.MarkAtDequeue
	cp, _ := dctcp.NewCP(p, env10)
	port := ccalgo.PortState{QueueBytes: 40_000}
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		port.QueueBytes = int64(i % 60_000)
		cp.OnDequeue(0, &pkt, &port, nil)
	}
}

func BenchmarkNPOnData(b *testing.B) {
	var np dctcp.NP
	d := ccalgo.DataArrival{Mark: ccalgo.MarkCE}
	var ack ccalgo.AckFields
	b.ReportAllocs()
	for b.Loop() {
		np.OnData(0, &d, &ack)
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	rp, _ := dctcp.NewRP(dctcp.DefaultParams(env10), env10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		seq := uint64(i+1) * 1000
		a := ccalgo.AckEvent{AckedSeq: seq, NewlyAcked: 1000, SndNxt: seq + 8000}
		if i%7 == 0 {
			a.Fields.Mark = ccalgo.MarkCE
		}
		rp.OnAck(int64(i), &a)
	}
}
