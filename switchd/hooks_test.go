package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// baseOnly inherits every CP method from CPBase.
type baseOnly struct{ ccalgo.CPBase }

// valueEnq declares OnEnqueue on the value type.
type valueEnq struct{ ccalgo.CPBase }

func (valueEnq) OnEnqueue(int64, *ccalgo.DataPacket, *ccalgo.PortState, ccalgo.FeedbackSink) ccalgo.Verdict {
	return ccalgo.Verdict{Mark: ccalgo.MarkCE}
}

// ptrDeq declares OnDequeue on the pointer type.
type ptrDeq struct{ ccalgo.CPBase }

func (*ptrDeq) OnDequeue(int64, *ccalgo.DataPacket, *ccalgo.PortState, ccalgo.FeedbackSink) ccalgo.Verdict {
	return ccalgo.Verdict{StampINT: true}
}

// wrapper embeds another CP (not CPBase): its promoted methods do work.
type wrapper struct{ *valueEnq }

// nested embeds CPBase one level down only.
type nested struct{ baseOnly }

func TestCPHookDetection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cp       ccalgo.CongestionPoint
		enq, deq bool
	}{
		{"CPBase only", &baseOnly{}, false, false},
		{"CPBase value", baseOnly{}, false, false},
		{"value OnEnqueue", &valueEnq{}, true, false},
		{"pointer OnDequeue", &ptrDeq{}, false, true},
		{"embeds a CP", wrapper{&valueEnq{}}, true, true},
		{"CPBase at depth 2", &nested{}, true, true},
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
		{"rocc", true, true}, {"acc", true, true}, {"dcqcn", false, true}, {"dctcp", false, true},
		{"hpcc", false, true}, {"p4qcn", true, false}, {"qcn", true, false},
	} {
		c := testConfig(2, 10)
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
