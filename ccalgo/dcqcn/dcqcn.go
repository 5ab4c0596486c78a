// Package dcqcn implements DCQCN (Zhu et al., "Congestion Control for Large-Scale
// RDMA Deployments", SIGCOMM 2015) in ccbed's three roles. Where the paper
// leaves a detail open, the text below compares ccbed's choice with two
// reference simulators: [Z], the DCQCN authors' ns-3 simulator
// (github.com/bobzhuyb/ns3-rdma), and [H], the HPCC authors' ns-3 simulator
// (github.com/alibaba-edu/High-Precision-Congestion-Control), whose DCQCN is
// the "Mellanox" variant.
//
//   - CP (Section 3.1, "CP algorithm", Figure 5): RED-style ECN marking at the
//     egress queue, evaluated at dequeue on the queue left behind: no mark up to
//     Kmin, probability Pmax * (q - Kmin) / (Kmax - Kmin) between Kmin and Kmax,
//     always above Kmax. Defaults: the paper's Kmin = 5 KB, Kmax = 200 KB,
//     Pmax = 1 % at 40 Gb/s, with Kmin and Kmax scaled by link / 40 Gb/s as the
//     RoCC evaluation did (ccbed's choice).
//   - NP (Section 3.1, "NP algorithm", Figure 6): a CNP for a QP when a CE-marked
//     packet arrives and no CNP went to that QP in the last N = 50 us.
//   - RP (Section 3.1, "RP algorithm", Figure 7, equations (1)-(4)): on a CNP
//     R_T = R_C, R_C = R_C (1 - alpha / 2) (eq. 2), alpha = (1 - g) alpha + g
//     (eq. 1); alpha decays as alpha = (1 - g) alpha every K = 55 us without a CNP
//     (eq. 3); rate increases come from a timer (period T = 55 us) and a byte
//     counter (every B = 10 MB), counted since the last CNP, with F = 5: fast
//     recovery R_C = (R_T + R_C) / 2 (eq. 4) while both counts are below F,
//     additive increase R_T += R_AI once one reaches F, hyper increase
//     R_T += i * R_HAI (i = min count - F + 1) once both do.
//
// Alpha-update order: the rate is cut with the alpha held before the CNP, then
// alpha is updated (the order of the paper's Figure 7); the [Z] simulator
// updates alpha first, which cuts harder on the first CNP.
//
// Deviations, and ccbed's choices where the paper is silent:
//   - Kmin/Kmax scaled by link/40G (RoCC's evaluation); Pmax is not scaled.
//   - alpha starts at 1 ([H]; [Z] starts at 0.5) and the sender starts at line rate.
//   - The alpha timer and the increase timer start at the first CNP ([H]'s
//     behaviour): before any congestion the flow is at line rate, where neither
//     has anything to do, and alpha keeps its initial value for the first cut.
//   - At most one rate decrease per DecreaseIntervalUs (50 us, the CNP spacing
//     of the NP); [H] uses 4 us. A CNP inside the interval is held and applied
//     (cut and alpha update) when the interval ends, as [H]'s Mellanox model
//     and NICs do (a CNP sets a flag that the next decrease check consumes).
//     Dropping it instead would lose every CNP that arrives a little early:
//     the NP spaces CNPs by the same 50 us, so delay jitter on the way back
//     made 3-36 % of them vanish, alpha updates with them, and the baseline
//     weaker than real NICs.
//   - R_AI = 40 Mb/s (the paper's, at 40 Gb/s) and R_HAI = 200 Mb/s ([Z]'s
//     configured value) are not scaled with link speed; MinRate = 100 Mb/s.
//   - The CP draws its random numbers from a seeded xorshift64* generator, so
//     runs are reproducible.
//   - Optional "+win" variant (HPCC Section 5.1): Window caps bytes in flight at
//     line rate * base RTT.
//   - The NP implements the paper's per-QP 50 us rule, not [Z]'s fixed grid.
package dcqcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registered name.
const Name = "dcqcn"

// Params are DCQCN's parameters, TOML-decodable. DefaultParams gives the paper's
// values for a link.
type Params struct {
	// CP
	KminBytes int64   `toml:"kmin_bytes"` // no marking at or below this queue (default 5 KB * link/40G)
	KmaxBytes int64   `toml:"kmax_bytes"` // always mark above this queue (default 200 KB * link/40G)
	Pmax      float64 `toml:"pmax"`       // marking probability at Kmax (default 0.01)
	Seed      uint64  `toml:"seed"`       // seed of the CP's marking random numbers (default 1)
	MarkAt    string  `toml:"mark_at"`    // where the CP marks: "enqueue" or "dequeue" (default "dequeue", cp.go)

	// NP
	CNPIntervalUs float64 `toml:"cnp_interval_us"` // N: at most one CNP per QP per N us (default 50)

	// RP
	G                  float64 `toml:"g"`                    // alpha gain (default 1/256)
	InitAlpha          float64 `toml:"init_alpha"`           // alpha of a new QP (default 1)
	AlphaTimerUs       float64 `toml:"alpha_timer_us"`       // K: alpha decay period (default 55)
	DecreaseIntervalUs float64 `toml:"decrease_interval_us"` // at most one cut per this (default 50)
	IncreaseTimerUs    float64 `toml:"increase_timer_us"`    // T: rate increase timer (default 55)
	ByteCounterBytes   int64   `toml:"byte_counter_bytes"`   // B: rate increase every B bytes sent (default 10 MB; 0 = off)
	F                  int     `toml:"f"`                    // fast recovery steps (default 5)
	RAIMbps            float64 `toml:"rai_mbps"`             // additive increase step (default 40)
	RHAIMbps           float64 `toml:"rhai_mbps"`            // hyper increase step (default 200)
	MinRateMbps        float64 `toml:"min_rate_mbps"`        // floor of the rate (default 100)
	Window             bool    `toml:"window"`               // "+win": cap bytes in flight at line rate * base RTT
}

// DefaultParams returns the paper's defaults for env, with ccbed's choices
// where the paper gives none (package doc).
func DefaultParams(env ccalgo.Env) *Params {
	scale := env.LinkBps / 40e9
	return &Params{
		KminBytes:          int64(math.Round(5_000 * scale)),
		KmaxBytes:          int64(math.Round(200_000 * scale)),
		Pmax:               0.01,
		Seed:               1,
		MarkAt:             DefaultMarkAt,
		CNPIntervalUs:      50,
		G:                  1.0 / 256,
		InitAlpha:          1,
		AlphaTimerUs:       55,
		DecreaseIntervalUs: 50,
		IncreaseTimerUs:    55,
		ByteCounterBytes:   10_000_000,
		F:                  5,
		RAIMbps:            40,
		RHAIMbps:           200,
		MinRateMbps:        100,
	}
}

func bad(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

func (p *Params) validateCP() error {
	switch {
	case p.KminBytes < 0:
		return bad("kmin_bytes", p.KminBytes, "must be >= 0")
	case p.KmaxBytes < p.KminBytes:
		return bad("kmax_bytes", p.KmaxBytes, "must be >= kmin_bytes")
	case !(p.Pmax >= 0 && p.Pmax <= 1):
		return bad("pmax", p.Pmax, "must be in [0, 1]")
	}
	if err := ccalgo.CheckMarkAt(Name, p.MarkAt); err != nil {
		return err
	}
	return nil
}

func (p *Params) validateNP() error {
	if !(p.CNPIntervalUs >= 0) {
		return bad("cnp_interval_us", p.CNPIntervalUs, "must be >= 0")
	}
	return nil
}

func (p *Params) validateRP() error {
	switch {
	case !(p.G > 0 && p.G <= 1):
		return bad("g", p.G, "must be in (0, 1]")
	case !(p.InitAlpha >= 0 && p.InitAlpha <= 1):
		return bad("init_alpha", p.InitAlpha, "must be in [0, 1]")
	case !(p.AlphaTimerUs > 0):
		return bad("alpha_timer_us", p.AlphaTimerUs, "must be > 0")
	case !(p.DecreaseIntervalUs >= 0):
		return bad("decrease_interval_us", p.DecreaseIntervalUs, "must be >= 0")
	case !(p.IncreaseTimerUs > 0):
		return bad("increase_timer_us", p.IncreaseTimerUs, "must be > 0")
	case p.ByteCounterBytes < 0:
		return bad("byte_counter_bytes", p.ByteCounterBytes, "must be >= 0")
	case p.F < 1:
		return bad("f", p.F, "must be >= 1")
	case !(p.RAIMbps >= 0) || math.IsInf(p.RAIMbps, 0):
		return bad("rai_mbps", p.RAIMbps, "must be finite and >= 0")
	case !(p.RHAIMbps >= 0) || math.IsInf(p.RHAIMbps, 0):
		return bad("rhai_mbps", p.RHAIMbps, "must be finite and >= 0")
	case !(p.MinRateMbps > 0):
		return bad("min_rate_mbps", p.MinRateMbps, "must be > 0")
	}
	return nil
}

func init() {
	ccalgo.Register(ccalgo.Scheme{
		Name:          Name,
		Doc:           "DCQCN (SIGCOMM'15): RED/ECN marking, CNP per QP per 50 us, alpha-based rate machine",
		DefaultParams: func(env ccalgo.Env) any { return DefaultParams(env) },
		NewCP:         ccalgo.CPFactory(Name, DefaultParams, NewCP),
		NewNP:         ccalgo.NPFactory(Name, DefaultParams, NewNP),
		NewRP:         ccalgo.RPFactory(Name, DefaultParams, NewRP),
	})
}

// ControlPeriodNs is the shorter of the RP's timers, the rate-increase timer T
// and the alpha timer K (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	if p.AlphaTimerUs < p.IncreaseTimerUs {
		return int64(p.AlphaTimerUs * 1e3), "DCQCN's alpha timer K (alpha_timer_us)"
	}
	return int64(p.IncreaseTimerUs * 1e3), "DCQCN's rate-increase timer T (increase_timer_us)"
}
