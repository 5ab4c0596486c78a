package rcc

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

const (
	tenG = 10e9
	wire = 1062 // wire bytes of a 1000 B payload packet
)

var testEnv = ccalgo.Env{LinkBps: tenG, BaseRTT: 4000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4}

func testCfg(t testing.TB, mut func(*Params)) config {
	t.Helper()
	p := DefaultParams(testEnv)
	if mut != nil {
		mut(p)
	}
	c, err := resolve(p, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newTestNP(t testing.TB, mut func(*Params)) *NP {
	t.Helper()
	p := DefaultParams(testEnv)
	if mut != nil {
		mut(p)
	}
	np, err := NewNP(p, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	return np
}

func approx(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.9g, want %.9g", name, got, want)
	}
}

func TestRegistered(t *testing.T) {
	s, err := ccalgo.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Roles(), ccalgo.RoleNP|ccalgo.RoleRP; got != want {
		t.Fatalf("roles = %v, want %v", got, want)
	}
	p, ok := s.DefaultParams(testEnv).(*Params)
	if !ok {
		t.Fatalf("DefaultParams type %T", s.DefaultParams(testEnv))
	}
	want := Params{Mode: ModeReceiver, N: 3, Delta: 0.2, Eta: 0.95, Kp: 1e4, Kd: 1e5,
		LinkBps: tenG, BaseRTTNs: 4000, MTU: 1000, HeaderBytes: 62, MinWindowBytes: 1000}
	if *p != want {
		t.Fatalf("defaults = %+v, want %+v", *p, want)
	}
	if _, err := s.NewNP(p, testEnv); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewRP(nil, testEnv); err != nil {
		t.Fatal(err)
	}
}

func TestParamValidation(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*Params)
		ok   bool
	}{
		{"defaults", func(*Params) {}, true},
		{"sender mode", func(p *Params) { p.Mode = ModeSender }, true},
		{"bad mode", func(p *Params) { p.Mode = "both" }, false},
		{"n 0", func(p *Params) { p.N = 0 }, false},
		{"delta 0", func(p *Params) { p.Delta = 0 }, false},
		{"delta 1", func(p *Params) { p.Delta = 1 }, false},
		{"eta 1", func(p *Params) { p.Eta = 1 }, false},
		{"eta NaN", func(p *Params) { p.Eta = math.NaN() }, false},
		{"kp negative", func(p *Params) { p.Kp = -1 }, false},
		{"kd inf", func(p *Params) { p.Kd = math.Inf(1) }, false},
		{"link negative", func(p *Params) { p.LinkBps = -1 }, false},
		{"base rtt negative", func(p *Params) { p.BaseRTTNs = -1 }, false},
		{"mtu 0", func(p *Params) { p.MTU = 0 }, false},
		{"header negative", func(p *Params) { p.HeaderBytes = -1 }, false},
		{"min window negative", func(p *Params) { p.MinWindowBytes = -1 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams(testEnv)
			tc.mut(p)
			_, errNP := NewNP(p, testEnv)
			_, errRP := NewRP(p, testEnv)
			if (errNP == nil) != tc.ok || (errRP == nil) != tc.ok {
				t.Fatalf("NewNP err = %v, NewRP err = %v, want ok = %v", errNP, errRP, tc.ok)
			}
		})
	}
	if _, err := NewNP(struct{}{}, testEnv); err == nil {
		t.Fatal("wrong params type accepted")
	}
	if _, err := NewNP(nil, ccalgo.Env{LinkBps: tenG}); err == nil {
		t.Fatal("MaxFlows = 0 accepted")
	}
}

// Eq. 2: RTT_target = RTT_base (1 + delta / 2).
func TestTargetEq2(t *testing.T) {
	tests := []struct {
		base  int64
		delta float64
		want  float64
	}{
		{10000, 0.2, 11000},
		{11000, 0.2, 12100},
		{4000, 0.5, 5000},
	}
	for _, tc := range tests {
		cfg := testCfg(t, func(p *Params) { p.Delta = tc.delta })
		var c controller
		c.sample(tc.base + 500)
		c.sample(tc.base)
		c.sample(tc.base + 100)
		approx(t, "target", c.target(&cfg), tc.want, 1e-12)
	}
}

// Eq. 1 with n consecutive samples: only n samples in a row above
// RTT_base (1 + delta) enter PID; one sample at or below the bound resets the run.
func TestCongestionDetectionConsecutive(t *testing.T) {
	const fair = 5000.0
	tests := []struct {
		name    string
		n       int
		delays  []int64 // after a first base sample of 10000
		wantPID []bool  // after each delay
	}{
		{"three in a row", 3, []int64{12001, 12001, 12001}, []bool{false, false, true}},
		{"bound is strict", 3, []int64{12000, 12000, 12000, 12000}, []bool{false, false, false, false}},
		{"reset by a low sample", 3, []int64{13000, 13000, 11000, 13000, 13000, 13000},
			[]bool{false, false, false, false, false, true}},
		{"n = 1", 1, []int64{11000, 12500}, []bool{false, true}},
		{"n = 5", 5, []int64{20000, 20000, 20000, 20000, 20000}, []bool{false, false, false, false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testCfg(t, func(p *Params) { p.N = tc.n })
			var c controller
			c.sample(10000)
			c.window(0, 10000, fair, false, 8000, &cfg)
			for i, d := range tc.delays {
				c.sample(d)
				w := c.window(int64(i+1)*100, d, fair, false, 8000, &cfg)
				if c.inPID != tc.wantPID[i] {
					t.Fatalf("sample %d (%d ns): inPID = %v, want %v", i, d, c.inPID, tc.wantPID[i])
				}
				if !c.inPID && w != fair {
					t.Fatalf("sample %d: window %v outside PID, want the EWA share %v", i, w, fair)
				}
			}
		})
	}
}

// Alg. 1 line 10-11: under last-hop congestion the window is the EWA share and
// high delays do not start PID; the samples break the run of Eq. 1.
func TestLastHopKeepsEWA(t *testing.T) {
	cfg := testCfg(t, nil)
	var c controller
	c.sample(10000)
	for i := range 10 {
		c.sample(20000)
		if w := c.window(int64(i), 20000, 4000, true, 8000, &cfg); w != 4000 {
			t.Fatalf("window = %v, want 4000", w)
		}
	}
	if c.inPID {
		t.Fatal("PID under last-hop congestion")
	}
	// Two in-network samples after the last-hop run: not yet n = 3.
	c.window(20, 20000, 4000, false, 8000, &cfg)
	c.window(21, 20000, 4000, false, 8000, &cfg)
	if c.inPID {
		t.Fatal("last-hop samples counted in the run of Eq. 1")
	}
	c.window(22, 20000, 4000, false, 8000, &cfg)
	if !c.inPID {
		t.Fatal("no PID after 3 in-network samples")
	}
}

// Eq. 3-5 by hand: base 10 us, target 11 us, Kp = 1e4, Kd = 1e5, PID period 8 us.
func TestPIDEquations(t *testing.T) {
	cfg := testCfg(t, func(p *Params) { p.MinWindowBytes = 100 })
	const fair = 8000.0
	var c controller
	c.sample(10000)
	c.window(0, 10000, fair, false, 8000, &cfg)
	for i, d := range []int64{13000, 13000} {
		c.sample(d)
		c.window(int64(1+i), d, fair, false, 8000, &cfg)
	}
	// Third sample over the bound: PID starts with U = 0, E_prev = 2e-6 s.
	c.sample(13000)
	w := c.window(10, 13000, fair, false, 8000, &cfg)
	u1 := 1e4*2e-6 + 1e5*0.0 // 0.02
	w1 := fair * (1 - math.Tanh(u1))
	approx(t, "U1", c.u, u1, 1e-12)
	approx(t, "W1", w, w1, 1e-9)
	// A sample before the next period changes nothing.
	if w := c.window(100, 30000, fair, false, 8000, &cfg); w != w1 {
		t.Fatalf("window moved between PID steps: %v, want %v", w, w1)
	}
	// Next step: E = 3e-6, U = 0.02 + 1e4*3e-6 + 1e5*(3e-6 - 2e-6) = 0.15.
	w = c.window(8010, 14000, fair, false, 8000, &cfg)
	u2 := u1 + 1e4*3e-6 + 1e5*1e-6
	approx(t, "U2", c.u, u2, 1e-12)
	approx(t, "W2", w, w1*(1-math.Tanh(u2)), 1e-9)
	w2 := w
	// Delay back at target: E = 0, U = 0.15 + 0 + 1e5*(0 - 3e-6) = -0.15: W grows.
	w = c.window(16010, 11000, fair, false, 8000, &cfg)
	u3 := u2 - 1e5*3e-6
	approx(t, "U3", c.u, u3, 1e-12)
	approx(t, "W3", w, w2*(1-math.Tanh(u3)), 1e-9)
	// Sticky: a last-hop sample does not leave PID (lines 6-9); the share caps W.
	w = c.window(24010, 11000, 3000, true, 8000, &cfg)
	if !c.inPID || w != 3000 || c.u != 0 {
		t.Fatalf("after last-hop sample: inPID = %v, window = %v, U = %v; want true, 3000, 0 (anti-windup)",
			c.inPID, w, c.u)
	}
	// Strong congestion: W falls to the minimum window, not to 0.
	w = c.window(32010, 1e6, fair, false, 8000, &cfg)
	if w != 100 || c.u != 0 {
		t.Fatalf("window = %v, U = %v; want the minimum 100, 0 (anti-windup)", w, c.u)
	}
	c.endFlow()
	if c.inPID || c.u != 0 || c.base != 10000 {
		t.Fatalf("endFlow: inPID %v, U %v, base %d; want false, 0, 10000", c.inPID, c.u, c.base)
	}
}

// Why PID control has no fairness of its own (package doc, "Fairness under
// in-network congestion"). Two flows through one bottleneck see the same
// delays; Eq. 4 then gives them the same U and Eq. 5 scales both windows by
// the same factor, so whatever ratio their histories left stays. Here a toy
// shared queue (1 B/ns, a 20 KB pipe, base delay 10 us, target 11 us) takes
// windows of 8 and 16 KB through 300 PID steps: their sum moves, their ratio
// stays 2 to rounding. And a flow whose error stays positive, as the flow
// that crosses two queues in a parking lot, has Kp integrate it into U until
// Eq. 5 holds it at the minimum window, whatever its share.
func TestPIDNoFairnessForce(t *testing.T) {
	cfg := testCfg(t, func(p *Params) { p.MinWindowBytes = 100 })
	const cap = 1e9 // no EWA cap in the way
	var a, b controller
	for _, c := range []*controller{&a, &b} {
		c.sample(10000)
	}
	// Enter PID with windows 8000 and 16000 (the EWA share at entry).
	for i := int64(0); i < 3; i++ {
		a.window(i, 13000, 8000, false, 8000, &cfg)
		b.window(i, 13000, 16000, false, 8000, &cfg)
	}
	if !a.inPID || !b.inPID {
		t.Fatal("not in PID")
	}
	lo, hi := a.w, a.w
	for k := int64(1); k <= 300; k++ {
		d := 10000 + int64(max(0, a.w+b.w-20000)) // the shared queue's delay
		wa := a.window(k*8000, d, cap, false, 8000, &cfg)
		wb := b.window(k*8000, d, cap, false, 8000, &cfg)
		if math.Abs(wb/wa-2) > 1e-9 {
			t.Fatalf("step %d: windows %v and %v, ratio %v; want 2 (Eq. 5 scales both by the same factor)", k, wa, wb, wb/wa)
		}
		lo, hi = min(lo, wa), max(hi, wa)
	}
	if lo > 0.9*8000 || hi <= 8000 {
		t.Fatalf("window moved only within [%v, %v]: the loop does not exercise Eq. 4-5", lo, hi)
	}
	// A flow whose delay stays 1.2 us above its target (E = 1.2e-6 s) from
	// the samples that moved it to PID on.
	var c controller
	c.sample(10000)
	for i := int64(0); i < 3; i++ {
		c.window(i, 12200, 40000, false, 8000, &cfg)
	}
	prev := c.w
	steps := 0
	for k := int64(1); c.w > cfg.minWin && k <= 1000; k++ {
		w := c.window(k*8000, 12200, 40000, false, 8000, &cfg)
		if w > prev {
			t.Fatalf("step %d: window grew %v -> %v with E > 0", k, prev, w)
		}
		prev, steps = w, int(k)
	}
	if c.w != cfg.minWin {
		t.Fatalf("window %v after %d steps of E = 1.2e-6 s, want the minimum %v", c.w, steps, cfg.minWin)
	}
	t.Logf("shared queue: window ratio 2 throughout, flow 1's window in [%.0f, %.0f] B; E = 1.2e-6 s: 40000 B to the minimum %v B in %d PID steps", lo, hi, cfg.minWin, steps)
}

func TestRxMeter(t *testing.T) {
	const round = 10000
	tests := []struct {
		name string
		arr  []int64 // arrival times of 1000 B packets
		at   int64   // B_R read at the last arrival
		want float64
	}{
		// First round: (bytes - first packet) * round / elapsed.
		{"single packet", []int64{0}, 0, 0},
		{"start extrapolated", []int64{0, 1000, 2000}, 2000, 2000 * 10000 / 2000},
		// After a round: current bucket + previous * (1 - f).
		{"sliding", []int64{0, 2000, 4000, 6000, 8000, 10000, 12000}, 12000, 2000 + 5000*(1-0.2)},
		{"idle resets", []int64{0, 1000, 50000, 51000}, 51000, 1000 * 10000 / 1000},
		{"gap of one round keeps history", []int64{0, 1000, 11000}, 11000, 1000 + 2000*(1-0.1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m rxMeter
			for _, a := range tc.arr {
				m.add(a, 1000, round)
			}
			approx(t, "B_R", m.bytes(tc.at, round), tc.want, 1e-12)
		})
	}
}

// Section III-C: B_R > C * round * eta.
func TestLastHopTest(t *testing.T) {
	cfg := testCfg(t, nil) // 10 Gb/s: 1.25 B/ns
	tests := []struct {
		br    float64
		round int64
		want  bool
	}{
		{11875, 10000, false}, // exactly C * round * eta
		{11876, 10000, true},
		{12500, 10000, true},
		{5000, 10000, false},
		{1e9, 0, false}, // no round yet
	}
	for _, tc := range tests {
		if got := lastHopFull(&cfg, tc.br, tc.round); got != tc.want {
			t.Errorf("lastHopFull(%v, %d) = %v, want %v", tc.br, tc.round, got, tc.want)
		}
	}
}

func data(qp int32, now, owd int64, first, last bool) ccalgo.DataArrival {
	return ccalgo.DataArrival{QP: qp, PayloadBytes: 1000, WireBytes: wire, SendTS: now - owd,
		FirstOfMessage: first, LastOfMessage: last}
}

// Section III-D: EWA C * RTT_base / N, N from the First/Last opcodes.
func TestEWAWithN(t *testing.T) {
	np := newTestNP(t, func(p *Params) { p.BaseRTTNs = 0 }) // measured
	frac := 1000.0 / wire
	// One-way base 2 us: round trip 4 us, C * RTT = 5000 wire bytes.
	share := func(n int) int64 { return int64(1.25 * 4000 / float64(n) * frac) }
	steps := []struct {
		qp          int32
		first, last bool
		wantN       int
	}{
		{0, true, false, 1},
		{1, true, false, 2},
		{2, true, false, 3},
		{3, true, false, 4},
		{3, false, false, 4},
		{1, false, true, 4}, // the last packet still counts, then the message ends
		{0, false, false, 3},
		{2, false, true, 3},
		{0, false, false, 2},
		{4, true, true, 3}, // a one-packet message
		{0, false, false, 2},
	}
	now := int64(0)
	for i, s := range steps {
		now += 100000 // far apart: no last-hop congestion, no queue
		d := data(s.qp, now, 2000, s.first, s.last)
		var ack ccalgo.AckFields
		if np.OnData(now, &d, &ack) {
			t.Fatal("RCC asked for a CNP")
		}
		if int(ack.ActiveFlows) != s.wantN || ack.Window != share(s.wantN) || ack.EchoTS != d.SendTS {
			t.Fatalf("step %d: N = %d, window = %d, echo %d; want %d, %d, %d", i, ack.ActiveFlows,
				ack.Window, ack.EchoTS, s.wantN, share(s.wantN), d.SendTS)
		}
	}
	if np.ActiveMessages() != 2 {
		t.Fatalf("active = %d, want 2", np.ActiveMessages())
	}
	// A configured base RTT replaces the measured one.
	np = newTestNP(t, func(p *Params) { p.BaseRTTNs = 12000 })
	d := data(0, 1000000, 2000, true, false)
	var ack ccalgo.AckFields
	np.OnData(1000000, &d, &ack)
	if want := int64(1.25 * 12000 * frac); ack.Window != want {
		t.Fatalf("window with BaseRTTNs = %d, want %d", ack.Window, want)
	}
}

// Receiver NP end to end: line-rate arrivals with a growing queue stay in EWA
// (last hop); sparse arrivals with high delay enter PID after n samples, and the
// end of the message leaves it.
func TestNPCongestionTypes(t *testing.T) {
	t.Run("last hop", func(t *testing.T) {
		np := newTestNP(t, nil)
		gap := int64(wire * 8 / 10) // line rate at 10 Gb/s: 849.6 ns
		for i := range int64(200) {
			now := 10000 + i*gap
			owd := 2000 + i*100 // queue grows
			d := data(0, now, owd, i == 0, false)
			var ack ccalgo.AckFields
			np.OnData(now, &d, &ack)
		}
		if np.InPID(0) {
			t.Fatal("last-hop congestion went to PID")
		}
	})
	t.Run("in network", func(t *testing.T) {
		np := newTestNP(t, nil)
		var ack ccalgo.AckFields
		now := int64(10000)
		d := data(0, now, 2000, true, false)
		np.OnData(now, &d, &ack)
		full := ack.Window
		for i := range 3 {
			now += 3000 // a third of line rate
			d := data(0, now, 3000, false, false)
			ack = ccalgo.AckFields{}
			np.OnData(now, &d, &ack)
			if np.InPID(0) != (i == 2) {
				t.Fatalf("sample %d: inPID = %v", i, np.InPID(0))
			}
		}
		if ack.Window >= full {
			t.Fatalf("PID window %d not below the share %d with delay over target", ack.Window, full)
		}
		d = data(0, now+3000, 3000, false, true)
		np.OnData(now+3000, &d, &ack)
		if np.InPID(0) {
			t.Fatal("PID state survived the end of the message")
		}
	})
	t.Run("qp out of range", func(t *testing.T) {
		np := newTestNP(t, nil)
		d := data(99, 1000, 100, true, false)
		var ack ccalgo.AckFields
		np.OnData(1000, &d, &ack)
		if ack.Window != 0 || ack.EchoTS != 900 {
			t.Fatalf("ack = %+v", ack)
		}
	})
}

func TestRPReceiverMode(t *testing.T) {
	rp, err := NewRP(nil, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if rp.RateBps() != tenG || rp.WindowBytes() != ccalgo.NoWindow {
		t.Fatalf("before the first ACK: rate %v window %d, want line rate and no window", rp.RateBps(), rp.WindowBytes())
	}
	tests := []struct {
		rtt, window int64
		wantRTT     int64
		wantWin     int64
		wantRate    float64
	}{
		{4000, 2500, 4000, 2500, 2500 * 8e9 / 4000 * 1.062},
		{5000, 1000, 4000, 1000, 1000 * 8e9 / 4000 * 1.062}, // RTT_base is the minimum
		{3000, 0, 3000, 1000, 1000 * 8e9 / 3000 * 1.062},    // no window: keep the last
		{3000, 50000, 3000, 50000, tenG},                    // pacing at most line rate
	}
	for i, tc := range tests {
		a := ccalgo.AckEvent{RTT: tc.rtt, Fields: ccalgo.AckFields{Window: tc.window}}
		if i%2 == 0 {
			rp.OnAck(int64(i)*1000, &a)
		} else {
			rp.OnNak(int64(i)*1000, &a)
		}
		if rp.BaseRTT() != tc.wantRTT || rp.WindowBytes() != tc.wantWin {
			t.Fatalf("step %d: RTT_base %d window %d, want %d %d", i, rp.BaseRTT(), rp.WindowBytes(), tc.wantRTT, tc.wantWin)
		}
		approx(t, "rate", rp.RateBps(), tc.wantRate, 1e-12)
	}
}

func TestRPSenderMode(t *testing.T) {
	mut := func(p *Params) { p.Mode = ModeSender; p.BaseRTTNs = 4000 }
	p := DefaultParams(testEnv)
	mut(p)
	rp, err := NewRP(p, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	np := newTestNP(t, mut)
	// The NP in sender mode feeds back N and B_R only.
	d := data(0, 1000, 2000, true, false)
	var ack ccalgo.AckFields
	np.OnData(1000, &d, &ack)
	if ack.Window != 0 || ack.ActiveFlows != 1 {
		t.Fatalf("sender-mode NP ack = %+v, want no window and N = 1", ack)
	}
	frac := 1000.0 / 1062
	// Last hop full (B_R = C * 4 us): EWA share C * RTT_base / N.
	a := ccalgo.AckEvent{RTT: 4000, Fields: ccalgo.AckFields{ActiveFlows: 2, RecvBytes: 5000}}
	rp.OnAck(0, &a)
	if want := int64(1.25 * 4000 / 2 * frac); rp.WindowBytes() != want {
		t.Fatalf("window = %d, want %d", rp.WindowBytes(), want)
	}
	// In-network congestion: B_R low, RTT over (1 + delta) RTT_base three times.
	for i := range 3 {
		a = ccalgo.AckEvent{RTT: 6000, Fields: ccalgo.AckFields{ActiveFlows: 2, RecvBytes: 1000}}
		rp.OnAck(int64(i+1)*100, &a)
	}
	if !rp.InPID() {
		t.Fatal("sender mode: no PID after 3 in-network samples")
	}
	// First PID step: E = 6000 - 4400 ns, E_prev the same: U = Kp E.
	u := 1e4 * 1.6e-6
	want := int64(1.25 * 4000 / 2 * frac * (1 - math.Tanh(u)))
	if rp.WindowBytes() != want {
		t.Fatalf("PID window = %d, want %d", rp.WindowBytes(), want)
	}
}

// Per-packet and per-event methods allocate nothing.
func TestNoAllocs(t *testing.T) {
	np := newTestNP(t, nil)
	rp, err := NewRP(nil, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	sp := DefaultParams(testEnv)
	sp.Mode = ModeSender
	srp, err := NewRP(sp, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	now := int64(0)
	d := data(0, 0, 2000, true, false)
	var ack ccalgo.AckFields
	a := ccalgo.AckEvent{RTT: 5000, Fields: ccalgo.AckFields{Window: 3000, ActiveFlows: 2, RecvBytes: 100}}
	tests := []struct {
		name string
		f    func()
	}{
		{"NP.OnData", func() {
			now += 500
			d.QP = int32(now/500) % 4
			d.SendTS = now - 2000 - now%3000
			ack = ccalgo.AckFields{}
			np.OnData(now, &d, &ack)
		}},
		{"RP.OnAck", func() { now += 500; rp.OnAck(now, &a) }},
		{"RP.OnAck sender mode", func() { now += 500; a.RTT = 5000 + now%4000; srp.OnAck(now, &a) }},
		{"RP.OnNak", func() { rp.OnNak(now, &a) }},
		{"RP getters", func() { _ = rp.RateBps() + float64(rp.WindowBytes()) }},
	}
	for _, tc := range tests {
		if n := testing.AllocsPerRun(1000, tc.f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", tc.name, n)
		}
	}
}

func BenchmarkNPOnData(b *testing.B) {
	np := newTestNP(b, nil)
	var ack ccalgo.AckFields
	d := data(0, 0, 2000, true, false)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now := int64(i) * 850
		d.QP = int32(i & 7)
		d.FirstOfMessage = i < 8
		d.SendTS = now - 2000 - int64(i%5)*300
		ack = ccalgo.AckFields{}
		np.OnData(now, &d, &ack)
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	for _, mode := range []string{ModeReceiver, ModeSender} {
		b.Run(mode, func(b *testing.B) {
			p := DefaultParams(testEnv)
			p.Mode = mode
			rp, err := NewRP(p, testEnv)
			if err != nil {
				b.Fatal(err)
			}
			a := ccalgo.AckEvent{Fields: ccalgo.AckFields{Window: 3000, ActiveFlows: 2, RecvBytes: 100}}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				a.RTT = 4000 + int64(i%7)*400
				rp.OnAck(int64(i)*850, &a)
				_ = rp.RateBps()
			}
		})
	}
}
