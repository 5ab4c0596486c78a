// Package rcc implements RCC, receiver-driven RDMA congestion control with
// congestion divide-and-conquer (Zhang et al., "RCC: Enabling Receiver-Driven
// RDMA Congestion Control With Congestion Divide-and-Conquer in Datacenter
// Networks", IEEE/ACM Transactions on Networking, 2023; sections and equations
// below are that paper's).
//
// Roles, and where they sit in ccbed's dataplane (RCC has no switch role: it runs
// over a plain switch):
//
//   - NP (hostd rx lcore, one per receiving host): Algorithm 1 (Section III-B) for
//     every data packet, per QP: line 3, the one-way delay now - SendTS; line 4,
//     the number N of active messages counted from the First/Last BTH opcodes
//     (Section III-D); line 5, the explicit window assignment (EWA) C * RTT_base / N;
//     lines 6-9, the sticky PID state; line 10, the last-hop test on the bytes B_R
//     received in the last round (Section III-C: B_R > C * min_i RTT_base_i * eta);
//     line 13, congestion detection, n consecutive samples with
//     RTT(t) > RTT_base (1 + delta) (Eq. 1); lines 7 and 15, PID control with
//     RTT_target = RTT_base (1 + delta/2) (Eq. 2), E = RTT - RTT_target (Eq. 3),
//     U = U + Kp E + Kd (E - E_prev) (Eq. 4) and W = W (1 - tanh U) (Eq. 5),
//     never above the EWA share. The result goes back in every ACK
//     (AckFields.Window), with N (ActiveFlows) and B_R (RecvBytes).
//   - RP (hostd tx lcore, one per QP): starts at line rate (Section III-B: "each
//     flow starts at line rate"), takes the window of every ACK and paces at
//     window / RTT_base (Section III-D), RTT_base being the smallest RTT seen.
//
// Two modes (Params.Mode): "receiver" is the paper's design above. "sender" is the
// deployment choice of Section III-G for hosts without synchronised clocks: the
// receiver only measures and feeds back N and B_R; the sender runs congestion
// detection, the last-hop test, EWA and PID on its own RTT samples, with the same
// code (the controller type of this file).
//
// Defaults (Section III-F and V-A): n = 3, delta = 0.2, eta = 0.95, Kp = 1e4 1/s,
// Kd = 1e5 1/s (E is in seconds, U is dimensionless); C = Env.LinkBps.
//
// Deviations from the paper, and why:
//
//   - RTT_base for the window. The receiver measures one-way delay, which the
//     paper calls RTT; C times a one-way delay is only about half a
//     bandwidth-delay product, and a window that small caps a flow at about half
//     its share. So the delay tests (Eq. 1-3) run on the one-way delay, as in the
//     paper, while EWA, the round of B_R and the PID period use a round-trip
//     base: Params.BaseRTTNs (default Env.BaseRTT, the configured expected base
//     RTT), or with BaseRTTNs = 0 twice the minimum one-way delay seen on any QP
//     (symmetric paths; ACKs are small and not serialised behind data, so this
//     overestimates: measured in closed-loop runs, it leaves about one packet per
//     flow more in the queue at 10 Gb/s). EWA uses this min_i RTT_base_i (the
//     one of the last-hop test) for every QP, where Section III-C's RTT_i^base
//     is per connection (Table I keeps a base RTT per connection, and Eq. 1-3
//     here do use each QP's own minimum one-way delay, so RTT_target scales
//     with the flow's base as Eq. 2 says). Tried for EWA: each QP's own round
//     trip (twice its minimum one-way delay; or the round plus twice its
//     one-way excess over the smallest). With RTT_base measured, senders with
//     unequal RTTs then get equal rates (the closed-loop TestUnequalRTTs: Jain
//     0.9997, utilisation 0.996, 1.5 KB of queue, against 0.80), but in an
//     N-to-1 start the later QPs' first packets meet the first round trip's
//     queue, their bases and windows stay inflated until that queue drains,
//     and TestLastHopIncast's shares come out 2-8 % off and settle in 12 to
//     99 base RTTs instead of 2. So one round for all QPs stays: unequal RTTs
//     get shares that fall with the RTT (TestUnequalRTTs).
//   - Windows are in payload bytes (bytes in flight, as the RP contract counts
//     them) while C counts wire bits: the NP scales the share by payload / wire
//     bytes of the largest packet seen on the QP; the RP scales its pacing rate up
//     by (MTU + HeaderBytes) / MTU so that pacing and window agree on the wire.
//   - The PID step (Eq. 4-5) runs once per round (RTT_base) per flow, on the
//     latest sample, not on every packet: Table I lists an "RTT update timer" per
//     connection, and applying the multiplicative Eq. 5 on every packet of a
//     100 Gb/s flow would act tens of times on the same, not yet reacted-to
//     queue. Between steps every ACK carries the current window.
//   - Entering PID, U starts at 0, W at the current EWA share and E_prev at the
//     error of the previous sample, so that the derivative term starts from the
//     measured trend rather than from an arbitrary 0.
//   - Algorithm 1 runs congestion detection only when the last-hop test fails
//     (line 13); a sample taken under last-hop congestion (line 11) breaks the
//     run of n consecutive samples.
//   - B_R is a sliding estimate: bytes of the current round plus the previous
//     round's bytes weighted by the part of it still inside the last round-time.
//     In the first round after the receiver was idle it is extrapolated from the
//     bytes received since (the first packet excluded) over the time elapsed, so
//     that a line-rate start is not mistaken for in-network congestion, which
//     would lock the flow into PID for good.
//   - Anti-windup: when Eq. 5 takes W past a bound (the EWA share above, the
//     minimum window below), W stops at the bound and U is reset to 0. U is the
//     rate at which W changes (Section III-E: Eq. 4 integrates, Eq. 5 integrates
//     again); left alone, it winds up while W sits at the bound (a line-rate
//     start can queue several RTT_base of delay) and then holds W at the bound
//     for hundreds of rounds after the queue is gone (seen in a closed-loop run: a
//     100 Gb/s flow stuck at one MTU for 600 us).
//   - Windows are floored at MinWindowBytes (one MTU by default) so that a flow can
//     always send a packet; Eq. 5 alone can reach 0.
//   - "Until the flow ends": in receiver mode the PID state is reset when the
//     last packet of a message arrives (the QP's next message starts afresh,
//     keeping RTT_base). In sender mode the RP does not see message boundaries;
//     the PID state lasts as long as the RP (the QP).
//   - The RP sends at line rate until the first ACK that carries a window, and
//     treats a NAK's fields like an ACK's.
//
// Fairness under in-network congestion: the paper's claim is not met, and the
// equations are kept as written. Section III-E says the derivative term makes
// "the increment of window size ... gradually decrease as the window becomes
// larger, eliminating the unfairness caused by pure MIMD algorithms", and
// Section IV-A's fixed point (Eq. 11: W_i / R_i equal for all flows) "also
// represents the fairness of all flows in equilibrium"; Section VI-B (Fig.
// 16(b)) shows two flows at 12 Gb/s each on 25 Gb/s. But flows through one
// bottleneck see one queueing delay: with equal base delays they have the
// same E (Eq. 3) and the same increments of U (Eq. 4), and Eq. 5 scales every
// window by the same factor, so the ratio of any two windows stays what it
// was. Kd multiplies the change of the shared error, nothing of the flow's
// own. In the fluid model (Eq. 6-9) every set of windows that fills the link
// at R = R_ref is a fixed point; Eq. 11 follows only from the section's
// assumption "that all flows are synchronized", and Section IV-B's
// linearisation takes W_0 = C R_0 / N (Eq. 13) and follows only the common
// mode. What differs between flows (where U started, the anti-windup resets,
// the phase of each flow's PID step, its own delay samples) does not depend
// on the flow's share. So the shares are what each flow's history left, and
// they wander. The closed-loop tests, over start gaps of 0.1 to 0.7 ms:
// Jain 0.936-0.998 for two flows through a 25 Gb/s in-network bottleneck
// (0.936: 14.3 and 8.4 Gb/s against the paper's 12 each), 0.927-0.999 for
// two at 100 Gb/s, 0.41-0.78 for four at 100 Gb/s (TestInNetworkShares).
// With two bottlenecks in series it is worse and does not depend on history:
// Eq. 2 scales a flow's target with its own base delay, not with the queues
// it crosses, so while the one-bottleneck flows hold each queue at their
// target (delta/2 of a three-link delay), a flow across both sees more
// queueing delay than its target allows (delta/2 of a four-link delay), its
// E stays positive, Kp integrates it into U, and Eq. 5 holds it at the
// minimum window: 0.89 Gb/s against the max-min 45.9 in a 100 Gb/s parking
// lot, Jain 0.673 (TestParkingLot); Fig. 15's flow 1 falls the same way
// (TestTwoBottlenecks).
//
// Normalisations tried, Jain for two flows at 25 Gb/s / four at 100 Gb/s over
// the same start gaps: the paper's step once per round on the latest sample
// (this code; above); one step per packet with the round's gains spread over
// its packets (Eq. 6 and 9 discretised per ACK: U += Kp E x MTU/W + Kd dE,
// W -= tanh(U) x MTU), 0.84-0.98 / 0.33-0.52; per packet with the gains
// normalised by the EWA share, so that a flow reacts in proportion to its
// rate, 0.997-1.000 / 0.33-0.35 (the last flow to start takes 77-80 Gb/s of
// 100), and 0.808 in the parking lot at a 1 ms gap; Algorithm 1 literally,
// Eq. 4-5 on every packet, equal shares but a limit cycle near the floor
// (links 36-55 % used); the sender-side variant (Section III-G) at a 0.5 ms
// gap, as receiver mode (0.952 / 0.688, parking lot 0.673); smaller gains,
// Section IV-D's Kp = 16, Kd = 7e3 (0.952-0.998 / 0.35-0.50) or Kp = 1e3,
// Kd = 1e4 (0.950-1.000 / 0.68-0.77). No scaling of the gains can do it:
// every flow's gains act on the same shared error, so the fixed points stay
// a continuum. Fairness needs a term of the flow's own (its share of the
// queue, as FAST TCP's alpha, or an additive increase) that the paper does
// not have.
package rcc

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registry name.
const Name = "rcc"

// Modes of Params.Mode.
const (
	ModeReceiver = "receiver" // Algorithm 1 at the receiver (Section III-B)
	ModeSender   = "sender"   // sender-side variant (Section III-G)
)

// Params are RCC's parameters. Each is used by both roles (the same struct
// configures NP and RP, so that the two sides agree).
type Params struct {
	// Mode is "receiver" (the paper's design) or "sender" (Section III-G).
	Mode string `toml:"mode"`
	// N is the number of consecutive delay samples above RTT_base (1 + delta) that
	// signal congestion (Eq. 1; Section III-F: 3).
	N int `toml:"n"`
	// Delta is the allowed queuing delay as a fraction of RTT_base (Eq. 1, 2;
	// Section III-F: 0.2). RTT_target = RTT_base (1 + Delta/2).
	Delta float64 `toml:"delta"`
	// Eta is the expected last-hop utilisation of the last-hop test (Section
	// III-C, III-F: 0.95).
	Eta float64 `toml:"eta"`
	// Kp is the proportional gain of Eq. 4 in 1/s (E is in seconds, U has no
	// unit). Section V-A: 1e4; Section IV-D suggests [1, 16] for robustness.
	Kp float64 `toml:"kp"`
	// Kd is the derivative gain of Eq. 4 in 1/s. Section V-A: 1e5; Section IV-D
	// suggests [1e3, 7e3].
	Kd float64 `toml:"kd"`
	// LinkBps is C, the last-hop capacity in bits/s (wire bits). Default:
	// Env.LinkBps.
	LinkBps float64 `toml:"link_bps"`
	// BaseRTTNs is the round-trip base time in ns used for EWA (C * RTT_base / N),
	// the round of B_R and the PID period. Default: Env.BaseRTT, the expected
	// base RTT. 0: measured (receiver: twice the minimum one-way delay seen on
	// any QP; sender: the flow's minimum RTT). In sender mode with
	// unsynchronised clocks the receiver cannot measure it, so 0 there falls
	// back to Env.BaseRTT.
	BaseRTTNs int64 `toml:"base_rtt_ns"`
	// MTU is the payload bytes of a full data packet. Default: Env.MTU.
	MTU int `toml:"mtu"`
	// HeaderBytes is the wire overhead of a data packet (Ethernet, IPv4, UDP, BTH,
	// timestamp: 62 B), used to convert between payload and wire bytes where no
	// packet says it.
	HeaderBytes int `toml:"header_bytes"`
	// MinWindowBytes is the smallest window ever assigned, bytes. Default: MTU.
	MinWindowBytes int64 `toml:"min_window_bytes"`
}

// DefaultHeaderBytes is the wire overhead of a ccbed data packet: Ethernet 14,
// IPv4 20, UDP 8, BTH 12, send timestamp 8.
const DefaultHeaderBytes = 62

// DefaultParams returns the paper's defaults for env.
func DefaultParams(env ccalgo.Env) *Params {
	mtu := env.MTU
	if mtu <= 0 {
		mtu = 1000
	}
	return &Params{
		Mode:           ModeReceiver,
		N:              3,
		Delta:          0.2,
		Eta:            0.95,
		Kp:             1e4,
		Kd:             1e5,
		LinkBps:        env.LinkBps,
		BaseRTTNs:      env.BaseRTT,
		MTU:            mtu,
		HeaderBytes:    DefaultHeaderBytes,
		MinWindowBytes: int64(mtu),
	}
}

func init() {
	ccalgo.Register(ccalgo.Scheme{
		Name:          Name,
		Doc:           "RCC: receiver-driven EWA + PID window control (Zhang et al., ToN 2023)",
		DefaultParams: func(env ccalgo.Env) any { return DefaultParams(env) },
		NewNP: func(p any, env ccalgo.Env) (ccalgo.NotificationPoint, error) {
			return NewNP(p, env)
		},
		NewRP: func(p any, env ccalgo.Env) (ccalgo.ReactionPoint, error) {
			return NewRP(p, env)
		},
	})
}

func bad(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

// config is the validated, per-packet form of Params.
type config struct {
	sender   bool
	n        int
	delta    float64
	eta      float64
	kp, kd   float64 // 1/s
	bytesPNs float64 // C in bytes per ns
	baseRTT  int64   // ns; 0 = measured
	mtu      int
	hdr      int
	minWin   float64
}

// resolve validates p (nil: defaults for env) and returns the config.
func resolve(p any, env ccalgo.Env) (config, error) {
	var pp *Params
	switch v := p.(type) {
	case nil:
		pp = DefaultParams(env)
	case *Params:
		if v == nil {
			pp = DefaultParams(env)
		} else {
			pp = v
		}
	default:
		return config{}, bad("params", p, "want *rcc.Params")
	}
	c := config{n: pp.N, delta: pp.Delta, eta: pp.Eta, kp: pp.Kp, kd: pp.Kd,
		baseRTT: pp.BaseRTTNs, mtu: pp.MTU, hdr: pp.HeaderBytes}
	switch pp.Mode {
	case ModeReceiver, "":
	case ModeSender:
		c.sender = true
	default:
		return config{}, bad("mode", pp.Mode, `want "receiver" or "sender"`)
	}
	link := pp.LinkBps
	if link == 0 {
		link = env.LinkBps
	}
	switch {
	case c.n < 1:
		return config{}, bad("n", c.n, "must be >= 1")
	case !(c.delta > 0 && c.delta < 1):
		return config{}, bad("delta", c.delta, "must be in (0, 1)")
	case !(c.eta > 0 && c.eta < 1):
		return config{}, bad("eta", c.eta, "must be in (0, 1)")
	case !(c.kp >= 0) || math.IsInf(c.kp, 0):
		return config{}, bad("kp", c.kp, "must be finite and >= 0")
	case !(c.kd >= 0) || math.IsInf(c.kd, 0):
		return config{}, bad("kd", c.kd, "must be finite and >= 0")
	case !(link > 0) || math.IsInf(link, 0):
		return config{}, bad("link_bps", link, "must be > 0 (set it or Env.LinkBps)")
	case c.baseRTT < 0:
		return config{}, bad("base_rtt_ns", c.baseRTT, "must be >= 0")
	case c.mtu <= 0:
		return config{}, bad("mtu", c.mtu, "must be > 0")
	case c.hdr < 0:
		return config{}, bad("header_bytes", c.hdr, "must be >= 0")
	case pp.MinWindowBytes < 0:
		return config{}, bad("min_window_bytes", pp.MinWindowBytes, "must be >= 0")
	}
	c.bytesPNs = link / 8e9
	c.minWin = float64(pp.MinWindowBytes)
	if c.sender && c.baseRTT == 0 {
		c.baseRTT = env.BaseRTT
	}
	return c, nil
}

// controller is one flow's RCC window controller: congestion detection (Eq. 1),
// the sticky PID state (Alg. 1 lines 6-9) and Eq. 2-5. The NP keeps one per QP in
// receiver mode, the RP one in sender mode. Delays are in ns: one-way delays at
// the receiver, RTTs at the sender.
type controller struct {
	base    int64   // RTT_base: minimum delay seen; valid when hasBase
	hasBase bool    //
	over    int     // consecutive samples above RTT_base (1 + delta)
	inPID   bool    // the flow is under PID control (sticky)
	u       float64 // control factor U (Eq. 4)
	ePrev   float64 // E(t-1), seconds
	w       float64 // window W (Eq. 5), payload bytes
	nextPID int64   // time of the next PID step (once per round)
}

// sample records a delay sample: RTT_base is the minimum seen (Alg. 1 line 3).
func (c *controller) sample(delay int64) {
	if !c.hasBase || delay < c.base {
		c.base = delay
		c.hasBase = true
	}
}

// target returns RTT_target = RTT_base (1 + delta/2) in ns (Eq. 2).
func (c *controller) target(cfg *config) float64 {
	return float64(c.base) * (1 + cfg.delta/2)
}

// window runs lines 6-19 of Algorithm 1 for one delay sample (already passed
// to sample) and returns the window to assign, payload bytes. fair is the EWA
// share, lastHop the result of the last-hop test, period the PID period (ns).
func (c *controller) window(now, delay int64, fair float64, lastHop bool, period int64, cfg *config) float64 {
	e := (float64(delay) - c.target(cfg)) * 1e-9 // Eq. 3, seconds
	if !c.inPID {
		if lastHop { // lines 10-11: last-hop congestion, EWA
			c.over = 0
			c.ePrev = e
			c.w = fair
			return clampWindow(fair, fair, cfg)
		}
		// Line 13: congestion detection, n consecutive samples over Eq. 1.
		if float64(delay) > float64(c.base)*(1+cfg.delta) {
			c.over++
		} else {
			c.over = 0
		}
		if c.over < cfg.n { // line 17: no in-network congestion, EWA
			c.ePrev = e
			c.w = fair
			return clampWindow(fair, fair, cfg)
		}
		// Line 15: in-network congestion; PID from here on (lines 6-9).
		c.inPID = true
		c.u = 0
		c.w = fair
		c.nextPID = now
	}
	if now >= c.nextPID {
		c.u += cfg.kp*e + cfg.kd*(e-c.ePrev) // Eq. 4
		c.ePrev = e
		c.w *= 1 - math.Tanh(c.u) // Eq. 5
		c.nextPID = now + period
		if w := clampWindow(c.w, fair, cfg); w != c.w {
			c.u = 0 // anti-windup: W stopped at a bound
		}
	}
	c.w = clampWindow(c.w, fair, cfg)
	return c.w
}

// endFlow forgets the flow's congestion state; RTT_base stays (same path).
func (c *controller) endFlow() {
	c.over = 0
	c.inPID = false
	c.u = 0
	c.ePrev = 0
	c.w = 0
	c.nextPID = 0
}

// clampWindow bounds w by the EWA share fair (Alg. 1 line 15: "the upper bound of
// the sending window is set to be the fair share") and by the minimum window.
func clampWindow(w, fair float64, cfg *config) float64 {
	if w > fair {
		w = fair
	}
	if w < cfg.minWin {
		w = cfg.minWin
	}
	if w < 1 {
		w = 1
	}
	return w
}

// ewaShare is Section III-D's window C * rtt / n, converted from wire to payload
// bytes by payloadFrac.
func ewaShare(cfg *config, rtt int64, n int, payloadFrac float64) float64 {
	if n < 1 {
		n = 1
	}
	return cfg.bytesPNs * float64(rtt) / float64(n) * payloadFrac
}

// lastHopFull is the last-hop test of Section III-C: B_R > C * round * eta, B_R in
// wire bytes received over the last round (ns).
func lastHopFull(cfg *config, recvBytes float64, round int64) bool {
	return round > 0 && recvBytes > cfg.bytesPNs*float64(round)*cfg.eta
}
