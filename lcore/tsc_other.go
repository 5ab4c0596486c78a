//go:build !amd64

package lcore

import "time"

var tscStart = time.Now()

// rdtsc falls back to the monotonic clock in nanoseconds where there is no TSC
// instruction; NewTSCClock must then be given hz = 1e9.
func rdtsc() uint64 { return uint64(time.Since(tscStart)) }
