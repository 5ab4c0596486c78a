package timely

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// Test environment: 10 Gb/s, min_rtt 20 us, so delta = 10 Mb/s, MinRate = 10 Mb/s.
func testEnv() ccalgo.Env {
	return ccalgo.Env{LinkBps: 10e9, BaseRTT: 20000, MTU: 1000, MaxFlows: 4, ExpectedFlows: 4}
}

func newTestRP(tb testing.TB, edit func(*Params)) *RP {
	tb.Helper()
	p := DefaultParams(testEnv())
	if edit != nil {
		edit(p)
	}
	rp, err := NewRP(p, testEnv())
	if err != nil {
		tb.Fatal(err)
	}
	return rp
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDefaults(t *testing.T) {
	p := DefaultParams(testEnv())
	want := Params{Alpha: 0.02, Beta: 0.8, TLowNs: 0, THighNs: 500000, DeltaBps: 10e6,
		MinRTTNs: 20000, HAIThreshold: 5, HAIFactor: 5, MinRateBps: 10e6}
	if *p != want {
		t.Errorf("defaults %+v, want %+v", *p, want)
	}
	if p := DefaultParams(ccalgo.Env{LinkBps: 100e9}); p.MinRTTNs != 20000 || p.DeltaBps != 100e6 {
		t.Errorf("no BaseRTT: min_rtt %d delta %v; want 20000, 100e6", p.MinRTTNs, p.DeltaBps)
	}
	rp := newTestRP(t, nil)
	if rp.RateBps() != 10e9 || rp.WindowBytes() != ccalgo.NoWindow {
		t.Errorf("start: rate %v window %d", rp.RateBps(), rp.WindowBytes())
	}
}

func TestParamsValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Params)
		param string
	}{
		{"defaults", nil, ""},
		{"alpha 0", func(p *Params) { p.Alpha = 0 }, "alpha"},
		{"beta > 1", func(p *Params) { p.Beta = 1.5 }, "beta"},
		{"t_low < 0", func(p *Params) { p.TLowNs = -1 }, "t_low_ns"},
		{"t_high <= t_low", func(p *Params) { p.TLowNs = 500000 }, "t_high_ns"},
		{"delta 0", func(p *Params) { p.DeltaBps = 0 }, "delta_bps"},
		{"min_rtt 0", func(p *Params) { p.MinRTTNs = 0 }, "min_rtt_ns"},
		{"hai threshold 0", func(p *Params) { p.HAIThreshold = 0 }, "hai_threshold"},
		{"hai factor NaN", func(p *Params) { p.HAIFactor = math.NaN() }, "hai_factor"},
		{"min rate 0", func(p *Params) { p.MinRateBps = 0 }, "min_rate_bps"},
		{"max below min", func(p *Params) { p.MaxRateBps = 1e6 }, "max_rate_bps"},
		{"max rate set", func(p *Params) { p.MaxRateBps = 5e9 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams(testEnv())
			if tc.edit != nil {
				tc.edit(p)
			}
			_, err := NewRP(p, testEnv())
			if tc.param == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ccalgo.ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("error %v, want a ParamError on %s", err, tc.param)
			}
		})
	}
}

// TestSampleBranches checks one rate update per branch against hand-computed
// values. Every case starts from rate 5 Gb/s, prev_rtt 30 us, last update at 0.
func TestSampleBranches(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*Params)
		avgDiff     float64
		negRun      int
		now, rtt    int64
		wantRate    float64
		wantAvgDiff float64
		wantNegRun  int
	}{
		// diff = 10000, avg = 0.02 * 10000 = 200; w = 10/20; rate += 10e6 * 0.5.
		{"below T_low", func(p *Params) { p.TLowNs = 50000 }, 0, 0, 10000, 40000, 5.005e9, 200, 0},
		// w = 1: rate *= 1 - 0.8 * (1 - 500/1000) = 0.6.
		{"above T_high", nil, 0, 0, 40000, 1000000, 3e9, 0.02 * 970000, 0},
		// w = 5/20: rate *= 1 - 0.25 * 0.8 * 0.5 = 0.9.
		{"above T_high weighted", nil, 0, 0, 5000, 1000000, 4.5e9, 0.02 * 970000, 0},
		// 1 - 0.8 * (1 - 0.0005) = 0.2004 < 1/2: the halving floor holds.
		{"above T_high halving floor", nil, 0, 0, 40000, 1000000000, 2.5e9, 0.02 * (1e9 - 30000), 0},
		// diff 0, gradient 0 (not negative): rate += delta * 1.
		{"zero gradient", nil, 0, 3, 20000, 30000, 5.01e9, 0, 0},
		// avg = 0.98 * -100 + 0.02 * -1000 = -118 < 0: fourth negative sample, N = 1.
		{"negative gradient", nil, -100, 3, 20000, 29000, 5.01e9, -118, 4},
		// fifth consecutive negative sample: HAI, rate += 5 * delta.
		{"hyper-active increase", nil, -100, 4, 20000, 29000, 5.05e9, -118, 5},
		// HAI weighted: w = 0.5.
		{"hyper-active increase weighted", nil, -100, 9, 10000, 29000, 5.025e9, -118, 10},
		// diff 50000: avg = 1000, gradient = 0.05: rate *= 1 - 0.8 * 0.05 (not weighted by w).
		{"positive gradient", nil, 0, 7, 100, 80000, 4.8e9, 1000, 0},
		// T_high raised to 5 ms; diff 1e6: gradient = 0.02 * 1e6 / 20000 = 1,
		// 1 - 0.8 = 0.2 < 1/2: the halving floor holds.
		{"positive gradient halving floor", func(p *Params) { p.THighNs = 5000000 }, 0, 0, 100, 1030000, 2.5e9, 20000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := newTestRP(t, tc.edit)
			rp.rate, rp.prevRTT, rp.avgDiff, rp.negRun, rp.started = 5e9, 30000, tc.avgDiff, tc.negRun, true
			rp.Sample(tc.now, tc.rtt)
			if !near(rp.RateBps(), tc.wantRate) || !near(rp.avgDiff, tc.wantAvgDiff) || rp.negRun != tc.wantNegRun {
				t.Errorf("rate %v avg_diff %v negRun %d; want %v, %v, %d",
					rp.RateBps(), rp.avgDiff, rp.negRun, tc.wantRate, tc.wantAvgDiff, tc.wantNegRun)
			}
			if rp.prevRTT != float64(tc.rtt) || rp.lastUpdate != tc.now {
				t.Errorf("prev_rtt %v last_update %d", rp.prevRTT, rp.lastUpdate)
			}
		})
	}
}

// TestGradientSequence feeds a ramp of RTT samples 1 us apart through OnAck and
// checks the EWMA of the differences and the rate step by step.
func TestGradientSequence(t *testing.T) {
	rp := newTestRP(t, nil)
	rp.rate = 5e9
	steps := []struct {
		rtt      int64
		wantAvg  float64 // ns
		wantRate float64
	}{
		{20000, 0, 5e9},                    // first sample: initialises only
		{21000, 20, 5e9 * (1 - 0.8*0.001)}, // gradient 20/20000
		{22000, 39.6, 5e9 * (1 - 0.8*0.001) * (1 - 0.8*0.00198)},
		{22000, 38.808, 5e9 * (1 - 0.8*0.001) * (1 - 0.8*0.00198) * (1 - 0.8*0.0019404)},
	}
	for i, s := range steps {
		a := ccalgo.AckEvent{RTT: s.rtt}
		rp.OnAck(int64(i)*1000, &a)
		if !near(rp.avgDiff, s.wantAvg) || !near(rp.RateBps(), s.wantRate) {
			t.Fatalf("step %d: avg_diff %v rate %v; want %v, %v", i, rp.avgDiff, rp.RateBps(), s.wantAvg, s.wantRate)
		}
	}
	if !near(rp.Gradient(), 38.808/20000) {
		t.Errorf("gradient %v", rp.Gradient())
	}
	// Unknown RTT is ignored; a NAK's RTT is a sample.
	before := *rp
	rp.OnAck(9000, &ccalgo.AckEvent{})
	if *rp != before {
		t.Error("RTT 0 changed state")
	}
	rp.OnNak(9000, &ccalgo.AckEvent{RTT: 22000})
	if rp.lastUpdate != 9000 {
		t.Error("NAK RTT not sampled")
	}
}

// TestRateBounds: the rate never leaves [MinRate, line rate].
func TestRateBounds(t *testing.T) {
	rp := newTestRP(t, nil)
	now := int64(0)
	for i := range 200 { // falling RTTs: HAI at the line-rate cap
		now += 20000
		rp.Sample(now, int64(400000-i*1000))
		if rp.RateBps() > 10e9 {
			t.Fatalf("rate %v above line", rp.RateBps())
		}
	}
	if rp.RateBps() != 10e9 {
		t.Fatalf("rate %v, want the line-rate cap", rp.RateBps())
	}
	for range 200 { // far above T_high
		now += 20000
		rp.Sample(now, 10_000_000)
	}
	if rp.RateBps() != 10e6 {
		t.Fatalf("rate %v, want the 10 Mb/s floor", rp.RateBps())
	}
}

func TestNPAndRegistry(t *testing.T) {
	var ack ccalgo.AckFields
	d := ccalgo.DataArrival{SendTS: 4242}
	if NewNP().OnData(5000, &d, &ack) || ack.EchoTS != 4242 {
		t.Errorf("NP: ack %+v", ack)
	}
	s, err := ccalgo.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleNP|ccalgo.RoleRP {
		t.Errorf("roles %v", s.Roles())
	}
	if _, err := s.NewRP(s.DefaultParams(testEnv()), testEnv()); err != nil {
		t.Error(err)
	}
	if _, err := s.NewRP(3, testEnv()); err == nil {
		t.Error("wrong params type accepted")
	}
}

func TestZeroAllocs(t *testing.T) {
	rp := newTestRP(t, nil)
	np := NewNP()
	var now int64
	a := ccalgo.AckEvent{}
	var d ccalgo.DataArrival
	var ack ccalgo.AckFields
	hooks := []struct {
		name string
		f    func()
	}{
		{"RP.OnAck", func() { now += 500; a.RTT = 20000 + now%7000; rp.OnAck(now, &a) }},
		{"RP.OnNak", func() { now += 500; a.RTT = 20000 + now%5000; rp.OnNak(now, &a) }},
		{"RP.RateBps", func() { _ = rp.RateBps() }},
		{"NP.OnData", func() { np.OnData(now, &d, &ack) }},
	}
	for _, h := range hooks {
		if n := testing.AllocsPerRun(1000, h.f); n != 0 {
			t.Errorf("%s: %v allocs per call", h.name, n)
		}
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	rp := newTestRP(b, nil)
	var now int64
	a := ccalgo.AckEvent{}
	b.ReportAllocs()
	for b.Loop() {
		now += 500
		a.RTT = 20000 + now%7000
		rp.OnAck(now, &a)
	}
}

func BenchmarkRPOnNak(b *testing.B) {
	rp := newTestRP(b, nil)
	var now int64
	a := ccalgo.AckEvent{}
	b.ReportAllocs()
	for b.Loop() {
		now += 500
		a.RTT = 20000 + now%7000
		rp.OnNak(now, &a)
	}
}

func BenchmarkNPOnData(b *testing.B) {
	np := NewNP()
	d := ccalgo.DataArrival{SendTS: 1}
	var ack ccalgo.AckFields
	b.ReportAllocs()
	for b.Loop() {
		np.OnData(0, &d, &ack)
	}
}

// FuzzSample feeds arbitrary RTT samples and times: the rate must stay within
// [MinRate, line rate] and never fall below half its previous value.
func FuzzSample(f *testing.F) {
	f.Add(int64(20000), int64(1000), int64(25000), int64(500), int64(600000), int64(30000))
	f.Add(int64(1), int64(0), int64(1<<40), int64(-5), int64(0), int64(1<<62))
	f.Fuzz(func(t *testing.T, r0, dt0, r1, dt1, r2, dt2 int64) {
		rp := newTestRP(t, nil)
		now := int64(0)
		for i, s := range [][2]int64{{r0, dt0}, {r1, dt1}, {r2, dt2}, {r1, dt0}, {r0, dt2}} {
			now += s[1] % 1_000_000_000
			before := rp.RateBps()
			rp.Sample(now, s[0])
			r := rp.RateBps()
			if math.IsNaN(r) || r < 10e6 || r > 10e9 || r < min(before/2, 10e9) && r > 10e6 {
				t.Fatalf("sample %d (rtt %d): rate %v after %v", i, s[0], r, before)
			}
		}
	})
}

func BenchmarkRPRateBps(b *testing.B) {
	rp := newTestRP(b, nil)
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += rp.RateBps()
	}
	_ = sink
}
