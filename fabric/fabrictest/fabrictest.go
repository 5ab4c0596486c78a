// Package fabrictest holds what the congestion-control schemes' closed-loop
// tests (ccalgo/<scheme>/closedloop_test.go) share: running a fabric in
// virtual time and failing the test on a loss, registering a scheme again
// under a second name with its RPs or NPs wrapped for tracing, the
// topologies and flows those tests build, and the units and statistics they
// measure with. It sits beside package fabric and is for tests only: no
// daemon or driver imports it.
//
// Times are experiment times in ns and windows are (from, to], as in
// fabric.Result; rates are bits/s.
package fabrictest

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/fabric"
)

// Simulate runs spec in virtual time for endNs (fabric.Simulate) and stops
// the test on an error. The spec's scheme and everything else are the
// caller's.
func Simulate(tb testing.TB, spec *fabric.Spec, endNs int64) *fabric.Result {
	tb.Helper()
	r, err := fabric.Simulate(spec, endNs)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// SimulateLossless is Simulate for a case with room in its buffers: it fails
// the test on any loss (CheckLossless) and logs the run's length, wall time,
// events and base RTT.
func SimulateLossless(tb testing.TB, spec *fabric.Spec, endNs int64) *fabric.Result {
	tb.Helper()
	r := Simulate(tb, spec, endNs)
	CheckLossless(tb, r)
	tb.Logf("%.2f ms simulated in %.0f ms of wall time (%d events), base RTT %d ns",
		float64(endNs)/1e6, float64(r.WallNs)/1e6, r.Events, r.Plan.BaseRTTNs)
	return r
}

// CheckLossless fails the test (without stopping it) for every switch that
// lost telemetry samples, every switch port that dropped a frame, and every
// host that resent a frame, timed out or lost rate samples.
func CheckLossless(tb testing.TB, r *fabric.Result) {
	tb.Helper()
	for s, e := range r.Switches {
		snap := e.Snapshot()
		if snap.SamplesDropped != 0 {
			tb.Errorf("switch %d lost %d telemetry samples", s, snap.SamplesDropped)
		}
		for _, pc := range snap.Ports {
			if pc.DropsTotal != 0 {
				tb.Errorf("switch %d port %d: %d drops", s, pc.Port, pc.DropsTotal)
			}
		}
	}
	for i, h := range r.Hosts {
		if _, tc := h.Counters(); tc.RetxFrames != 0 || tc.Timeouts != 0 || tc.SamplesDropped != 0 {
			tb.Errorf("host %d: %d frames resent, %d timeouts, %d samples lost", i, tc.RetxFrames, tc.Timeouts, tc.SamplesDropped)
		}
	}
}

// RegisterWrappedRP registers the scheme named base again as name, with every
// RP it builds (of type R) passed through wrap, so that a test running name
// sees inside its RPs. Call it from init: like ccalgo.Register, it panics
// when base is not registered or name already is.
func RegisterWrappedRP[R ccalgo.ReactionPoint](base, name string, wrap func(rp R) ccalgo.ReactionPoint) {
	s := rename(base, name)
	newRP := s.NewRP
	s.NewRP = func(p any, env ccalgo.Env) (ccalgo.ReactionPoint, error) {
		rp, err := newRP(p, env)
		if err != nil {
			return nil, err
		}
		return wrap(rp.(R)), nil
	}
	ccalgo.Register(s)
}

// RegisterWrappedNP is RegisterWrappedRP for the scheme's NPs: wrap gets
// each NP (of type N) with the parameters and environment it was built
// for, and returns what the host uses (np itself, to only record it).
func RegisterWrappedNP[N ccalgo.NotificationPoint](base, name string, wrap func(np N, params any, env ccalgo.Env) ccalgo.NotificationPoint) {
	s := rename(base, name)
	newNP := s.NewNP
	s.NewNP = func(p any, env ccalgo.Env) (ccalgo.NotificationPoint, error) {
		np, err := newNP(p, env)
		if err != nil {
			return nil, err
		}
		return wrap(np.(N), p, env), nil
	}
	ccalgo.Register(s)
}

// rename returns a copy of the registered scheme base named name.
func rename(base, name string) ccalgo.Scheme {
	s, err := ccalgo.Lookup(base)
	if err != nil {
		panic(err)
	}
	s.Name = name
	return s
}

// RP returns the RP of flow id on host h as an R, the type a wrapped
// scheme's RPs have (RegisterWrappedRP), and stops the test when the host
// has none of that type for the flow: the flow ended, or runs another
// scheme.
func RP[R ccalgo.ReactionPoint](tb testing.TB, r *fabric.Result, h int, id int64) R {
	tb.Helper()
	rp, ok := r.Hosts[h].RP(id).(R)
	if !ok {
		tb.Fatalf("flow %d: no %T RP on host %d", id, rp, h)
	}
	return rp
}

// Traced is a scheme registered again with its RPs wrapped in a W
// (TraceRPs): it runs specs on that scheme and finds their wrapped RPs.
type Traced[W ccalgo.ReactionPoint] struct {
	// Scheme is the name the wrapped scheme is registered under.
	Scheme string
}

// TraceRPs registers the scheme named base again as name with every RP,
// an R, wrapped by wrap (RegisterWrappedRP), and returns the handle that
// runs it. Call it from init or a package variable of a test package
// other than base's own (base must be registered first).
func TraceRPs[R, W ccalgo.ReactionPoint](base, name string, wrap func(rp R) W) Traced[W] {
	RegisterWrappedRP(base, name, func(rp R) ccalgo.ReactionPoint { return wrap(rp) })
	return Traced[W]{Scheme: name}
}

// SimulateLossless runs spec on the traced scheme until endNs
// (SimulateLossless): every case must have room in its buffers.
func (tr Traced[W]) SimulateLossless(tb testing.TB, spec *fabric.Spec, endNs int64) *fabric.Result {
	tb.Helper()
	spec.Scheme = tr.Scheme
	return SimulateLossless(tb, spec, endNs)
}

// RP returns the wrapped RP of flow id on host h (RP).
func (tr Traced[W]) RP(tb testing.TB, r *fabric.Result, h int, id int64) W {
	tb.Helper()
	return RP[W](tb, r, h, id)
}
