package timely_test

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo/sim"
	"github.com/ccbed/ccbed/ccalgo/timely"
)

// TestConvergence runs 2 and 4 long TIMELY flows from separate hosts into one
// port (1 us per link, NICs at the port's rate) and checks that they converge to
// equal shares at high utilisation with a bounded queue. TIMELY has no fixed
// queue target (its gradient rule holds any queue steady), so the bound checked
// is the observed order of magnitude, far below T_high (500 us of queue).
func TestConvergence(t *testing.T) {
	const (
		duration = 20_000_000 // 20 ms
		steady   = 10_000_000 // measure over [10 ms, 20 ms)
	)
	tests := []struct {
		name   string
		c      float64
		nFlows int
	}{
		{"2 flows at 10 Gb/s", 10e9, 2},
		{"4 flows at 10 Gb/s", 10e9, 4},
		{"4 flows at 100 Gb/s", 100e9, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Scheme: timely.Name, LinkBps: tc.c, LinkDelay: 1000, Duration: duration,
				Flows: sim.LongFlows(tc.nFlows, 0)}
			res, err := sim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rates := make([]float64, tc.nFlows)
			var sum float64
			for i := range rates {
				rates[i] = res.MeanGoodput(i, steady, duration)
				sum += rates[i]
			}
			fair := sum / float64(tc.nFlows)
			// Settling: every flow's goodput, smoothed over 200 us (20 samples),
			// within 10 % of the fair share for good.
			settle := int64(0)
			for i := range tc.nFlows {
				st := sim.SettlingTime(res.T, smooth(res.Goodput[i], 20), fair, 0.10)
				if st < 0 || settle < 0 {
					settle = -1
					continue
				}
				settle = max(settle, st)
			}
			util := sum / tc.c
			jain := sim.Jain(rates)
			meanQ, maxQ := res.MeanQueue(steady, duration), res.MaxQueueIn(steady, duration)
			t.Logf("base RTT %d ns: goodput/C %.4f, Jain %.5f, fair share %.3f Gb/s, steady queue mean %.0f B max %d B, max %d B overall, every flow settled (+-10%%) at %d ns, drops %d",
				res.BaseRTT, util, jain, fair/1e9, meanQ, maxQ, res.MaxQueue, settle, res.Drops)
			if util < 0.85 {
				t.Errorf("goodput/C %.4f, want >= 0.85", util)
			}
			if jain < 0.99 {
				t.Errorf("Jain %.5f, want >= 0.99", jain)
			}
			if settle < 0 || settle > steady {
				t.Errorf("flows not settled by %d ns (%d)", steady, settle)
			}
			if maxQ > 100_000 {
				t.Errorf("steady queue up to %d B, want <= 100 KB", maxQ)
			}
		})
	}
}

// smooth returns the moving mean of x over the last k samples.
func smooth(x []float64, k int) []float64 {
	out := make([]float64, len(x))
	var s float64
	for i, v := range x {
		s += v
		if i >= k {
			s -= x[i-k]
		}
		out[i] = s / float64(min(i+1, k))
	}
	return out
}
