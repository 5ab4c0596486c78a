package acc

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo/sim"
)

// TestIncastClosedLoop: 10 long flows start together at line rate towards one
// receiver through a 100 Gb/s bottleneck (papers/acc.md Section 6.3, Figure 10),
// with 5 us links (base RTT 20.17 us, the paper's testbed RTT is ~20 us) and the
// default parameters (T = base RTT). Checks Proposition 1 (the aggregate rate
// matches C one period after congestion is detected), that the source halt drains
// the queue at line rate, and fairness and utilisation over the steady half.
func TestIncastClosedLoop(t *testing.T) {
	const (
		c   = 100e9
		n   = 10
		dur = 4_000_000
	)
	flows := sim.LongFlows(n, 0)
	res, err := sim.Run(sim.Config{Scheme: SchemeName, LinkBps: c, LinkDelay: 5000, Flows: flows,
		Duration: dur, SampleEvery: 5000})
	if err != nil {
		t.Fatal(err)
	}
	T := res.BaseRTT
	agg := func(k int) float64 {
		var s float64
		for f := range n {
			s += res.RPRate[f][k]
		}
		return s
	}
	// Congestion is detected when the aggregate RP rate first drops from n*C.
	det := -1
	for k := range res.T {
		if agg(k) < 2*c {
			det = k
			break
		}
	}
	if det < 0 {
		t.Fatal("congestion never detected")
	}
	tDet := res.T[det]
	if tDet > 3*T {
		t.Errorf("detected at %d ns, later than 3 T = %d", tDet, 3*T)
	}
	// Until the queue has drained, the rates the flows hold sum to C (Prop. 1).
	drained := -1
	for k := det; k < len(res.T); k++ {
		if res.Queue[k] < res.MaxQueue/20 {
			drained = k
			break
		}
		if a := agg(k); a < 0.95*c || a > 1.05*c {
			t.Errorf("t=%d: aggregate RP rate %.2f Gb/s, want C = 100 +-5 %%", res.T[k], a/1e9)
			break
		}
	}
	if drained < 0 {
		t.Fatal("queue never drained")
	}
	// The queue drains at line rate: within 10 % + 2 T of MaxQueue / C.
	ideal := int64(float64(res.MaxQueue) * 8e9 / c)
	if d := res.T[drained] - tDet; d > ideal+ideal/10+2*T {
		t.Errorf("queue of %d B took %d ns to fall below 5 %%, ideal %d", res.MaxQueue, d, ideal)
	}
	// Steady half: fair, full, short queue.
	means := make([]float64, n)
	var sum float64
	for f := range n {
		means[f] = res.MeanGoodput(f, dur/2, dur)
		sum += means[f]
	}
	maxGoodput := c * 1000 / 1062 // payload share of the wire
	j := sim.Jain(means)
	q := res.MeanQueue(dur/2, dur)
	t.Logf("T=%d ns detect=%d ns maxq=%d B drained(<5%%)=%d ns (ideal %d) steady: goodput %.2f Gb/s (max %.2f), Jain %.4f, mean queue %.0f B, max queue %d B",
		T, tDet, res.MaxQueue, res.T[drained]-tDet, ideal, sum/1e9, maxGoodput/1e9, j, q, res.MaxQueueIn(dur/2, dur))
	if j < 0.99 {
		t.Errorf("Jain = %.4f over the steady half, want >= 0.99 (means %v)", j, means)
	}
	if sum < 0.97*maxGoodput {
		t.Errorf("steady aggregate goodput %.2f Gb/s, want >= 97 %% of %.2f", sum/1e9, maxGoodput/1e9)
	}
	if q > 50_000 {
		t.Errorf("steady mean queue %.0f B, want < 50 KB", q)
	}
}
