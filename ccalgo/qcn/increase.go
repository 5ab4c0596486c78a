// Rate-increase machinery of the IEEE 802.1Qau reaction point (RP), shared with
// P4QCN (ccalgo/p4qcn; Geng et al., "P4QCN: Congestion Control Using P4-Capable
// Device in Data Center Networks", Electronics 2019, Section 3.1.2, Eqs. 2-4),
// whose RP is QCN's without hyper-active increase and with a fixed cut.
//
// What is here:
//   - RateLimiter: the current rate R_c and the target rate R_t, the cut
//     (R_t = R_c; R_c = R_c * factor) and one increase cycle:
//     fast recovery R_c = (R_t + R_c)/2 (P4QCN Eq. 3), active increase
//     R_t += R_AI, R_c = (R_t + R_c)/2 (P4QCN Eq. 4), hyper-active increase
//     R_t += i R_HAI, R_c = (R_t + R_c)/2.
//   - CycleCounter: the byte counter (a cycle every ByteReset bytes sent) and the
//     timer (a cycle every TimeReset ns), each with its stage count, reset by a
//     cut, and the stage rule: fast recovery while both counts are below the
//     threshold F, active increase when one has reached F, hyper-active increase
//     when both have (only when Hyper is set). With Joint set (P4QCN) the two
//     form one clock instead: a cycle ends at ByteReset bytes or TimeReset ns,
//     whichever comes first, both restart, and one count of cycles decides the
//     stage.
//
// Deviations from IEEE 802.1Qau:
//   - The standard randomises each byte-counter and timer cycle (uniformly in
//     [0.85, 1.15] of its nominal length) to de-synchronise sources; ccbed's
//     choice is not to: the testbed is deterministic (virtual time) and the
//     flows desynchronise through their different feedback.
//   - The byte counter counts payload bytes (what ReactionPoint.OnSend reports),
//     not frame bytes.
//   - Hyper-active increase adds i * R_HAI with i = min(byte stage, timer stage) -
//     F + 1, counting the stages before this cycle, so that the first hyper cycle
//     adds R_HAI (the QCN pseudo-code's min(stage) - F is 0 on that cycle).
//   - In hyper-active increase the byte counter's cycle is ByteReset/2 and the
//     timer's TimeReset/2 (ccbed's choice).
package qcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Stage is the increase phase of a QCN / P4QCN reaction point: which update the
// next completed byte-counter or timer cycle applies.
type Stage uint8

// Stages in the order a source goes through them after a cut.
const (
	StageFastRecovery   Stage = iota // R_c = (R_t + R_c)/2
	StageActiveIncrease              // R_t += R_AI; R_c = (R_t + R_c)/2
	StageHyperIncrease               // R_t += i R_HAI; R_c = (R_t + R_c)/2
)

// String names the stage.
func (s Stage) String() string {
	switch s {
	case StageFastRecovery:
		return "fast-recovery"
	case StageActiveIncrease:
		return "active-increase"
	case StageHyperIncrease:
		return "hyper-increase"
	}
	return "stage(?)"
}

// RateLimiter is the rate state of a QCN-family reaction point: current rate
// R_c and target rate R_t in bits/s, both within [MinBps, MaxBps].
type RateLimiter struct {
	Current float64 // R_c: the pacing rate
	Target  float64 // R_t: the rate fast recovery converges to
	MinBps  float64 // floor of R_c (QCN rpgMinRate)
	MaxBps  float64 // ceiling of R_c and R_t: the NIC's line rate
}

// Cut applies a multiplicative decrease: R_t = R_c; R_c = R_c * factor, not below
// MinBps (QCN "RP", P4QCN Eq. 2).
func (r *RateLimiter) Cut(factor float64) {
	r.Target = r.Current
	r.Current *= factor
	if r.Current < r.MinBps {
		r.Current = r.MinBps
	}
}

// Recover is one fast-recovery cycle: R_c = (R_t + R_c)/2 (P4QCN Eq. 3).
func (r *RateLimiter) Recover() {
	r.Current = (r.Target + r.Current) / 2
	if r.Current > r.MaxBps {
		r.Current = r.MaxBps
	}
}

// Increase is one active- or hyper-increase cycle: R_t = R_t + addBps, capped at
// MaxBps; R_c = (R_t + R_c)/2 (P4QCN Eq. 4).
func (r *RateLimiter) Increase(addBps float64) {
	r.Target += addBps
	if r.Target > r.MaxBps {
		r.Target = r.MaxBps
	}
	r.Recover()
}

// AtLineRate reports whether R_c has recovered to the line rate, where QCN
// releases the rate limiter.
func (r *RateLimiter) AtLineRate() bool { return r.Current >= r.MaxBps }

// CycleCounter is the RP's byte counter and timer. The zero value is inactive
// (no timer); Reset starts it. Configure the exported fields before use.
type CycleCounter struct {
	ByteReset int64 // bytes per byte-counter cycle (rpgByteReset)
	TimeReset int64 // ns per timer cycle (rpgTimeReset); 0 disables the timer
	Threshold int   // F: cycles of fast recovery (rpgThreshold)
	Hyper     bool  // whether the hyper-active stage exists (QCN yes, P4QCN no)
	// Joint makes byte counter and timer one clock (P4QCN): a cycle ends when
	// ByteReset bytes were sent or TimeReset ns passed, whichever comes first,
	// both restart, and the stage counts cycles of either kind (F cycles of fast
	// recovery in all). Without it (QCN) they run independently, each with its
	// own stage count.
	Joint bool

	ByteStage int // byte-counter cycles completed since the last Reset
	TimeStage int // timer cycles completed since the last Reset

	bytesLeft int64 // bytes until the byte counter's cycle ends
	timerAt   int64 // absolute time the timer's cycle ends, or ccalgo.Never
}

// Reset restarts both counters at now, as after a rate cut.
func (c *CycleCounter) Reset(now int64) {
	c.ByteStage, c.TimeStage = 0, 0
	c.bytesLeft = c.ByteReset
	c.timerAt = ccalgo.Never
	if c.TimeReset > 0 {
		c.timerAt = now + c.TimeReset
	}
}

// Stop disables the timer until the next Reset (the rate limiter is released).
func (c *CycleCounter) Stop() { c.timerAt = ccalgo.Never }

// Stage is the phase the next completed cycle belongs to.
func (c *CycleCounter) Stage() Stage {
	return c.stageOf(c.ByteStage, c.TimeStage)
}

func (c *CycleCounter) stageOf(bs, ts int) Stage {
	f := c.Threshold
	if c.Joint {
		bs, ts = bs+ts, 0
		if bs >= f {
			return StageActiveIncrease
		}
		return StageFastRecovery
	}
	switch {
	case bs < f && ts < f:
		return StageFastRecovery
	case c.Hyper && bs >= f && ts >= f:
		return StageHyperIncrease
	}
	return StageActiveIncrease
}

// Cycle describes one completed byte-counter or timer cycle: the update the
// reaction point must apply now.
type Cycle struct {
	Stage Stage // the stage the cycle belongs to (counts before this cycle)
	Hyper int   // i of hyper-active increase (R_t += i R_HAI); 0 in other stages
	First bool  // the first cycle since the last Reset
}

func (c *CycleCounter) cycle() Cycle {
	cy := Cycle{Stage: c.Stage(), First: c.ByteStage == 0 && c.TimeStage == 0}
	if cy.Stage == StageHyperIncrease {
		cy.Hyper = min(c.ByteStage, c.TimeStage) - c.Threshold + 1
	}
	return cy
}

// OnBytes counts n bytes sent at now. It reports whether the byte counter's
// cycle ended (at most one cycle per call: a packet is far smaller than a cycle)
// and, if so, which update that cycle calls for.
func (c *CycleCounter) OnBytes(now int64, n int) (Cycle, bool) {
	c.bytesLeft -= int64(n)
	if c.bytesLeft > 0 {
		return Cycle{}, false
	}
	cy := c.cycle()
	c.ByteStage++
	c.bytesLeft = c.ByteReset
	if c.Stage() == StageHyperIncrease {
		c.bytesLeft = c.ByteReset / 2
	}
	if c.Joint && c.timerAt != ccalgo.Never {
		c.timerAt = now + c.TimeReset
	}
	return cy, true
}

// NextTimer is the absolute time the timer's cycle ends, or ccalgo.Never.
func (c *CycleCounter) NextTimer() int64 { return c.timerAt }

// OnTimer reports whether the timer's cycle ended at or before now and, if so,
// which update that cycle calls for. It re-arms the timer from now, so a late
// call does not fire a burst of cycles.
func (c *CycleCounter) OnTimer(now int64) (Cycle, bool) {
	if c.timerAt == ccalgo.Never || now < c.timerAt {
		return Cycle{}, false
	}
	cy := c.cycle()
	c.TimeStage++
	period := c.TimeReset
	if c.Stage() == StageHyperIncrease {
		period /= 2
	}
	c.timerAt = now + period
	if c.Joint {
		c.bytesLeft = c.ByteReset
	}
	return cy, true
}

// validRate reports whether v is a finite rate > 0.
func validRate(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
