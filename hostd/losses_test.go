package hostd

import (
	"testing"
)

// TestLossCounters: every place a host can lose what a run measures counts
// what it lost: flows dropped from a full queue of flows waiting for a QP,
// flows that arrived and never got a QP, data frames a full receiver flow
// table refused, FCT records and rate samples not kept. Two engines, each
// case shrinking one bound (the testbed turns each count into a degraded
// reason).
func TestLossCounters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(a, b *Spec)
		until int64
		check func(rx RxCounters, tx TxCounters, a *Engine) bool
	}{
		{"pending queue full", func(a, b *Spec) {
			a.MaxQPs, a.MaxPending = 1, 2
			a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 10, SizeBytes: 5000}}
		}, 1_000_000, func(_ RxCounters, tx TxCounters, a *Engine) bool {
			// All ten are queued at once, before a QP is handed out: two
			// fit, eight find the queue full.
			return tx.PendingDropped == 8 && tx.FlowsStarted == 2 && tx.FlowsWaiting == 0 && len(a.FCTs()) == 2
		}},
		{"never started", func(a, b *Spec) {
			a.MaxQPs = 1
			a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 5, SizeBytes: 10_000_000}}
		}, 1_000_000, func(_ RxCounters, tx TxCounters, a *Engine) bool {
			// 10 MB at 10 Gb/s takes 8 ms: the others are still waiting.
			return tx.FlowsWaiting == 4 && tx.FlowsStarted == 1 && tx.PendingDropped == 0
		}},
		{"receiver flow table full", func(a, b *Spec) {
			b.MaxRxFlows = 2
			a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 4, SizeBytes: 1_000_000}}
		}, 500_000, func(rx RxCounters, _ TxCounters, _ *Engine) bool {
			return rx.FlowTableFull > 0
		}},
		{"FCTs not recorded", func(a, b *Spec) {
			a.MaxFCTs = 2
			a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 5, SizeBytes: 5000}}
		}, 1_000_000, func(_ RxCounters, tx TxCounters, a *Engine) bool {
			return tx.FlowsCompleted == 5 && tx.FCTsDropped == 3 && len(a.FCTs()) == 2
		}},
		{"samples not kept", func(a, b *Spec) {
			a.MaxSamples = 10
			a.Flows = []Flow{{ID: 1, Dst: ipB}}
		}, 1_000_000, func(_ RxCounters, tx TxCounters, a *Engine) bool {
			// A sample every 10 us for 1 ms: about 100, 10 kept.
			return len(a.Samples()) == 10 && tx.SamplesDropped >= 80
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := testConfig("h1", ipA, "none"), testConfig("h2", ipB, "none")
			tc.setup(&a, &b)
			v := newVnet(t, a, b)
			v.run(tc.until)
			_, tx := v.eng[0].Counters()
			rx, _ := v.eng[1].Counters()
			if !tc.check(rx, tx, v.eng[0]) {
				t.Errorf("sender %+v\nreceiver %+v\n%d FCTs, %d samples", tx, rx, len(v.eng[0].FCTs()), len(v.eng[0].Samples()))
			}
		})
	}
}

// TestFlowQueueAllocatesNothing: queueing a flow for a QP, counting one the
// full queue drops, and starting the queued ones allocate nothing.
func TestFlowQueueAllocatesNothing(t *testing.T) {
	c := testConfig("h1", ipA, "none")
	c.MaxQPs, c.MaxPending = 1, 1
	e, err := NewEngine(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	pf := pendingFlow{id: 1, dst: 0x0a000002, size: 1000}
	now := int64(0)
	n := testing.AllocsPerRun(100, func() {
		now += 1000
		e.enqueue(&pf)
		e.enqueue(&pf) // the queue is full: counted, dropped
		e.startFlows(now)
		qp := e.active[0]
		e.complete(now, qp, &e.qps[qp])
	})
	if n != 0 {
		t.Errorf("queueing and starting flows allocate %.1f times", n)
	}
	if _, tx := e.Counters(); tx.PendingDropped < 100 || tx.FlowsWaiting != 0 {
		t.Errorf("counters %+v", tx)
	}
}
