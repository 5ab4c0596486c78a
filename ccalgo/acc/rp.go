// ACC reaction point: Algorithm 1 ("ACC sender algorithm") of "Revisiting
// Congestion Control for Lossless Ethernet" (NSDI 2024); sections are that
// paper's.
//
// Implemented, by paper section and algorithm line:
//   - Section 4.1: every period T the RP classifies the ACKs received in the period
//     with priority CE > UE > none. Congested: CE fraction > 90 % ("steadily
//     congested"). Undetermined (victim): UE received and the flow not steadily
//     congested. Uncongested: neither CE nor UE ("only when neither UE nor CE
//     marking is received, the flow is uncongested"). A period with CE on 90 %
//     of its ACKs or fewer and no UE is none of the three: the rate is held.
//   - Section 4.2, 4.3, lines 1-5 and 27-34: a congested flow that is not halted and
//     whose snd_una passed snd_nxt_start measures the ACK arrival rate R (line 3,
//     see below), sets R_s = R (line 4) and halts for t_Halt = (dS - dA) / R
//     (line 29, Eq. 1), with dS the bytes sent in the period before and dA the
//     bytes acknowledged in this one (accumulating dS over periods without any
//     ACK, Section 4.2); it records snd_nxt_start = snd_nxt (line 32).
//   - Section 4.2, lines 6-10: at the end of the next period, still congested and
//     halted, the halt is extended by t_extend = r / R, r = dS - dS * R / R_s, with
//     dS the bytes sent in the period the congestion was detected in and R_s the
//     rate of that period (before line 4 replaced it).
//   - Section 4.2, line 2: after a halt only ACKs with snd_una > snd_nxt_start are
//     eligible: they alone count in R and allow a new halt.
//   - Section 4.5, lines 13-21: uncongested, R_s += (lineRate - R_s) / lineRate * RI
//     with RI = RI_Low while N_u < 2, else RI_High.
//   - Section 4.4, lines 22-26: undetermined, N_v counts consecutive UE periods and
//     R_s halves every period once N_v > P_thresh.
//
// Deviations and choices, and why:
//   - R (line 3) is the bytes acknowledged by the period's eligible ACKs (snd_una's
//     advance, counted exactly) over the time they took to arrive, measured from
//     the eligible ACK before the period's first one to its last. The paper's
//     recvNum * MTU / T counts whole ACKs per period: with T = the base RTT, one
//     ACK is (MTU + header) x 8 / T, 1.49 Gb/s at 10 Gb/s and a 5.7 us RTT, and
//     every throttle rounds a flow to its own multiple of that (four flows at 10
//     Gb/s kept the link 89-91 % used). Measured between ACKs, evenly spaced ACKs
//     give their exact rate whatever their number, and Section 4.3's corner case
//     (one ACK in several periods: the inter-arrival time replaces T) is the
//     one-ACK case of the same rule. T itself stays the base RTT, the paper's
//     choice (Section 6.1), so halts and throttles keep their timing.
//   - When no eligible ACK precedes the period's first (the first period, or the
//     first after a halt or an idle stop) there is no arrival time to start from,
//     and R is the paper's: the eligible bytes over T. Those ACKs begin after the
//     period did, and charging the whole period, as the paper does, throttles the
//     flow to what it delivered in the period; measuring them over their own span
//     instead left standing queues of 100-250 KB that no halt removed (100 Gb/s,
//     unequal RTTs), since R then matched the sending rates exactly.
//   - A period with some CE, a fraction not above 90 %, and no UE holds the rate
//     and restarts both runs (N_u = N_v = 0): it is not "steadily congested", not
//     a victim's ("no ACK with CE received but with UE"), and not uncongested.
//     With UE as well it is a victim's period (Section 4.4: "if ACKs marked with
//     UE are received in a period T, the corresponding flow is an undetermined
//     flow"): CE that is not steady does not outrank UE. The hold has a cost the
//     paper's fluid model (Appendix A) cannot show: paced flows whose rates add
//     up to C keep a queue of a few packets, enough for a few CE marks in every
//     period, and then never increase, so their shares stay where the last
//     throttle left them (4 flows, unequal RTTs, 100 Gb/s: Jain 0.71 at full
//     utilisation; see TestUnequalRTTs).
//   - The extension (lines 6-10) is applied once per halt, at the end of the period
//     after the halt started, as Section 4.2 describes ("at the end of T_{i+1}");
//     the pseudo-code would repeat the same extension in every congested period of
//     a long halt, which counts the excess of T_i more than once. A period without
//     any ACK postpones it.
//   - A period with no ACK at all received "neither UE nor CE" and is uncongested
//     (Section 4.1, literally); dS accumulates over it (Section 4.2). Holding the
//     rate instead starves flows slower than one packet per T, which see ACK-less
//     periods all the time and would then never increase.
//   - Rates are wire rates, as the pacer's: R, dS, dA and r (payload byte counts)
//     are scaled by (MTU + header) / MTU.
//   - R_s never falls below MinRateBps (lineRate / 1000 by default) and never
//     exceeds the line rate.
//   - The period timer starts at the first ACK, as in the paper's implementation
//     (Section 5, rxe_completer), with the bytes sent before it as the first dS,
//     so that the first period's ACKs answer that dS (Figure 7) for any T >= base
//     RTT. It stops while the QP is idle (nothing sent, acknowledged or
//     outstanding in a period, not halted) and restarts at the next ACK.

package acc

import (
	"github.com/ccbed/ccbed/ccalgo"
)

// Class is how the RP classified a period (Section 4.1).
type Class uint8

// Period classes.
const (
	ClassNoAck        Class = iota // no ACK in the period: treated as uncongested
	ClassUncongested               // neither CE nor UE: increase (Section 4.5)
	ClassUndetermined              // UE, and no CE or CE not above CEFraction: victim flow (Section 4.4)
	ClassCongested                 // CE fraction above CEFraction: halt and throttle (Sections 4.2, 4.3)
	ClassMixedCE                   // CE not above CEFraction, no UE: rate held
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ClassNoAck:
		return "no-ack"
	case ClassUncongested:
		return "uncongested"
	case ClassUndetermined:
		return "undetermined"
	case ClassCongested:
		return "congested"
	case ClassMixedCE:
		return "mixed-ce"
	}
	return "Class(?)"
}

// Classify returns the class of a period with acks ACKs of which ce carry CE and
// ue carry UE, for the congested threshold ceFraction (Section 4.1): CE above
// the fraction is congested; otherwise UE makes the flow a victim; CE without
// UE holds the rate; only a period with neither is uncongested.
func Classify(acks, ce, ue int, ceFraction float64) Class {
	switch {
	case acks == 0:
		return ClassNoAck
	case ce > 0 && float64(ce) > ceFraction*float64(acks):
		return ClassCongested
	case ue > 0:
		return ClassUndetermined
	case ce > 0:
		return ClassMixedCE
	}
	return ClassUncongested
}

// RPStats counts what an RP did, for tests and telemetry.
type RPStats struct {
	Periods        uint64 // period ends processed
	Throttles      uint64 // R_s = R (Algorithm 1 line 4)
	Halts          uint64 // source halts entered (line 31)
	Extensions     uint64 // halt extensions (lines 7-10)
	Increases      uint64 // uncongested increases (line 19)
	VictimHalvings uint64 // undetermined halvings (line 24)
	Holds          uint64 // periods with CE not above CEFraction and no UE: rate held
}

// RP is ACC's reaction point for one QP.
type RP struct {
	ccalgo.RPBase

	// Parameters.
	period     int64
	ceFraction float64
	mixedInc   bool // Params.MixedCE == MixedCEIncrease
	riLow      float64
	riHigh     float64
	lowPeriods int
	pThresh    int
	lineRate   float64
	minRate    float64
	wireFactor float64 // wire bytes per payload byte

	// Algorithm 1 state (Table 1).
	rs          float64 // R_s, bits/s
	rate        float64 // R of the last throttle, bits/s
	rsBefore    float64 // R_s before the last throttle (line 7's R_s)
	nu, nv      int     // N_u, N_v
	halted      bool    // halt
	extPending  bool    // the extension of the current halt is still to be decided
	haltUntil   int64   // t_NextPkt lower bound, ns
	tHalt       int64   // t_Halt of the current (or last) halt, extensions included, ns
	sndNxt      uint64  // highest byte sent + 1
	sndUna      uint64  // snd_una
	sndNxtStart uint64  // snd_nxt_start

	// Period accumulators.
	nextPeriod int64  // end of the current period; ccalgo.Never while idle
	acks       int    // ACKs in the period
	ce, ue     int    // of which CE / UE
	eligible   int    // of which with snd_una > snd_nxt_start (recvNum)
	sent       int64  // payload bytes sent in the period
	unaStart   uint64 // snd_una at the start of the period
	dSPrev     int64  // dS of the previous period(s), accumulated over ACK-less periods
	dSHalt     int64  // bytes sent in the period the current halt was decided in

	// ACK-rate window of the period (Algorithm 1 line 3; see ackRate):
	// snd_una and the time at its start and at the period's last eligible
	// ACK. The start is the eligible ACK before the period's first one; with
	// none (rateOverT), the window is T and starts at snd_nxt_start or the
	// snd_una before the first eligible ACK, whichever is higher.
	rateFrom, rateTo       int64
	rateFromUna, rateToUna uint64
	rateOverT              bool
	lastAck                int64 // time of the last ACK
	lastEligible           bool  // the last ACK was eligible (it may start the next window)
	haveAck                bool
	lastClass              Class

	stats RPStats
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// NewRP builds an ACC reaction point from p for a NIC of env.LinkBps.
func NewRP(p *Params, env ccalgo.Env) (*RP, error) {
	if err := p.validateRP(env); err != nil {
		return nil, err
	}
	wire := float64(p.AckBytes+p.HeaderBytes) / float64(p.AckBytes)
	return &RP{
		period:     p.PeriodNs,
		ceFraction: p.CEFraction,
		mixedInc:   p.MixedCE == MixedCEIncrease,
		riLow:      p.RILowBps,
		riHigh:     p.RIHighBps,
		lowPeriods: p.LowPeriods,
		pThresh:    p.PThresh,
		lineRate:   env.LinkBps,
		minRate:    p.MinRateBps,
		wireFactor: wire,
		rs:         p.InitRateBps,
		nextPeriod: ccalgo.Never,
	}, nil
}

// RateBps returns R_s, the pacing rate.
func (r *RP) RateBps() float64 { return r.rs }

// HaltUntil returns the end of the source halt (t_NextPkt of Eq. 1).
func (r *RP) HaltUntil() int64 { return r.haltUntil }

// NextTimer returns the end of the current period T, or Never while idle.
func (r *RP) NextTimer() int64 { return r.nextPeriod }

// Halted reports whether the RP is in the source-halt state.
func (r *RP) Halted() bool { return r.halted }

// HaltNs returns t_Halt of the current or last halt, extensions included.
func (r *RP) HaltNs() int64 { return r.tHalt }

// LastClass returns the class of the last period processed.
func (r *RP) LastClass() Class { return r.lastClass }

// Stats returns the RP's counters.
func (r *RP) Stats() RPStats { return r.stats }

// OnSend accounts a data packet (dS, snd_nxt).
func (r *RP) OnSend(now int64, seq uint64, bytes int) {
	r.sent += int64(bytes)
	if end := seq + uint64(bytes); end > r.sndNxt {
		r.sndNxt = end
	}
}

// OnAck counts the ACK and its echoed TCD mark into the current period; the
// first ACK (again after an idle stop) starts the period timer.
func (r *RP) OnAck(now int64, a *ccalgo.AckEvent) { r.onAck(now, a) }

// OnNak treats a go-back-N NAK as a cumulative ACK: it acknowledges AckedSeq and
// carries the echoed mark.
func (r *RP) OnNak(now int64, a *ccalgo.AckEvent) { r.onAck(now, a) }

func (r *RP) onAck(now int64, a *ccalgo.AckEvent) {
	if r.nextPeriod == ccalgo.Never {
		// The first ACK starts the periods (Section 5, rxe_completer); what was
		// sent before it is the dS the first period's ACKs answer (Figure 7).
		r.nextPeriod = now + r.period
		r.unaStart = r.sndUna
		r.dSPrev = r.sent
		r.sent = 0
	}
	r.acks++
	switch a.Fields.Mark {
	case ccalgo.MarkCE:
		r.ce++
	case ccalgo.MarkUE:
		r.ue++
	}
	prevUna := r.sndUna
	if a.AckedSeq > r.sndUna {
		r.sndUna = a.AckedSeq
	}
	if r.sndUna > r.sndNxtStart { // eligible (line 2)
		if r.eligible == 0 { // the period's first: open its ACK-rate window
			r.rateOverT = !(r.haveAck && r.lastEligible)
			if r.rateOverT {
				r.rateFrom, r.rateFromUna = now, max(prevUna, r.sndNxtStart)
			} else {
				r.rateFrom, r.rateFromUna = r.lastAck, prevUna
			}
		}
		r.eligible++
		r.rateTo, r.rateToUna = now, r.sndUna
		r.lastEligible = true
	} else {
		r.lastEligible = false
	}
	r.lastAck = now
	r.haveAck = true
}

// OnTimer ends the period T due at now and runs Algorithm 1 on it.
func (r *RP) OnTimer(now int64) {
	if now < r.nextPeriod {
		return
	}
	r.endPeriod(now)
	idle := r.acks == 0 && r.sent == 0 && r.sndUna >= r.sndNxt && !r.halted
	if r.acks == 0 {
		r.dSPrev += r.sent
	} else {
		r.dSPrev = r.sent
	}
	r.acks, r.ce, r.ue, r.eligible, r.sent = 0, 0, 0, 0, 0
	r.unaStart = r.sndUna
	if idle {
		r.nextPeriod = ccalgo.Never
		r.dSPrev = 0
		r.haveAck, r.lastEligible = false, false
		return
	}
	r.nextPeriod += r.period
	if r.nextPeriod <= now {
		r.nextPeriod = now + r.period
	}
}

// endPeriod is Algorithm 1 at the end of a period.
func (r *RP) endPeriod(now int64) {
	r.stats.Periods++
	cls := Classify(r.acks, r.ce, r.ue, r.ceFraction)
	if cls == ClassMixedCE && r.mixedInc {
		cls = ClassUncongested
	}
	r.lastClass = cls
	ext := r.halted && r.extPending
	switch cls {
	case ClassCongested:
		r.nu, r.nv = 0, 0
		if !r.halted && r.sndUna > r.sndNxtStart { // line 2
			r.throttle(now)
		} else if ext { // line 6
			r.extend(now)
		}
	case ClassUndetermined:
		r.nu = 0
		r.nv++
		if r.nv > r.pThresh { // line 23
			r.setRate(r.rs / 2) // line 24
			r.stats.VictimHalvings++
		}
	case ClassMixedCE:
		// Some CE, not steadily congested, no UE: neither congested nor a
		// victim, and not uncongested either ("only when neither UE nor CE
		// marking is received"). The rate is held and both runs restart.
		r.nu, r.nv = 0, 0
		r.stats.Holds++
	case ClassUncongested, ClassNoAck:
		r.nv = 0
		ri := r.riHigh // lines 14-18
		if r.nu < r.lowPeriods {
			ri = r.riLow
		}
		r.setRate(r.rs + (r.lineRate-r.rs)/r.lineRate*ri) // line 19
		r.nu++                                            // line 20
		r.stats.Increases++
	}
	if ext && cls != ClassNoAck {
		r.extPending = false
	}
	if r.halted && !r.extPending && now >= r.haltUntil {
		r.halted = false
	}
}

func (r *RP) setRate(x float64) {
	if x < r.minRate {
		x = r.minRate
	}
	if x > r.lineRate {
		x = r.lineRate
	}
	r.rs = x
}

// throttle is Algorithm 1 lines 3-5 and SOURCEHALT (lines 27-34).
func (r *RP) throttle(now int64) {
	rate := r.ackRate() // line 3
	if rate < r.minRate {
		rate = r.minRate
	}
	if rate > r.lineRate {
		rate = r.lineRate
	}
	r.rsBefore = r.rs
	r.rs = rate // line 4
	r.rate = rate
	r.stats.Throttles++
	dS := r.dSPrev
	dA := int64(r.sndUna - r.unaStart)
	if dS <= dA { // line 28
		return
	}
	t := int64(float64(dS-dA) * r.wireFactor * 8e9 / rate) // line 29
	start := r.haltUntil
	if start < now {
		start = now
	}
	r.haltUntil = start + t // line 30
	r.tHalt = t
	r.halted = true          // line 31
	r.extPending = true      //
	r.sndNxtStart = r.sndNxt // line 32
	r.lastEligible = false   // ACKs up to snd_nxt_start are no longer eligible
	r.dSHalt = r.sent
	r.stats.Halts++
}

// ackRate is R of Algorithm 1 line 3, in wire bits/s: the bytes the period's
// eligible ACKs acknowledged (snd_una's advance) over the time they took to
// arrive, measured from the eligible ACK before the first of them to the last.
// Without an eligible ACK before the first (a flow's first period, the first
// after a halt or an idle stop), the time is T, as in the paper's
// recvNum x MTU / T.
func (r *RP) ackRate() float64 {
	if r.eligible == 0 || r.rateToUna <= r.rateFromUna {
		return 0
	}
	elapsed := r.rateTo - r.rateFrom
	if r.rateOverT || elapsed <= 0 {
		elapsed = r.period
	}
	return float64(r.rateToUna-r.rateFromUna) * r.wireFactor * 8e9 / float64(elapsed)
}

// extend is Algorithm 1 lines 7-10.
func (r *RP) extend(now int64) {
	if r.rsBefore <= 0 || r.rate <= 0 {
		return
	}
	x := float64(r.dSHalt) * (1 - r.rate/r.rsBefore) // line 7
	if x <= 0 {
		return
	}
	t := int64(x * r.wireFactor * 8e9 / r.rate) // line 8
	r.tHalt += t                                // line 9
	start := r.haltUntil
	if start < now {
		start = now
	}
	r.haltUntil = start + t // line 10
	r.stats.Extensions++
}
