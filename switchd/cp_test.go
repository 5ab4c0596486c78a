package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/rocc"
)

// The engine's CP sink takes RoCC's rate messages in bursts.
var _ rocc.RateSink = (*feedbackSink)(nil)

// TestReadFlowWords: the words readFlowWords reads from a classified data
// frame are rocc.FlowWordsOf the key readFlowKey reads, and setFlowKey
// writes that key back, for RoCE frames (QP in the key) with and without
// INT, and a QP using all 24 bits.
func TestReadFlowWords(t *testing.T) {
	h := newHarness(t, testSpec(4, 100))
	for _, c := range []struct {
		name     string
		src, dst int
		qp       uint32
		withINT  bool
	}{
		{"plain", 0, 1, 7, false},
		{"INT", 2, 3, 0, true},
		{"wide QP", 3, 0, 0xfedcba, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := dataFrame(t, c.src, c.dst, c.qp, 100, c.withINT)
			var m Meta
			if !h.e.Classify(c.src, f, &m) || m.Class != ClassData {
				t.Fatalf("not classified as data: %+v", m)
			}
			var want, got ccalgo.FlowKey
			readFlowKey(&want, f, &m)
			a, b := readFlowWords(f, &m)
			if w := (rocc.FlowWords{A: a, B: b}); w != rocc.FlowWordsOf(&want) || w.Key() != want {
				t.Errorf("words %x, want %x of %+v", w, rocc.FlowWordsOf(&want), want)
			}
			setFlowKey(&got, a, b)
			if got != want || want.DestQP != c.qp {
				t.Errorf("key %+v, want %+v (QP %#x)", got, want, c.qp)
			}
		})
	}
}
