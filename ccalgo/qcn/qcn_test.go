package qcn

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/cctest"
)

func env10G() ccalgo.Env { return ccalgo.Env{LinkBps: 10e9, MTU: 1000, ID: 7} }

func newCP(t testing.TB, p *Params) *CP { return cctest.Must[*CP](t)(NewCP(p, env10G())) }

func newRP(t testing.TB, p *Params, linkBps float64) *RP {
	return cctest.Must[*RP](t)(NewRP(p, ccalgo.Env{LinkBps: linkBps}))
}

// Fb = -(Qoff + w Qdelta), Q_eq = 26000, w = 2, cap 26000 * 5 = 130000.
func TestQuantize(t *testing.T) {
	c := newCP(t, nil)
	for _, tc := range []struct {
		name    string
		q, qOld int64
		want    uint8
	}{
		{"at set point", 26_000, 26_000, 0},
		{"below set point", 20_000, 20_000, 0},
		{"small excess floors to 0", 27_000, 27_000, 0}, // |Fb| 1000 * 63/130000 = 0.48
		{"excess only", 36_000, 36_000, 4},              // 10000 * 63/130000 = 4.85
		{"excess and growth", 36_000, 26_000, 14},       // 30000 * 63/130000 = 14.5
		{"draining queue", 30_000, 40_000, 0},           // Fb = -(4000 - 20000) > 0
		{"capped", 200_000, 0, 63},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Quantize(tc.q, tc.qOld); got != tc.want {
				t.Errorf("Quantize(%d, %d) = %d, want %d", tc.q, tc.qOld, got, tc.want)
			}
		})
	}
}

func TestSampleInterval(t *testing.T) {
	c := newCP(t, nil)
	for _, tc := range []struct {
		fbq  uint8
		want int64
	}{
		{0, 150_000},
		{7, 75_000},  // 150000 * 63 / (63 + 63)
		{63, 15_000}, // 150000 / 10
		{39, 22_826}, // 150000 * 63 / 414
	} {
		if got := c.SampleInterval(tc.fbq); got != tc.want {
			t.Errorf("SampleInterval(%d) = %d, want %d", tc.fbq, got, tc.want)
		}
	}
}

// A constant queue of 36 KB, 1000-byte packets: the first sample is the 150th
// packet (150 KB), sees Q_delta = 36000 from q_old = 0 and sends |Fb|_q = 39;
// the next sample comes 22826 B later (the 23rd packet) with Q_delta = 0, |Fb|_q
// = 4; then 150000*63/99 = 95454 B later (96 packets).
func TestCPSamplingAndFeedback(t *testing.T) {
	c := newCP(t, nil)
	sink := &cctest.RecordingSink{}
	flow := ccalgo.FlowKey{SrcIP: 1, DstIP: 2, SrcPort: 3, DstPort: 4791, DestQP: 5}
	port := &ccalgo.PortState{QueueBytes: 36_000, LinkBps: 10e9}
	pkt := &ccalgo.DataPacket{Flow: flow, WireBytes: 1000}
	for i := int64(1); i <= 150+23+96; i++ {
		c.OnEnqueue(i, pkt, port, sink)
	}
	wantT := []int64{150, 173, 269}
	wantFb := []uint8{39, 4, 4}
	wantDelta := []int32{36_000, 0, 0}
	if len(sink.T) != len(wantT) {
		t.Fatalf("feedback at %v, want at %v", sink.T, wantT)
	}
	for i := range wantT {
		fb := sink.Feedback[i]
		if sink.T[i] != wantT[i] || fb.Fb != wantFb[i] || fb.QDelta != wantDelta[i] || fb.QOff != 10_000 ||
			fb.Kind != ccalgo.FeedbackQCN || fb.Flow != flow || fb.CPID != 7 {
			t.Errorf("feedback %d at %d = %+v, want t=%d Fb=%d QOff=10000 QDelta=%d", i, sink.T[i], fb, wantT[i], wantFb[i], wantDelta[i])
		}
	}
	if c.Samples != 3 || c.Feedbacks != 3 {
		t.Errorf("Samples, Feedbacks = %d, %d, want 3, 3", c.Samples, c.Feedbacks)
	}
	// Below the set point: samples, no feedback.
	port.QueueBytes = 10_000
	before := len(sink.T)
	for i := 0; i < 2000; i++ {
		c.OnEnqueue(1000, pkt, port, sink)
	}
	if len(sink.T) != before {
		t.Errorf("feedback below the set point: %v", sink.Feedback[before:])
	}
}

// Cuts R_c = R_c (1 - |Fb| / 128), at least to 50 %.
func TestRPDecrease(t *testing.T) {
	for _, tc := range []struct {
		fb       uint8
		wantRate float64
	}{
		{10, 10e9 * 118 / 128},
		{63, 10e9 * 65 / 128},
		{200, 10e9 * 65 / 128}, // clamped to 63
		{0, 10e9},              // no congestion: ignored
	} {
		r := newRP(t, nil, 10e9)
		r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: tc.fb})
		if !cctest.Near(r.RateBps(), tc.wantRate) || !cctest.Near(r.TargetBps(), 10e9) {
			t.Errorf("Fb %d: R_c, R_t = %g, %g, want %g, 1e10", tc.fb, r.RateBps(), r.TargetBps(), tc.wantRate)
		}
	}
	// MinDecFactor bounds the cut.
	p := DefaultParams(ccalgo.Env{})
	p.Gd = 1.0 / 64
	p.MinDecFactor = 0.6
	r := newRP(t, p, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	if !cctest.Near(r.RateBps(), 6e9) {
		t.Errorf("min dec factor 0.6: R_c = %g, want 6e9", r.RateBps())
	}
	// Other kinds are ignored; the floor is MinRateBps.
	r = newRP(t, nil, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN, Fb: 63})
	if r.RateBps() != 10e9 {
		t.Errorf("P4QCN feedback changed a QCN RP: %g", r.RateBps())
	}
	for i := 0; i < 100; i++ {
		r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	}
	if r.RateBps() != 5e6 {
		t.Errorf("after 100 cuts R_c = %g, want the 5 Mb/s floor", r.RateBps())
	}
}

// The FSM with F = 5, byte cycles of 150 KB sent as 1000-byte packets, timer
// cycles of 15 ms: fast recovery, active increase (+5 Mb/s), hyper increase
// (+i 50 Mb/s, cycles halved), each step recomputed by hand from the state after
// two cuts of |Fb| 63 (R_t = 10e9 * 65/128, R_c = R_t * 65/128).
func TestRPIncreaseSequence(t *testing.T) {
	r := newRP(t, nil, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	rt := 10e9 * 65 / 128
	rc := rt * 65 / 128
	if !cctest.Near(r.RateBps(), rc) || !cctest.Near(r.TargetBps(), rt) {
		t.Fatalf("after two cuts R_c, R_t = %g, %g, want %g, %g", r.RateBps(), r.TargetBps(), rc, rt)
	}
	if next := r.NextTimer(); next != 15_000_000 {
		t.Fatalf("NextTimer = %d, want 15 ms", next)
	}
	sendCycle := func(bytes int) {
		for sent := 0; sent < bytes; sent += 1000 {
			r.OnSend(0, 0, 1000)
		}
	}
	type step struct {
		event string // "B": a byte-counter cycle, "T": a timer cycle
		stage Stage  // stage of the update applied, from (byte, timer) stages before it
		addRt float64
	}
	steps := []step{
		{"B", StageFastRecovery, 0},     // (0,0)
		{"B", StageFastRecovery, 0},     // (1,0)
		{"T", StageFastRecovery, 0},     // (2,0)
		{"B", StageFastRecovery, 0},     // (2,1)
		{"B", StageFastRecovery, 0},     // (3,1)
		{"B", StageFastRecovery, 0},     // (4,1)
		{"T", StageActiveIncrease, 5e6}, // (5,1): the byte counter reached F
		{"T", StageActiveIncrease, 5e6}, // (5,2)
		{"T", StageActiveIncrease, 5e6}, // (5,3)
		{"T", StageActiveIncrease, 5e6}, // (5,4)
		{"T", StageHyperIncrease, 50e6}, // (5,5): both reached F, i = 1
		{"B", StageHyperIncrease, 50e6}, // (5,6): i = min(5,6) - 5 + 1 = 1
	}
	now := int64(0)
	for i, s := range steps {
		st, _ := r.Stage()
		if st != s.stage {
			t.Fatalf("step %d: stage %v, want %v", i, st, s.stage)
		}
		switch s.event {
		case "B":
			// The cycle under way was armed with 150 KB when the byte
			// counter's previous cycle ended, outside hyper increase.
			sendCycle(150_000)
		case "T":
			at := r.NextTimer()
			r.OnTimer(at - 1) // not yet due
			if at <= now || !cctest.Near(r.RateBps(), rc) {
				t.Fatalf("step %d: timer at %d fired early or went back (now %d)", i, at, now)
			}
			now = at
			r.OnTimer(now)
		}
		rt = math.Min(rt+s.addRt, 10e9)
		rc = (rt + rc) / 2
		if !cctest.Near(r.RateBps(), rc) || !cctest.Near(r.TargetBps(), rt) {
			t.Fatalf("step %d (%s, %v): R_c, R_t = %g, %g, want %g, %g", i, s.event, s.stage, r.RateBps(), r.TargetBps(), rc, rt)
		}
	}
	// The timer's cycle is 7.5 ms in hyper increase.
	if got := r.NextTimer() - now; got != 7_500_000 {
		t.Errorf("timer period in hyper increase %d, want 7.5 ms", got)
	}
	// The byte counter's cycle is 75 KB in hyper increase: one more after
	// 74 KB has not ended, at 75 KB it has (i = min(6, 6) - 5 + 1 = 2).
	sendCycle(74_000)
	if !cctest.Near(r.RateBps(), rc) {
		t.Fatalf("cycle ended early in hyper increase")
	}
	r.OnSend(0, 0, 1000)
	rt = math.Min(rt+100e6, 10e9)
	rc = (rt + rc) / 2
	if !cctest.Near(r.RateBps(), rc) || !cctest.Near(r.TargetBps(), rt) {
		t.Fatalf("hyper i=2: R_c, R_t = %g, %g, want %g, %g", r.RateBps(), r.TargetBps(), rc, rt)
	}
	st := r.Stats()
	if st.Decreases != 2 || st.FastRecovery != 6 || st.Active != 4 || st.Hyper != 3 {
		t.Errorf("stats %+v", st)
	}
}

// At the first cycle after a cut, R_t > 10 R_c divides R_t by 8. It needs a cut
// deeper than 10x: G_d = 1/64, MinDecFactor 0.05 makes |Fb| 63 cut to 5 %.
func TestRPTargetReduction(t *testing.T) {
	p := DefaultParams(ccalgo.Env{})
	p.Gd = 1.0 / 64
	p.MinDecFactor = 0.05
	r := newRP(t, p, 10e9)
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 63})
	if !cctest.Near(r.RateBps(), 0.5e9) {
		t.Fatalf("R_c = %g, want 0.5e9", r.RateBps())
	}
	for i := 0; i < 150; i++ {
		r.OnSend(0, 0, 1000)
	}
	wantRt := 10e9 / 8
	if !cctest.Near(r.TargetBps(), wantRt) || !cctest.Near(r.RateBps(), (wantRt+0.5e9)/2) {
		t.Errorf("R_t, R_c = %g, %g, want %g, %g", r.TargetBps(), r.RateBps(), wantRt, (wantRt+0.5e9)/2)
	}
	// Not at the second cycle: R_t stays.
	for i := 0; i < 150; i++ {
		r.OnSend(0, 0, 1000)
	}
	if !cctest.Near(r.TargetBps(), wantRt) {
		t.Errorf("second cycle changed R_t to %g", r.TargetBps())
	}
}

// Back at line rate the limiter is released: no timer, no counting.
func TestRPReleaseAtLineRate(t *testing.T) {
	p := DefaultParams(ccalgo.Env{})
	p.Threshold = 1
	r := newRP(t, p, 10e9)
	if r.NextTimer() != ccalgo.Never {
		t.Fatalf("timer pending before any feedback")
	}
	r.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 1})
	for i := 0; i < 100_000 && r.NextTimer() != ccalgo.Never; i++ {
		r.OnTimer(r.NextTimer())
	}
	if r.RateBps() != 10e9 || r.NextTimer() != ccalgo.Never {
		t.Errorf("R_c = %g, NextTimer = %d: want line rate, no timer", r.RateBps(), r.NextTimer())
	}
	if _, active := r.Stage(); active {
		t.Errorf("limiter still active at line rate")
	}
}

func TestParamsValidation(t *testing.T) {
	for _, tc := range []struct {
		param  string
		mutate func(*Params)
	}{
		{"qeq_bytes", func(p *Params) { p.QeqBytes = 0 }},
		{"w", func(p *Params) { p.W = -1 }},
		{"w", func(p *Params) { p.W = math.NaN() }},
		{"sample_base_bytes", func(p *Params) { p.SampleBaseBytes = 0 }},
		{"gd", func(p *Params) { p.Gd = 1.0 / 63 }},
		{"min_dec_factor", func(p *Params) { p.MinDecFactor = 1 }},
		{"min_rate_bps", func(p *Params) { p.MinRateBps = 0 }},
		{"byte_reset", func(p *Params) { p.ByteReset = 0 }},
		{"time_reset_ns", func(p *Params) { p.TimeReset = -1 }},
		{"threshold", func(p *Params) { p.Threshold = 0 }},
		{"ai_rate_bps", func(p *Params) { p.AIRateBps = math.Inf(1) }},
		{"hai_rate_bps", func(p *Params) { p.HAIRateBps = -1 }},
	} {
		p := DefaultParams(env10G())
		tc.mutate(p)
		_, errCP := NewCP(p, env10G())
		_, errRP := NewRP(p, env10G())
		err := errCP
		if err == nil {
			err = errRP
		}
		var pe *ccalgo.ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: got error %v, want a ParamError on it", tc.param, err)
		}
	}
	if _, err := NewRP(nil, ccalgo.Env{}); err == nil {
		t.Errorf("NewRP accepted LinkBps 0")
	}
}

func TestRegistered(t *testing.T) {
	bad := DefaultParams(env10G())
	bad.QeqBytes = -1
	cctest.CheckRegistered(t, Name, env10G(), bad)
}

func TestHooksDoNotAllocate(t *testing.T) {
	c := newCP(t, nil)
	r := newRP(t, nil, 10e9)
	sink := &cctest.CountingSink{}
	pkt := &ccalgo.DataPacket{Flow: ccalgo.FlowKey{SrcIP: 1}, WireBytes: 1000}
	port := &ccalgo.PortState{QueueBytes: 100_000, LinkBps: 10e9}
	fb := &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 20}
	now := int64(0)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"CP.OnEnqueue", func() { now++; port.QueueBytes ^= 64_000; c.OnEnqueue(now, pkt, port, sink) }},
		{"CP.OnDequeue", func() { c.OnDequeue(now, pkt, port, sink) }},
		{"CP.OnTimer", func() { c.OnTimer(now, port, sink) }},
		{"RP.OnFeedback", func() { r.OnFeedback(now, fb) }},
		{"RP.OnSend", func() { r.OnSend(now, 0, 1000) }},
		{"RP.OnTimer", func() { now += 1e6; r.OnTimer(now) }},
		{"RP.OnAck", func() { r.OnAck(now, &ccalgo.AckEvent{}) }},
		{"RP.NextTimer+RateBps", func() { _ = r.NextTimer(); _ = r.RateBps() }},
	} {
		if n := testing.AllocsPerRun(1000, tc.f); n != 0 {
			t.Errorf("%s: %v allocs per call", tc.name, n)
		}
	}
	if sink.N == 0 {
		t.Errorf("the CP loop sent no feedback: it did not exercise the emit path")
	}
}

func BenchmarkCPOnEnqueue(b *testing.B) {
	c := newCP(b, nil)
	sink := &cctest.CountingSink{}
	pkt := &ccalgo.DataPacket{Flow: ccalgo.FlowKey{SrcIP: 1}, WireBytes: 1062}
	port := &ccalgo.PortState{QueueBytes: 50_000, LinkBps: 10e9}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		port.QueueBytes = int64(20_000 + i%64*1000)
		c.OnEnqueue(int64(i), pkt, port, sink)
	}
}

func BenchmarkRPOnSend(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fb := &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 30}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			r.OnFeedback(int64(i), fb)
		}
		r.OnSend(int64(i), 0, 1000)
	}
}

func BenchmarkRPOnFeedback(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fb := &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.OnFeedback(int64(i), fb)
	}
}

func BenchmarkRPOnTimer(b *testing.B) {
	r := newRP(b, nil, 10e9)
	fb := &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Fb: 30}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%100 == 0 {
			r.OnFeedback(0, fb)
		}
		r.OnTimer(r.NextTimer())
	}
}
