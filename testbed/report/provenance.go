package report

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
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
}

// BuildInfo is summary.json's "build": the ccbed build that wrote it.
type BuildInfo struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the main module's version, or "devel" for a build from a
	// working tree without one.
	Version string `json:"version"`
	// VCSRevision is the commit the binary was built from, when the build
	// recorded it.
	VCSRevision string `json:"vcs_revision,omitempty"`
	// VCSModified is true when the working tree had uncommitted changes;
	// absent when the build did not record it.
	VCSModified *bool `json:"vcs_modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
}

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

// ThisBuild describes the running binary (runtime/debug.ReadBuildInfo).
func ThisBuild() BuildInfo {
	b := BuildInfo{Version: "devel", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = info.Main.Path
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.VCSRevision = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			b.VCSModified = &m
		}
	}
	return b
}

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
