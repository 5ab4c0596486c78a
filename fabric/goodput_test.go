package fabric_test

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
)

// TestGoodputOffGrid checks Result.Goodput against what each flow carried:
// a flow inside one sample period, one over several, and a 0.92 Gb/s flow
// (the DPDK report's), each with its samples on the 100 us grid of the
// experiment's time and 37 us off it (T0Ns moved, as when a polling loop
// takes its samples late). A window that holds the whole of a finite flow
// must count its size, and the capped flow its rate.
func TestGoodputOffGrid(t *testing.T) {
	const period = 100_000
	tests := []struct {
		name  string
		flow  fabric.Flow
		shift int64 // ns by which the samples miss the grid
		from  int64
		to    int64
		want  float64 // bits/s
	}{
		{"inside one period", fabric.Flow{ID: 1, Src: 0, Dst: 1, SizeBytes: 1000, StartNs: 110_000}, 0, 0, 1_000_000, 1000 * 8e9 / 1e6},
		{"inside one period, off the grid", fabric.Flow{ID: 1, Src: 0, Dst: 1, SizeBytes: 1000, StartNs: 110_000}, 37_000, 0, 1_000_000, 1000 * 8e9 / 1e6},
		{"several periods", fabric.Flow{ID: 1, Src: 0, Dst: 1, SizeBytes: 300_000, StartNs: 110_000}, 0, 0, 1_000_000, 300_000 * 8e9 / 1e6},
		{"several periods, off the grid", fabric.Flow{ID: 1, Src: 0, Dst: 1, SizeBytes: 300_000, StartNs: 110_000}, 37_000, 0, 1_000_000, 300_000 * 8e9 / 1e6},
		{"0.92 Gb/s, off the grid", fabric.Flow{ID: 1, Src: 0, Dst: 1, RateBps: 0.92e9}, 37_000, 1_000_000, 3_000_000,
			0.92e9 * 1000 / (1000 + hostd.DataOverhead)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &fabric.Spec{Topo: fabric.Star(2, 10e9, 1000), Flows: []fabric.Flow{tc.flow}, SampleNs: period}
			r, err := fabric.Simulate(s, 3_200_000)
			if err != nil {
				t.Fatal(err)
			}
			r.T0Ns = tc.shift
			got := r.Goodput(1, tc.from-tc.shift, tc.to-tc.shift)
			t.Logf("goodput %.4f Gb/s, want %.4f", got/1e9, tc.want/1e9)
			if math.Abs(got-tc.want) > 0.005*tc.want {
				t.Errorf("goodput %.4f Gb/s, want %.4f", got/1e9, tc.want/1e9)
			}
		})
	}
}
