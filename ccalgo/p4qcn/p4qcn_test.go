package p4qcn

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/cctest"
)

func env10G() ccalgo.Env { return ccalgo.Env{LinkBps: 10e9, MTU: 1000, ID: 3} }

func newCP(t testing.TB, p *Params) *CP { return cctest.Must[*CP](t)(NewCP(p, env10G())) }

func newRP(t testing.TB, p *Params, linkBps float64) *RP {
	return cctest.Must[*RP](t)(NewRP(p, ccalgo.Env{LinkBps: linkBps}))
}

func flow(i uint32) ccalgo.FlowKey {
	return ccalgo.FlowKey{SrcIP: 0x0a000001 + i, DstIP: 0x0a0000ff, SrcPort: 49152, DstPort: 4791, DestQP: 0x11 + i}
}

func TestDefaultParams(t *testing.T) {
	for _, tc := range []struct {
		link                    float64
		qmin, qmax, qpfc, timer int64
	}{
		{10e9, 20_000, 200_000, 500_000, 100_000},
		{0, 20_000, 200_000, 500_000, 100_000},
		{25e9, 50_000, 500_000, 1_250_000, 40_000},
		{100e9, 200_000, 2_000_000, 5_000_000, 10_000},
	} {
		p := DefaultParams(ccalgo.Env{LinkBps: tc.link})
		if p.QMinBytes != tc.qmin || p.QMaxBytes != tc.qmax || p.PFCBytes != tc.qpfc || p.TimeReset != tc.timer {
			t.Errorf("link %g: Q_min, Q_max, Q_pfc, timer = %d, %d, %d, %d, want %d, %d, %d, %d",
				tc.link, p.QMinBytes, p.QMaxBytes, p.PFCBytes, p.TimeReset, tc.qmin, tc.qmax, tc.qpfc, tc.timer)
		}
		if p.Beta != 1 || p.RecoveryCycles != 5 || p.ByteReset != 150_000 || p.AIRateBps != 5e6 || p.NFbNs != 50_000 {
			t.Errorf("link %g: RP defaults %+v", tc.link, p)
		}
	}
}

// Eq. 1 with Q_min = 20 KB, Q_max = 200 KB: alpha = 1/180000 per byte.
func TestProbabilityEq1(t *testing.T) {
	def := newCP(t, nil)
	p := DefaultParams(env10G())
	p.Alpha = 1e-5
	steep := newCP(t, p)
	for _, tc := range []struct {
		name string
		cp   *CP
		q    int64
		want float64
	}{
		{"empty", def, 0, 0},
		{"at Q_min", def, 20_000, 0},
		{"just above Q_min", def, 20_001, 1.0 / 180_000},
		{"midway", def, 110_000, 0.5},
		{"65 KB", def, 65_000, 0.25},
		{"just below Q_max", def, 199_999, 179_999.0 / 180_000},
		{"at Q_max", def, 200_000, 1},
		{"above Q_max", def, 600_000, 1},
		{"alpha 1e-5, 70 KB", steep, 70_000, 0.5},
		{"alpha 1e-5 saturates", steep, 150_000, 1},
	} {
		if got := tc.cp.Probability(tc.q); !cctest.Near(got, tc.want) {
			t.Errorf("%s: P(%d) = %g, want %g", tc.name, tc.q, got, tc.want)
		}
	}
}

// The empirical FBP frequency follows Eq. 1 (N_fb = 0 so that the limiter does
// not interfere): 40000 draws at each queue, binomial sd <= 0.0025.
func TestFeedbackFrequency(t *testing.T) {
	for _, tc := range []struct {
		q    int64
		want float64
	}{
		{20_000, 0}, {38_000, 0.1}, {65_000, 0.25}, {110_000, 0.5}, {182_000, 0.9}, {250_000, 1},
	} {
		p := DefaultParams(env10G())
		p.NFbNs = 0
		c := newCP(t, p)
		sink := &cctest.CountingSink{}
		pkt := &ccalgo.DataPacket{Flow: flow(0), WireBytes: 1062}
		port := &ccalgo.PortState{QueueBytes: tc.q, LinkBps: 10e9}
		const n = 40_000
		for i := int64(0); i < n; i++ {
			c.OnEnqueue(i, pkt, port, sink)
		}
		if got := float64(sink.N) / n; math.Abs(got-tc.want) > 0.01 {
			t.Errorf("q = %d: FBP frequency %.4f, want %.2f", tc.q, got, tc.want)
		}
	}
}

// At most one FBP per flow per N_fb = 50 us, per flow: with P = 1 and a packet
// of each of two flows every microsecond, each flow gets an FBP at 0, 50, 100,
// 150 us; the packets in between are counted as limited.
func TestPerFlowLimit(t *testing.T) {
	c := newCP(t, nil)
	sink := &cctest.RecordingSink{}
	port := &ccalgo.PortState{QueueBytes: 300_000, LinkBps: 10e9}
	a := &ccalgo.DataPacket{Flow: flow(0), WireBytes: 1062}
	b := &ccalgo.DataPacket{Flow: flow(1), WireBytes: 1062}
	for now := int64(0); now < 200_000; now += 1000 {
		c.OnEnqueue(now, a, port, sink)
		c.OnEnqueue(now+1, b, port, sink)
	}
	var gotA, gotB []int64
	for i, fb := range sink.Feedback {
		if fb.Kind != ccalgo.FeedbackP4QCN || fb.CPID != 3 || fb.Fb != 63 || fb.QOff != 280_000 {
			t.Errorf("FBP %d = %+v", i, fb)
		}
		switch fb.Flow {
		case a.Flow:
			gotA = append(gotA, sink.T[i])
		case b.Flow:
			gotB = append(gotB, sink.T[i])
		}
	}
	wantA := []int64{0, 50_000, 100_000, 150_000}
	for i, w := range wantA {
		if len(gotA) != len(wantA) || len(gotB) != len(wantA) || gotA[i] != w || gotB[i] != w+1 {
			t.Fatalf("FBPs at %v (flow a), %v (flow b); want %v and +1 ns", gotA, gotB, wantA)
		}
	}
	if c.Feedbacks != 8 || c.Limited != 400-8 {
		t.Errorf("Feedbacks, Limited = %d, %d, want 8, 392", c.Feedbacks, c.Limited)
	}
	// The boundary: 49.999 us after an FBP is limited, 50 us is not.
	c = newCP(t, nil)
	sink = &cctest.RecordingSink{}
	c.OnEnqueue(1_000_000, a, port, sink)
	c.OnEnqueue(1_049_999, a, port, sink)
	c.OnEnqueue(1_050_000, a, port, sink)
	if len(sink.T) != 2 || sink.T[1] != 1_050_000 {
		t.Errorf("FBPs at %v, want [1000000 1050000]", sink.T)
	}
}

// Below Q_min nothing is sent and nothing is drawn.
func TestNoFeedbackBelowQmin(t *testing.T) {
	c := newCP(t, nil)
	sink := &cctest.CountingSink{}
	port := &ccalgo.PortState{LinkBps: 10e9}
	pkt := &ccalgo.DataPacket{Flow: flow(0), WireBytes: 1062}
	for q := int64(0); q <= 20_000; q += 100 {
		port.QueueBytes = q
		c.OnEnqueue(q*1_000_000, pkt, port, sink)
	}
	if sink.N != 0 {
		t.Errorf("%d FBPs at q <= Q_min", sink.N)
	}
}

// Eqs. 2-4 by hand, 10 Gb/s NIC, beta = 1, N = 5, R_AI = 5 Mb/s, 150 KB cycles.
func TestRPEquations(t *testing.T) {
	r := newRP(t, nil, 10e9)
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	cycle := func() {
		for i := 0; i < 150; i++ {
			r.OnSend(0, 0, 1000)
		}
	}
	type want struct {
		state  State
		rc, rt float64
	}
	check := func(step string, w want) {
		t.Helper()
		if r.State() != w.state || !cctest.Near(r.RateBps(), w.rc) || !cctest.Near(r.TargetBps(), w.rt) {
			t.Fatalf("%s: state %v R_c %g R_t %g; want %v %g %g", step, r.State(), r.RateBps(), r.TargetBps(), w.state, w.rc, w.rt)
		}
	}
	check("start", want{StateLineRate, 10e9, 10e9})
	r.OnFeedback(0, fbp) // Eq. 2
	check("FBP 1", want{StateFastRecovery, 5e9, 10e9})
	r.OnFeedback(0, fbp) // Eq. 2 again, from fast recovery
	check("FBP 2", want{StateFastRecovery, 2.5e9, 5e9})
	for i, rc := range []float64{3.75e9, 4.375e9, 4.6875e9, 4.84375e9} { // Eq. 3
		cycle()
		check("fast recovery "+string(rune('1'+i)), want{StateFastRecovery, rc, 5e9})
	}
	cycle() // fifth and last fast-recovery cycle
	check("fast recovery 5", want{StateActiveIncrease, 4.921875e9, 5e9})
	cycle() // Eq. 4
	check("active increase 1", want{StateActiveIncrease, (5.005e9 + 4.921875e9) / 2, 5.005e9})
	cycle()
	check("active increase 2", want{StateActiveIncrease, (5.01e9 + (5.005e9+4.921875e9)/2) / 2, 5.01e9})
	rc := r.RateBps()
	r.OnFeedback(0, fbp) // from active increase back to reduction
	check("FBP 3", want{StateFastRecovery, rc / 2, rc})
	st := r.Stats()
	if st.Decreases != 3 || st.FastRecovery != 5 || st.Active != 2 {
		t.Errorf("stats %+v, want 3 decreases, 5 fast-recovery and 2 active cycles", st)
	}
}

// beta scales the cut (Eq. 2), the timer ends cycles too, R_AI scales with the
// NIC rate when ScaleAI is set, and the rate never falls below the floor.
func TestRPVariants(t *testing.T) {
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	p := DefaultParams(ccalgo.Env{})
	p.Beta = 0.5
	r := newRP(t, p, 10e9)
	r.OnFeedback(0, fbp)
	if !cctest.Near(r.RateBps(), 7.5e9) {
		t.Errorf("beta 0.5: R_c = %g, want 7.5e9", r.RateBps())
	}
	// Timer: 100 us after the cut, one fast-recovery cycle.
	if r.NextTimer() != 100_000 {
		t.Fatalf("NextTimer %d, want 100 us", r.NextTimer())
	}
	r.OnTimer(99_999)
	if !cctest.Near(r.RateBps(), 7.5e9) {
		t.Errorf("timer fired early")
	}
	r.OnTimer(100_000)
	if !cctest.Near(r.RateBps(), 8.75e9) || r.NextTimer() != 200_000 {
		t.Errorf("after the timer cycle R_c = %g, NextTimer %d; want 8.75e9, 200 us", r.RateBps(), r.NextTimer())
	}

	for _, tc := range []struct {
		link  float64
		scale bool
		rai   float64
	}{
		{10e9, true, 5e6}, {100e9, true, 50e6}, {100e9, false, 5e6}, {1e9, true, 0.5e6},
	} {
		p := DefaultParams(ccalgo.Env{})
		p.ScaleAI = tc.scale
		p.RecoveryCycles = 1
		r := newRP(t, p, tc.link)
		r.OnFeedback(0, fbp)
		r.OnFeedback(0, fbp) // R_t = link/2, R_c = link/4
		r.OnTimer(r.NextTimer())
		r.OnTimer(r.NextTimer()) // one active-increase cycle
		wantRt := tc.link/2 + tc.rai
		if !cctest.Near(r.TargetBps(), wantRt) {
			t.Errorf("link %g scale %v: R_t = %g, want %g", tc.link, tc.scale, r.TargetBps(), wantRt)
		}
	}

	r = newRP(t, nil, 10e9)
	for i := 0; i < 40; i++ {
		r.OnFeedback(0, fbp)
	}
	if r.RateBps() != 5e6 {
		t.Errorf("R_c after 40 halvings = %g, want the 5 Mb/s floor", r.RateBps())
	}
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	if r.Stats().Decreases != 40 {
		t.Errorf("a QCN message cut a P4QCN RP")
	}
}

// A cycle ends at 150 KB sent or 300 us, whichever comes first, and both
// restart (the joint byte counter / timer): N = 5 cycles of either kind make
// fast recovery.
func TestRPJointCycles(t *testing.T) {
	p := DefaultParams(ccalgo.Env{LinkBps: 10e9})
	p.TimeReset = 300_000
	r := newRP(t, p, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN})
	send := func(now int64, kb int) {
		for i := 0; i < kb; i++ {
			r.OnSend(now, 0, 1000)
		}
	}
	steps := []struct {
		name      string
		do        func()
		fr, ai    int64
		nextTimer int64
	}{
		{"100 KB at 100 us: no cycle", func() { send(100_000, 100) }, 0, 0, 300_000},
		{"timer at 300 us: cycle 1", func() { r.OnTimer(300_000) }, 1, 0, 600_000},
		{"100 KB at 400 us: byte count restarted, no cycle", func() { send(400_000, 100) }, 1, 0, 600_000},
		{"50 KB at 450 us: cycle 2, timer re-armed", func() { send(450_000, 50) }, 2, 0, 750_000},
		{"timer at 750 us: cycle 3", func() { r.OnTimer(750_000) }, 3, 0, 1_050_000},
		{"150 KB at 800 us: cycle 4", func() { send(800_000, 150) }, 4, 0, 1_100_000},
		{"timer at 1.1 ms: cycle 5", func() { r.OnTimer(1_100_000) }, 5, 0, 1_400_000},
		{"150 KB at 1.2 ms: active increase", func() { send(1_200_000, 150) }, 5, 1, 1_500_000},
	}
	for _, s := range steps {
		s.do()
		st := r.Stats()
		if st.FastRecovery != s.fr || st.Active != s.ai || r.NextTimer() != s.nextTimer {
			t.Fatalf("%s: %d fast-recovery, %d active cycles, next timer %d; want %d, %d, %d",
				s.name, st.FastRecovery, st.Active, r.NextTimer(), s.fr, s.ai, s.nextTimer)
		}
	}
}

// Recovered to the line rate, the RP goes back to StateLineRate and stops its
// timer.
func TestRPBackToLineRate(t *testing.T) {
	r := newRP(t, nil, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN})
	n := 0
	for ; n < 10_000 && r.State() != StateLineRate; n++ {
		r.OnTimer(r.NextTimer())
	}
	if r.State() != StateLineRate || r.RateBps() != 10e9 || r.NextTimer() != ccalgo.Never {
		t.Errorf("after %d cycles: state %v, R_c %g, NextTimer %d", n, r.State(), r.RateBps(), r.NextTimer())
	}
}

func TestParamsValidation(t *testing.T) {
	for _, tc := range []struct {
		param  string
		mutate func(*Params)
	}{
		{"qmin_bytes", func(p *Params) { p.QMinBytes = -1 }},
		{"qmax_bytes", func(p *Params) { p.QMaxBytes = p.QMinBytes }},
		{"pfc_bytes", func(p *Params) { p.PFCBytes = p.QMaxBytes - 1 }},
		{"alpha", func(p *Params) { p.Alpha = math.NaN() }},
		{"n_fb_ns", func(p *Params) { p.NFbNs = -1 }},
		{"flow_slots", func(p *Params) { p.FlowSlots = 1000 }},
		{"beta", func(p *Params) { p.Beta = 1.5 }},
		{"beta", func(p *Params) { p.Beta = 0 }},
		{"recovery_cycles", func(p *Params) { p.RecoveryCycles = 0 }},
		{"byte_reset", func(p *Params) { p.ByteReset = 0 }},
		{"time_reset_ns", func(p *Params) { p.TimeReset = -5 }},
		{"ai_rate_bps", func(p *Params) { p.AIRateBps = math.Inf(1) }},
		{"min_rate_bps", func(p *Params) { p.MinRateBps = 0 }},
	} {
		p := DefaultParams(env10G())
		tc.mutate(p)
		_, err := NewCP(p, env10G())
		if err == nil {
			_, err = NewRP(p, env10G())
		}
		var pe *ccalgo.ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: got error %v, want a ParamError on it", tc.param, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	bad := DefaultParams(env10G())
	bad.FlowSlots = 3
	cctest.CheckRegistered(t, Name, env10G(), bad)
}

func TestHooksDoNotAllocate(t *testing.T) {
	c := newCP(t, nil)
	r := newRP(t, nil, 10e9)
	sink := &cctest.CountingSink{}
	pkt := &ccalgo.DataPacket{Flow: flow(0), WireBytes: 1062}
	port := &ccalgo.PortState{QueueBytes: 150_000, LinkBps: 10e9}
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	now := int64(0)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"CP.OnEnqueue", func() { now += 10_000; pkt.Flow.DestQP = uint32(now>>14) & 7; c.OnEnqueue(now, pkt, port, sink) }},
		{"CP.OnDequeue", func() { c.OnDequeue(now, pkt, port, sink) }},
		{"CP.OnTimer+NextTimer", func() { c.OnTimer(now, port, sink); _ = c.NextTimer() }},
		{"RP.OnFeedback", func() { r.OnFeedback(now, fbp) }},
		{"RP.OnSend", func() { r.OnSend(now, 0, 1000) }},
		{"RP.OnTimer", func() { r.OnTimer(r.NextTimer()) }},
		{"RP.OnAck+OnNak+OnCNP", func() { r.OnAck(now, &ccalgo.AckEvent{}); r.OnNak(now, &ccalgo.AckEvent{}); r.OnCNP(now) }},
		{"RP.getters", func() { _, _, _, _ = r.NextTimer(), r.RateBps(), r.WindowBytes(), r.State() }},
	} {
		if n := testing.AllocsPerRun(1000, tc.f); n != 0 {
			t.Errorf("%s: %v allocs per call", tc.name, n)
		}
	}
	if sink.N == 0 || c.Limited == 0 {
		t.Errorf("the CP loop sent %d FBPs, limited %d: both paths should run", sink.N, c.Limited)
	}
}

func BenchmarkCPOnEnqueue(b *testing.B) {
	for _, bc := range []struct {
		name string
		q    int64
	}{{"below-qmin", 10_000}, {"eq1-draw", 110_000}, {"above-qmax", 300_000}} {
		b.Run(bc.name, func(b *testing.B) {
			c := newCP(b, nil)
			sink := &cctest.CountingSink{}
			pkt := &ccalgo.DataPacket{Flow: flow(0), WireBytes: 1062}
			port := &ccalgo.PortState{QueueBytes: bc.q, LinkBps: 10e9}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				pkt.Flow.DestQP = uint32(i & 63)
				c.OnEnqueue(int64(i)*100, pkt, port, sink)
			}
		})
	}
}

func BenchmarkRPOnSend(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2000 == 0 {
			r.OnFeedback(int64(i), fbp)
		}
		r.OnSend(int64(i), 0, 1000)
	}
}

func BenchmarkRPOnFeedback(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.OnFeedback(int64(i), fbp)
	}
}

func BenchmarkRPOnTimer(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fbp := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%100 == 0 {
			r.OnFeedback(0, fbp)
		}
		r.OnTimer(r.NextTimer())
	}
}
