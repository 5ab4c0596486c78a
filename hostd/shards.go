package hostd

import (
	"fmt"
	"slices"

	"github.com/ccbed/ccbed/wire"
)

// MaxEngines bounds the engines of one host (NewEngines): a QP number
// carries its engine's index in 4 bits.
const MaxEngines = 16

// NewEngines builds the n engines of a host that runs several tx lcores,
// one engine per lcore and per queue pair of the NIC port, at time now
// (NewEngine is n = 1). The host's state is partitioned between them, so
// that no lcore touches another's in its hot path:
//
//   - flows: engine i starts every n-th static and incast flow of s (those
//     whose index in spec order, incast flows expanded, is i mod n), and
//     runs each workload at 1/n of its load with 1/n of its MaxFlows (flow
//     ids IDBase + k*n + i; independent Poisson arrivals summing to the
//     workload's);
//   - QPs: each engine has MaxQPs/n of them (rounded up), numbered with the
//     engine's index in the bits above the slot, so that the QP number of an
//     ACK, NAK, CNP or CP feedback names the engine that owns the flow;
//   - pacing: each engine's NIC bucket paces 1/n of the line rate (a static
//     split: n engines of evenly spread flows fill the link; one flow gets at
//     most 1/n of it); QPs and RPs still see the whole line rate;
//   - receiving: each engine's rx side has its own flow table (MaxRxFlows
//     each: RSS may spread flows unevenly) and NP; the frames of one flow
//     must reach one engine (RSS hashes a flow to one rx queue);
//   - events: the rx side of engine j hands the control frames it receives
//     (ACK, NAK, CNP, feedback) to the tx side of the engine that owns the
//     QP, through one single-producer single-consumer ring per (j, k) pair
//     of EventRing/n events; a PFC pause goes to every engine;
//   - results: samples, FCTs (MaxSamples/n, MaxFCTs/n each) and counters are
//     each engine's; Shards merges them.
//
// Engine 0 of n = 1 is NewEngine's engine exactly.
func NewEngines(s Spec, n int, now int64) ([]*Engine, error) {
	s.ApplyDefaults()
	r, err := resolve(&s)
	if err != nil {
		return nil, err
	}
	return newEngines(r, n, now)
}

func newEngines(r *resolved, n int, now int64) ([]*Engine, error) {
	if n < 1 || n > MaxEngines {
		return nil, fmt.Errorf("hostd: %d engines: want 1..%d", n, MaxEngines)
	}
	if r.cfg.MaxQPs < n {
		return nil, fmt.Errorf("hostd: %d engines need max_qps >= %d, got %d", n, n, r.cfg.MaxQPs)
	}
	share := func(v int) int { return (v + n - 1) / n }
	// rings[j][k] carries events from engine j's rx side to engine k's tx side.
	rings := make([][]*evRing, n)
	for j := range rings {
		rings[j] = make([]*evRing, n)
		for k := range rings[j] {
			rings[j][k] = newEvRing(max(share(r.cfg.EventRing), 16))
		}
	}
	engs := make([]*Engine, n)
	for k := range engs {
		rk := *r // each engine its own copy (SetMAC writes it)
		if n > 1 {
			rk.cfg.MaxQPs = share(r.cfg.MaxQPs)
			rk.cfg.MaxPending = share(r.cfg.MaxPending)
			rk.cfg.MaxFCTs = share(r.cfg.MaxFCTs)
			rk.maxSamples = share(r.maxSamples)
		}
		sh := shardSpec{index: k, count: n, in: make([]*evRing, n), out: rings[k]}
		for j := range rings {
			sh.in[j] = rings[j][k]
		}
		e, err := newEngine(&rk, now, sh)
		if err != nil {
			return nil, err
		}
		engs[k] = e
	}
	return engs, nil
}

// Shards is the engines of one host (NewEngines), read as one host: their
// results merged. Read it once the loops have stopped.
type Shards []*Engine

// SetMAC sets the host's MAC in every engine before they run.
func (s Shards) SetMAC(m wire.MAC) {
	for _, e := range s {
		e.SetMAC(m)
	}
}

// Counters sums the engines' counters.
func (s Shards) Counters() (RxCounters, TxCounters) {
	var rc RxCounters
	var tc TxCounters
	for _, e := range s {
		rc.Add(&e.rc)
		tc.Add(&e.tc)
	}
	return rc, tc
}

// Samples merges the engines' rate samples by time (engine order on ties).
func (s Shards) Samples() []RateSample {
	if len(s) == 1 {
		return s[0].Samples()
	}
	var out []RateSample
	for _, e := range s {
		out = append(out, e.samples...)
	}
	slices.SortStableFunc(out, func(a, b RateSample) int { return cmpInt64(a.T, b.T) })
	return out
}

// FCTs merges the engines' completed messages in the order they completed
// (engine order on ties).
func (s Shards) FCTs() []FCT {
	if len(s) == 1 {
		return s[0].FCTs()
	}
	var out []FCT
	for _, e := range s {
		out = append(out, e.fcts...)
	}
	slices.SortStableFunc(out, func(a, b FCT) int { return cmpInt64(a.StartNs+a.FCTNs, b.StartNs+b.FCTNs) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Merged is a read-only engine that holds the engines' results merged:
// samples, FCTs, receiver flows, active flows and summed counters, with the
// host's name, addresses and scheme. It is for the readers that take one
// engine (WriteResultFiles, Report, Samples, FCTs, RxFlows, ActiveFlows,
// Counters); it runs nothing. Of one engine it is that engine.
func (s Shards) Merged() *Engine {
	if len(s) == 1 {
		return s[0]
	}
	m := &Engine{r: s[0].r}
	m.sender.r, m.receiver.r, m.sender.shards = s[0].r, s[0].r, len(s)
	m.samples, m.fcts = s.Samples(), s.FCTs()
	m.rc, m.tc = s.Counters()
	for _, e := range s {
		for i := range e.rflows {
			if e.rflows[i].used {
				m.rflows = append(m.rflows, e.rflows[i])
			}
		}
		for _, qp := range e.active {
			m.active = append(m.active, int32(len(m.qps)))
			m.qps = append(m.qps, e.qps[qp])
		}
	}
	return m
}
