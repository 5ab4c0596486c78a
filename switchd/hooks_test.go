package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// noHooks declares that neither per-packet hook does work.
type noHooks struct{ ccalgo.CPBase }

func (noHooks) PacketHooks() (bool, bool) { return false, false }

// undeclared does not say: both hooks are called.
type undeclared struct{ ccalgo.CPBase }

func TestCPHookDetection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cp       ccalgo.CongestionPoint
		enq, deq bool
	}{
		{"declares none", noHooks{}, false, false},
		{"does not declare", &undeclared{}, true, true},
	} {
		enq, deq := cpHooks(tc.cp)
		if enq != tc.enq || deq != tc.deq {
			t.Errorf("%s: hooks (%v, %v), want (%v, %v)", tc.name, enq, deq, tc.enq, tc.deq)
		}
	}
	// The registered schemes, as their sources declare them.
	for _, tc := range []struct {
		scheme   string
		enq, deq bool
	}{
		{"rocc", true, true}, {"acc", false, true}, {"dcqcn", false, true}, {"dctcp", true, false},
		{"hpcc", false, true}, {"p4qcn", true, false}, {"qcn", true, false},
	} {
		c := testSpec(2, 10)
		c.CC.Scheme = tc.scheme
		e, err := New(&c)
		if err != nil {
			t.Fatal(err)
		}
		g := &e.eg[0]
		if g.cp == nil || g.hookEnq != tc.enq || g.hookDeq != tc.deq {
			t.Errorf("%s: hooks (%v, %v), want (%v, %v)", tc.scheme, g.hookEnq, g.hookDeq, tc.enq, tc.deq)
		}
	}
}
