package pacer

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTokenBucketAccrualAndCap(t *testing.T) {
	// rate 8 Gb/s = 1 byte/ns.
	tests := []struct {
		name   string
		rate   float64
		burst  int64
		take   int64 // at time 0
		at     int64
		tokens int64
	}{
		{"debt after a packet", 8e9, 10_000, 1000, 0, -1000},
		{"half paid", 8e9, 10_000, 1000, 500, -500},
		{"paid exactly", 8e9, 10_000, 1000, 1000, 0},
		{"credit grows", 8e9, 10_000, 1000, 4000, 3000},
		{"capped at burst", 8e9, 10_000, 1000, 1 << 40, 10_000},
		{"zero burst caps at zero", 8e9, 0, 1000, 5000, 0},
		{"huge dt does not overflow", 100e9, MaxBurstBytes, 0, math.MaxInt64 - 1, MaxBurstBytes + 12}, // + < 1 ns of rate
		{"fractional: 3 b/s for 1 s", 3, 100, 0, 1e9, 0},                                              // 3 bits = 0.375 B, floor 0
		{"fractional: 3 b/s for 8 s", 3, 100, 0, 8e9, 3},
		{"rate 0 earns nothing", 0, 100, 10, 1e12, -10},
		{"unlimited takes nothing", math.Inf(1), 100, 1 << 20, 0, 0},
		{"burst clamped", 8e9, 1 << 40, 0, 1 << 40, MaxBurstBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b TokenBucket
			b.Init(tc.rate, tc.burst, 0)
			b.Take(tc.take, 0)
			b.Advance(tc.at)
			if got := b.Tokens(); got != tc.tokens {
				t.Fatalf("Tokens() at %d = %d, want %d", tc.at, got, tc.tokens)
			}
		})
	}
}

func TestTokenBucketReadyAt(t *testing.T) {
	tests := []struct {
		name   string
		rate   float64
		burst  int64
		take   int64 // at time 0
		thresh int64
		want   int64
	}{
		{"1 Gb/s, 1000 B", 1e9, 0, 1000, 0, 8000},
		{"100 Gb/s, 1000 B", 100e9, 0, 1000, 0, 80},
		{"ceil of a fraction: 3 b/s, 1 B", 3, 0, 1, 0, 2_666_666_667},
		{"already eligible", 1e9, 1000, 0, 0, 0},
		{"strict threshold", 8e9, 2000, 0, 1500, 1500},
		{"threshold above burst", 8e9, 1000, 0, 1500, Never},
		{"rate 0", 0, 1000, 1, 0, Never},
		{"unlimited", math.Inf(1), 0, 1 << 20, 0, 0},
		{"NaN is stopped", math.NaN(), 1000, 1, 0, Never},
		{"negative is stopped", -5, 1000, 1, 0, Never},
		{"far but representable", 1, 0, MaxBurstBytes, 0, MaxBurstBytes * 8 * 1e9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b TokenBucket
			b.Init(tc.rate, tc.burst, 0)
			b.Take(tc.take, 0)
			if got := b.ReadyAt(tc.thresh); got != tc.want {
				t.Fatalf("ReadyAt(%d) = %d, want %d", tc.thresh, got, tc.want)
			}
		})
	}
}

// TestTokenBucketLongRunExact sends back to back at each ReadyAt and checks the
// send time of the last packet against the exact ideal: within 1 ns after 100,000
// packets, so the long-run rate error is below 1e-9 relative.
func TestTokenBucketLongRunExact(t *testing.T) {
	tests := []struct {
		rate  float64
		pkt   int64
		burst int64
	}{
		{10e6, 1000, 0},
		{123_456_789, 1500, 0},
		{1e9, 64, 1000},
		{3.3e9, 1500, 0},
		{25e9, 4096, 9000},
		{100e9, 1000, 0},
		{100e9, 1, 0},
		{400e9, 9000, 9000},
	}
	const n = 100_000
	for _, tc := range tests {
		var b TokenBucket
		b.Init(tc.rate, tc.burst, 0)
		var now int64
		for range n {
			now = b.ReadyAt(0)
			b.Take(tc.pkt, now)
		}
		// Packet k (from 0) leaves at ceil(k*pkt*8/rate s) when the bucket starts
		// empty; with a burst >= the rounding the credit is never lost.
		ideal := float64(n-1) * float64(tc.pkt) * 8 / tc.rate * 1e9
		if d := float64(now) - ideal; d < -1e-3 || d > 1 {
			t.Errorf("rate %g pkt %d: last packet at %d ns, ideal %.1f ns (diff %.3f)", tc.rate, tc.pkt, now, ideal, d)
		}
	}
}

func TestTokenBucketSetRate(t *testing.T) {
	tests := []struct {
		name      string
		r1, r2    float64
		burst     int64
		take      int64 // bytes at time 0
		change    int64 // time of SetRate
		wantReady int64
	}{
		// 1000 B at 1 Gb/s = 8000 ns of debt; after 4000 ns, 500 B remain, paid at
		// 10 Gb/s in 400 ns.
		{"increase: rest of the debt at the new rate", 1e9, 10e9, 0, 1000, 4000, 4400},
		// 500 B left at 100 Mb/s: 40 us.
		{"decrease: rest of the debt at the new rate", 1e9, 100e6, 0, 1000, 4000, 44_000},
		// Credit of 1000 B earned at 8 Gb/s is scaled to 1 B at 8 Mb/s: a packet of
		// 1000 B at now = 1000 then waits 999 B at 8 Mb/s = 999 us.
		{"decrease scales banked credit", 8e9, 8e6, 100_000, 0, 1000, 1000 + 999_000},
		{"stop", 1e9, 0, 0, 1000, 10, Never},
		{"to unlimited", 1e9, math.Inf(1), 0, 1000, 10, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b TokenBucket
			b.Init(tc.r1, tc.burst, 0)
			b.Take(tc.take, 0)
			b.SetRate(tc.r2, tc.change)
			if tc.take == 0 {
				b.Take(1000, tc.change)
			}
			if got := b.ReadyAt(0); got != tc.wantReady {
				t.Fatalf("ReadyAt = %d, want %d", got, tc.wantReady)
			}
		})
	}
}

func TestTokenBucketHold(t *testing.T) {
	var b TokenBucket
	b.Init(1e9, 0, 0)
	b.Take(1000, 0) // 8000 ns of debt
	b.HoldUntil(50_000, 2000)
	// 2000 ns were paid before the hold started (at 2000); no credit during the
	// hold; the remaining 6000 ns of debt after 50 us: t_NextPkt += t_Halt.
	if got := b.ReadyAt(0); got != 56_000 {
		t.Fatalf("ReadyAt during hold = %d, want 56000", got)
	}
	if b.TryTake(0, 49_999) {
		t.Fatal("TryTake succeeded during a hold")
	}
	// Cancel the hold at 49,999 ns (the bucket has seen that time): accrual
	// restarts from there.
	b.HoldUntil(0, 49_999)
	if got := b.ReadyAt(0); got != 55_999 {
		t.Fatalf("ReadyAt after cancel = %d, want 55999", got)
	}
	// An unlimited bucket still respects the hold.
	b.SetRate(math.Inf(1), 50_000)
	b.HoldUntil(70_000, 50_000)
	if got := b.ReadyAt(0); got != 70_000 {
		t.Fatalf("unlimited ReadyAt = %d, want 70000", got)
	}
	// A wait that does not fit in int64 is Never.
	b.Init(1, 0, math.MaxInt64-10)
	b.Take(1, math.MaxInt64-10)
	if got := b.ReadyAt(0); got != Never {
		t.Fatalf("ReadyAt beyond int64 = %d, want Never", got)
	}
}

func TestTokenBucketTryTakeAndClock(t *testing.T) {
	var b TokenBucket
	b.Init(8e9, 2000, 0) // 1 B/ns
	b.Advance(3000)      // credit 2000 (capped)
	if !b.TryTake(1500, 3000) {
		t.Fatal("TryTake(1500) with 2000 B of credit failed")
	}
	if b.TryTake(1000, 3000) {
		t.Fatal("TryTake(1000) with 500 B of credit succeeded")
	}
	// Time running backwards is ignored: the bucket stays at 3000.
	b.Take(100, 1000)
	if got, want := b.Tokens(), int64(400); got != want {
		t.Fatalf("Tokens after a backwards Take = %d, want %d", got, want)
	}
	if got := b.ReadyAt(1000); got != 3600 {
		t.Fatalf("ReadyAt(1000) = %d, want 3600", got)
	}
	// A debt far beyond any packet saturates instead of overflowing.
	for range 20 {
		b.Take(MaxBurstBytes, 3000)
	}
	if b.credit != minCredit {
		t.Fatalf("credit = %d, want saturation at %d", b.credit, int64(minCredit))
	}
	b.SetBurst(10, 3000)
	if got := b.BurstBytes(); got != 10 {
		t.Fatalf("BurstBytes = %d", got)
	}
	// A stopped bucket sends nothing, even with credit banked.
	var c TokenBucket
	c.Init(8e9, 2000, 0)
	c.Advance(5000)
	c.SetRate(0, 5000)
	if got := c.ReadyAt(0); got != Never {
		t.Fatalf("stopped bucket ReadyAt = %d, want Never", got)
	}
	if c.TryTake(0, 6000) {
		t.Fatal("stopped bucket TryTake succeeded")
	}
}

func TestTokenBucketAllocs(t *testing.T) {
	var b TokenBucket
	b.Init(10e9, 3000, 0)
	now := int64(0)
	a := testing.AllocsPerRun(1000, func() {
		now = b.ReadyAt(0)
		b.Take(1000, now)
		b.SetRate(10e9, now)
		_ = b.TryTake(10, now)
	})
	if a != 0 {
		t.Fatalf("TokenBucket methods allocate %v per run", a)
	}
}

func BenchmarkTokenBucket(b *testing.B) {
	b.ReportAllocs()
	var tb TokenBucket
	tb.Init(10e9, 3000, 0)
	var now int64
	for b.Loop() {
		now = tb.ReadyAt(0)
		tb.Take(1000, now)
	}
}

// TestTokenBucketAccrualMatchesDivision checks advance's overflow test (a
// 128-bit product) against the division it replaced, at the edges (credit
// at the floor, rates of 1 b/s to MaxRateBps, gaps up to 2^63 ns) and at
// random.
func TestTokenBucketAccrualMatchesDivision(t *testing.T) {
	// byDivision is advance's accrual as it was written first.
	byDivision := func(credit, limit int64, rate, dt uint64) int64 {
		need := uint64(limit - credit)
		if dt > need/rate {
			return limit
		}
		return credit + int64(dt*rate)
	}
	r := rand.New(rand.NewPCG(1, 2))
	rates := []uint64{1, 3, 1e6, 1e9 + 7, 100e9, uint64(MaxRateBps)}
	dts := []uint64{1, 2, 1e3, 1e9, 1 << 40, 1 << 62, math.MaxInt64}
	for i := 0; i < 200_000; i++ {
		rate := rates[i%len(rates)]
		dt := dts[(i/len(rates))%len(dts)]
		if i >= len(rates)*len(dts) {
			rate = r.Uint64N(uint64(MaxRateBps)) + 1
			dt = r.Uint64N(1<<r.IntN(63)) + 1
		}
		burst := r.Int64N(MaxBurstBytes + 1)
		b := TokenBucket{rate: rate, cap: burstNanobits(burst), last: 0, hold: math.MinInt64}
		limit := b.cap + int64(rate) - 1
		lo := int64(minCredit)
		b.credit = lo + int64(r.Uint64N(uint64(limit)-uint64(lo)))
		if i%7 == 0 {
			b.credit = minCredit
		}
		want := byDivision(b.credit, limit, rate, dt)
		b.advance(int64(dt))
		if b.credit != want {
			t.Fatalf("rate %d dt %d: credit %d, by division %d", rate, dt, b.credit, want)
		}
	}
}

// TestTokenBucketEligible checks Eligible(now) against ReadyAt(0) <= now on
// buckets that have seen now: random rates (0, unlimited among them),
// bursts, holds, debts and times.
func TestTokenBucketEligible(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rates := []float64{0, math.Inf(1), 1, 1e6, 10e9, 100e9}
	var b TokenBucket
	now := int64(0)
	for i := range 100_000 {
		if i%100 == 0 {
			b.Init(rates[r.IntN(len(rates))], r.Int64N(10_000), now)
		}
		switch r.IntN(5) {
		case 0:
			b.Take(r.Int64N(3000), now)
		case 1:
			b.HoldUntil(now+r.Int64N(2000)-1000, now)
		case 2:
			b.SetRate(rates[r.IntN(len(rates))], now)
		}
		now += r.Int64N(500)
		b.Advance(now)
		for _, at := range []int64{now, now + 1, now + 1000} {
			if at != now {
				c := b
				c.Advance(at)
				if got, want := c.Eligible(at), c.ReadyAt(0) <= at; got != want {
					t.Fatalf("step %d at %d: Eligible %v, ReadyAt %d", i, at, got, c.ReadyAt(0))
				}
				continue
			}
			if got, want := b.Eligible(at), b.ReadyAt(0) <= at; got != want {
				t.Fatalf("step %d at %d: Eligible %v, ReadyAt %d (%+v)", i, at, got, b.ReadyAt(0), b)
			}
		}
	}
}
