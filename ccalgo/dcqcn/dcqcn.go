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
// Modelling choices. Each is a parameter; the default is named with whose
// choice it is. [P] is the paper (Section 3.1, "RP algorithm", Figure 7, and
// the parameter values it gives), [N] ns-3's Mellanox model ([H] and its
// descendants, e.g. inet-tub/ns3-datacenter, src/point-to-point/model/
// rdma-hw.cc), named after Mellanox's ConnectX implementation. ccbed's defaults are the
// paper's wherever the paper states a rule, because ccbed reproduces papers
// and the DCQCN paper is what the papers that compare against DCQCN cite; a
// cross-check against ns-3 sets the [N] column (testbed's ns3_config does it
// from the simulator's config.txt).
//
//	choice                  parameter             default (whose)      [N]
//	target on a cut         clamp_target_rate     true: R_T = R_C [P]  false: R_T kept unless an
//	                                                                   increase event came since the last cut
//	alpha rises             alpha_update          "cut": at each cut,  "timer": every K from the first
//	                                              decays every K       CNP, up if a CNP came in the last K
//	                                              without one [P]
//	CNPs at the NP          cnp_interval_us       50: one per QP per   0: one per CE-marked packet (a flag
//	                                              50 us [P]            on that packet's ACK)
//	cuts at most every      decrease_interval_us  50 us (ccbed: the    4 us (RATE_DECREASE_INTERVAL), on a
//	                                              NP's CNP spacing)    grid from the first CNP
//	byte counter            byte_counter_bytes    10 MB [P]            none (0)
//	hyper increase without  timer_hyper_increase  false: additive      true: R_T += R_HAI per timer event
//	a byte counter                                increase only [P]    after the first additive one
//	end of fast recovery    f                     5 [P]: events 1-4    FAST_RECOVERY_TIMES n = f - 1:
//	                                              recover, 5 adds      events 1..n recover
//	RED by link rate        ecn_by_link           Kmin/Kmax scaled by  KMIN_MAP / KMAX_MAP / PMAX_MAP
//	                                              link/40G (ccbed)
//	K, T, g, R_AI, R_HAI    alpha_timer_us, ...   55, 55, 1/256,       ALPHA_RESUME_INTERVAL, RP_TIMER,
//	                                              40M, 200M [P]/[Z]    EWMA_GAIN, RATE_AI, RATE_HAI
//
// Why ccbed clamps by default although ns-3's Mellanox model does not by
// default (CLAMP_TARGET_RATE 0): the paper's Figure 7 sets R_T = R_C
// on every cut, and the paper's analysis and results are of that algorithm.
// The choice moves a loaded fabric's large-flow tail by a factor of several
// (docs/experiments.md, "ccbed against the ns-3 simulator's models"), so it
// is a parameter, not a fixed rule.
//
// One difference stays outside the scheme: ns-3's CNP is a flag on the ACK
// of the marked packet, queued with data at the switches and paused by PFC
// with it; ccbed's hostd sends a CNP as a frame of its own, which switches
// send ahead of data (docs/experiments.md says what that changes).
//
// Other choices where the paper is silent:
//   - Kmin/Kmax scaled by link/40G (RoCC's evaluation); Pmax is not scaled.
//   - alpha starts at 1 ([H]; [Z] starts at 0.5) and the sender starts at line rate.
//   - The alpha timer and the increase timer start at the first CNP ([H]'s
//     behaviour): before any congestion the flow is at line rate, where neither
//     has anything to do, and alpha keeps its initial value for the first cut.
//   - A CNP inside the decrease interval is held and applied (cut and alpha
//     update) when the interval ends, as [H]'s Mellanox model and NICs do (a
//     CNP sets a flag that the next decrease check consumes). Dropping it
//     instead would lose every CNP that arrives a little early: the NP spaces
//     CNPs by the same 50 us, so delay jitter on the way back made 3-36 % of
//     them vanish, alpha updates with them, and the baseline weaker than real
//     NICs. [N] checks on a fixed grid (every interval from the first CNP,
//     the first check one interval after it); ccbed cuts at once when the
//     last cut is an interval old.
//   - R_AI = 40 Mb/s (the paper's, at 40 Gb/s) and R_HAI = 200 Mb/s ([Z]'s
//     configured value) are not scaled with link speed; MinRate = 100 Mb/s.
//   - The CP draws its random numbers from a seeded xorshift64* generator, so
//     runs are reproducible.
//   - Optional "+win" variant (HPCC Section 5.1): Window caps bytes in flight at
//     line rate * base RTT ([N]'s HAS_WIN 1).
//   - The NP implements the paper's per-QP 50 us rule, not [Z]'s fixed grid.
package dcqcn

import (
	"fmt"
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registered name.
const Name = "dcqcn"

// Params are DCQCN's parameters, TOML-decodable. DefaultParams gives the paper's
// values for a link; the package doc says, for each modelling choice, which
// default is the paper's and which the NICs' or ns-3's.
type Params struct {
	// CP
	KminBytes int64   `toml:"kmin_bytes"` // no marking at or below this queue (default 5 KB * link/40G)
	KmaxBytes int64   `toml:"kmax_bytes"` // always mark above this queue (default 200 KB * link/40G)
	Pmax      float64 `toml:"pmax"`       // marking probability at Kmax (default 0.01)
	Seed      uint64  `toml:"seed"`       // seed of the CP's marking random numbers (default 1)
	MarkAt    string  `toml:"mark_at"`    // where the CP marks: "enqueue" or "dequeue" (default "dequeue", cp.go)
	// ECNByLink gives Kmin, Kmax and Pmax by the port's link rate, as ns-3's
	// KMIN_MAP / KMAX_MAP / PMAX_MAP do: a port whose rate has an entry
	// marks with it, any other port with kmin_bytes, kmax_bytes and pmax
	// (default: none).
	ECNByLink []LinkECN `toml:"ecn_by_link"`

	// NP

	// CNPIntervalUs is N: at most one CNP per QP per N us (default 50, the
	// paper's); 0 sends a CNP for every CE-marked packet (ns-3's Mellanox
	// model, whose receiver flags every ACK of a marked packet).
	CNPIntervalUs float64 `toml:"cnp_interval_us"`

	// RP
	G         float64 `toml:"g"`          // alpha gain (default 1/256)
	InitAlpha float64 `toml:"init_alpha"` // alpha of a new QP (default 1)
	// AlphaTimerUs is K, the alpha timer's period (default 55).
	AlphaTimerUs float64 `toml:"alpha_timer_us"`
	// AlphaUpdate is when alpha rises: AlphaOnCut (default, the paper's
	// Figure 7: alpha = (1 - g) alpha + g at each cut, decaying every K
	// without one) or AlphaOnTimer (ns-3's Mellanox model:
	// every K from the first CNP, alpha rises if a CNP came in the last K,
	// else decays; a cut only uses it).
	AlphaUpdate string `toml:"alpha_update"`
	// DecreaseIntervalUs: at most one cut per this (default 50, the NP's
	// CNP spacing; ns-3's RATE_DECREASE_INTERVAL, 4 us in its configs).
	DecreaseIntervalUs float64 `toml:"decrease_interval_us"`
	// ClampTargetRate: a cut sets the target rate to the current rate first
	// (default true, the paper's eq. 2 step). False is ns-3's
	// CLAMP_TARGET_RATE 0 (its model's default): the target is kept, unless
	// a rate increase event came since the previous cut.
	ClampTargetRate bool `toml:"clamp_target_rate"`
	// IncreaseTimerUs is T, the rate-increase timer (default 55).
	IncreaseTimerUs float64 `toml:"increase_timer_us"`
	// ByteCounterBytes is B: a rate increase every B bytes sent (default
	// 10 MB; 0 = off, as in ns-3's Mellanox model).
	ByteCounterBytes int64 `toml:"byte_counter_bytes"`
	// TimerHyperIncrease: with the byte counter off, the timer alone takes
	// the RP through the stages: fast recovery before its F-th event,
	// additive increase at it, hyper increase (R_T += R_HAI per event)
	// after it, as ns-3's Mellanox model does. False (default, the paper's
	// rule): hyper increase needs both counters at F, so without a byte
	// counter the RP stays in additive increase.
	TimerHyperIncrease bool `toml:"timer_hyper_increase"`
	// F is the increase event at which fast recovery ends (default 5): the
	// events before it are fast recovery, so ns-3's FAST_RECOVERY_TIMES n
	// is F = n + 1.
	F           int     `toml:"f"`
	RAIMbps     float64 `toml:"rai_mbps"`      // additive increase step (default 40)
	RHAIMbps    float64 `toml:"rhai_mbps"`     // hyper increase step (default 200)
	MinRateMbps float64 `toml:"min_rate_mbps"` // floor of the rate (default 100)
	Window      bool    `toml:"window"`        // "+win": cap bytes in flight at line rate * base RTT
}

// LinkECN is the RED marking of the ports of one link rate (Params.ECNByLink).
type LinkECN struct {
	Gbps      float64 `toml:"gbps"`       // the link rate these thresholds apply to, Gb/s
	KminBytes int64   `toml:"kmin_bytes"` // no marking at or below this queue
	KmaxBytes int64   `toml:"kmax_bytes"` // always mark above this queue
	Pmax      float64 `toml:"pmax"`       // marking probability at Kmax
}

// Alpha update modes (Params.AlphaUpdate).
const (
	AlphaOnCut   = "cut"
	AlphaOnTimer = "timer"
)

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
		AlphaUpdate:        AlphaOnCut,
		DecreaseIntervalUs: 50,
		ClampTargetRate:    true,
		IncreaseTimerUs:    55,
		ByteCounterBytes:   10_000_000,
		F:                  5,
		RAIMbps:            40,
		RHAIMbps:           200,
		MinRateMbps:        100,
	}
}

// ecnFor returns the marking thresholds of a port of linkBps: its
// ECNByLink entry, else the flat ones.
func (p *Params) ecnFor(linkBps float64) (kmin, kmax int64, pmax float64) {
	for _, e := range p.ECNByLink {
		if math.Abs(e.Gbps*1e9-linkBps) < 0.5 {
			return e.KminBytes, e.KmaxBytes, e.Pmax
		}
	}
	return p.KminBytes, p.KmaxBytes, p.Pmax
}

func bad(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

func (p *Params) validateCP() error {
	if err := checkRED("", p.KminBytes, p.KmaxBytes, p.Pmax); err != nil {
		return err
	}
	for i, e := range p.ECNByLink {
		if !(e.Gbps > 0 && e.Gbps <= 1600) {
			return bad(fmt.Sprintf("ecn_by_link[%d].gbps", i), e.Gbps, "must be in (0, 1600]")
		}
		for _, f := range p.ECNByLink[:i] {
			if f.Gbps == e.Gbps {
				return bad(fmt.Sprintf("ecn_by_link[%d].gbps", i), e.Gbps, "is given twice")
			}
		}
		if err := checkRED(fmt.Sprintf("ecn_by_link[%d].", i), e.KminBytes, e.KmaxBytes, e.Pmax); err != nil {
			return err
		}
	}
	if err := ccalgo.CheckMarkAt(Name, p.MarkAt); err != nil {
		return err
	}
	return nil
}

// checkRED checks one set of RED thresholds; prefix goes before the keys.
func checkRED(prefix string, kmin, kmax int64, pmax float64) error {
	switch {
	case kmin < 0:
		return bad(prefix+"kmin_bytes", kmin, "must be >= 0")
	case kmax < kmin:
		return bad(prefix+"kmax_bytes", kmax, "must be >= kmin_bytes")
	case !(pmax >= 0 && pmax <= 1):
		return bad(prefix+"pmax", pmax, "must be in [0, 1]")
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
	case p.AlphaUpdate != AlphaOnCut && p.AlphaUpdate != AlphaOnTimer:
		return bad("alpha_update", p.AlphaUpdate, `must be "cut" or "timer"`)
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
	ccalgo.Register(ccalgo.Define(Name, "DCQCN (SIGCOMM'15): RED/ECN marking, CNP per QP per 50 us, alpha-based rate machine", DefaultParams,
		ccalgo.WithCP(NewCP), ccalgo.WithNP(NewNP), ccalgo.WithRP(NewRP)))
}

// ControlPeriodNs is the shorter of the RP's timers, the rate-increase timer T
// and the alpha timer K (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	if p.AlphaTimerUs < p.IncreaseTimerUs {
		return int64(p.AlphaTimerUs * 1e3), "DCQCN's alpha timer K (alpha_timer_us)"
	}
	return int64(p.IncreaseTimerUs * 1e3), "DCQCN's rate-increase timer T (increase_timer_us)"
}
