package hostd

import "fmt"

// Loop is one lcore's share of polling a host's engines: the engines whose
// rx side (Rx) and tx side (Tx) its loop polls. An engine in both is polled
// in one call (its 1-lcore mode: dataplane.Host.Poll). hostd/daemon.File.Loops lays
// them out from a file.
type Loop struct {
	Lcore uint
	Name  string // "host", "rx" and "tx" for one engine; "rx0+tx1" and the like for several
	Rx    []int
	Tx    []int
}

// ClockOffsetBoundNs is the largest clock offset between nodes (each node's
// offset from the reference, as chrony or PTP reports it) under which a
// multi-node run's cross-node time series stay comparable: 100 us. Why this
// bound: flow completion times are measured at the sender, on one clock, and
// need no synchronisation at all; what does is putting the switch's queue
// series and the hosts' rate series on one time axis, and the experiments
// sample those every 100 us or more (sample_us; 1 ms on the scaled runs), so
// an offset below one sample period moves a point by less than one sample.
// One-way delays would need far tighter clocks (PTP with hardware time
// stamps, below 1 us); ccbed measures none across nodes.
const ClockOffsetBoundNs = 100_000

// ClockOffset is this node's clock offset from its time reference, as the
// node's synchronisation daemon reports it. OffsetNs is nil when it is not
// known (no daemon, or the daemon is not synchronised): never 0 by default.
type ClockOffset struct {
	// OffsetNs is the system clock minus the reference, in ns (positive: the
	// clock is ahead); nil when unknown.
	OffsetNs *int64 `json:"offset_ns"`
	// Source says where the offset comes from ("chronyc tracking",
	// "pmc TIME_STATUS_NP") or, when it is unknown, why.
	Source string `json:"source"`
}

// String is the offset in us with its source, or "unknown (why)".
func (c ClockOffset) String() string {
	if c.OffsetNs == nil {
		return "unknown (" + c.Source + ")"
	}
	return fmt.Sprintf("%+.1f us (%s)", float64(*c.OffsetNs)/1e3, c.Source)
}

// Exceeds reports whether the offset is known and its magnitude is above
// boundNs.
func (c ClockOffset) Exceeds(boundNs int64) bool {
	return c.OffsetNs != nil && (*c.OffsetNs > boundNs || *c.OffsetNs < -boundNs)
}

// RunInfo is run.json, written beside a host's other results: when the
// host's time 0 was and how far its clock could be trusted. Multi-node runs
// (testbed collect) put every node's series on one time base with it.
type RunInfo struct {
	// Host is the host's name.
	Host string `json:"host"`
	// StartAtUnixNs is the common start instant the host waited for (its
	// time 0); 0 when it started at once (no instant given).
	StartAtUnixNs int64 `json:"start_at_unix_ns"`
	// StartAt is the same instant in RFC 3339, or "" when none.
	StartAt string `json:"start_at,omitempty"`
	// T0UnixNs is the wall clock read when the host's time 0 was taken (rate.csv
	// and FCTs count from it); with an instant, T0UnixNs - StartAtUnixNs is
	// how late the host woke.
	T0UnixNs int64 `json:"t0_unix_ns"`
	// ReadyUnixNs is when DPDK and the port were up (before the wait).
	ReadyUnixNs int64 `json:"ready_unix_ns"`
	// DurationS is the time the host ran from time 0.
	DurationS float64 `json:"duration_s"`
	// ClockOffset is the node's offset as its synchronisation daemon reported
	// it before the run.
	ClockOffset ClockOffset `json:"clock_offset"`
	// ClockOffsetBoundNs is ClockOffsetBoundNs.
	ClockOffsetBoundNs int64 `json:"clock_offset_bound_ns"`
	// ClockOffsetExceeded is true when the offset is known and above the
	// bound: cross-node time series of this run are degraded.
	ClockOffsetExceeded bool `json:"clock_offset_exceeded"`
	// Interrupted is true when SIGINT or SIGTERM ended the run (Signal names
	// it) rather than duration_s: a receiver run until stopped, or a run cut
	// short.
	Interrupted bool   `json:"interrupted"`
	Signal      string `json:"signal,omitempty"`
	// Lcores are the host's lcore loops as they ended: testbed collect marks
	// the run degraded when one stalled longer than the experiment's bound.
	Lcores []LcoreRun `json:"lcores,omitempty"`
}

// LcoreRun is one lcore loop of a host's run.
type LcoreRun struct {
	Name       string `json:"name"`
	Lcore      uint   `json:"lcore"`
	Iterations uint64 `json:"iterations"`
	// MaxStallNs is the longest time between the starts of two consecutive
	// polls (lcore.Stats.MaxStallNs).
	MaxStallNs int64 `json:"max_stall_ns"`
}

// ProgressFile is the name of the checkpoint a running hostd rewrites in its
// results directory every few seconds (Progress), so that a SIGKILL loses at
// most that much of its counters.
const ProgressFile = "progress.json"

// Progress is progress.json: the host's counters at TS seconds after its time
// 0. Final is false while the host runs (or when it was killed) and true in
// the copy written at a clean exit, beside counters.json.
type Progress struct {
	Host        string      `json:"host"`
	TS          float64     `json:"t_s"`
	Final       bool        `json:"final"`
	Interrupted bool        `json:"interrupted"`
	Rx          RxCounters  `json:"rx"`
	Tx          TxCounters  `json:"tx"`
	Port        PortCounter `json:"port"`
}

// RxCounters is the receive side's counters (Counters' first half): read it
// only from the goroutine that calls Receive, or after the loops stopped.
func (e *Engine) RxCounters() RxCounters { return e.rc }

// TxCounters is the send side's counters (Counters' second half): read it
// only from the goroutine that calls Service and NextData, or after the loops
// stopped.
func (e *Engine) TxCounters() TxCounters { return e.tc }

// RunInfoFile is the name of the RunInfo file in a host's results directory.
const RunInfoFile = "run.json"
