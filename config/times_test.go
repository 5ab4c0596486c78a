package config

import (
	"math/rand/v2"
	"testing"
)

// TestUsToNsInvertsNsToUs: a time in ns written in microseconds (NsToUs)
// and read back (UsToNs) is the same time, for every time below 2^51 ns;
// truncating instead of rounding lost 1 ns for about 1 time in 100 (1001 ns
// is 1.001 us, times 1000 is 1000.9999999999999).
func TestUsToNsInvertsNsToUs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	times := []int64{0, 1, 999, 1000, 1001, 1003, 12_345, 1<<51 - 1}
	for range 100_000 {
		times = append(times, r.Int64N(1_000_000_000), r.Int64N(1<<51))
	}
	for _, ns := range times {
		if got := UsToNs(NsToUs(ns)); got != ns {
			t.Fatalf("%d ns is %v us, read back as %d ns", ns, NsToUs(ns), got)
		}
	}
	for _, tc := range []struct {
		us float64
		ns int64
	}{{0.0004, 0}, {0.0005, 1}, {4.1, 4100}, {1.001, 1001}, {1e9, 1e12}} {
		if got := UsToNs(tc.us); got != tc.ns {
			t.Errorf("UsToNs(%v) = %d, want %d", tc.us, got, tc.ns)
		}
	}
}
