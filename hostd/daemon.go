package hostd

import (
	"fmt"
	"path/filepath"

	"github.com/ccbed/ccbed/config"
)

// File is a hostd TOML file (configs/host-*.toml): how cmd/hostd brings up DPDK
// (EAL arguments, the port, the lcores) and the [host] table, a Config.
type File struct {
	EALArgs []string `toml:"eal_args"` // EAL arguments, e.g. ["--no-huge", "-m", "1024", "-l", "0-1"]
	Port    string   `toml:"port"`     // ethdev name: a PCI address or a vdev name
	// Lcores runs the host on these lcores: one (rx and tx in one loop) or two
	// (rx, tx).
	Lcores     []uint  `toml:"lcores"`
	Mbufs      uint32  `toml:"mbufs"`       // mempool size (default 16383)
	DurationS  float64 `toml:"duration_s"`  // run time; 0: until SIGINT / SIGTERM
	ResultsDir string  `toml:"results_dir"` // where rate.csv, fct.csv, counters.json go (default "results/<host name>")
	Host       Config  `toml:"host"`

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
	f.file = cf
	f.dir = filepath.Dir(path)
	if f.Port == "" {
		return nil, cf.Errorf("port", "missing: the ethdev name (PCI address or vdev)")
	}
	if n := len(f.Lcores); n < 1 || n > 2 {
		return nil, cf.Errorf("lcores", "want 1 lcore (rx and tx) or 2 (rx, tx), got %d", n)
	}
	if err := f.checkNumbers(cf); err != nil {
		return nil, err
	}
	if f.ResultsDir == "" {
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
	return f, nil
}

// NewEngine builds the [host] engine at time now; CDF paths are relative to the
// file's directory and errors name the file's lines.
func (f *File) NewEngine(now int64) (*Engine, error) {
	if f.file == nil {
		return nil, fmt.Errorf("hostd: File not loaded with LoadFile")
	}
	return NewEngineFromFile(f.Host, f.file, "host", f.dir, now)
}
