package main

import "testing"

// TestFlowRatesFlag: -flow-rates gives every port's flows their own rates,
// checked by -check before DPDK starts: a flow above the port's line rate
// fails the run (1), a malformed list is a usage error (2).
func TestFlowRatesFlag(t *testing.T) {
	base := []string{"-check", "-eal-args", "--no-huge", "-ports", "net_null0,net_null1", "-rate", "10"}
	for _, tc := range []struct {
		rates string
		code  int
	}{
		{"2,1,0.5mpps,0", 0},
		{"6,5", 0}, // above the line rate in sum: a warning only
		{"12,1", 1},
		{"1,x", 2},
	} {
		if code := run(append(base, "-flow-rates", tc.rates)); code != tc.code {
			t.Errorf("-flow-rates %s: exit %d, want %d", tc.rates, code, tc.code)
		}
	}
}
