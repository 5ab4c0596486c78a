package hpcc

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// Test environment: 100 Gb/s NIC (12.5 B/ns), T = 10 us, so B*T = W_init =
// 125000 B, and N = 16 flows, so W_AI = 125000 * 0.05 / 16 = 390.625 B.
const (
	testLine  = 100e9
	testT     = 10000
	testWInit = 125000.0
	testWAI   = 390.625
)

func testEnv() ccalgo.Env {
	return ccalgo.Env{LinkBps: testLine, BaseRTT: testT, MTU: 1000, MaxFlows: 16, ExpectedFlows: 16}
}

func newTestRP(tb testing.TB) *RP {
	tb.Helper()
	rp, err := NewRP(DefaultParams(testEnv()), testEnv())
	if err != nil {
		tb.Fatal(err)
	}
	return rp
}

func hop(ts, tx, q uint32) ccalgo.INTHop {
	return ccalgo.INTHop{LinkBps: testLine, TS: ts, TxBytes: tx, QLen: q}
}

func stack(h ...ccalgo.INTHop) ccalgo.INTStack {
	var s ccalgo.INTStack
	for _, x := range h {
		s.Push(x)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDefaults(t *testing.T) {
	rp := newTestRP(t)
	if rp.p.eta != 0.95 || rp.p.maxStage != 5 || rp.p.t != testT {
		t.Errorf("eta, maxStage, T = %v, %v, %v; want 0.95, 5, %v", rp.p.eta, rp.p.maxStage, rp.p.t, testT)
	}
	if !near(rp.p.wInit, testWInit) || !near(rp.p.wAI, testWAI) {
		t.Errorf("W_init, W_AI = %v, %v; want %v, %v", rp.p.wInit, rp.p.wAI, testWInit, testWAI)
	}
	// The paper's 80 B: 100 Gb/s, N = 100, T = 13 us gives 162500 * 0.05 / 100 = 81.25 B.
	env := ccalgo.Env{LinkBps: 100e9, BaseRTT: 13000, MTU: 1000}
	p := DefaultParams(env)
	r, err := resolve(p, env)
	if err != nil {
		t.Fatal(err)
	}
	if p.ExpectedFlows != 100 || !near(r.wAI, 81.25) {
		t.Errorf("paper setting: N = %d, W_AI = %v; want 100, 81.25", p.ExpectedFlows, r.wAI)
	}
	// ns-3's RATE_AI 50Mb/s at T = 13 us: W_AI = 50e6 / 8 * 13e-6 = 81.25 B;
	// w_ai_bytes, when set, wins.
	p.RateAIMbps = 50
	if r, err := resolve(p, env); err != nil || !near(r.wAI, 81.25) {
		t.Errorf("rate_ai_mbps 50: W_AI = %v (%v), want 81.25", r.wAI, err)
	}
	p.WAIBytes = 100
	if r, err := resolve(p, env); err != nil || r.wAI != 100 {
		t.Errorf("w_ai_bytes 100 with rate_ai_mbps: W_AI = %v (%v), want 100", r.wAI, err)
	}
	if w := rp.WindowBytes(); w != int64(testWInit) {
		t.Errorf("initial window %d, want %v", w, testWInit)
	}
	if got := rp.RateBps(); !near(got, testLine) {
		t.Errorf("initial rate %v, want line rate %v", got, testLine)
	}
}

func TestParamsValidation(t *testing.T) {
	env := testEnv()
	tests := []struct {
		name  string
		edit  func(*Params)
		env   func(*ccalgo.Env)
		param string // "" = valid
	}{
		{name: "defaults"},
		{name: "eta zero", edit: func(p *Params) { p.Eta = 0 }, param: "eta"},
		{name: "eta above one", edit: func(p *Params) { p.Eta = 1.01 }, param: "eta"},
		{name: "eta NaN", edit: func(p *Params) { p.Eta = math.NaN() }, param: "eta"},
		{name: "negative stage", edit: func(p *Params) { p.MaxStage = -1 }, param: "max_stage"},
		{name: "zero stage ok", edit: func(p *Params) { p.MaxStage = 0 }},
		{name: "no T", edit: func(p *Params) { p.TNs = 0 }, param: "t_ns"},
		{name: "negative W_init", edit: func(p *Params) { p.WInitBytes = -1 }, param: "w_init_bytes"},
		{name: "W_init needs line", env: func(e *ccalgo.Env) { e.LinkBps = 0 }, param: "w_init_bytes"},
		{name: "explicit W_init without line", edit: func(p *Params) { p.WInitBytes = 5000 }, env: func(e *ccalgo.Env) { e.LinkBps = 0 }},
		{name: "W_AI Inf", edit: func(p *Params) { p.WAIBytes = math.Inf(1) }, param: "w_ai_bytes"},
		{name: "N zero", edit: func(p *Params) { p.ExpectedFlows = 0 }, param: "expected_flows"},
		{name: "N zero with W_AI", edit: func(p *Params) { p.ExpectedFlows = 0; p.WAIBytes = 80 }},
		{name: "negative min window", edit: func(p *Params) { p.MinWindowBytes = -5 }, param: "min_window_bytes"},
		{name: "rate AI NaN", edit: func(p *Params) { p.RateAIMbps = math.NaN() }, param: "rate_ai_mbps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				tc.env(&e)
			}
			p := DefaultParams(e)
			if tc.edit != nil {
				tc.edit(p)
			}
			_, err := NewRP(p, e)
			if tc.param == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
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

func TestMeasureInflight(t *testing.T) {
	tests := []struct {
		name     string
		last, in ccalgo.INTStack
		u0       float64
		want     float64
	}{
		{
			// txRate = 12500 B / 1000 ns = 12.5 B/ns = B, u' = 1, tau/T = 0.1.
			name: "full rate, no queue",
			last: stack(hop(1000, 0, 0)), in: stack(hop(2000, 12500, 0)),
			u0: 0, want: 0.1,
		},
		{
			// Same deltas across the wrap of both TS (2^24 ns) and txBytes (2^27 B).
			name: "TS and txBytes wrap",
			last: stack(hop(ccalgo.INTTSWrap-500, ccalgo.INTTxBytesWrap-6400, 0)),
			in:   stack(hop(500, 6100, 0)),
			u0:   0, want: 0.1,
		},
		{
			// txRate = 6.25 B/ns -> 0.5; min(qlen) = 40000 B -> 40000/125000 = 0.32;
			// u' = 0.82, tau/T = 0.2: U = 0.8 * 0.5 + 0.2 * 0.82 = 0.564.
			name: "queue uses the smaller of the two qlens",
			last: stack(hop(0, 0, 40000)), in: stack(hop(2000, 12500, 80000)),
			u0: 0.5, want: 0.564,
		},
		{
			// tau = 20000 ns > T: tau = T, U = u' = 0.5 (txRate 6.25 B/ns).
			name: "tau capped at T",
			last: stack(hop(0, 0, 0)), in: stack(hop(20000, 125000, 0)),
			u0: 3, want: 0.5,
		},
		{
			// hop 0: u' = 0.5 over 1000 ns; hop 1 (50 Gb/s = 6.25 B/ns):
			// txRate 7.5 B/ns -> 1.2 over 2000 ns, so tau/T = 0.2:
			// U = 0.8 * 1 + 0.2 * 1.2 = 1.04.
			name: "max over hops takes that hop's tau",
			last: stack(hop(0, 0, 0), ccalgo.INTHop{LinkBps: 50e9, TS: 100, TxBytes: 0}),
			in:   stack(hop(1000, 6250, 0), ccalgo.INTHop{LinkBps: 50e9, TS: 2100, TxBytes: 15000}),
			u0:   1, want: 1.04,
		},
		{
			// dTS = 0: txRate is taken as 0 and tau = 0, U does not move.
			name: "same timestamp",
			last: stack(hop(500, 0, 8000)), in: stack(hop(500, 1000, 8000)),
			u0: 0.7, want: 0.7,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := newTestRP(t)
			rp.last, rp.haveLast, rp.u = tc.last, true, tc.u0
			got := rp.measureInflight(&tc.in)
			if !near(got, tc.want) || !near(rp.U(), tc.want) {
				t.Errorf("U = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestComputeWind(t *testing.T) {
	tests := []struct {
		name          string
		wc            float64
		stage         int
		u             float64
		update        bool
		wantW, wantWc float64
		wantStage     int
	}{
		// Line 13: W = W^c / (U / eta) + W_AI = 100000 / 2 + 390.625.
		{"MD commit", 100000, 3, 1.9, true, 50390.625, 50390.625, 0},
		{"MD no commit", 100000, 3, 1.9, false, 50390.625, 100000, 3},
		// Line 17: W = W^c + W_AI.
		{"AI commit", 50000, 2, 0.5, true, 50390.625, 50390.625, 3},
		{"AI no commit", 50000, 2, 0.5, false, 50390.625, 50000, 2},
		// U = eta is already the MD/MI branch: W = W^c + W_AI, stage reset.
		{"U equals eta", 50000, 2, 0.95, true, 50390.625, 50390.625, 0},
		// incStage = maxStage: MI with U < eta: 50000 * 1.9 + 390.625.
		{"MI after maxStage", 50000, 5, 0.5, true, 95390.625, 95390.625, 0},
		{"MI clamped at W_init", 100000, 5, 0.5, true, testWInit, testWInit, 0},
		{"MI with U = 0", 100000, 5, 0, true, testWInit, testWInit, 0},
		{"MD clamped at one MTU", 100000, 0, 1000, true, 1000, 1000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := newTestRP(t)
			rp.wc, rp.incStage = tc.wc, tc.stage
			w := rp.computeWind(tc.u, tc.update)
			if !near(w, tc.wantW) || !near(rp.wc, tc.wantWc) || rp.incStage != tc.wantStage {
				t.Errorf("W, W^c, incStage = %v, %v, %d; want %v, %v, %d",
					w, rp.wc, rp.incStage, tc.wantW, tc.wantWc, tc.wantStage)
			}
		})
	}
}

// TestLastUpdateSeq drives OnAck with a light load (u' = 0.4 on every ACK, so
// ComputeWind stays in its AI branch) and checks that W^c and incStage move only
// on the ACK that passes lastUpdateSeq (Algorithm 1 lines 22-26).
func TestLastUpdateSeq(t *testing.T) {
	rp := newTestRP(t)
	ts, tx := uint32(0), uint32(0)
	ack := func(acked, sndNxt uint64) {
		ts += 1000
		tx += 5000 // 5 B/ns = 0.4 B
		a := ccalgo.AckEvent{AckedSeq: acked, SndNxt: sndNxt}
		a.Fields.INT = stack(hop(ts, tx, 0))
		rp.OnAck(int64(ts), &a)
	}
	steps := []struct {
		acked, sndNxt uint64
		wantStage     int
		wantWc        float64
		wantW         float64
		wantLastSeq   uint64
	}{
		// First ACK: only records L.
		{1000, 20000, 0, testWInit, testWInit, 0},
		// Passes lastUpdateSeq = 0: commit, W^c = W_init is clamped (W_init + W_AI > W_init).
		{2000, 21000, 1, testWInit, testWInit, 21000},
		{21000, 30000, 1, testWInit, testWInit, 21000}, // == lastUpdateSeq: no commit
		{22000, 31000, 2, testWInit, testWInit, 31000}, // passes: commit
	}
	for i, s := range steps {
		ack(s.acked, s.sndNxt)
		if rp.IncStage() != s.wantStage || !near(rp.ReferenceWindow(), s.wantWc) ||
			!near(rp.w, s.wantW) || rp.lastUpdateSeq != s.wantLastSeq {
			t.Fatalf("step %d: incStage %d, W^c %v, W %v, lastUpdateSeq %d; want %d, %v, %v, %d",
				i, rp.IncStage(), rp.ReferenceWindow(), rp.w, rp.lastUpdateSeq,
				s.wantStage, s.wantWc, s.wantW, s.wantLastSeq)
		}
	}
	// Now with W^c below W_init, the AI step is visible: only committing ACKs
	// move W^c, non-committing ones recompute W from the same W^c.
	rp.wc = 60000
	ack(23000, 40000) // 23000 <= 31000: W = 60000 + W_AI, W^c unchanged
	if !near(rp.w, 60000+testWAI) || rp.wc != 60000 || rp.IncStage() != 2 {
		t.Fatalf("no-commit ACK: W %v W^c %v stage %d", rp.w, rp.wc, rp.IncStage())
	}
	ack(31001, 41000) // commits
	if !near(rp.wc, 60000+testWAI) || rp.IncStage() != 3 || rp.lastUpdateSeq != 41000 {
		t.Fatalf("commit ACK: W^c %v stage %d lastUpdateSeq %d", rp.wc, rp.IncStage(), rp.lastUpdateSeq)
	}
	ack(40000, 42000) // no commit: W^c + W_AI again, from the committed W^c
	if !near(rp.w, 60000+2*testWAI) || !near(rp.wc, 60000+testWAI) {
		t.Fatalf("after commit: W %v W^c %v", rp.w, rp.wc)
	}
	if got, want := rp.RateBps(), rp.w*8/testT*1e9; !near(got, want) {
		t.Fatalf("rate %v, want W/T = %v", got, want)
	}
}

// TestIncastReaction: one ACK showing a link at full rate with a queue of one
// BDP (u' = 2) over a full T cuts W to W^c / (2 / 0.95) + W_AI at once.
func TestIncastReaction(t *testing.T) {
	rp := newTestRP(t)
	first := ccalgo.AckEvent{AckedSeq: 1000, SndNxt: 50000}
	first.Fields.INT = stack(hop(0, 0, 125000))
	rp.OnAck(0, &first)
	second := ccalgo.AckEvent{AckedSeq: 2000, SndNxt: 51000}
	second.Fields.INT = stack(hop(testT, testWInit, 125000))
	rp.OnAck(testT, &second)
	want := testWInit/(2/0.95) + testWAI
	if !near(rp.U(), 2) || !near(rp.w, want) || rp.WindowBytes() != int64(want) {
		t.Fatalf("U %v W %v; want 2, %v", rp.U(), rp.w, want)
	}
}

func TestAckWithoutINTAndPathChange(t *testing.T) {
	rp := newTestRP(t)
	a := ccalgo.AckEvent{AckedSeq: 1000, SndNxt: 5000}
	rp.OnAck(0, &a) // no INT: ignored
	if rp.haveLast || rp.w != testWInit {
		t.Fatal("ACK without INT changed state")
	}
	a.Fields.INT = stack(hop(0, 0, 0))
	rp.OnAck(0, &a)
	a.Fields.INT = stack(hop(1000, 12500, 0), hop(1000, 0, 0)) // path grew by a hop
	a.AckedSeq = 2000
	rp.OnAck(1000, &a)
	if rp.U() != 0 || rp.last.NHops != 2 || rp.lastUpdateSeq != 0 {
		t.Fatalf("path change measured: U %v NHops %d", rp.U(), rp.last.NHops)
	}
	// A NAK with INT is measured like an ACK.
	a.Fields.INT = stack(hop(2000, 25000, 0), hop(2000, 0, 0))
	a.AckedSeq = 3000
	rp.OnNak(2000, &a)
	if !near(rp.U(), 0.1) {
		t.Fatalf("NAK: U %v, want 0.1", rp.U())
	}
}

func TestHop(t *testing.T) {
	tests := []struct {
		name string
		now  int64
		port ccalgo.PortState
		want ccalgo.INTHop
	}{
		{"plain", 1234, ccalgo.PortState{QueueBytes: 800, TxBytes: 1280, LinkBps: 100e9},
			ccalgo.INTHop{LinkBps: 100e9, TS: 1234, TxBytes: 1280, QLen: 800}},
		{"units truncate", 5, ccalgo.PortState{QueueBytes: 879, TxBytes: 1300, LinkBps: 25e9},
			ccalgo.INTHop{LinkBps: 25e9, TS: 5, TxBytes: 1280, QLen: 800}},
		{"wraps", ccalgo.INTTSWrap + 7, ccalgo.PortState{TxBytes: ccalgo.INTTxBytesWrap + 256, LinkBps: 1e9},
			ccalgo.INTHop{LinkBps: 1e9, TS: 7, TxBytes: 256}},
		{"qlen saturates", 0, ccalgo.PortState{QueueBytes: 1 << 30, LinkBps: 1e9},
			ccalgo.INTHop{LinkBps: 1e9, QLen: ccalgo.INTQLenMax}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hop(tc.now, &tc.port); got != tc.want {
				t.Errorf("Hop = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCPAndNP(t *testing.T) {
	cp := NewCP()
	var pkt ccalgo.DataPacket
	var port ccalgo.PortState
	if v := cp.OnEnqueue(0, &pkt, &port, nil); v.StampINT {
		t.Error("stamps at enqueue")
	}
	if v := cp.OnDequeue(0, &pkt, &port, nil); !v.StampINT || v.Mark != ccalgo.MarkNone {
		t.Errorf("dequeue verdict %+v", v)
	}
	np := NewNP()
	d := ccalgo.DataArrival{SendTS: 777, INT: stack(hop(1, 2, 3), hop(4, 5, 6))}
	var ack ccalgo.AckFields
	if np.OnData(900, &d, &ack) {
		t.Error("HPCC NP asked for a CNP")
	}
	if ack.EchoTS != 777 || ack.INT != d.INT {
		t.Errorf("ack %+v", ack)
	}
}

func TestRegistered(t *testing.T) {
	s, err := ccalgo.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleCP|ccalgo.RoleNP|ccalgo.RoleRP {
		t.Errorf("roles %v", s.Roles())
	}
	env := testEnv()
	if _, ok := s.DefaultParams(env).(*Params); !ok {
		t.Error("DefaultParams is not *Params")
	}
	if _, err := s.NewRP(nil, env); err != nil {
		t.Error(err)
	}
	if _, err := s.NewRP(struct{}{}, env); err == nil {
		t.Error("wrong params type accepted")
	}
}

// ackSource produces a steady stream of ACKs with advancing INT records.
type ackSource struct {
	a  ccalgo.AckEvent
	ts uint32
}

func (s *ackSource) next() *ccalgo.AckEvent {
	s.ts += 85
	h := &s.a.Fields.INT.Hops[0]
	h.TS = s.ts % ccalgo.INTTSWrap
	h.TxBytes = (h.TxBytes + 1062) % ccalgo.INTTxBytesWrap
	h.QLen = (h.QLen + 1000) % 30000
	s.a.AckedSeq += 1000
	s.a.SndNxt += 1000
	return &s.a
}

func newAckSource() *ackSource {
	s := &ackSource{}
	s.a.Fields.INT = stack(hop(0, 0, 0))
	return s
}

func TestZeroAllocs(t *testing.T) {
	rp := newTestRP(t)
	src := newAckSource()
	cp := NewCP()
	np := NewNP()
	var pkt ccalgo.DataPacket
	var port ccalgo.PortState
	d := ccalgo.DataArrival{INT: stack(hop(1, 2, 3))}
	var ack ccalgo.AckFields
	hooks := []struct {
		name string
		f    func()
	}{
		{"RP.OnAck", func() { rp.OnAck(0, src.next()) }},
		{"RP.OnNak", func() { rp.OnNak(0, src.next()) }},
		{"RP.OnSend", func() { rp.OnSend(0, 0, 1000) }},
		{"RP.RateBps+WindowBytes", func() { _ = rp.RateBps() + float64(rp.WindowBytes()) }},
		{"CP.OnEnqueue", func() { cp.OnEnqueue(0, &pkt, &port, nil) }},
		{"CP.OnDequeue", func() { cp.OnDequeue(0, &pkt, &port, nil) }},
		{"Hop", func() { _ = Hop(12345, &port) }},
		{"NP.OnData", func() { np.OnData(0, &d, &ack) }},
	}
	for _, h := range hooks {
		if n := testing.AllocsPerRun(1000, h.f); n != 0 {
			t.Errorf("%s: %v allocs per call", h.name, n)
		}
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	rp := newTestRP(b)
	src := newAckSource()
	b.ReportAllocs()
	for b.Loop() {
		rp.OnAck(0, src.next())
	}
}

func BenchmarkRPOnNak(b *testing.B) {
	rp := newTestRP(b)
	src := newAckSource()
	b.ReportAllocs()
	for b.Loop() {
		rp.OnNak(0, src.next())
	}
}

func BenchmarkRPRateWindow(b *testing.B) {
	rp := newTestRP(b)
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += rp.RateBps() + float64(rp.WindowBytes())
	}
	_ = sink
}

func BenchmarkCPOnDequeue(b *testing.B) {
	cp := NewCP()
	var pkt ccalgo.DataPacket
	port := ccalgo.PortState{LinkBps: 100e9}
	b.ReportAllocs()
	for b.Loop() {
		v := cp.OnDequeue(0, &pkt, &port, nil)
		if v.StampINT {
			port.TxBytes += 1062
		}
	}
}

func BenchmarkCPOnEnqueue(b *testing.B) {
	cp := NewCP()
	var pkt ccalgo.DataPacket
	var port ccalgo.PortState
	b.ReportAllocs()
	for b.Loop() {
		cp.OnEnqueue(0, &pkt, &port, nil)
	}
}

func BenchmarkHop(b *testing.B) {
	port := ccalgo.PortState{LinkBps: 100e9, QueueBytes: 5000}
	b.ReportAllocs()
	var now int64
	for b.Loop() {
		now += 85
		port.TxBytes += 1062
		_ = Hop(now, &port)
	}
}

func BenchmarkNPOnData(b *testing.B) {
	np := NewNP()
	d := ccalgo.DataArrival{SendTS: 5, INT: stack(hop(1, 2, 3), hop(4, 5, 6))}
	var ack ccalgo.AckFields
	b.ReportAllocs()
	for b.Loop() {
		ack = ccalgo.AckFields{}
		np.OnData(0, &d, &ack)
	}
}

// FuzzOnAck feeds arbitrary INT records (any wrap, any queue, 1 or 2 hops) and
// sequence numbers: W must stay finite within [W_min, W_init] and U finite and
// non-negative.
func FuzzOnAck(f *testing.F) {
	f.Add(uint32(1000), uint32(12500), uint32(0), uint32(2000), uint32(25000), uint32(80000), uint64(1000), uint64(5000), false)
	f.Add(uint32(ccalgo.INTTSWrap-1), uint32(ccalgo.INTTxBytesWrap-1), uint32(ccalgo.INTQLenMax), uint32(0), uint32(0), uint32(0), uint64(0), uint64(0), true)
	f.Fuzz(func(t *testing.T, ts0, tx0, q0, ts1, tx1, q1 uint32, acked, sndNxt uint64, twoHops bool) {
		rp := newTestRP(t)
		mk := func(ts, tx, q uint32) ccalgo.INTStack {
			h := hop(ts%ccalgo.INTTSWrap, tx%ccalgo.INTTxBytesWrap, q%(ccalgo.INTQLenMax+1))
			if twoHops {
				return stack(h, ccalgo.INTHop{LinkBps: 25e9, TS: h.TS, TxBytes: h.TxBytes / 2, QLen: h.QLen / 3})
			}
			return stack(h)
		}
		for i, s := range []ccalgo.INTStack{mk(ts0, tx0, q0), mk(ts1, tx1, q1), mk(ts0, tx1, q0), mk(ts1, tx0, q1)} {
			a := ccalgo.AckEvent{AckedSeq: acked + uint64(i)*1000, SndNxt: sndNxt + uint64(i)*1000, Fields: ccalgo.AckFields{INT: s}}
			rp.OnAck(int64(i), &a)
			w, u := rp.w, rp.U()
			if math.IsNaN(w) || w < rp.p.wMin || w > rp.p.wInit || math.IsNaN(u) || math.IsInf(u, 0) || u < 0 {
				t.Fatalf("ACK %d: W %v U %v", i, w, u)
			}
			if r := rp.RateBps(); !(r > 0 && r <= testLine*(1+1e-12)) {
				t.Fatalf("ACK %d: rate %v", i, r)
			}
		}
	})
}
