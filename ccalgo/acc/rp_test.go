package acc

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// testEnv: 100 Gb/s NIC, T = 10 us, MTU 1000 B (+62 B header = 8496 wire bits).
var testEnv = ccalgo.Env{LinkBps: 100e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 4}

func newTestRP(tb testing.TB, edit func(*Params)) *RP {
	tb.Helper()
	p := DefaultParams(testEnv)
	if edit != nil {
		edit(p)
	}
	r, err := NewRP(p, testEnv)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// sendPkts sends n full packets from seq at now.
func sendPkts(r *RP, now int64, seq uint64, n int) uint64 {
	for range n {
		r.OnSend(now, seq, 1000)
		seq += 1000
	}
	return seq
}

// ackPkts delivers n per-packet ACKs, each acknowledging 1000 more bytes from
// una, 100 ns apart from now, all with mark m.
func ackPkts(r *RP, now int64, una uint64, n int, m ccalgo.Mark) uint64 {
	for i := range n {
		una += 1000
		r.OnAck(now+int64(i)*100, &ccalgo.AckEvent{AckedSeq: una, NewlyAcked: 1000, Fields: ccalgo.AckFields{Mark: m}})
	}
	return una
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		acks, ce, ue int
		want         Class
	}{
		{0, 0, 0, ClassNoAck},
		{10, 0, 0, ClassUncongested},
		{10, 0, 1, ClassUndetermined},
		{10, 10, 0, ClassCongested},
		{10, 9, 0, ClassMixedCE},      // 90 % is not above 90 %: held
		{10, 9, 1, ClassUndetermined}, // CE not steady: UE makes it a victim
		{20, 19, 0, ClassCongested},
		{20, 19, 1, ClassCongested}, // steady CE outranks UE
		{1, 1, 0, ClassCongested},
		{4, 1, 3, ClassUndetermined},
		{4, 1, 0, ClassMixedCE},
	} {
		if got := Classify(c.acks, c.ce, c.ue, DefaultCEFraction); got != c.want {
			t.Errorf("Classify(%d,%d,%d) = %v, want %v", c.acks, c.ce, c.ue, got, c.want)
		}
	}
}

// drv drives an RP through periods in virtual time.
type drv struct {
	r        *RP
	now      int64
	seq, una uint64
}

func (d *drv) send(n int)               { d.seq = sendPkts(d.r, d.now, d.seq, n) }
func (d *drv) ack(n int, m ccalgo.Mark) { d.una = ackPkts(d.r, d.now, d.una, n, m) }

// end fires the period timer at its due time.
func (d *drv) end(tb testing.TB) {
	tb.Helper()
	if d.r.NextTimer() == ccalgo.Never {
		tb.Fatal("no period timer")
	}
	d.now = d.r.NextTimer()
	d.r.OnTimer(d.now)
}

// period sends n packets, receives n ACKs marked m and ends the period.
func (d *drv) period(tb testing.TB, n int, m ccalgo.Mark) {
	tb.Helper()
	d.send(n)
	d.ack(n, m)
	d.end(tb)
}

// TestHaltAndExtension walks Algorithm 1 through Figure 7's timeline with
// hand-computed values.
func TestHaltAndExtension(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	// T_{i-1}: 10 packets sent before the first ACK.
	d.send(10)
	if r.NextTimer() != ccalgo.Never {
		t.Fatal("timer armed before the first ACK")
	}
	// T_i = [10, 20us): the first ACK starts the periods; 4 CE ACKs arrive and
	// 10 more packets leave at the old rate.
	d.now = 10_000
	d.ack(4, ccalgo.MarkCE)
	if r.NextTimer() != 20_000 {
		t.Fatalf("NextTimer = %d, want 20000", r.NextTimer())
	}
	d.send(10)
	d.end(t)
	// R = 4 * 8496 bit / 10 us = 3.3984 Gb/s; R_s = R.
	if want := 3.3984e9; !near(r.RateBps(), want) {
		t.Fatalf("R_s = %v, want %v", r.RateBps(), want)
	}
	// t_Halt = (dS - dA) / R = 6 packets * 8496 bit / 3.3984 Gb/s = 15 us.
	if !r.Halted() || r.HaltNs() != 15_000 || r.HaltUntil() != 35_000 {
		t.Fatalf("halt: %v t_Halt %d until %d, want true 15000 35000", r.Halted(), r.HaltNs(), r.HaltUntil())
	}
	// T_{i+1} = [20, 30us): halted, CE ACKs of old packets (not eligible).
	d.ack(4, ccalgo.MarkCE)
	d.end(t)
	// r = dS - dS R / R_s = 10000 (1 - 3.3984/100) = 9660.16 B
	// t_extend = 9660.16 B * 1.062 * 8 / 3.3984 Gb/s = 24150.4 ns.
	if r.HaltNs() != 15_000+24_150 || r.HaltUntil() != 35_000+24_150 {
		t.Fatalf("extension: t_Halt %d until %d, want %d %d", r.HaltNs(), r.HaltUntil(), 39_150, 59_150)
	}
	if st := r.Stats(); st.Halts != 1 || st.Extensions != 1 || st.Throttles != 1 {
		t.Fatalf("stats %+v", st)
	}
	// T_{i+2}: still congested with ineligible ACKs: no new throttle, no second extension.
	d.ack(4, ccalgo.MarkCE)
	d.end(t)
	if st := r.Stats(); st.Throttles != 1 || st.Extensions != 1 || r.HaltUntil() != 59_150 || !near(r.RateBps(), 3.3984e9) {
		t.Fatalf("T_{i+2}: stats %+v until %d rate %v", st, r.HaltUntil(), r.RateBps())
	}
	// Periods end at 50 and 60 us; the halt ends at 59.15 us.
	d.ack(4, ccalgo.MarkCE)
	d.end(t)
	if !r.Halted() {
		t.Fatal("halt ended early")
	}
	d.ack(4, ccalgo.MarkCE) // una = 20000 = snd_nxt_start
	d.end(t)
	if r.Halted() || d.now != 60_000 {
		t.Fatalf("halt not over at %d", d.now)
	}
	// After the halt, 2 eligible CE ACKs in a period: throttle again with R from
	// the eligible ACKs only; dS of the last period was 0 and dA > 0: no halt.
	d.send(3)
	d.ack(2, ccalgo.MarkCE)
	d.end(t)
	if want := 2 * 8496 / 10e-6; !near(r.RateBps(), want) || r.Stats().Throttles != 2 || r.Stats().Halts != 1 {
		t.Fatalf("after halt: rate %v (want %v) stats %+v", r.RateBps(), want, r.Stats())
	}
}

// TestEligibility: ACKs with snd_una <= snd_nxt_start do not count in recvNum.
func TestEligibility(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	d.send(10)
	d.now = 10_000
	d.ack(5, ccalgo.MarkCE)
	d.send(10)
	d.end(t) // halt; snd_nxt_start = 20000
	if !r.Halted() || r.sndNxtStart != 20_000 {
		t.Fatalf("halted %v start %d", r.Halted(), r.sndNxtStart)
	}
	d.ack(15, ccalgo.MarkCE) // una 20000: not > snd_nxt_start
	if r.eligible != 0 {
		t.Fatalf("eligible = %d with una %d <= 20000", r.eligible, d.una)
	}
	d.send(2)
	d.ack(2, ccalgo.MarkCE)
	if r.eligible != 2 || r.acks != 17 {
		t.Fatalf("eligible %d acks %d, want 2 17", r.eligible, r.acks)
	}
}

// TestInterArrival: a single eligible ACK after a gap longer than T gives
// R = MTU / gap (Section 4.3).
func TestInterArrival(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	d.send(30)
	d.now = 1_000
	d.ack(1, ccalgo.MarkNone)
	d.end(t) // 11 us
	d.end(t) // 21 us, no ACK
	d.now = 26_000
	d.ack(1, ccalgo.MarkCE)
	d.end(t) // 31 us
	// gap = 25 us > T: R = 8496 bit / 25 us.
	if want := 8496 / 25e-6; r.LastClass() != ClassCongested || !near(r.RateBps(), want) {
		t.Fatalf("class %v R = %v, want %v", r.LastClass(), r.RateBps(), want)
	}
}

// TestDSAccumulates: dS sums over periods without ACKs (Section 4.2).
func TestDSAccumulates(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	d.now = 1_000
	d.send(1)
	d.ack(1, ccalgo.MarkNone)
	d.send(10)
	d.end(t) // dS = 10 packets
	d.send(10)
	d.end(t) // no ACK: dS = 20 packets
	d.send(10)
	d.ack(5, ccalgo.MarkCE) // at 21.0-21.4 us
	d.end(t)
	// R = 5 packets over the 20.4 us since the ACK at 1 us; t_Halt = 15
	// packets / R = 3 x 20.4 us.
	if r.HaltNs() != 61_200 || r.HaltUntil() != d.now+61_200 {
		t.Fatalf("t_Halt %d until %d, want 61200 %d", r.HaltNs(), r.HaltUntil(), d.now+61_200)
	}
}

func TestNoHaltWhenAllAcked(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	d.send(4)
	d.now = 10_000
	d.ack(4, ccalgo.MarkCE)
	d.send(4)
	d.end(t)
	// dS = dA: throttle to R = 4 * 8496 / 10 us but no halt (line 28).
	if r.Halted() || r.HaltUntil() != 0 || !near(r.RateBps(), 3.3984e9) {
		t.Fatalf("halted %v until %d rate %v", r.Halted(), r.HaltUntil(), r.RateBps())
	}
}

func TestIncreaseStages(t *testing.T) {
	r := newTestRP(t, func(p *Params) { p.InitRateBps = 50e9 })
	d := &drv{r: r}
	// R_s += (100 - R_s)/100 * RI; RI = 0.4 G twice, then 4 G.
	want := []float64{50.2e9, 50.3992e9, 50.3992e9 + (100e9-50.3992e9)/100e9*4e9}
	want = append(want, want[2]+(100e9-want[2])/100e9*4e9)
	for i, w := range want {
		d.period(t, 2, ccalgo.MarkNone)
		if !near(r.RateBps(), w) {
			t.Fatalf("period %d: R_s = %v, want %v", i, r.RateBps(), w)
		}
	}
	// A congested period resets N_u: the next increase uses RI_Low again.
	d.period(t, 2, ccalgo.MarkCE)
	rs := r.RateBps()
	d.period(t, 2, ccalgo.MarkNone)
	if w := rs + (100e9-rs)/100e9*0.4e9; !near(r.RateBps(), w) {
		t.Fatalf("after congestion: R_s = %v, want %v (RI_Low)", r.RateBps(), w)
	}
	// The rate never exceeds the line rate.
	r2 := newTestRP(t, nil)
	(&drv{r: r2}).period(t, 1, ccalgo.MarkNone)
	if r2.RateBps() != 100e9 {
		t.Fatalf("line-rate flow: R_s = %v", r2.RateBps())
	}
}

func TestVictim(t *testing.T) {
	for _, c := range []struct {
		name    string
		pThresh int
		marks   []ccalgo.Mark // one period each
		want    []float64
	}{
		{"pthresh1", 1,
			[]ccalgo.Mark{ccalgo.MarkUE, ccalgo.MarkUE, ccalgo.MarkUE, ccalgo.MarkNone, ccalgo.MarkUE, ccalgo.MarkUE},
			[]float64{40e9, 20e9, 10e9, 10e9 + 0.9*0.4e9, 10.36e9, 5.18e9}},
		{"pthresh0", 0,
			[]ccalgo.Mark{ccalgo.MarkUE, ccalgo.MarkUE},
			[]float64{20e9, 10e9}},
		{"pthresh2", 2,
			[]ccalgo.Mark{ccalgo.MarkUE, ccalgo.MarkUE, ccalgo.MarkUE},
			[]float64{40e9, 40e9, 20e9}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRP(t, func(p *Params) { p.InitRateBps = 40e9; p.PThresh = c.pThresh })
			d := &drv{r: r}
			for i, m := range c.marks {
				d.period(t, 3, m)
				if !near(r.RateBps(), c.want[i]) {
					t.Fatalf("period %d (%v): R_s = %v, want %v", i, m, r.RateBps(), c.want[i])
				}
			}
		})
	}
	// Halving stops at the minimum rate.
	r := newTestRP(t, func(p *Params) { p.InitRateBps = 0.15e9; p.PThresh = 0 })
	(&drv{r: r}).period(t, 1, ccalgo.MarkUE)
	if r.RateBps() != 0.1e9 {
		t.Fatalf("R_s = %v, want the 0.1 Gb/s floor", r.RateBps())
	}
}

// TestMixedPeriods is Section 4.1's rule for periods whose CE fraction is not
// above 90 %: only a period with neither CE nor UE is uncongested, so CE alone
// holds the rate and restarts the increase at RI_Low, and UE makes the flow a
// victim (Section 4.4) that halves once N_v > P_thresh. Each case runs two
// uncongested periods (N_u = 2, the next increase would use RI_High), then the
// marked periods, then one uncongested period.
func TestMixedPeriods(t *testing.T) {
	const init = 50e9
	inc := func(rs, ri float64) float64 { return rs + (100e9-rs)/100e9*ri }
	// Two uncongested periods from 50 Gb/s, with RI_Low = 0.4 Gb/s.
	base := inc(inc(init, 0.4e9), 0.4e9)
	for _, c := range []struct {
		name    string
		periods [][3]int // per period: CE, UE and unmarked ACKs
		class   Class    // of the last marked period
		rate    float64  // R_s after the marked periods
		after   float64  // R_s after the next uncongested period
		halved  uint64
	}{
		{"90% CE, rest unmarked: held", [][3]int{{9, 0, 1}}, ClassMixedCE,
			base, inc(base, 0.4e9), 0},
		{"10% CE: held", [][3]int{{1, 0, 9}}, ClassMixedCE,
			base, inc(base, 0.4e9), 0},
		{"CE and UE: victim, first period kept", [][3]int{{5, 5, 0}}, ClassUndetermined,
			base, inc(base, 0.4e9), 0},
		{"CE and UE twice: victim halves", [][3]int{{5, 5, 0}, {1, 1, 8}}, ClassUndetermined,
			base / 2, inc(base/2, 0.4e9), 1},
		{"held then UE: N_v starts at the UE period", [][3]int{{9, 0, 1}, {0, 10, 0}}, ClassUndetermined,
			base, inc(base, 0.4e9), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRP(t, func(p *Params) { p.InitRateBps = init })
			d := &drv{r: r}
			d.period(t, 10, ccalgo.MarkNone)
			d.period(t, 10, ccalgo.MarkNone)
			if !near(r.RateBps(), base) {
				t.Fatalf("after two uncongested periods R_s = %v, want %v", r.RateBps(), base)
			}
			for _, m := range c.periods {
				d.send(10)
				d.ack(m[0], ccalgo.MarkCE)
				d.ack(m[1], ccalgo.MarkUE)
				d.ack(m[2], ccalgo.MarkNone)
				d.end(t)
			}
			if r.LastClass() != c.class || !near(r.RateBps(), c.rate) || r.Halted() || r.Stats().Throttles != 0 {
				t.Fatalf("class %v rate %v halted %v throttles %d, want %v %v false 0",
					r.LastClass(), r.RateBps(), r.Halted(), r.Stats().Throttles, c.class, c.rate)
			}
			if r.Stats().VictimHalvings != c.halved {
				t.Fatalf("%d victim halvings, want %d", r.Stats().VictimHalvings, c.halved)
			}
			d.period(t, 10, ccalgo.MarkNone)
			if !near(r.RateBps(), c.after) {
				t.Fatalf("next uncongested period: R_s = %v, want %v (RI_Low again)", r.RateBps(), c.after)
			}
		})
	}
}

// TestAckRateMeasured: R (Algorithm 1 line 3) is the bytes of the period's
// eligible ACKs over the time since the eligible ACK before them, not whole
// ACKs over T. The flow's ACKs arrive every gap, with T = 10 us; the first
// period is unmarked, the second CE-marked throttles to R. recvNum x MTU / T
// gives 3 or 4 ACKs per period where 10 us / gap is 3.33 (2.55 or 3.40 Gb/s
// against 2.83).
func TestAckRateMeasured(t *testing.T) {
	for _, c := range []struct {
		name string
		gap  int64 // between ACKs, ns
		want float64
	}{
		{"3.33 ACKs per T", 3_000, 8496 / 3e-6},
		{"1.43 ACKs per T", 7_000, 8496 / 7e-6},
		{"4 ACKs per T", 2_500, 8496 / 2.5e-6},
		{"23.3 ACKs per T", 430, 8496 / 430e-9},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRP(t, func(p *Params) { p.InitRateBps = 10e9 })
			sendPkts(r, 0, 0, 200)
			var una uint64
			at := int64(1_000)
			for {
				for at < r.NextTimer() || r.NextTimer() == ccalgo.Never {
					m := ccalgo.MarkNone
					if r.Stats().Periods >= 1 {
						m = ccalgo.MarkCE
					}
					una += 1000
					r.OnAck(at, &ccalgo.AckEvent{AckedSeq: una, NewlyAcked: 1000, Fields: ccalgo.AckFields{Mark: m}})
					at += c.gap
				}
				r.OnTimer(r.NextTimer())
				if r.Stats().Throttles > 0 {
					break
				}
				if r.Stats().Periods > 2 {
					t.Fatalf("no throttle after %d periods: classes %v", r.Stats().Periods, r.LastClass())
				}
			}
			if got := r.RateBps(); math.Abs(got-c.want) > 1e-6*c.want {
				t.Fatalf("R = %.6g b/s, want %.6g (MTU + header over the gap)", got, c.want)
			}
		})
	}
}

func TestIdleTimerStops(t *testing.T) {
	r := newTestRP(t, nil)
	d := &drv{r: r}
	d.send(2)
	d.now = 5_000
	d.ack(2, ccalgo.MarkNone)
	d.end(t)
	if d.now != 15_000 || r.NextTimer() != 25_000 {
		t.Fatalf("now %d NextTimer %d", d.now, r.NextTimer())
	}
	r.OnTimer(25_000) // nothing sent, acked or outstanding
	if r.NextTimer() != ccalgo.Never {
		t.Fatalf("idle: NextTimer = %d, want Never", r.NextTimer())
	}
	r.OnSend(55_000, 2000, 1000)
	if r.NextTimer() != ccalgo.Never {
		t.Fatal("a send restarted the timer")
	}
	r.OnAck(60_000, &ccalgo.AckEvent{AckedSeq: 3000, NewlyAcked: 1000})
	if r.NextTimer() != 70_000 || r.dSPrev != 1000 {
		t.Fatalf("restart: NextTimer = %d dS %d, want 70000 1000", r.NextTimer(), r.dSPrev)
	}
	// A late timer call does not schedule in the past.
	r.OnSend(61_000, 3000, 1000)
	r.OnTimer(95_000)
	if r.NextTimer() != 105_000 {
		t.Fatalf("late: NextTimer = %d, want 105000", r.NextTimer())
	}
}

func TestNakCountsAsAck(t *testing.T) {
	r := newTestRP(t, nil)
	sendPkts(r, 0, 0, 5)
	r.OnNak(1_000, &ccalgo.AckEvent{AckedSeq: 2000, NewlyAcked: 2000, Fields: ccalgo.AckFields{Mark: ccalgo.MarkUE}})
	if r.acks != 1 || r.ue != 1 || r.sndUna != 2000 {
		t.Fatalf("acks %d ue %d una %d", r.acks, r.ue, r.sndUna)
	}
}

func TestRPAllocs(t *testing.T) {
	r := newTestRP(t, nil)
	ack := &ccalgo.AckEvent{NewlyAcked: 1000, Fields: ccalgo.AckFields{Mark: ccalgo.MarkCE}}
	var now int64
	var seq uint64
	n := testing.AllocsPerRun(1000, func() {
		now += 1000
		r.OnSend(now, seq, 1000)
		seq += 1000
		ack.AckedSeq = seq - 500
		r.OnAck(now, ack)
		r.OnNak(now, ack)
		if now >= r.NextTimer() {
			r.OnTimer(now)
		}
		_ = r.RateBps() + float64(r.HaltUntil()+r.WindowBytes())
	})
	if n != 0 {
		t.Fatalf("RP hooks allocate %v per run", n)
	}
}

func BenchmarkRPOnSend(b *testing.B) {
	r := newTestRP(b, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.OnSend(int64(i), uint64(i)*1000, 1000)
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	r := newTestRP(b, nil)
	a := &ccalgo.AckEvent{NewlyAcked: 1000, Fields: ccalgo.AckFields{Mark: ccalgo.MarkCE}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.AckedSeq = uint64(i) * 1000
		r.OnAck(int64(i), a)
	}
}

func BenchmarkRPOnNak(b *testing.B) {
	r := newTestRP(b, nil)
	a := &ccalgo.AckEvent{Fields: ccalgo.AckFields{Mark: ccalgo.MarkUE}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.AckedSeq = uint64(i) * 1000
		r.OnNak(int64(i), a)
	}
}

// BenchmarkRPOnTimer: one period end with CE ACKs, which runs a throttle and halt.
func BenchmarkRPOnTimer(b *testing.B) {
	r := newTestRP(b, nil)
	a := &ccalgo.AckEvent{NewlyAcked: 1000, Fields: ccalgo.AckFields{Mark: ccalgo.MarkCE}}
	var seq uint64
	now := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		r.OnSend(now, seq, 1000)
		seq += 1000
		a.AckedSeq = seq
		r.OnAck(now, a)
		now = r.NextTimer()
		r.OnTimer(now)
	}
}

// TestMixedCEParam: mixed_ce is "hold" (the default) or "increase"; anything
// else is a ParamError naming it, and "increase" turns a held period into an
// uncongested one.
func TestMixedCEParam(t *testing.T) {
	if p := DefaultParams(testEnv); p.MixedCE != MixedCEHold {
		t.Fatalf("default mixed_ce %q, want %q", p.MixedCE, MixedCEHold)
	}
	for _, bad := range []string{"", "Hold", "ignore"} {
		p := DefaultParams(testEnv)
		p.MixedCE = bad
		_, err := NewRP(p, testEnv)
		var pe *ccalgo.ParamError
		if !errors.As(err, &pe) || pe.Param != "mixed_ce" {
			t.Errorf("mixed_ce %q: err = %v, want a ParamError naming mixed_ce", bad, err)
		}
	}
	for _, tc := range []struct {
		mode string
		want Class
	}{{MixedCEHold, ClassMixedCE}, {MixedCEIncrease, ClassUncongested}} {
		p := DefaultParams(testEnv)
		p.MixedCE = tc.mode
		rp, err := NewRP(p, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		rp.acks, rp.ce = 10, 3 // some CE, not steadily congested, no UE
		rp.endPeriod(0)
		if rp.lastClass != tc.want {
			t.Errorf("mixed_ce %q: class %v, want %v", tc.mode, rp.lastClass, tc.want)
		}
	}
}
