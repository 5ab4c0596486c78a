package report

import (
	"os"
	"runtime"
	"strings"

	"github.com/ccbed/ccbed/buildinfo"
)

// ResultsVersion is the version of the results contract (docs/results.md)
// that this package writes, summary.json's "results_version". Version 2 added
// the provenance fields, degraded and interrupted, null for missing values,
// rate.csv's rate_gbps and window_bytes, and fct.csv's src, dst and start_us.
const ResultsVersion = 2

// ConfigSnapshot is summary.json's "config": the experiment file a run was
// made from, as it was when the run started.
type ConfigSnapshot struct {
	// Path is the experiment file's path as given on the command line.
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// Text is the file's text.
	Text string `json:"text"`
	// Overrides are the -set key=value overrides applied over the file, in
	// order.
	Overrides []string `json:"overrides,omitempty"`
	// Effective is the experiment as decoded and checked (defaults filled,
	// overrides and command-line flags applied), keyed as in the file.
	Effective map[string]any `json:"effective,omitempty"`
	// SchemeParams are the scheme's parameters as the hosts ran them: its
	// defaults for the host links, the base RTT, the MTU and expected_flows,
	// with [cc.params] applied (docs/reference.md lists each key).
	SchemeParams map[string]any `json:"scheme_params,omitempty"`
}

// BuildInfo is summary.json's "build": the ccbed build that wrote it (one
// reader for it and for every command's -version: package buildinfo).
type BuildInfo = buildinfo.Info

// MachineInfo is summary.json's "machine": where the run (or the merge of a
// real-node run) happened.
type MachineInfo struct {
	Hostname string `json:"hostname"`
	// CPUs is the number of logical CPUs the process could use.
	CPUs int `json:"cpus"`
	// OS and Arch are GOOS and GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// Kernel is the kernel release, when known (Linux).
	Kernel string `json:"kernel,omitempty"`
}

// ThisBuild describes the running binary (buildinfo.Read).
func ThisBuild() BuildInfo { return buildinfo.Read() }

// ThisMachine describes the machine the process runs on.
func ThisMachine() MachineInfo {
	m := MachineInfo{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// LcoreSummary is one entry of summary.json's "lcores": an lcore's loop
// statistics on the DPDK clock.
type LcoreSummary struct {
	Lcore uint   `json:"lcore"`
	Name  string `json:"name"`
	// Iterations is the number of loop iterations; BusyFraction the share of
	// them that found work.
	Iterations   uint64  `json:"iterations"`
	BusyFraction float64 `json:"busy_fraction"`
	// MaxStallMs is the longest gap between two iterations: time the lcore's
	// CPU ran something else, during which its emulated links did not drain.
	MaxStallMs float64 `json:"max_stall_ms"`
}
