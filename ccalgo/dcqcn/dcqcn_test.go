package dcqcn_test

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/dcqcn"
)

const us = int64(1000)

var env40 = ccalgo.Env{LinkBps: 40e9, BaseRTT: 6 * us, MTU: 1000, MaxFlows: 4, ExpectedFlows: 4, ID: 1}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDefaultParamsScale(t *testing.T) {
	tests := []struct {
		link       float64
		kmin, kmax int64
	}{
		{10e9, 1250, 50_000},
		{25e9, 3125, 125_000},
		{40e9, 5_000, 200_000},
		{100e9, 12_500, 500_000},
	}
	for _, tc := range tests {
		p := dcqcn.DefaultParams(ccalgo.Env{LinkBps: tc.link})
		if p.KminBytes != tc.kmin || p.KmaxBytes != tc.kmax || p.Pmax != 0.01 {
			t.Errorf("%g: Kmin %d Kmax %d Pmax %g, want %d %d 0.01", tc.link, p.KminBytes, p.KmaxBytes, p.Pmax, tc.kmin, tc.kmax)
		}
		if p.G != 1.0/256 || p.AlphaTimerUs != 55 || p.IncreaseTimerUs != 55 || p.ByteCounterBytes != 10_000_000 ||
			p.F != 5 || p.RAIMbps != 40 || p.RHAIMbps != 200 || p.MinRateMbps != 100 || p.CNPIntervalUs != 50 ||
			!p.ClampTargetRate || p.TimerHyperIncrease || p.AlphaUpdate != dcqcn.AlphaOnCut || p.DecreaseIntervalUs != 50 || p.ECNByLink != nil {
			t.Errorf("%g: RP/NP defaults %+v", tc.link, *p)
		}
	}
}

func TestParamErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*dcqcn.Params)
	}{
		{"kmax below kmin", func(p *dcqcn.Params) { p.KmaxBytes = p.KminBytes - 1 }},
		{"pmax above 1", func(p *dcqcn.Params) { p.Pmax = 1.5 }},
		{"g zero", func(p *dcqcn.Params) { p.G = 0 }},
		{"alpha timer zero", func(p *dcqcn.Params) { p.AlphaTimerUs = 0 }},
		{"increase timer NaN", func(p *dcqcn.Params) { p.IncreaseTimerUs = math.NaN() }},
		{"f zero", func(p *dcqcn.Params) { p.F = 0 }},
		{"min rate zero", func(p *dcqcn.Params) { p.MinRateMbps = 0 }},
		{"negative cnp interval", func(p *dcqcn.Params) { p.CNPIntervalUs = -1 }},
		{"alpha update", func(p *dcqcn.Params) { p.AlphaUpdate = "cnp" }},
	}
	s, err := ccalgo.Lookup("dcqcn")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := dcqcn.DefaultParams(env40)
			tc.mod(p)
			_, e1 := s.NewCP(p, env40)
			_, e2 := s.NewNP(p, env40)
			_, e3 := s.NewRP(p, env40)
			if e1 == nil && e2 == nil && e3 == nil {
				t.Error("no constructor rejected the parameter")
			}
		})
	}
	if _, err := s.NewRP(new(int), env40); err == nil {
		t.Error("wrong params type accepted")
	}
}

// TestMarkProbability: Figure 5's RED curve at 40 Gb/s (Kmin 5 KB, Kmax 200 KB,
// Pmax 1 %).
func TestMarkProbability(t *testing.T) {
	cp, err := dcqcn.NewCP(dcqcn.DefaultParams(env40), env40)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    int64
		want float64
	}{
		{0, 0}, {5_000, 0}, {5_001, 0.01 / 195_000}, {102_500, 0.005},
		{200_000, 0.01}, {200_001, 1}, {1 << 30, 1},
	}
	for _, tc := range tests {
		if got := cp.MarkProbability(tc.q); !near(got, tc.want) {
			t.Errorf("q=%d: p=%g, want %g", tc.q, got, tc.want)
		}
	}
}

// TestCPMarkingFrequency: the fraction of CE marks at dequeue matches the curve.
func TestCPMarkingFrequency(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.Pmax = 0.2
	cp, _ := dcqcn.NewCP(p, env40)
	tests := []struct {
		q    int64
		want float64
	}{{4_000, 0}, {5_000, 0}, {102_500, 0.1}, {200_000, 0.2}, {200_001, 1}}
	const n = 200_000
	for _, tc := range tests {
		port := ccalgo.PortState{QueueBytes: tc.q, LinkBps: 40e9}
		pkt := ccalgo.DataPacket{WireBytes: 1062}
		marks := 0
		for i := 0; i < n; i++ {
			if v := cp.OnDequeue(int64(i), &pkt, &port, nil); v.Mark == ccalgo.MarkCE {
				marks++
			}
			if v := cp.OnEnqueue(int64(i), &pkt, &port, nil); v.Mark != ccalgo.MarkNone {
				t.Fatal("DCQCN marks at dequeue only")
			}
		}
		got := float64(marks) / n
		sd := math.Sqrt(tc.want*(1-tc.want)/n) + 1e-12
		if math.Abs(got-tc.want) > 5*sd {
			t.Errorf("q=%d: marked %.4f, want %.4f", tc.q, got, tc.want)
		}
	}
}

// TestNPCNPSpacing: Figure 6: at most one CNP per QP per 50 us, on CE only.
func TestNPCNPSpacing(t *testing.T) {
	np, err := dcqcn.NewNP(dcqcn.DefaultParams(env40), env40)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		now  int64
		qp   int32
		mark ccalgo.Mark
		want bool
	}{
		{0, 0, ccalgo.MarkNone, false},
		{1 * us, 0, ccalgo.MarkCE, true},
		{2 * us, 0, ccalgo.MarkCE, false},
		{2 * us, 1, ccalgo.MarkCE, true}, // other QP: independent
		{50 * us, 0, ccalgo.MarkCE, false},
		{51 * us, 0, ccalgo.MarkUE, false},
		{51 * us, 0, ccalgo.MarkCE, true},
		{200 * us, 0, ccalgo.MarkNone, false},
		{200 * us, 4, ccalgo.MarkCE, false}, // out of range
		{200 * us, -1, ccalgo.MarkCE, false},
	}
	for i, s := range steps {
		d := ccalgo.DataArrival{QP: s.qp, SendTS: s.now - 5*us, Mark: s.mark}
		var ack ccalgo.AckFields
		if got := np.OnData(s.now, &d, &ack); got != s.want {
			t.Errorf("step %d (t=%d qp=%d %v): CNP %v, want %v", i, s.now, s.qp, s.mark, got, s.want)
		}
		if ack.EchoTS != d.SendTS || ack.Mark != s.mark {
			t.Errorf("step %d: ack %+v does not echo", i, ack)
		}
	}
}

// TestRPDecreaseAndRecovery checks equations (1)-(4) against hand-computed
// values at 40 Gb/s with the default alpha = 1 and g = 1/256.
func TestRPDecreaseAndRecovery(t *testing.T) {
	rp, err := dcqcn.NewRP(dcqcn.DefaultParams(env40), env40)
	if err != nil {
		t.Fatal(err)
	}
	const g = 1.0 / 256
	if rp.RateBps() != 40e9 || rp.NextTimer() != ccalgo.Never || rp.WindowBytes() != ccalgo.NoWindow {
		t.Fatalf("initial rate %g timer %d window %d", rp.RateBps(), rp.NextTimer(), rp.WindowBytes())
	}
	check := func(step string, rc, rt, alpha float64) {
		t.Helper()
		if !near(rp.RateBps(), rc) || !near(rp.TargetBps(), rt) || !near(rp.Alpha(), alpha) {
			t.Errorf("%s: Rc %.6g Rt %.6g alpha %.8f, want %.6g %.6g %.8f", step, rp.RateBps(), rp.TargetBps(), rp.Alpha(), rc, rt, alpha)
		}
	}
	// CNP at 0: cut with alpha = 1 to 20G, then alpha = (1-g)*1 + g = 1.
	rp.OnCNP(0)
	check("first CNP", 20e9, 40e9, 1)
	if rp.NextTimer() != 55*us {
		t.Fatalf("timer %d, want 55 us", rp.NextTimer())
	}
	// CNP inside the 50 us decrease interval: held, and applied when the
	// interval ends (a second one in the same interval adds nothing).
	rp.OnCNP(10 * us)
	rp.OnCNP(30 * us)
	check("CNPs within 50 us", 20e9, 40e9, 1)
	if rp.NextTimer() != 50*us {
		t.Fatalf("timer %d with a held CNP, want the interval's end, 50 us", rp.NextTimer())
	}
	rp.OnTimer(50 * us)
	check("held CNP at 50 us", 10e9, 20e9, 1)
	if rp.NextTimer() != 105*us {
		t.Fatalf("timer %d after the held cut, want 105 us", rp.NextTimer())
	}
	// 105 us: alpha decays, timer increase 1 of F: fast recovery to (20+10)/2.
	rp.OnTimer(105 * us)
	a := 1 - g
	check("105 us", 15e9, 20e9, a)
	// CNP at 160 us: Rt = 15G, Rc = 15G * (1 - a/2), alpha = (1-g) a + g.
	rp.OnCNP(160 * us)
	rc := 15e9 * (1 - a/2)
	a = (1-g)*a + g
	check("second CNP", rc, 15e9, a)
	// Timer events every 55 us: fast recovery (T_cnt 1..4).
	rt := 15e9
	for k := int64(1); k <= 4; k++ {
		rp.OnTimer(160*us + k*55*us)
		a *= 1 - g
		rc = (rt + rc) / 2
		check("fast recovery", rc, rt, a)
	}
	// T_cnt = 5 >= F, B_cnt = 0 < F: additive increase by 40 Mb/s.
	rp.OnTimer(160*us + 5*55*us)
	a *= 1 - g
	rt += 40e6
	rc = (rt + rc) / 2
	check("additive increase", rc, rt, a)
	if rp.NextTimer() != 160*us+6*55*us {
		t.Errorf("next timer %d", rp.NextTimer())
	}
}

// TestRPHyperIncrease: with the byte counter also past F, R_T grows by
// i * R_HAI, i = min(T_cnt, B_cnt) - F + 1.
func TestRPHyperIncrease(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.ByteCounterBytes = 10_000
	rp, _ := dcqcn.NewRP(p, env40)
	rp.OnCNP(0) // Rc 20G, Rt 40G
	rp.OnCNP(60 * us)
	// No timer ran between the CNPs, so alpha is still 1: 20G is halved again.
	rc, rt := 10e9, 20e9
	if !near(rp.RateBps(), rc) || !near(rp.TargetBps(), rt) {
		t.Fatalf("after two CNPs: %g %g", rp.RateBps(), rp.TargetBps())
	}
	// Six byte-counter events: B_cnt 1..6, T_cnt 0: FR x4, AI at 5 and 6.
	for k := 1; k <= 6; k++ {
		rp.OnSend(61*us, 0, 10_000)
		if k >= 5 {
			rt += 40e6
		}
		rc = (rt + rc) / 2
	}
	if !near(rp.RateBps(), rc) || !near(rp.TargetBps(), rt) {
		t.Fatalf("byte counter: Rc %g Rt %g, want %g %g", rp.RateBps(), rp.TargetBps(), rc, rt)
	}
	// Timer events: T_cnt 1..4 with B_cnt 6 >= F: additive; T_cnt 5, 6, 7: hyper
	// with i = min(T_cnt, B_cnt) - F + 1 = 1, 2, 2.
	for k := int64(1); k <= 7; k++ {
		rp.OnTimer(60*us + k*55*us)
		if k < 5 {
			rt += 40e6
		} else {
			rt += float64(min(k, 6)-5+1) * 200e6
		}
		rc = (rt + rc) / 2
		if !near(rp.RateBps(), rc) || !near(rp.TargetBps(), rt) {
			t.Fatalf("timer %d: Rc %g Rt %g, want %g %g", k, rp.RateBps(), rp.TargetBps(), rc, rt)
		}
	}
	// Line rate caps both.
	for k := int64(8); k < 200; k++ {
		rp.OnTimer(60*us + k*55*us)
	}
	if rp.RateBps() != 40e9 || rp.TargetBps() != 40e9 {
		t.Errorf("not capped at line rate: %g %g", rp.RateBps(), rp.TargetBps())
	}
}

func TestRPMinRateAndWindow(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.DecreaseIntervalUs = 0
	p.Window = true
	rp, _ := dcqcn.NewRP(p, env40)
	for k := int64(0); k < 100; k++ {
		rp.OnCNP(k)
	}
	if rp.RateBps() != 100e6 {
		t.Errorf("rate %g, want the 100 Mb/s floor", rp.RateBps())
	}
	if want := int64(40e9 * 6e-6 / 8); rp.WindowBytes() != want {
		t.Errorf("window %d, want %d", rp.WindowBytes(), want)
	}
}

func TestZeroAllocs(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	cp, _ := dcqcn.NewCP(p, env40)
	np, _ := dcqcn.NewNP(p, env40)
	rp, _ := dcqcn.NewRP(p, env40)
	port := ccalgo.PortState{QueueBytes: 100_000, LinkBps: 40e9}
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	d := ccalgo.DataArrival{QP: 1, Mark: ccalgo.MarkCE}
	var ack ccalgo.AckFields
	ae := ccalgo.AckEvent{AckedSeq: 1000}
	now := int64(0)
	tests := map[string]func(){
		"CP.OnEnqueue": func() { cp.OnEnqueue(now, &pkt, &port, nil) },
		"CP.OnDequeue": func() { cp.OnDequeue(now, &pkt, &port, nil) },
		"NP.OnData":    func() { now += 10 * us; np.OnData(now, &d, &ack) },
		"RP.OnCNP":     func() { now += 60 * us; rp.OnCNP(now) },
		"RP.OnSend":    func() { rp.OnSend(now, 0, 1000) },
		"RP.OnTimer":   func() { now += 55 * us; rp.OnTimer(now) },
		"RP.OnAck":     func() { rp.OnAck(now, &ae) },
		"RP.RateBps":   func() { _ = rp.RateBps() + float64(rp.NextTimer()) },
	}
	for name, f := range tests {
		if a := testing.AllocsPerRun(1000, f); a != 0 {
			t.Errorf("%s: %v allocs", name, a)
		}
	}
}

func BenchmarkCPOnDequeue(b *testing.B) {
	cp, _ := dcqcn.NewCP(dcqcn.DefaultParams(env40), env40)
	port := ccalgo.PortState{QueueBytes: 100_000, LinkBps: 40e9}
	pkt := ccalgo.DataPacket{WireBytes: 1062}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cp.OnDequeue(int64(i), &pkt, &port, nil)
	}
}

func BenchmarkNPOnData(b *testing.B) {
	np, _ := dcqcn.NewNP(dcqcn.DefaultParams(env40), env40)
	d := ccalgo.DataArrival{QP: 1, Mark: ccalgo.MarkCE}
	var ack ccalgo.AckFields
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		np.OnData(int64(i)*100, &d, &ack)
	}
}

func BenchmarkRPOnCNP(b *testing.B) {
	rp, _ := dcqcn.NewRP(dcqcn.DefaultParams(env40), env40)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rp.OnCNP(int64(i) * 60 * us)
	}
}

func BenchmarkRPOnTimer(b *testing.B) {
	rp, _ := dcqcn.NewRP(dcqcn.DefaultParams(env40), env40)
	rp.OnCNP(0)
	b.ReportAllocs()
	for i := 1; b.Loop(); i++ {
		rp.OnTimer(int64(i) * 55 * us)
	}
}

func BenchmarkRPOnSend(b *testing.B) {
	rp, _ := dcqcn.NewRP(dcqcn.DefaultParams(env40), env40)
	rp.OnCNP(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rp.OnSend(int64(i), uint64(i)*1000, 1000)
	}
}

// TestRPClampTargetRate: a cut sets R_T = R_C always with ClampTargetRate
// (the paper), and without it only once an increase event came since the
// last cut (ns-3's Mellanox model, CLAMP_TARGET_RATE 0).
func TestRPClampTargetRate(t *testing.T) {
	for _, tc := range []struct {
		clamp bool
		// Rt after a second cut before any increase, and after a third cut
		// that follows one timer increase.
		rt2, rt3 float64
	}{
		{true, 20e9, 15e9},
		{false, 40e9, 25e9},
	} {
		p := dcqcn.DefaultParams(env40)
		p.ClampTargetRate = tc.clamp
		p.DecreaseIntervalUs = 0
		p.G = 1e-15 // alpha stays 1: every cut halves
		rp, err := dcqcn.NewRP(p, env40)
		if err != nil {
			t.Fatal(err)
		}
		rp.OnCNP(0) // Rc 20G, Rt 40G either way (first cut)
		rp.OnCNP(1 * us)
		if !near(rp.RateBps(), 10e9) || !near(rp.TargetBps(), tc.rt2) {
			t.Errorf("clamp %v: second cut: Rc %g Rt %g, want 10G %g", tc.clamp, rp.RateBps(), rp.TargetBps(), tc.rt2)
		}
		rp.OnTimer(56 * us) // fast recovery: Rc = (Rt + Rc) / 2
		rc := (tc.rt2 + 10e9) / 2
		rp.OnCNP(57 * us)
		if !near(rp.RateBps(), rc/2) || !near(rp.TargetBps(), rc) {
			t.Errorf("clamp %v: cut after an increase: Rc %g Rt %g, want %g %g", tc.clamp, rp.RateBps(), rp.TargetBps(), rc/2, rc)
		}
		if want := tc.rt3; !near(rc, want) {
			t.Errorf("clamp %v: Rc before the third cut %g, want %g", tc.clamp, rc, want)
		}
	}
}

// TestRPTimerHyperIncrease: without a byte counter the paper's rule stays in
// additive increase; TimerHyperIncrease goes on to hyper increase with a
// constant R_HAI step (ns-3's Mellanox model: F = FAST_RECOVERY_TIMES + 1).
func TestRPTimerHyperIncrease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hyper bool
		bytes int64
		// steps[k] is R_T's growth at timer event k+1.
		steps []float64
	}{
		{"paper, no byte counter", false, 0, []float64{0, 40e6, 40e6, 40e6, 40e6}},
		{"timer hyper", true, 0, []float64{0, 40e6, 200e6, 200e6, 200e6}},
		{"timer hyper needs the byte counter off", true, 10_000_000, []float64{0, 40e6, 40e6, 40e6, 40e6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dcqcn.DefaultParams(env40)
			p.F = 2
			p.TimerHyperIncrease = tc.hyper
			p.ByteCounterBytes = tc.bytes
			rp, err := dcqcn.NewRP(p, env40)
			if err != nil {
				t.Fatal(err)
			}
			rp.OnCNP(0)
			rp.OnCNP(60 * us) // R_T 20G, below the line rate that would cap it
			rc, rt := rp.RateBps(), rp.TargetBps()
			for k, step := range tc.steps {
				rp.OnTimer(60*us + int64(k+1)*55*us)
				rt += step
				rc = (rt + rc) / 2
				if !near(rp.TargetBps(), rt) || !near(rp.RateBps(), rc) {
					t.Fatalf("event %d: Rc %g Rt %g, want %g %g", k+1, rp.RateBps(), rp.TargetBps(), rc, rt)
				}
			}
		})
	}
}

// TestRPAlphaOnTimer: with AlphaOnTimer alpha moves only on its timer, every
// K from the first CNP: up if a CNP came in the last K, else down; a cut
// uses alpha as it is.
func TestRPAlphaOnTimer(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.AlphaUpdate = dcqcn.AlphaOnTimer
	p.AlphaTimerUs = 1
	p.DecreaseIntervalUs = 4
	p.G = 1.0 / 16
	g := p.G
	rp, err := dcqcn.NewRP(p, env40)
	if err != nil {
		t.Fatal(err)
	}
	rp.OnCNP(0) // first CNP: cut with alpha 1, start the alpha timer
	if !near(rp.RateBps(), 20e9) || rp.Alpha() != 1 || rp.NextTimer() != 1*us {
		t.Fatalf("first CNP: Rc %g alpha %g timer %d, want 20G 1 1us", rp.RateBps(), rp.Alpha(), rp.NextTimer())
	}
	rp.OnTimer(1 * us) // no CNP since: decay
	a := 1 - g
	if !near(rp.Alpha(), a) {
		t.Fatalf("1 us: alpha %g, want %g", rp.Alpha(), a)
	}
	rp.OnCNP(1500)     // held (within 4 us of the cut); marks the alpha period
	rp.OnTimer(2 * us) // up
	a = (1-g)*a + g
	if !near(rp.Alpha(), a) || !near(rp.RateBps(), 20e9) {
		t.Fatalf("2 us: alpha %g Rc %g, want %g 20G", rp.Alpha(), rp.RateBps(), a)
	}
	rp.OnTimer(3 * us)
	a *= 1 - g
	rp.OnTimer(4 * us) // alpha decays, then the held CNP cuts with it
	a *= 1 - g
	if !near(rp.Alpha(), a) || !near(rp.RateBps(), 20e9*(1-a/2)) {
		t.Fatalf("4 us: alpha %g Rc %g, want %g %g", rp.Alpha(), rp.RateBps(), a, 20e9*(1-a/2))
	}
}

// TestNPCNPPerMarkedPacket: cnp_interval_us = 0 sends a CNP for every
// CE-marked packet, as ns-3's receiver flags every ACK of one.
func TestNPCNPPerMarkedPacket(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.CNPIntervalUs = 0
	np, err := dcqcn.NewNP(p, env40)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []ccalgo.Mark{ccalgo.MarkCE, ccalgo.MarkCE, ccalgo.MarkNone, ccalgo.MarkCE} {
		d := ccalgo.DataArrival{QP: 0, Mark: m}
		var ack ccalgo.AckFields
		if got, want := np.OnData(5*us, &d, &ack), m == ccalgo.MarkCE; got != want {
			t.Errorf("packet %d (%v) at one instant: CNP %v, want %v", i, m, got, want)
		}
	}
}

// TestCPECNByLink: a port marks with its link rate's ECNByLink entry, other
// ports with the flat thresholds; bad entries are refused.
func TestCPECNByLink(t *testing.T) {
	p := dcqcn.DefaultParams(env40)
	p.ECNByLink = []dcqcn.LinkECN{{Gbps: 25, KminBytes: 100_000, KmaxBytes: 400_000, Pmax: 0.2}}
	for _, tc := range []struct {
		link float64
		q    int64
		want float64
	}{
		{25e9, 100_000, 0},
		{25e9, 250_000, 0.1},
		{25e9, 400_001, 1},
		{40e9, 5_000, 0},
		{40e9, 102_500, 0.005},
	} {
		env := env40
		env.LinkBps = tc.link
		cp, err := dcqcn.NewCP(p, env)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.MarkProbability(tc.q); !near(got, tc.want) {
			t.Errorf("%g b/s, queue %d: p %g, want %g", tc.link, tc.q, got, tc.want)
		}
	}
	for name, e := range map[string][]dcqcn.LinkECN{
		"zero rate":   {{Gbps: 0, KmaxBytes: 1}},
		"twice":       {{Gbps: 25, KmaxBytes: 1}, {Gbps: 25, KmaxBytes: 1}},
		"kmax < kmin": {{Gbps: 25, KminBytes: 2, KmaxBytes: 1}},
		"pmax > 1":    {{Gbps: 25, KmaxBytes: 1, Pmax: 2}},
	} {
		q := *p
		q.ECNByLink = e
		if _, err := dcqcn.NewCP(&q, env40); err == nil {
			t.Errorf("%s: accepted %+v", name, e)
		}
	}
}
