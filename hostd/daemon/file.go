package daemon

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/wire"
)

// File is a hostd TOML file (configs/host-*.toml): how cmd/hostd brings up DPDK
// (EAL arguments, the port, the lcores) and the [host] table, a Config.
type File struct {
	EALArgs []string `toml:"eal_args"` // EAL arguments, e.g. ["--no-huge", "-m", "1024", "-l", "0-1"]
	Port    string   `toml:"port"`     // ethdev name: a PCI address or a vdev name
	// Lcores runs the host as one engine on these lcores: one (rx and tx in
	// one loop) or two (rx, tx). Give lcores or tx_lcores, not both.
	Lcores []uint `toml:"lcores"`
	// TxLcores runs the host as one engine per entry, at most hostd.MaxEngines
	// (hostd.NewEngines: each engine owns every n-th flow of [host] and the QPs
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
	spec hostd.Spec // the [host] table as the engine takes it
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
	if c.MAC == "" {
		c.MAC = "02:00:00:00:00:01" // the port's MAC is filled in later (Engine.SetMAC)
	}
	if f.spec, err = c.Spec(cf, "host", filepath.Dir(path)); err != nil {
		return nil, err
	}
	if f.Host.MAC == "" {
		f.spec.MAC = wire.MAC{}
	}
	if err := fileError(cf, "host", hostd.CheckSpec(f.spec)); err != nil {
		return nil, err
	}
	if n := f.Engines(); f.spec.MaxQPs < n {
		return nil, cf.Errorf("tx_lcores", "%d engines need max_qps >= %d (each owns its share of the QPs), got %d", n, n, c.MaxQPs)
	}
	return f, nil
}

// checkLcores checks lcores, tx_lcores and rx_lcores against each other.
func (f *File) checkLcores(cf *config.File) error {
	switch n := len(f.TxLcores); {
	case n > 0 && len(f.Lcores) > 0:
		return cf.Errorf("tx_lcores", "give lcores (one engine) or tx_lcores (one engine per tx lcore), not both")
	case n > hostd.MaxEngines:
		return cf.Errorf("tx_lcores", "%d entries: want 1..%d (one engine each)", n, hostd.MaxEngines)
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

// Loops is the lcore loops the file asks for, in the order their lcores
// first appear: with lcores, one loop ("host") or an rx and a tx loop; with
// tx_lcores, engine i's tx side on tx_lcores[i] and its rx side on
// rx_lcores[i] (its tx lcore when rx_lcores is empty). Sides given the same
// lcore share its loop.
func (f *File) Loops() []hostd.Loop {
	var loops []hostd.Loop
	at := func(l uint) *hostd.Loop {
		for i := range loops {
			if loops[i].Lcore == l {
				return &loops[i]
			}
		}
		loops = append(loops, hostd.Loop{Lcore: l})
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

// Spec is the [host] table as the engine takes it (LoadFile built it):
// addresses parsed, defaults applied, the scheme's parameters decoded, CDFs
// read. Its MAC is zero when the file names none (the port's own).
func (f *File) Spec() hostd.Spec { return f.spec }

// NewEngines builds the file's Engines() engines of the [host] table at time
// now (hostd.NewEngines): one with lcores, one per tx lcore with tx_lcores.
func (f *File) NewEngines(now int64) ([]*hostd.Engine, error) {
	if f.file == nil {
		return nil, fmt.Errorf("hostd: File not loaded with LoadFile")
	}
	engs, err := hostd.NewEngines(f.spec, f.Engines(), now)
	return engs, fileError(f.file, "host", err)
}

// MaxFrameBytes is the largest frame the file's host builds (its mtu_bytes
// with headers and an INT stack): the mbufs of its pool must hold it.
func (f *File) MaxFrameBytes() int { return f.spec.MaxFrameBytes() }
