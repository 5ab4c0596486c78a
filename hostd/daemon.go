package hostd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// future, by at most MaxStartLead.
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

// MaxStartLead bounds how far in the future a start instant may lie: a
// multi-node run computes one a few seconds ahead; an instant hours away is
// a mistake (a wrong unit, a wrong date), not a plan.
const MaxStartLead = 10 * time.Minute

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

// ParseStartAt reads a start instant given as an RFC 3339 time
// ("2026-11-23T10:00:00.5Z") or as a Unix time in nanoseconds.
func ParseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return time.Time{}, fmt.Errorf("start instant %q: want a positive Unix time in ns", s)
		}
		return time.Unix(0, n), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("start instant %q: want RFC 3339 (2026-11-23T10:00:00.5Z) or Unix time in ns", s)
	}
	return t, nil
}

// CheckStartAt reports why at cannot be a start instant at wall-clock time
// now: it has passed, or it lies more than MaxStartLead ahead.
func CheckStartAt(at, now time.Time) error {
	if d := at.Sub(now); d <= 0 {
		return fmt.Errorf("start instant %s is %v in the past: give every host an instant a few seconds ahead (after DPDK and the port are up)",
			at.UTC().Format(time.RFC3339Nano), (-d).Round(time.Microsecond))
	} else if d > MaxStartLead {
		return fmt.Errorf("start instant %s is %v ahead, more than %v: wrong unit or date?",
			at.UTC().Format(time.RFC3339Nano), d.Round(time.Second), MaxStartLead)
	}
	return nil
}

// WaitUntil blocks until the wall clock reads at or ctx ends (then it returns
// ctx's error): it sleeps to within 500 us of at, then polls the clock, so
// that it returns within a few microseconds of at on a CPU of its own.
func WaitUntil(ctx context.Context, at time.Time) error {
	if d := time.Until(at) - 500*time.Microsecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for time.Now().Before(at) {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

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

// ParseChronyTracking reads the "System time" line of `chronyc tracking`
// ("System time     : 0.000001234 seconds fast of NTP time") as an offset in
// ns, positive when the clock is fast. It fails when the line is missing or
// chrony says it is not synchronised ("Leap status : Not synchronised").
func ParseChronyTracking(out string) (int64, error) {
	var off *int64
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Leap status":
			if strings.Contains(strings.ToLower(v), "not synchronised") {
				return 0, errors.New("chrony is not synchronised")
			}
		case "System time":
			f := strings.Fields(v)
			if len(f) < 3 {
				return 0, fmt.Errorf("chronyc tracking: System time %q", strings.TrimSpace(v))
			}
			sec, err := strconv.ParseFloat(f[0], 64)
			if err != nil || math.IsNaN(sec) || math.IsInf(sec, 0) {
				return 0, fmt.Errorf("chronyc tracking: System time %q", strings.TrimSpace(v))
			}
			ns := int64(math.Round(sec * 1e9))
			switch f[2] {
			case "fast":
			case "slow":
				ns = -ns
			default:
				return 0, fmt.Errorf("chronyc tracking: System time %q: want fast or slow", strings.TrimSpace(v))
			}
			off = &ns
		}
	}
	if off == nil {
		return 0, errors.New("chronyc tracking: no System time line")
	}
	return *off, nil
}

// ParsePMCTimeStatus reads master_offset (ns) from `pmc -u -b 0 'GET
// TIME_STATUS_NP'` (linuxptp); it fails when there is no grandmaster
// (gmPresent false) or no offset.
func ParsePMCTimeStatus(out string) (int64, error) {
	var off *int64
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "gmPresent":
			if f[1] != "true" {
				return 0, errors.New("ptp4l has no grandmaster")
			}
		case "master_offset":
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("pmc: master_offset %q", f[1])
			}
			off = &n
		}
	}
	if off == nil {
		return 0, errors.New("pmc: no master_offset")
	}
	return *off, nil
}

// ReadClockOffset asks the node's synchronisation daemon for the clock
// offset: chrony (`chronyc -n tracking`) if installed, else linuxptp's pmc.
// The offset is unknown, never 0, when neither answers.
func ReadClockOffset(ctx context.Context) ClockOffset {
	ask := func(name string, args ...string) (string, error) {
		if _, err := exec.LookPath(name); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	var why []string
	if out, err := ask("chronyc", "-n", "tracking"); err == nil {
		if ns, err := ParseChronyTracking(out); err == nil {
			return ClockOffset{OffsetNs: &ns, Source: "chronyc tracking"}
		} else {
			why = append(why, err.Error())
		}
	} else if !errors.Is(err, exec.ErrNotFound) {
		why = append(why, err.Error())
	}
	if out, err := ask("pmc", "-u", "-b", "0", "GET TIME_STATUS_NP"); err == nil {
		if ns, err := ParsePMCTimeStatus(out); err == nil {
			return ClockOffset{OffsetNs: &ns, Source: "pmc TIME_STATUS_NP"}
		} else {
			why = append(why, err.Error())
		}
	} else if !errors.Is(err, exec.ErrNotFound) {
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		why = append(why, "neither chronyc nor pmc is installed")
	}
	return ClockOffset{Source: strings.Join(why, "; ")}
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

// CheckResultsDir makes dir (and its parents) and checks that it takes new
// files, before a run, so that a run never ends with results it cannot
// write. It leaves no file behind.
func CheckResultsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results_dir: %w", err)
	}
	f, err := os.CreateTemp(dir, ".check*")
	if err != nil {
		return fmt.Errorf("results_dir: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
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

// WriteRunInfo writes info as dir/run.json (dir is created if needed).
func WriteRunInfo(dir string, info RunInfo) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RunInfoFile), append(b, '\n'), 0o644)
}

// ReadRunInfo reads a run.json written by WriteRunInfo.
func ReadRunInfo(path string) (RunInfo, error) {
	var info RunInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	r := json.NewDecoder(bytes.NewReader(b))
	r.DisallowUnknownFields()
	if err := r.Decode(&info); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}
