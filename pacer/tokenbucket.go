package pacer

import (
	"math"
	"math/bits"
)

// Never is the time returned when something will not happen without a change of
// state (a rate of zero, an empty scheduler). It equals ccalgo.Never.
const Never int64 = math.MaxInt64

// Units. A TokenBucket counts its credit in nanobits (1e-9 bit). A rate of R bits/s
// then adds exactly R nanobits per nanosecond, so that accrual, debit and the
// time to the next eligibility are integer operations with no rounding error
// that could accumulate: the only rounding is the ceiling taken when a waiting
// time is turned into whole nanoseconds, and the fraction it over-waits stays in
// the bucket as credit (as long as the burst can hold it, see TokenBucket).
const (
	nanobitsPerByte = 8 * 1_000_000_000

	// MaxBurstBytes is the largest burst a TokenBucket holds; larger values are
	// clamped. It keeps every credit computation inside int64.
	MaxBurstBytes int64 = 1 << 30

	// MaxRateBps is the largest finite rate, 1 Pb/s; larger finite rates are
	// clamped. math.Inf(1) means unlimited.
	MaxRateBps float64 = 1e15

	maxCredit = MaxBurstBytes * nanobitsPerByte // 8.59e18 < MaxInt64
	minCredit = -maxCredit
)

// TokenBucket paces one sender: a rate in bits/s, a burst in bytes and time in
// nanoseconds passed by the caller (from a TSC converted to ns, or virtual time).
// The zero value is a bucket with rate 0 that never becomes eligible; set it up
// with Init.
//
// Credit model. The bucket holds credit, at most the burst. A sender is eligible
// when the credit has reached a threshold (ReadyAt); sending a packet debits its
// size with Take, which may drive the credit below zero. The scheduler uses the
// threshold 0 ("deficit" pacing): a packet may leave when the previous ones are
// paid for, so the scheduler need not know the next packet's size, and a burst of
// 0 gives perfectly even spacing. TryTake is the strict alternative (send only
// when the whole packet is covered), for shapers that know the size in advance.
// Over any interval the bytes taken are at most rate x time + burst + one packet:
// the long-run rate is exact. (Strictly, the credit may exceed the burst by less
// than one nanosecond of accrual, rate/8e9 bytes: the fraction by which waiting
// for a whole nanosecond overshoots is kept rather than lost.) A sender that is served late keeps the credit it
// earned meanwhile only up to the burst, so a burst of a few packets lets a sender
// that competes for a busy link still reach its rate.
//
// Time never runs backwards for the bucket: a now earlier than the last one seen
// is treated as that last time (TSCs of different cores may disagree slightly).
//
// Methods allocate nothing. A bucket is not safe for concurrent use.
type TokenBucket struct {
	rate      uint64 // bits/s == nanobits per ns; meaningless when unlimited
	unlimited bool
	credit    int64 // nanobits, in [minCredit, cap+rate)
	cap       int64 // burst in nanobits
	last      int64 // time (ns) up to which credit has been accrued
	hold      int64 // no accrual and no eligibility before this time (ns)
}

// rateBits converts a rate in bits/s to the integer rate of a bucket, rounding
// to the nearest bit/s. NaN, zero and negative rates are 0 (stopped); +Inf is
// unlimited; finite rates above MaxRateBps are clamped.
func rateBits(bps float64) (r uint64, unlimited bool) {
	switch {
	case math.IsInf(bps, 1):
		return 0, true
	case !(bps > 0): // also NaN
		return 0, false
	case bps >= MaxRateBps:
		return uint64(MaxRateBps), false
	}
	return uint64(bps + 0.5), false
}

func burstNanobits(bytes int64) int64 {
	if bytes <= 0 {
		return 0
	}
	if bytes > MaxBurstBytes {
		bytes = MaxBurstBytes
	}
	return bytes * nanobitsPerByte
}

// Init sets the bucket up at time now with a rate (bits/s, see SetRate for the
// special values) and a burst (bytes, clamped to [0, MaxBurstBytes]), with no
// credit and no hold: the first packet is eligible at now.
func (b *TokenBucket) Init(rateBps float64, burstBytes int64, now int64) {
	b.rate, b.unlimited = rateBits(rateBps)
	b.cap = burstNanobits(burstBytes)
	b.credit = 0
	b.last = now
	b.hold = math.MinInt64
}

// advance accrues credit up to now.
func (b *TokenBucket) advance(now int64) {
	start := b.last
	if b.hold > start {
		start = b.hold
	}
	if now > start && !b.unlimited && b.rate > 0 {
		// The credit may exceed the burst by less than one nanosecond of
		// accrual: the fraction that ReadyAt's ceiling over-waits is kept, so
		// that even a burst of 0 paces at the exact rate in the long run.
		limit := b.cap + int64(b.rate) - 1 // <= maxCredit + 1e15 < MaxInt64
		if b.credit < limit {
			dt := uint64(now - start)
			// limit - credit < 2^64: exact as uint64 even when the int64
			// subtraction wraps.
			need := uint64(limit - b.credit)
			// The exact 128-bit product (no division on the tx path):
			// dt*rate > need exactly when dt > need/rate.
			if hi, earned := bits.Mul64(dt, b.rate); hi != 0 || earned > need {
				b.credit = limit
			} else {
				// earned <= need, so credit+earned <= limit: the modular
				// int64 addition gives the exact result.
				b.credit += int64(earned)
			}
		}
	}
	if now > b.last {
		b.last = now
	}
}

// Advance accrues the credit earned up to now. Other methods do this themselves;
// Advance is for callers that read Tokens or ReadyAt without changing the bucket.
func (b *TokenBucket) Advance(now int64) { b.advance(now) }

// SetRate changes the rate at time now, effective for the next packet: credit
// earned before now is kept at the old rate, a debt left by the last packet is
// paid at the new rate from now on. On a decrease, positive credit is scaled by
// new/old (the time it would have taken to earn it stays the same), so that a cut
// is not undone by a burst banked at the old rate. bps is in bits/s, rounded to
// the nearest bit/s; NaN, 0 and negative rates stop the bucket; math.Inf(1) means
// unlimited (always eligible, Take does nothing).
func (b *TokenBucket) SetRate(bps float64, now int64) {
	b.advance(now)
	r, unl := rateBits(bps)
	switch {
	case unl:
	case b.unlimited:
		// From unlimited to a finite rate: no banked burst.
		if b.credit > 0 {
			b.credit = 0
		}
	case r < b.rate && b.credit > 0:
		// credit*r/old < credit: the 128-bit quotient fits in 64 bits.
		hi, lo := bits.Mul64(uint64(b.credit), r)
		q, _ := bits.Div64(hi, lo, b.rate)
		b.credit = int64(q)
	}
	b.rate, b.unlimited = r, unl
}

// SetBurst changes the burst (bytes, clamped to [0, MaxBurstBytes]) at time now;
// credit above the new burst is dropped.
func (b *TokenBucket) SetBurst(burstBytes int64, now int64) {
	b.advance(now)
	b.cap = burstNanobits(burstBytes)
	if b.credit > b.cap {
		b.credit = b.cap
	}
}

// HoldUntil forbids sending before until, and earns no credit before it: the
// time of the next packet moves by the length of the hold (ACC, Eq. 1:
// t_NextPkt <- t_NextPkt + t_Halt). A later call replaces the hold; an until at or
// before now cancels it. Credit earned up to now is kept.
func (b *TokenBucket) HoldUntil(until, now int64) {
	b.advance(now)
	b.hold = until
}

// Take debits bytes sent at time now. The credit may go below zero (the next
// eligibility waits until the debt is paid); it saturates far below any real
// debt. bytes <= 0 debits nothing.
func (b *TokenBucket) Take(bytes int64, now int64) {
	b.advance(now)
	if b.unlimited || bytes <= 0 {
		return
	}
	cost := burstNanobits(bytes)
	if b.credit < minCredit+cost {
		b.credit = minCredit
		return
	}
	b.credit -= cost
}

// TryTake debits bytes at time now if the bucket holds at least that much credit,
// no hold is in force and the rate is not 0, and reports whether it did (strict
// token-bucket conformance).
func (b *TokenBucket) TryTake(bytes int64, now int64) bool {
	b.advance(now)
	if b.unlimited {
		return now >= b.hold
	}
	if now < b.hold || b.rate == 0 {
		return false
	}
	cost := burstNanobits(bytes)
	if b.credit < cost {
		return false
	}
	b.credit -= cost
	return true
}

// ReadyAt is the earliest time at which the bucket holds at least bytes of credit
// and no hold is in force, given no further Take: a time not before the last time
// the bucket saw, or Never when the rate is 0 (a stopped bucket sends nothing,
// whatever credit it holds) or bytes exceed the burst. With
// bytes = 0 it is the eligibility of deficit pacing. The result is the ceiling of
// the exact time, so a sender that sends at ReadyAt is never early.
func (b *TokenBucket) ReadyAt(bytes int64) int64 {
	start := b.last
	if b.hold > start {
		start = b.hold
	}
	if b.unlimited {
		return start
	}
	if b.rate == 0 {
		return Never // stopped, whatever credit is banked
	}
	thr := burstNanobits(bytes)
	if b.credit >= thr {
		return start
	}
	if thr > b.cap {
		return Never
	}
	deficit := uint64(thr - b.credit) // < 2^64, exact (see advance)
	wait := deficit / b.rate
	if wait*b.rate != deficit { // one division: the ceiling
		wait++
	}
	if wait >= uint64(Never-start) {
		return Never
	}
	return start + int64(wait)
}

// Eligible reports whether ReadyAt(0) <= now (a packet may leave at now
// under deficit pacing) without computing the time, so without a division
// when the answer is no. It is exact when the bucket has seen now (Advance,
// or any other method, at now): the credit it reads is that of the last time
// the bucket saw.
func (b *TokenBucket) Eligible(now int64) bool {
	if max(b.last, b.hold) > now {
		return false
	}
	if b.unlimited {
		return true
	}
	return b.rate > 0 && b.credit >= 0
}

// Tokens is the credit in bytes (rounded toward minus infinity) the bucket holds
// at the last time it saw; call Advance first to bring it to now.
func (b *TokenBucket) Tokens() int64 {
	q := b.credit / nanobitsPerByte
	if b.credit%nanobitsPerByte < 0 {
		q--
	}
	return q
}

// RateBps is the rate in bits/s: math.Inf(1) when unlimited.
func (b *TokenBucket) RateBps() float64 {
	if b.unlimited {
		return math.Inf(1)
	}
	return float64(b.rate)
}

// BurstBytes is the burst in bytes.
func (b *TokenBucket) BurstBytes() int64 { return b.cap / nanobitsPerByte }

// Hold is the time before which the bucket may not send (see HoldUntil);
// math.MinInt64 when it was never held.
func (b *TokenBucket) Hold() int64 { return b.hold }
