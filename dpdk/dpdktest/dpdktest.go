// Package dpdktest holds what the DPDK-facing packages' tests share: the
// TestMain that starts DPDK's EAL once per test binary, in memory without
// hugepages or PCI devices, before the tests run.
package dpdktest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
)

// Args returns the EAL arguments of a test binary: memMB MB of ordinary
// memory (no hugepages), no PCI devices, no shared configuration or
// telemetry, the lcores of the list lcores ("0", "0-1"), EAL's errors
// only, then extra (vdevs, ...).
func Args(memMB int, lcores string, extra ...string) []string {
	args := []string{"--no-huge", "-m", strconv.Itoa(memMB), "--no-pci", "--no-shconf", "--no-telemetry",
		"-l", lcores, "--log-level=lib.eal:error"}
	return append(args, extra...)
}

// Main starts the EAL with args and the words of CCBED_EAL_EXTRA (e.g.
// "-d /path/to/pmds" on a machine where DPDK's drivers are not installed
// in their default place), then runs the tests of m and exits with their
// status. When the EAL does not start it says that the tests of pkg need
// DPDK and root, and exits 1.
func Main(m *testing.M, pkg string, args []string) {
	args = append(args, strings.Fields(os.Getenv("CCBED_EAL_EXTRA"))...)
	if err := dpdk.EALInit(args); err != nil {
		fmt.Fprintf(os.Stderr, "%s tests need DPDK (scripts/setup.sh) and root: %v\n", pkg, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
