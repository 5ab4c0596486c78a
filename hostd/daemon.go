package hostd

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbed/ccbed/config"
)

// File is a hostd TOML file (configs/host-*.toml): how cmd/hostd brings up DPDK
// (EAL arguments, the port, the lcores) and the [host] table, a Config.
type File struct {
	EALArgs []string `toml:"eal_args"` // EAL arguments, e.g. ["--no-huge", "-m", "1024", "-l", "0-1"]
	Port    string   `toml:"port"`     // ethdev name: a PCI address or a vdev name
	// Lcores runs the host as one engine on these lcores: one (rx and tx in
	// one loop) or two (rx, tx). Give lcores or tx_lcores, not both.
	Lcores []uint `toml:"lcores"`
	// TxLcores runs the host as one engine per entry, at most MaxEngines
	// (NewEngines: each engine owns every n-th flow of [host] and the QPs
	// that carry them, and paces 1/n of the line rate): engine i transmits
	// on the port's tx queue i from lcore TxLcores[i] and receives on its rx
	// queue i, the NIC spreading received frames over the rx queues by RSS.
	TxLcores []uint `toml:"tx_lcores"`
	// RxLcores are the lcores polling the engines' rx queues, rx queue i
	// from RxLcores[i] (one entry per tx lcore; an lcore may poll several);
	// empty: each engine's rx queue is polled in its tx lcore's loop.
	RxLcores   []uint  `toml:"rx_lcores"`
	Mbufs      uint32  `toml:"mbufs"`       // mempool size (default 16383)
	DurationS  float64 `toml:"duration_s"`  // run time; 0: until SIGINT / SIGTERM
	ResultsDir string  `toml:"results_dir"` // where rate.csv, fct.csv, counters.json, run.json go (default "results/<host name>")
	// StartAtUnixNs, when non-zero, is the wall-clock instant (Unix time in
	// ns) of the host's time 0: hostd brings up DPDK and its port, then waits
	// for it before its traffic starts, so that every host of a multi-node run
	// starts together (hostd -start-at overrides it). It must lie in the
	// future, by at most hostd/daemon.MaxStartLead.
	StartAtUnixNs int64  `toml:"start_at_unix_ns"`
	Host          Config `toml:"host"`

	file *config.File
	dir  string
}

// LoadFile reads and checks a hostd TOML file; errors name the file, line and
// key.
func LoadFile(path string) (*File, error) {
	f := &File{Mbufs: 16383}
	cf, err := config.Load(path, f)
	if err != nil {
		return nil, err
	}
	if err := cf.Require(f); err != nil {
		return nil, err
	}
	f.file = cf
	f.dir = filepath.Dir(path)
	if f.Port == "" {
		return nil, cf.Errorf("port", "missing: the ethdev name (PCI address or vdev)")
	}
	if err := f.checkLcores(cf); err != nil {
		return nil, err
	}
	if err := f.checkNumbers(cf); err != nil {
		return nil, err
	}
	if f.StartAtUnixNs < 0 {
		return nil, cf.Errorf("start_at_unix_ns", "negative: want a Unix time in ns, or 0 to start at once")
	}
	if f.ResultsDir == "" {
		// The host's name becomes the directory: a name only, never a path.
		if err := config.Name(f.Host.Name); err != nil && f.Host.Name != "" {
			return nil, cf.Errorf("host.name", "%v (results go to results/<name>/ unless results_dir says where)", err)
		}
		f.ResultsDir = filepath.Join("results", f.Host.Name)
	}
	// Validate the host now, so that a bad file fails before DPDK starts.
	c := f.Host
	c.ApplyDefaults()
	if c.MAC == "" {
		c.MAC = "02:00:00:00:00:01" // the port's MAC is filled in later
	}
	if _, err := resolve(&c, cf, "host", f.dir); err != nil {
		return nil, err
	}
	if n := f.Engines(); c.MaxQPs < n {
		return nil, cf.Errorf("tx_lcores", "%d engines need max_qps >= %d (each owns its share of the QPs), got %d", n, n, c.MaxQPs)
	}
	return f, nil
}

// checkLcores checks lcores, tx_lcores and rx_lcores against each other.
func (f *File) checkLcores(cf *config.File) error {
	switch n := len(f.TxLcores); {
	case n > 0 && len(f.Lcores) > 0:
		return cf.Errorf("tx_lcores", "give lcores (one engine) or tx_lcores (one engine per tx lcore), not both")
	case n > MaxEngines:
		return cf.Errorf("tx_lcores", "%d entries: want 1..%d (one engine each)", n, MaxEngines)
	case n > 0:
		if r := len(f.RxLcores); r != 0 && r != n {
			return cf.Errorf("rx_lcores", "%d entries: want none (each rx queue polled in its tx lcore's loop) or one per tx lcore (%d)", r, n)
		}
	case len(f.RxLcores) > 0:
		return cf.Errorf("rx_lcores", "needs tx_lcores (rx_lcores polls the rx queues of their engines)")
	default:
		if n := len(f.Lcores); n < 1 || n > 2 {
			return cf.Errorf("lcores", "want 1 lcore (rx and tx) or 2 (rx, tx), got %d (or tx_lcores: one engine per tx lcore)", n)
		}
	}
	return nil
}

// Engines is the number of engines the file's host runs (NewEngines), one
// per queue pair of its port: len(tx_lcores), or 1 with lcores.
func (f *File) Engines() int { return max(len(f.TxLcores), 1) }

// Loop is one lcore's share of polling a host's engines: the engines whose
// rx side (Rx) and tx side (Tx) its loop polls. An engine in both is polled
// in one call (its 1-lcore mode: dataplane.Host.Poll).
type Loop struct {
	Lcore uint
	Name  string // "host", "rx" and "tx" for one engine; "rx0+tx1" and the like for several
	Rx    []int
	Tx    []int
}

// Loops is the lcore loops the file asks for, in the order their lcores
// first appear: with lcores, one loop ("host") or an rx and a tx loop; with
// tx_lcores, engine i's tx side on tx_lcores[i] and its rx side on
// rx_lcores[i] (its tx lcore when rx_lcores is empty). Sides given the same
// lcore share its loop.
func (f *File) Loops() []Loop {
	var loops []Loop
	at := func(l uint) *Loop {
		for i := range loops {
			if loops[i].Lcore == l {
				return &loops[i]
			}
		}
		loops = append(loops, Loop{Lcore: l})
		return &loops[len(loops)-1]
	}
	if len(f.TxLcores) == 0 {
		if len(f.Lcores) == 0 {
			return nil
		}
		at(f.Lcores[0]).Rx = []int{0}
		tx := at(f.Lcores[len(f.Lcores)-1])
		tx.Tx = []int{0}
		if len(loops) == 1 {
			loops[0].Name = "host"
		} else {
			loops[0].Name, loops[1].Name = "rx", "tx"
		}
		return loops
	}
	for i, l := range f.TxLcores {
		rx := l
		if len(f.RxLcores) > 0 {
			rx = f.RxLcores[i]
		}
		lp := at(rx)
		lp.Rx = append(lp.Rx, i)
		lp = at(l)
		lp.Tx = append(lp.Tx, i)
	}
	for i := range loops {
		lp := &loops[i]
		var parts []string
		for _, e := range lp.Rx {
			if slices.Contains(lp.Tx, e) {
				parts = append(parts, fmt.Sprintf("host%d", e))
			} else {
				parts = append(parts, fmt.Sprintf("rx%d", e))
			}
		}
		for _, e := range lp.Tx {
			if !slices.Contains(lp.Rx, e) {
				parts = append(parts, fmt.Sprintf("tx%d", e))
			}
		}
		lp.Name = strings.Join(parts, "+")
	}
	return loops
}

// NewEngine builds the [host] engine at time now; CDF paths are relative to the
// file's directory and errors name the file's lines.
func (f *File) NewEngine(now int64) (*Engine, error) {
	if f.file == nil {
		return nil, fmt.Errorf("hostd: File not loaded with LoadFile")
	}
	return NewEngineFromFile(f.Host, f.file, "host", f.dir, now)
}

// NewEngines builds the file's Engines() engines of the [host] table at time
// now (NewEngines): one with lcores, one per tx lcore with tx_lcores.
func (f *File) NewEngines(now int64) ([]*Engine, error) {
	if f.file == nil {
		return nil, fmt.Errorf("hostd: File not loaded with LoadFile")
	}
	return NewEnginesFromFile(f.Host, f.file, "host", f.dir, f.Engines(), now)
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

// MaxFrameBytes is the largest frame the file's host builds (its mtu_bytes
// with headers and an INT stack): the mbufs of its pool must hold it.
func (f *File) MaxFrameBytes() int {
	c := f.Host
	c.ApplyDefaults()
	return maxFrame(c.MTUBytes) + vlanLen(c.TagPCP)
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
