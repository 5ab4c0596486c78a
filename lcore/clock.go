package lcore

import "math/bits"

// TSCClock converts TSC readings to nanoseconds since the clock was made. Now is
// cheap (one RDTSC and a multiply, no cgo call, no allocation) and safe to call
// from any lcore: engines take this as their time source on DPDK.
type TSCClock struct {
	start uint64
	mult  uint64 // ns per tick as a 32.32 fixed-point number
	hz    uint64
}

// NewTSCClock makes a clock for a TSC of hz ticks per second (dpdk.TSCHz()).
func NewTSCClock(hz uint64) *TSCClock {
	if hz == 0 {
		panic("lcore: NewTSCClock: hz = 0")
	}
	return &TSCClock{start: rdtsc(), mult: (uint64(1e9) << 32) / hz, hz: hz}
}

// Now is the time in nanoseconds since the clock was made.
func (c *TSCClock) Now() int64 { return c.ticksToNs(rdtsc() - c.start) }

// TSCAt is the TSC reading at ns nanoseconds since the clock was made (ns >=
// 0, under about 1e9 s).
func (c *TSCClock) TSCAt(ns int64) uint64 {
	hi, lo := bits.Mul64(uint64(ns), c.hz)
	q, _ := bits.Div64(hi, lo, 1e9)
	return c.start + q
}

// TSC reads the raw counter.
func (c *TSCClock) TSC() uint64 { return rdtsc() }

// ticksToNs converts a TSC delta to nanoseconds (128-bit intermediate).
func (c *TSCClock) ticksToNs(t uint64) int64 {
	hi, lo := bits.Mul64(t, c.mult)
	return int64(hi<<32 | lo>>32)
}
