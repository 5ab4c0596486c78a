// RoCC parameters and their defaults: RoCC (Menikkumbura et al., "Congestion
// Control for Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS
// 2023) Table II, Section VI ("System parameters") and Section VI-B (DPDK
// testbed), with ccbed's choices where the paper gives none (package doc,
// deviations 5 and 7).

package rocc

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registry name.
const Name = "rocc"

// FracBits is the number of fractional bits of the fixed-point fair rate F and of
// the gains alpha~ and beta~ (package doc, deviation 1).
const FracBits = 16

// MaxFlowTableSize bounds Params.FlowTableSize.
const MaxFlowTableSize = 1 << 16

// Params are RoCC's parameters, for the CP and the RP. Byte quantities are given
// in bytes and converted to Delta_Q chunks (floor); rates F_min and F_max are in
// Delta_F units as in Table II.
type Params struct {
	// DeltaFBps is Delta_F, the rate resolution, bits/s (10 Mb/s).
	DeltaFBps float64 `toml:"delta_f_bps"`
	// DeltaQBytes is Delta_Q, the queue resolution, bytes (600 B).
	DeltaQBytes int64 `toml:"delta_q_bytes"`
	// FMin is F_min in Delta_F units (10, "irrespective of link bandwidth").
	FMin int64 `toml:"f_min"`
	// FMax is F_max in Delta_F units; 0 means link rate / Delta_F.
	FMax int64 `toml:"f_max"`
	// T is the fair-rate update interval, ns (40 us in simulation, 100 us in
	// the DPDK testbed of Section VI-B).
	T int64 `toml:"t_ns"`
	// QRefBytes, QMidBytes and QMaxBytes are Q_ref, Q_mid and Q_max in bytes;
	// Q_max > Q_mid > Q_ref is required (Section III-B).
	QRefBytes int64 `toml:"q_ref_bytes"`
	QMidBytes int64 `toml:"q_mid_bytes"`
	QMaxBytes int64 `toml:"q_max_bytes"`
	// Alpha and Beta are the static PI gains alpha~ and beta~, in Delta_F units
	// per Delta_Q unit.
	Alpha float64 `toml:"alpha"`
	Beta  float64 `toml:"beta"`
	// FlowTableSize bounds the number of flows the CP tracks (1,024, the size of
	// the FPGA flow table of Section IV-C).
	FlowTableSize int `toml:"flow_table_size"`
	// RPTimer is the RP's fast-recovery timer period, ns; 0 means 2 T.
	RPTimer int64 `toml:"rp_timer_ns"`
}

// Reference points of the per-link-speed defaults (Sections VI and VI-B).
type linkPoint struct {
	bps              float64
	qref, qmid, qmax float64 // bytes
	alpha, beta      float64
}

var linkPoints = [...]linkPoint{
	{10e9, 75e3, 150e3, 210e3, 0.3, 1.5}, // Section VI-B testbed; gains: ccbed's choice (deviation 7)
	{40e9, 150e3, 300e3, 360e3, 0.3, 1.5},
	{100e9, 300e3, 600e3, 660e3, 0.45, 2.25},
}

// DefaultParams returns the paper's defaults for a port or NIC of env.LinkBps
// (see the package doc, deviation 7, for speeds the paper does not list). A zero
// LinkBps is taken as 40 Gb/s, the paper's main simulation speed.
func DefaultParams(env ccalgo.Env) *Params {
	link := env.LinkBps
	if link <= 0 {
		link = 40e9
	}
	const deltaF = 10e6
	pt := interpolate(link)
	return &Params{
		DeltaFBps:     deltaF,
		DeltaQBytes:   600,
		FMin:          10,
		FMax:          0, // link rate / Delta_F, derived with the Delta_F in force
		T:             40_000,
		QRefBytes:     int64(math.Round(pt.qref)),
		QMidBytes:     int64(math.Round(pt.qmid)),
		QMaxBytes:     int64(math.Round(pt.qmax)),
		Alpha:         pt.alpha,
		Beta:          pt.beta,
		FlowTableSize: 1024,
		RPTimer:       0,
	}
}

// interpolate returns the defaults at link bits/s: linear between the reference
// points, proportional (queues) or constant (gains) outside them.
func interpolate(link float64) linkPoint {
	first, last := linkPoints[0], linkPoints[len(linkPoints)-1]
	switch {
	case link <= first.bps:
		s := link / first.bps
		return linkPoint{link, first.qref * s, first.qmid * s, first.qmax * s, first.alpha, first.beta}
	case link >= last.bps:
		s := link / last.bps
		return linkPoint{link, last.qref * s, last.qmid * s, last.qmax * s, last.alpha, last.beta}
	}
	for i := 1; i < len(linkPoints); i++ {
		a, b := linkPoints[i-1], linkPoints[i]
		if link <= b.bps {
			w := (link - a.bps) / (b.bps - a.bps)
			lerp := func(x, y float64) float64 { return x + w*(y-x) }
			return linkPoint{link, lerp(a.qref, b.qref), lerp(a.qmid, b.qmid), lerp(a.qmax, b.qmax),
				lerp(a.alpha, b.alpha), lerp(a.beta, b.beta)}
		}
	}
	return last
}

func paramErr(param string, v any, reason string) error {
	return &ccalgo.ParamError{Scheme: Name, Param: param, Value: v, Reason: reason}
}

// derived is the validated, integer form of Params for one link.
type derived struct {
	deltaF           float64
	deltaQ           int64
	fMin, fMax       int64 // Delta_F units
	fMinFx, fMaxFx   int64 // fixed point
	qRef, qMid, qMax int64 // Delta_Q units
	alphaFx, betaFx  int64 // fixed point
	t                int64
	rpTimer          int64
	tableSize        int
}

// derive validates p for a link of linkBps and converts it to integer units.
func (p *Params) derive(linkBps float64) (derived, error) {
	var d derived
	if !(p.DeltaFBps > 0) || math.IsInf(p.DeltaFBps, 0) {
		return d, paramErr("delta_f_bps", p.DeltaFBps, "must be positive and finite")
	}
	if p.DeltaQBytes <= 0 {
		return d, paramErr("delta_q_bytes", p.DeltaQBytes, "must be positive")
	}
	if p.T <= 0 {
		return d, paramErr("t_ns", p.T, "must be positive")
	}
	if p.RPTimer < 0 {
		return d, paramErr("rp_timer_ns", p.RPTimer, "must be >= 0 (0 = 2 T)")
	}
	fMax := p.FMax
	if fMax == 0 {
		if !(linkBps > 0) {
			return d, paramErr("f_max", p.FMax, "0 needs a positive link rate")
		}
		fMax = int64(math.Round(linkBps / p.DeltaFBps))
	}
	const maxUnits = 1 << 31 // rate messages carry a uint32; keeps fixed point far from overflow
	if p.FMin < 1 {
		return d, paramErr("f_min", p.FMin, "must be >= 1")
	}
	if fMax <= p.FMin || fMax >= maxUnits {
		return d, paramErr("f_max", fMax, "must be above f_min and below 2^31")
	}
	if p.QRefBytes <= 0 || p.QMidBytes <= p.QRefBytes || p.QMaxBytes <= p.QMidBytes {
		return d, paramErr("q_ref_bytes/q_mid_bytes/q_max_bytes",
			[3]int64{p.QRefBytes, p.QMidBytes, p.QMaxBytes}, "need 0 < Q_ref < Q_mid < Q_max")
	}
	if p.QMaxBytes/p.DeltaQBytes >= 1<<31 {
		return d, paramErr("q_max_bytes", p.QMaxBytes, "too large for Delta_Q")
	}
	if !(p.Alpha > 0) || p.Alpha > 1<<20 {
		return d, paramErr("alpha", p.Alpha, "must be in (0, 2^20]")
	}
	if !(p.Beta > 0) || p.Beta > 1<<20 {
		return d, paramErr("beta", p.Beta, "must be in (0, 2^20]")
	}
	if p.FlowTableSize < 1 || p.FlowTableSize > MaxFlowTableSize {
		return d, paramErr("flow_table_size", p.FlowTableSize, "must be in [1, 65536]")
	}
	d = derived{
		deltaF:    p.DeltaFBps,
		deltaQ:    p.DeltaQBytes,
		fMin:      p.FMin,
		fMax:      fMax,
		fMinFx:    p.FMin << FracBits,
		fMaxFx:    fMax << FracBits,
		qRef:      p.QRefBytes / p.DeltaQBytes,
		qMid:      p.QMidBytes / p.DeltaQBytes,
		qMax:      p.QMaxBytes / p.DeltaQBytes,
		alphaFx:   int64(math.Round(p.Alpha * (1 << FracBits))),
		betaFx:    int64(math.Round(p.Beta * (1 << FracBits))),
		t:         p.T,
		rpTimer:   p.RPTimer,
		tableSize: p.FlowTableSize,
	}
	if d.rpTimer == 0 {
		d.rpTimer = 2 * p.T
	}
	if d.qRef < 1 || d.qMid <= d.qRef || d.qMax <= d.qMid {
		return d, paramErr("delta_q_bytes", p.DeltaQBytes, "Q_ref < Q_mid < Q_max must hold in Delta_Q units")
	}
	return d, nil
}

func init() {
	ccalgo.Register(ccalgo.Define(Name, "RoCC: switch PI fair rate with auto-tuning and MD, min-rate RP (Menikkumbura et al., TPDS 2023)", DefaultParams,
		ccalgo.WithCP(NewCP), ccalgo.WithRP(NewRP)))
}

// ControlPeriodNs is T, the CP's fair-rate update interval (ccalgo.ControlPeriod).
func (p *Params) ControlPeriodNs() (int64, string) {
	return p.T, "RoCC's fair-rate update interval T (t_ns)"
}
