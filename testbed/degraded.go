package testbed

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

// StallFraction is the share of an experiment's shortest control time scale,
// the smaller of its base RTT and its scheme's control period
// (ccalgo.ControlPeriod: RoCC's T, DCQCN's timers, HPCC's T, ...), that an
// lcore may stall before the run is marked degraded. During a stall the
// lcore's emulated links do not drain and its engines' timers do not fire:
// when it ends, the frames of the whole stall arrive at once. A stall of half
// the base RTT piles half a bandwidth-delay product onto a queue in one burst,
// and one of half the control period makes the scheme's next update half a
// period late; beyond that, what the run measures is the stall's dynamics, not
// the scheme's.
const StallFraction = 0.5

// StallFloorNs is the smallest stall bound. A loop measures a stall as the time
// between the starts of two consecutive polls, so a gap no longer than one busy
// poll cannot be told from work: a poll that moves a 32-frame burst on each of
// 4 ports through an engine takes about 30 us at the few Mpps per lcore of
// docs/perf.md, and the kernel's tick and interrupts on a shared CPU add tens
// of us more. Below 100 us, a bound would flag the measurement, not a stall.
const StallFloorNs = 100_000

// StallBound is the longest an lcore of a run may stall (lcore.Stats.MaxStallNs)
// before the run is marked degraded, and what it was derived from.
type StallBound struct {
	// Ns is the bound: max(StallFloorNs, StallFraction * min(BaseRTTNs,
	// PeriodNs)), PeriodNs left out when 0.
	Ns        int64 `json:"ns"`
	BaseRTTNs int64 `json:"base_rtt_ns"`
	// PeriodNs is the scheme's control period (0: it has none, it acts per
	// ACK or per RTT only); Period says what it is.
	PeriodNs int64  `json:"period_ns,omitempty"`
	Period   string `json:"period,omitempty"`
}

// NewStallBound derives the stall bound from a base RTT and a scheme's control
// period (periodNs <= 0: none).
func NewStallBound(baseRTTNs, periodNs int64, period string) StallBound {
	b := StallBound{BaseRTTNs: baseRTTNs}
	scale := baseRTTNs
	if periodNs > 0 {
		b.PeriodNs, b.Period = periodNs, period
		if scale <= 0 || periodNs < scale {
			scale = periodNs
		}
	}
	b.Ns = max(int64(StallFraction*float64(scale)), StallFloorNs)
	return b
}

// String says the bound and how it was derived, e.g. "100 us: 1/2 of min(base
// RTT 20.0 us, RoCC's fair-rate update interval T (t_ns) 1000.0 us) = 10.0 us,
// raised to the 100 us floor a loop can measure".
func (b StallBound) String() string {
	of := fmt.Sprintf("base RTT %.1f us", float64(b.BaseRTTNs)/1e3)
	scale := b.BaseRTTNs
	if b.PeriodNs > 0 {
		of = fmt.Sprintf("min(%s, %s %.1f us)", of, b.Period, float64(b.PeriodNs)/1e3)
		if scale <= 0 || b.PeriodNs < scale {
			scale = b.PeriodNs
		}
	}
	raw := StallFraction * float64(scale)
	s := fmt.Sprintf("%.0f us: %g of %s = %.1f us", float64(b.Ns)/1e3, StallFraction, of, raw/1e3)
	if float64(b.Ns) > raw {
		s += fmt.Sprintf(", raised to the %.0f us floor a loop can measure", float64(StallFloorNs)/1e3)
	}
	return s
}

// StallBound is the stall bound of e's run with the base RTT its nodes were
// given (fabric.Plan.BaseRTTNs), and its scheme's control period as
// [cc.params] sets it over the scheme's defaults for the host links.
func (e *Experiment) StallBound(baseRTTNs int64) StallBound {
	var periodNs int64
	var period string
	if sch, err := ccalgo.Lookup(e.CC.Scheme); err == nil {
		params := sch.DefaultParams(e.hostEnv(baseRTTNs))
		if cp, ok := params.(ccalgo.ControlPeriod); ok && e.CC.overrides.Apply(params) == nil {
			periodNs, period = cp.ControlPeriodNs()
		}
	}
	return NewStallBound(baseRTTNs, periodNs, period)
}

// baseRTTNs is the base RTT res's nodes were given: its plan's, else the one
// e plans (0 when e cannot be planned).
func (e *Experiment) baseRTTNs(res *Result) int64 {
	if res.Fabric != nil && res.Fabric.Plan != nil {
		return res.Fabric.Plan.BaseRTTNs
	}
	if p, err := e.Plan(); err == nil {
		return p.BaseRTTNs
	}
	return 0
}

// stallReason is the degraded reason of an lcore that stalled for stallNs,
// over bound, or "" when it did not stall that long.
func stallReason(lcore uint, name string, stallNs int64, bound StallBound) string {
	if stallNs <= bound.Ns {
		return ""
	}
	return fmt.Sprintf("lcore %d (%s) stalled for up to %.3f ms, over the stall bound of %s: other load on its CPU; emulated links drain only while their lcore runs",
		lcore, name, float64(stallNs)/1e6, bound)
}

// lateStartReason is the degraded reason of a host that reached its time 0
// lateNs after the common start instant of a run on real nodes, over bound, or
// "" when it was not that late. A late host is a stall at the start: its flows
// begin after the others' and the flows it meets have already settled, the
// same harm the stall bound measures.
func lateStartReason(host string, lateNs int64, bound StallBound) string {
	if lateNs <= bound.Ns {
		return ""
	}
	return fmt.Sprintf("host %s reached its time 0 %.3f ms after the common start instant, over the stall bound of %s: it was off its CPU at the instant, and its flows started late against the others'",
		host, float64(lateNs)/1e6, bound)
}

// hostDegraded is why host name's counters make a run's results wrong, one
// sentence per loss, each with its count: flows dropped or never started,
// frames its receiver's flow table refused, control events, rate samples and
// FCT records it could not keep, frames its adapter lost (DPDK).
func hostDegraded(name string, r *hostd.Report) []string {
	var out []string
	add := func(n uint64, format string) {
		if n > 0 {
			out = append(out, fmt.Sprintf("host %s "+format, name, n))
		}
	}
	add(r.Tx.PendingDropped, "dropped %d flows unstarted: the queue of flows waiting for a free QP was full (hostd max_pending); they are in no results file")
	add(r.Tx.FlowsWaiting, "never started %d flows that arrived: every QP stayed busy until the end (hostd max_qps); they are in no results file")
	add(r.Rx.FlowTableFull, "refused %d data frames: its receiver's flow table was full (hostd max_rx_flows); their flows stalled until a slot freed")
	add(r.Rx.EventsDropped, "lost %d control events (ACK, NAK, CNP, pause) between its receive and send sides: the event ring was full (hostd event_ring)")
	add(r.Tx.SamplesDropped, "dropped %d rate samples (hostd max_samples; rate.csv has gaps)")
	add(r.Tx.FCTsDropped, "dropped %d FCT records (hostd max_fcts; fct.csv is incomplete)")
	add(r.Port.TxDrops, "lost %d frames its port did not take (tx queue full)")
	add(r.Port.NoMbuf, "lost %d frames for want of an mbuf (mempool empty)")
	add(r.Port.CtlRingDrops, "lost %d control frames: its rx-to-tx control ring was full")
	return out
}

// switchDegraded is why switch name's counters make a run's results wrong:
// telemetry samples it could not keep, frames its adapter could not send.
// Drops of a full buffer are the experiment's own (congestion), not counted
// here.
func switchDegraded(name string, s *switchd.Snapshot) []string {
	var out []string
	if s.SamplesDropped > 0 {
		out = append(out, fmt.Sprintf("switch %s dropped %d telemetry samples (queue.csv, queue_prio.csv, fairrate.csv have gaps)", name, s.SamplesDropped))
	}
	if s.PFCEventsDropped > 0 {
		out = append(out, fmt.Sprintf("switch %s dropped %d PFC events (pfc.csv has gaps)", name, s.PFCEventsDropped))
	}
	var tx uint64
	for i := range s.Ports {
		tx += s.Ports[i].DropTx
	}
	if tx > 0 {
		out = append(out, fmt.Sprintf("switch %s lost %d frames its ports did not take (tx queue full or no mbuf)", name, tx))
	}
	return out
}
