// Package bounds range-checks numbers: the checks config applies to a
// file's fields and an engine applies to the spec it is built from. It is
// pure (no file, no clock, no environment), so that an engine package can
// use it (docs/architecture.md). Each check returns nil or an error that
// gives the value and the allowed range. NaN and the infinities are never in
// range: TOML can spell them (nan, inf), and a NaN passes every "v < 0"
// test, so checks written as "reject if out of range" let it through.
package bounds

import (
	"fmt"
	"math"
)

// MaxTimeNs bounds every time a file gives (durations, start and stop times,
// timers, sample periods): 2^60 ns, about 36.5 years. The engines keep time
// in int64 nanoseconds (at most 2^63 - 1); below 2^60, a time added to a
// clock reading and a few more such times cannot overflow.
const MaxTimeNs = 1 << 60

// unitNs is the length of each time unit fields are given in, ns.
var unitNs = map[string]float64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}

// Float returns nil when v is a finite number in [lo, hi].
func Float(v, lo, hi float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		return fmt.Errorf("got %v: want a finite number in [%g, %g]", v, lo, hi)
	}
	return nil
}

// Positive returns nil when v is a finite number in (0, hi].
func Positive(v, hi float64) error {
	if !(v > 0) || math.IsInf(v, 0) || v > hi {
		return fmt.Errorf("got %v: want a finite number in (0, %g]", v, hi)
	}
	return nil
}

// Int returns nil when lo <= v <= hi.
func Int(v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("got %d: want %d..%d", v, lo, hi)
	}
	return nil
}

// MaxTime is MaxTimeNs in unit ("s", "ms", "us" or "ns").
func MaxTime(unit string) float64 {
	ns, ok := unitNs[unit]
	if !ok {
		panic("config: unknown time unit " + unit)
	}
	return MaxTimeNs / ns
}

// Time returns nil when v, a time in unit ("s", "ms", "us" or "ns"), is a
// finite number in [0, MaxTime(unit)].
func Time(v float64, unit string) error {
	if hi := MaxTime(unit); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > hi {
		return fmt.Errorf("got %v: want a time in [0, %.4g] %s (2^60 ns: the engines' int64-ns clocks stay far from overflow)", v, hi, unit)
	}
	return nil
}

// PositiveTime is Time for a time that must be above 0.
func PositiveTime(v float64, unit string) error {
	if hi := MaxTime(unit); !(v > 0) || math.IsInf(v, 0) || v > hi {
		return fmt.Errorf("got %v: want a time in (0, %.4g] %s (2^60 ns: the engines' int64-ns clocks stay far from overflow)", v, hi, unit)
	}
	return nil
}
