// Package none is ccbed's "no congestion control" scheme: no congestion point,
// no notification point, and a reaction point that paces at a fixed rate, by
// default the NIC's line rate. It is the baseline against which the schemes of
// the papers show what they buy, and the traffic source of the simulator's own
// tests.
//
// Source: none; it is the "line rate, no reaction" sender every paper's
// motivation section starts from (e.g. RoCC Section 2, HPCC Section 2.2).
// Deviations: none.
package none

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// Name is the scheme's registered name.
const Name = "none"

// Params are the scheme's parameters.
type Params struct {
	// RateGbps is the fixed sending rate of every QP, Gb/s. Default: the NIC's
	// line rate (Env.LinkBps).
	RateGbps float64 `toml:"rate_gbps"`
}

// DefaultParams returns the defaults for env: sending at line rate.
func DefaultParams(env ccalgo.Env) *Params {
	return &Params{RateGbps: env.LinkBps / 1e9}
}

func (p *Params) validate() error {
	if !(p.RateGbps > 0) || math.IsInf(p.RateGbps, 0) {
		return &ccalgo.ParamError{Scheme: Name, Param: "rate_gbps", Value: p.RateGbps, Reason: "must be a finite number > 0"}
	}
	return nil
}

// RP is the fixed-rate reaction point: it ignores every signal.
type RP struct {
	ccalgo.RPBase
	rate float64
}

// ResetFrom makes r a copy of tmpl, an RP of this scheme that the same
// NewRP call built and nothing has used since (ccalgo.Resetter,
// ccalgo.ResetCopy).
func (r *RP) ResetFrom(tmpl ccalgo.ReactionPoint) bool { return ccalgo.ResetCopy(r, tmpl) }

var _ ccalgo.ReactionPoint = (*RP)(nil)

// SendHook reports that OnSend does nothing (ccalgo.SendHook).
func (*RP) SendHook() bool { return false }

// NewRP returns an RP pacing at p.RateGbps.
func NewRP(p *Params) (*RP, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &RP{rate: p.RateGbps * 1e9}, nil
}

// RateBps is the fixed rate, bits/s.
func (r *RP) RateBps() float64 { return r.rate }

func init() {
	ccalgo.Register(ccalgo.Define(Name, "no congestion control: every QP sends at a fixed rate (default line rate)", DefaultParams,
		ccalgo.WithRP(func(p *Params, _ ccalgo.Env) (*RP, error) { return NewRP(p) })))
}
