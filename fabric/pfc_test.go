package fabric_test

import (
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
)

// spreading is PFC's congestion spreading and its victim flow (the ACC
// paper, Sec. 2; the P4QCN paper's PFC experiments): two switches s0 - s1,
// hosts 0-2 on s0 and 3-7 on s1. Hosts 0 and 1 (across the trunk) and 4, 5, 6
// (on s1) send to host 3: a 5-to-1 incast at s1's port to host 3, where each
// has C/5. Host 2 sends to host 7, whose link is idle: its fair share is what
// the trunk has left, 3C/5. With PFC alone, s1 pauses the trunk, s0's trunk
// queue fills with all three hosts' frames, and s0 pauses hosts 0-2 alike:
// the victim gets what hosts 0 and 1 get, C/5.
type spreading struct {
	scheme    string
	victimPri uint8 // the victim's priority (3: the incast's, lossless)
}

const (
	spreadBps     = 10e9
	spreadEnd     = 10_000_000 // ns
	spreadFrom    = 5_000_000
	spreadVictim  = 100
	spreadTrunkS0 = 3 // s0's port to s1: after its 3 hosts
	spreadTrunkS1 = 5 // s1's port to s0: after its 5 hosts
)

func (sp spreading) run(t *testing.T) *fabric.Result {
	t.Helper()
	topo := fabric.Chain([]int{3, 5}, spreadBps, spreadBps, 1000)
	spec := &fabric.Spec{Topo: topo, Scheme: sp.scheme, PFC: fabric.PFC{Enabled: true}, SampleNs: 100_000,
		ExpectedFlows: 6}
	for i, src := range []int{0, 1, 4, 5, 6} {
		spec.Flows = append(spec.Flows, fabric.Flow{ID: i, Src: src, Dst: 3})
	}
	// The victim offers its fair share, 3C/5 of frame bits: in a lossy
	// priority, a flow without congestion control offering more would lose
	// frames and collapse under go-back-N.
	spec.Flows = append(spec.Flows, fabric.Flow{ID: spreadVictim, Src: 2, Dst: 7, RateBps: 0.6 * spreadBps})
	if sp.victimPri != 3 {
		spec.HostPriority = map[int]uint8{2: sp.victimPri}
	}
	return fabrictest.Simulate(t, spec, spreadEnd)
}

// TestPFCVictimFlow runs the congestion-spreading scenario with PFC alone and
// with each scheme that controls an incast: with PFC alone the victim gets
// about what each incast sender across the trunk gets (congestion spreading:
// measured 0.21 of its fair share, its host paused 116 times in 10 ms); a scheme that
// holds the incast's queue under the PFC threshold leaves the victim its
// share; and the victim in a lossy priority of its own is not paused at all
// (per-priority queues, no head-of-line blocking).
func TestPFCVictimFlow(t *testing.T) {
	fair := 0.6 * spreadBps
	for _, tc := range []struct {
		sp spreading
		// lo, hi bound the victim's goodput over [5, 10) ms, in units of its
		// fair share (payload goodput, so about 0.95 of it at best).
		lo, hi float64
		// spread: s0 pauses the victim's host.
		spread bool
	}{
		{spreading{"none", 3}, 0.2, 0.5, true},
		{spreading{"none", 1}, 0.85, 1.0, false},
		{spreading{"dcqcn", 3}, 0.85, 1.0, false},
		{spreading{"rocc", 3}, 0.85, 1.0, false},
		{spreading{"hpcc", 3}, 0.85, 1.0, false},
		{spreading{"dctcp", 3}, 0.85, 1.0, false},
		{spreading{"acc", 3}, 0.85, 1.0, false},
		{spreading{"timely", 3}, 0.8, 1.0, false},
		{spreading{"rcc", 3}, 0.85, 1.0, false},
		// QCN and P4QCN keep PFC off too, but leave the incast at 4.0 and
		// 3.4 Gb/s of 10, and the victim 0.84 and 0.69 of its share.
		{spreading{"p4qcn", 3}, 0.75, 1.0, false},
		{spreading{"qcn", 3}, 0.6, 1.0, false},
	} {
		t.Run(tc.sp.scheme+"/victim-priority-"+string('0'+rune(tc.sp.victimPri)), func(t *testing.T) {
			r := tc.sp.run(t)
			v := r.Goodput(spreadVictim, spreadFrom, spreadEnd) / fair
			var hostPauses, activations uint64
			for p := 0; p < 3; p++ {
				hostPauses += r.Port(0, p).PausesSent
				activations += r.Port(0, p).PFCOnsets
			}
			trunk := r.Port(1, spreadTrunkS1)
			held := r.Port(0, spreadTrunkS0)
			var incast float64
			for id := int64(0); id < 5; id++ {
				incast += r.Goodput(id, spreadFrom, spreadEnd)
			}
			t.Logf("victim %.3f of its fair share; incast %.2f Gb/s; s1 paused the trunk %d times (%d frames), s0's trunk port held %.0f us; s0 paused its hosts %d times (%d frames); drops %d",
				v, incast/1e9, trunk.PFCOnsets, trunk.PausesSent, float64(held.PausedNs)/1e3, activations, hostPauses, drops(r))
			if v < tc.lo || v > tc.hi {
				t.Errorf("victim goodput %.3f of its fair share, want [%.2f, %.2f]", v, tc.lo, tc.hi)
			}
			if n := r.Port(0, 2).PFCOnsets; (n > 0) != tc.spread {
				t.Errorf("s0 paused the victim's host %d times: want spreading to it %v", n, tc.spread)
			}
			if d := drops(r); d != 0 {
				t.Errorf("%d drops on a lossless fabric", d)
			}
		})
	}
}

func drops(r *fabric.Result) uint64 {
	var d uint64
	for s := range r.Switches {
		for _, pc := range r.Switches[s].Snapshot().Ports {
			d += pc.DropsTotal
		}
	}
	return d
}
