// Package acc implements ACC, ACK-driven congestion control for lossless Ethernet
// (Zhang et al., "Revisiting Congestion Control for Lossless Ethernet", NSDI 2024;
// sections below are that paper's), with the TCD ternary congestion detection it
// relies on at the switch (Zhang et al., "Congestion Detection in Lossless
// Networks", SIGCOMM 2021, as ACC Section 2.2 summarises it).
//
// Roles and where they sit in the dataplane:
//   - CP (switchd tx+CC lcore, one per egress port): TCD's ternary port state,
//     evaluated where Params.MarkAt says (default at dequeue); packets through a
//     congestion port are marked CE, packets through an undetermined port UE
//     (tcd.go).
//   - NP (hostd rx lcore): echoes the mark and the send timestamp in the ACK of
//     every data packet (np.go).
//   - RP (hostd tx lcore, one per QP): Algorithm 1 of the paper, run at the end of
//     every period T: source halt, ACK-arrival-rate throttling, two-stage increase
//     and victim-flow halving (rp.go).
//
// Defaults are the paper's (Section 6.1 "Parameter setting"): T = base RTT,
// RI_Low = lineRate / 250, RI_High = 10 RI_Low, P_thresh = 1, 90 % CE fraction
// (Section 4.1), TCD queue threshold 2 MTU and max(T_on) = 24 us at 100 Gb/s.
//
// The ACK arrival rate R (Algorithm 1 line 3, Section 4.3) is measured, not
// counted: the bytes the period's eligible ACKs acknowledged over the time they
// took to arrive, from the eligible ACK before the first of them to the last.
// The paper's recvNum x MTU / T counts whole ACKs in a period, so with T = the
// base RTT it moves in steps of one ACK per RTT (1.49 Gb/s at 10 Gb/s and a 5.7
// us RTT, more than half a share of four flows) and the throttle sets each flow
// to its own rounded count. The period stays the base RTT (Section 6.1: T must
// be the base RTT so that a period's ACKs answer the period before); only the
// rate inside it is measured finer. Section 4.3's own corner case, T replaced by
// the inter-arrival time when one ACK arrives in several periods, is the
// one-ACK case of this rule. See rp.go for the details and the one case that
// keeps the paper's count over T.
package acc

import (
	"github.com/ccbed/ccbed/ccalgo"
	"strconv"
)

// SchemeName is the name ACC registers under.
const SchemeName = "acc"

// Paper defaults (Sections 4.1, 6.1, 6.2; TCD as Section 2.2 describes it).
const (
	// DefaultCEFraction is the fraction of CE-marked ACKs in a period above which
	// a flow is "steadily congested" (Section 4.1: 90 %).
	DefaultCEFraction = 0.9
	// MixedCEHold and MixedCEIncrease are the values of Params.MixedCE.
	MixedCEHold     = "hold"
	MixedCEIncrease = "increase"
	// DefaultRILowDivisor: RI_Low = lineRate / 250 (Section 6.1).
	DefaultRILowDivisor = 250
	// DefaultRIHighFactor: RI_High = 10 RI_Low (Section 6.1).
	DefaultRIHighFactor = 10
	// DefaultLowPeriods is the number of uncongested periods that use RI_Low before
	// RI_High (Algorithm 1 line 14: N_u < 2).
	DefaultLowPeriods = 2
	// DefaultPThresh is P_thresh, the UE periods a victim flow tolerates before it
	// halves its rate (Section 6.1, Appendix B.1: 1).
	DefaultPThresh = 1
	// DefaultPeriodNs is T when the environment gives no base RTT: the paper's
	// testbed value (Section 6.2: 50 us).
	DefaultPeriodNs = 50_000
	// DefaultMaxTOnNs is max(T_on) at DefaultMaxTOnRefBps (Section 6.1: 24 us at
	// 100 Gb/s).
	DefaultMaxTOnNs = 24_000
	// DefaultMaxTOnRefBps is the line rate DefaultMaxTOnNs was derived for.
	DefaultMaxTOnRefBps = 100e9
	// DefaultThresholdMTUs is TCD's queue threshold in MTUs (Section 6.1: 2 MTU).
	DefaultThresholdMTUs = 2
	// DefaultHeaderBytes is ccbed's per-packet wire overhead of a data packet
	// (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ccbed's 8-byte send timestamp,
	// the data format of package wire), so that rates measured from ACKs are
	// wire rates like the pacer's.
	DefaultHeaderBytes = 62
	// DefaultMinRateDivisor: the RP never paces below lineRate / 1000 (not in the
	// paper; a floor so that halving and ACK-rate estimates cannot reach zero).
	DefaultMinRateDivisor = 1000
	// DefaultMarkAt is where TCD classifies the port and marks: at dequeue. ACC
	// (Section 2.2) marks "packets passing through" a port without saying where;
	// the project's definition of TCD evaluates the state at dequeue, on the
	// queue the packet leaves behind, when the port's ON/OFF state is the one
	// the packet meets on the wire.
	DefaultMarkAt = ccalgo.MarkAtDequeue
)

// Params are ACC's parameters, TOML-decodable. DefaultParams fills the paper's
// values for an environment.
type Params struct {
	// PeriodNs is the control period T in ns (Section 4.1, 6.1: the base RTT).
	PeriodNs int64 `toml:"period_ns"`
	// CEFraction: a period whose CE-marked share of ACKs is above this is
	// "congested" (Section 4.1: 0.9).
	CEFraction float64 `toml:"ce_fraction"`
	// MixedCE is what a period with CE on CEFraction of its ACKs or fewer,
	// and no UE, does: MixedCEHold (the default) holds the rate, Section
	// 4.1's literal reading ("only when neither UE nor CE marking is
	// received, the flow is uncongested"); MixedCEIncrease treats such
	// transient CE as uncongested and increases. The paper does not say
	// which; the choice moves fairness both ways (docs/experiments.md).
	MixedCE string `toml:"mixed_ce"`
	// RILowBps and RIHighBps are the two increase steps (Section 4.5, 6.1).
	RILowBps  float64 `toml:"ri_low_bps"`
	RIHighBps float64 `toml:"ri_high_bps"`
	// LowPeriods is how many consecutive uncongested periods use RI_Low
	// (Algorithm 1 line 14: 2).
	LowPeriods int `toml:"ri_low_periods"`
	// PThresh is P_thresh (Algorithm 1 line 23: halve once N_v > P_thresh).
	PThresh int `toml:"p_thresh"`
	// InitRateBps is the rate a flow starts at (RDMA: line rate).
	InitRateBps float64 `toml:"init_rate_bps"`
	// MinRateBps is the lowest pacing rate (a safety floor, not in the paper).
	MinRateBps float64 `toml:"min_rate_bps"`
	// AckBytes is the MTU of Algorithm 1 line 3: the payload bytes of a full
	// data packet, which one ACK stands for. R itself counts the acknowledged
	// bytes exactly; AckBytes sets the payload-to-wire factor below.
	AckBytes int `toml:"ack_bytes"`
	// HeaderBytes is the wire overhead of one data packet. The pacer counts wire
	// bits, so the RP turns payload bytes (R's bytes, dS, dA) into wire bytes with
	// the factor (AckBytes + HeaderBytes) / AckBytes.
	HeaderBytes int `toml:"header_bytes"`
	// QueueThresholdBytes is TCD's queue threshold (2 MTU).
	QueueThresholdBytes int64 `toml:"queue_threshold_bytes"`
	// MaxTOnNs is TCD's max(T_on): how long a port must have been ON
	// (not paused) for a queue above the threshold to mean congestion.
	MaxTOnNs int64 `toml:"max_t_on_ns"`
	// MarkAt is where TCD classifies and marks: ccalgo.MarkAtEnqueue or
	// ccalgo.MarkAtDequeue (DefaultMarkAt).
	MarkAt string `toml:"mark_at"`
}

// DefaultParams returns the paper's defaults for env. max(T_on) is 24 us at
// 100 Gb/s and scales with 100 Gb/s / env.LinkBps: PFC's pause/resume hysteresis is
// a byte amount, so the ON period it produces lasts inversely to the line rate
// (the project's TCD definition: max(T_on) scales with the PFC pause/resume
// timing of the link).
func DefaultParams(env ccalgo.Env) *Params {
	mtu := env.MTU
	if mtu <= 0 {
		mtu = 1000
	}
	period := env.BaseRTT
	if period <= 0 {
		period = DefaultPeriodNs
	}
	p := &Params{
		PeriodNs:            period,
		CEFraction:          DefaultCEFraction,
		MixedCE:             MixedCEHold,
		LowPeriods:          DefaultLowPeriods,
		PThresh:             DefaultPThresh,
		AckBytes:            mtu,
		HeaderBytes:         DefaultHeaderBytes,
		QueueThresholdBytes: int64(DefaultThresholdMTUs * mtu),
		MaxTOnNs:            DefaultMaxTOnNs,
		MarkAt:              DefaultMarkAt,
	}
	if env.LinkBps > 0 {
		p.RILowBps = env.LinkBps / DefaultRILowDivisor
		p.RIHighBps = DefaultRIHighFactor * p.RILowBps
		p.InitRateBps = env.LinkBps
		p.MinRateBps = env.LinkBps / DefaultMinRateDivisor
		p.MaxTOnNs = int64(float64(DefaultMaxTOnNs) * DefaultMaxTOnRefBps / env.LinkBps)
	}
	return p
}

func paramErr(name string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: SchemeName, Param: name, Value: v, Reason: reason}
}

// validateRP checks the parameters the RP uses.
func (p *Params) validateRP(env ccalgo.Env) error {
	switch {
	case env.LinkBps <= 0:
		return paramErr("env.LinkBps", env.LinkBps, "line rate must be positive")
	case p.PeriodNs <= 0:
		return paramErr("period_ns", p.PeriodNs, "must be positive")
	case !(p.CEFraction >= 0 && p.CEFraction < 1):
		return paramErr("ce_fraction", p.CEFraction, "must be in [0, 1)")
	case p.MixedCE != MixedCEHold && p.MixedCE != MixedCEIncrease:
		return paramErr("mixed_ce", strconv.Quote(p.MixedCE), `must be "hold" or "increase"`)
	case !(p.RILowBps >= 0):
		return paramErr("ri_low_bps", p.RILowBps, "must be >= 0")
	case !(p.RIHighBps >= 0):
		return paramErr("ri_high_bps", p.RIHighBps, "must be >= 0")
	case p.LowPeriods < 0:
		return paramErr("ri_low_periods", p.LowPeriods, "must be >= 0")
	case p.PThresh < 0:
		return paramErr("p_thresh", p.PThresh, "must be >= 0")
	case !(p.MinRateBps > 0 && p.MinRateBps <= env.LinkBps):
		return paramErr("min_rate_bps", p.MinRateBps, "must be in (0, line rate]")
	case !(p.InitRateBps >= p.MinRateBps && p.InitRateBps <= env.LinkBps):
		return paramErr("init_rate_bps", p.InitRateBps, "must be in [min_rate_bps, line rate]")
	case p.AckBytes <= 0:
		return paramErr("ack_bytes", p.AckBytes, "must be positive")
	case p.HeaderBytes < 0:
		return paramErr("header_bytes", p.HeaderBytes, "must be >= 0")
	}
	return nil
}

// validateCP checks the parameters the CP uses.
func (p *Params) validateCP() error {
	switch {
	case p.QueueThresholdBytes < 0:
		return paramErr("queue_threshold_bytes", p.QueueThresholdBytes, "must be >= 0")
	case p.MaxTOnNs < 0:
		return paramErr("max_t_on_ns", p.MaxTOnNs, "must be >= 0")
	}
	if err := ccalgo.CheckMarkAt(SchemeName, p.MarkAt); err != nil {
		return err
	}
	return nil
}

func init() {
	ccalgo.Register(ccalgo.Define(SchemeName, "ACC: ACK-driven CC with TCD ternary marking (Zhang et al., NSDI'24)", DefaultParams,
		ccalgo.WithCP(func(p *Params, _ ccalgo.Env) (*CP, error) { return NewCP(p) }),
		ccalgo.WithNP(func(*Params, ccalgo.Env) (*NP, error) { return NewNP(), nil }),
		ccalgo.WithRP(NewRP),
	))
}

// ControlPeriodNs is the control period T (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	return p.PeriodNs, "ACC's control period T (period_ns)"
}
