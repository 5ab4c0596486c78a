// Package daemontest holds what the daemons' process tests (cmd/switchd,
// cmd/hostd) share: skipping where DPDK cannot run, reading a daemon's
// JSON results, and writing a switchd configuration file from a few
// values. It is for tests only: no daemon imports it.
package daemontest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// SkipUnlessRoot skips t in -short mode and when the test does not run as
// root, which daemon (a DPDK process) needs.
func SkipUnlessRoot(t testing.TB, daemon string) {
	t.Helper()
	if testing.Short() {
		t.Skip("daemon test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skipf("%s needs root for DPDK", daemon)
	}
}

// ReadJSON decodes the JSON file at path into v, failing t when it cannot.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// SwitchFile is a switchd configuration file as the daemon tests write it:
// a [switch] table (ring_size 512, every test's), ports each with a route,
// a scheme and telemetry; what it leaves out takes switchd's defaults.
// Text is the file; Write writes it.
type SwitchFile struct {
	// IP is the switch's address.
	IP string
	// Mode is switch.mode; "" leaves it out (switchd's default).
	Mode string
	// Lcores are switch.lcores.
	Lcores []int
	// EALArgs are switch.eal_args, as a TOML array.
	EALArgs string
	// Mbufs is switch.mbufs.
	Mbufs int
	// Switch is more lines of the [switch] table, each ending in a newline.
	Switch string
	// Ports are the [[ports]], in order.
	Ports []SwitchPort
	// Scheme is cc.scheme; CC is more lines of [cc], each ending in a
	// newline.
	Scheme, CC string
	// Tables is more tables after [cc] ([pfc], [buffer]), as TOML.
	Tables string
	// CSV and JSON are telemetry.csv and telemetry.json, left out when "".
	CSV, JSON string
	// Quiet writes telemetry.console = false; switchd's default prints
	// the telemetry to the console.
	Quiet bool
}

// SwitchPort is a port of a SwitchFile.
type SwitchPort struct {
	// Name, Device, MAC and PeerMAC are the port's keys; MAC is left out
	// when "" (switchd reads the device's).
	Name, Device, MAC, PeerMAC string
	// LinkGbps is link_gbps.
	LinkGbps float64
	// Route is the prefix a [[routes]] entry sends to the port; "" for
	// none.
	Route string
}

// Text is the configuration file.
func (s *SwitchFile) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[switch]\nip = %q\n", s.IP)
	if s.Mode != "" {
		fmt.Fprintf(&b, "mode = %q\n", s.Mode)
	}
	lcores := make([]string, len(s.Lcores))
	for i, l := range s.Lcores {
		lcores[i] = fmt.Sprint(l)
	}
	fmt.Fprintf(&b, "lcores = [%s]\neal_args = %s\nmbufs = %d\nring_size = 512\n%s", strings.Join(lcores, ", "), s.EALArgs, s.Mbufs, s.Switch)
	for _, p := range s.Ports {
		fmt.Fprintf(&b, "\n[[ports]]\nname = %q\ndevice = %q\n", p.Name, p.Device)
		if p.MAC != "" {
			fmt.Fprintf(&b, "mac = %q\n", p.MAC)
		}
		fmt.Fprintf(&b, "peer_mac = %q\nlink_gbps = %g\n", p.PeerMAC, p.LinkGbps)
	}
	b.WriteString("\n")
	for _, p := range s.Ports {
		if p.Route != "" {
			fmt.Fprintf(&b, "[[routes]]\nprefix = %q\nport = %q\n", p.Route, p.Name)
		}
	}
	fmt.Fprintf(&b, "\n[cc]\nscheme = %q\n%s", s.Scheme, s.CC)
	if s.Tables != "" {
		b.WriteString("\n" + s.Tables)
	}
	if s.CSV != "" || s.JSON != "" || s.Quiet {
		b.WriteString("\n[telemetry]\n")
		if s.CSV != "" {
			fmt.Fprintf(&b, "csv = %q\n", s.CSV)
		}
		if s.JSON != "" {
			fmt.Fprintf(&b, "json = %q\n", s.JSON)
		}
		if s.Quiet {
			b.WriteString("console = false\n")
		}
	}
	return b.String()
}

// Write writes the file to path and returns path.
func (s *SwitchFile) Write(t testing.TB, path string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
