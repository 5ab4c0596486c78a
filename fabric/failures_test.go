package fabric_test

import (
	"testing"

	"github.com/ccbed/ccbed/fabric"
)

// TestLinkLoss: with a loss rate, the links lose about that share of their
// frames, the same frames on every run of a seed; at 0.1 % the flows still
// complete (the hosts resend what was lost); without one, nothing is lost.
func TestLinkLoss(t *testing.T) {
	run := func(f fabric.Failures, seed uint64) *fabric.Result {
		s := &fabric.Spec{Topo: fabric.Star(3, 10e9, 1000), Seed: seed, Failures: f,
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 2, SizeBytes: 2_000_000}, {ID: 2, Src: 1, Dst: 2, SizeBytes: 2_000_000}}}
		r, err := fabric.Simulate(s, 20_000_000)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	clean := run(fabric.Failures{}, 1)
	if len(clean.LinkLosses) != 0 {
		t.Fatalf("no failures: losses %+v", clean.LinkLosses)
	}
	lossy, again := run(fabric.Failures{LossRate: 0.01}, 1), run(fabric.Failures{LossRate: 0.01}, 1)
	var lost, frames uint64
	for i, l := range lossy.LinkLosses {
		lost, frames = lost+l.Lost, frames+l.Frames
		if i >= len(again.LinkLosses) || again.LinkLosses[i] != l {
			t.Errorf("the same seed lost other frames: %+v, then %+v", lossy.LinkLosses, again.LinkLosses)
		}
	}
	// Binomial: at 1 % of tens of thousands of frames, well within 0.7-1.3 %.
	if share := float64(lost) / float64(max(frames, 1)); frames < 10_000 || share < 0.007 || share > 0.013 {
		t.Errorf("lost %d of %d frames at 1 %% (%+v)", lost, frames, lossy.LinkLosses)
	}
	for _, h := range run(fabric.Failures{LossRate: 0.001}, 1).Hosts[:2] {
		if tc := h.TxCounters(); tc.FlowsCompleted != 1 || tc.RetxFrames == 0 {
			t.Errorf("a sender at 0.1 %% loss: %d flows completed, %d frames resent; want 1 and some", tc.FlowsCompleted, tc.RetxFrames)
		}
	}
}

// TestLinkDown: a link taken down loses every frame that meets it down,
// counted on both directions' senders; a flow over it stalls and completes
// once it is up again; a failure between nodes with no link, or with its
// times backwards, is refused.
func TestLinkDown(t *testing.T) {
	topo := fabric.Star(2, 10e9, 1000) // h0, h1, s0
	s := &fabric.Spec{Topo: topo, Seed: 1,
		Failures: fabric.Failures{LinkDown: []fabric.LinkDown{{A: 0, B: 2, DownNs: 200_000, UpNs: 1_200_000}}},
		Flows:    []fabric.Flow{{ID: 1, Src: 0, Dst: 1, SizeBytes: 1_000_000}}}
	r, err := fabric.Simulate(s, 20_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var down uint64
	for _, l := range r.LinkLosses {
		down += l.DownLost
		if l.Lost != 0 {
			t.Errorf("random losses without a loss rate: %+v", l)
		}
	}
	if down == 0 {
		t.Errorf("nothing lost while h0's link was down: %+v", r.LinkLosses)
	}
	fcts := r.Hosts[0].FCTs()
	if len(fcts) != 1 || fcts[0].FCTNs < 1_000_000 {
		t.Errorf("the flow over the failed link: %+v, want it complete after the link came back (1.2 ms)", fcts)
	}
	for _, bad := range []fabric.LinkDown{{A: 0, B: 1, DownNs: 1}, {A: 0, B: 2, DownNs: 5, UpNs: 5}, {A: 0, B: 9}} {
		s := &fabric.Spec{Topo: fabric.Star(2, 10e9, 1000), Failures: fabric.Failures{LinkDown: []fabric.LinkDown{bad}}}
		if _, err := s.Plan(); err == nil {
			t.Errorf("link failure %+v accepted", bad)
		}
	}
	if _, err := (&fabric.Spec{Topo: fabric.Star(2, 10e9, 1000), Failures: fabric.Failures{LossRate: 1}}).Plan(); err == nil {
		t.Error("loss rate 1 accepted")
	}
}
