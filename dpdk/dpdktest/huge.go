package dpdktest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// HugeDaemon prepares a test that runs a DPDK daemon as a multi-process
// primary on hugepages with dpdk-dumpcap as its secondary. It skips t, with
// the reason, in -short mode, without root, without dpdk-dumpcap on the PATH,
// or with fewer than minMB MB of free hugepages. It returns a file prefix of
// its own for the daemon's and dumpcap's --file-prefix, and removes in t's
// cleanup what a primary leaves behind under that prefix (its hugepage files,
// which hold the pages until someone deletes them, and its runtime
// directory).
func HugeDaemon(t *testing.T, minMB int) (prefix string) {
	t.Helper()
	if testing.Short() {
		t.Skip("dpdk-dumpcap test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("DPDK on hugepages needs root")
	}
	if _, err := exec.LookPath("dpdk-dumpcap"); err != nil {
		t.Skip("dpdk-dumpcap is not installed (Debian package dpdk)")
	}
	free, dirs, err := hugepages()
	if err != nil {
		t.Skipf("no hugepages: %v", err)
	}
	if free < int64(minMB)<<20 {
		t.Skipf("%d MB of hugepages free, the test needs %d (see /proc/meminfo; scripts/setup.sh reserves them)", free>>20, minMB)
	}
	prefix = fmt.Sprintf("ccbdc%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	t.Cleanup(func() {
		for _, d := range dirs {
			files, _ := filepath.Glob(filepath.Join(d, prefix+"map_*"))
			for _, f := range files {
				os.Remove(f)
			}
		}
		os.RemoveAll(filepath.Join("/var/run/dpdk", prefix))
	})
	return prefix
}

// hugepages reads the free hugepage bytes of the default size from
// /proc/meminfo and the hugetlbfs mount points from /proc/mounts.
func hugepages() (free int64, dirs []string, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, nil, err
	}
	var pages, kb int64
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "HugePages_Free:":
			pages = n
		case "Hugepagesize:":
			kb = n
		}
	}
	m, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return 0, nil, err
	}
	for _, l := range strings.Split(string(m), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "hugetlbfs" {
			dirs = append(dirs, f[1])
		}
	}
	if len(dirs) == 0 {
		return 0, nil, fmt.Errorf("no hugetlbfs mounted (/proc/mounts)")
	}
	return pages * kb << 10, dirs, nil
}

// Dumpcap runs dpdk-dumpcap --file-prefix prefix with args, killing it after
// timeout, and returns its output; it fails t when dumpcap fails or is killed.
func Dumpcap(t *testing.T, prefix string, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dpdk-dumpcap", append([]string{"--file-prefix", prefix}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpdk-dumpcap %s: %v (killed after %v: %v)\n%s", strings.Join(args, " "), err, timeout, ctx.Err() != nil, out)
	}
	return string(out)
}
