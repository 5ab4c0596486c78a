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
	"syscall"
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
	_, dirs, err := hugepages()
	if err != nil {
		t.Skipf("no hugepages: %v", err)
	}
	// What an earlier test binary killed before its cleanup left behind
	// holds hugepages until someone deletes it: delete it first.
	removeStale(dirs)
	free, _, err := hugepages()
	if err != nil {
		t.Skipf("no hugepages: %v", err)
	}
	if free < int64(minMB)<<20 {
		t.Skipf("%d MB of hugepages free, the test needs %d (see /proc/meminfo; scripts/setup.sh reserves them)", free>>20, minMB)
	}
	prefix = fmt.Sprintf("%s%d_%d", stalePrefix, os.Getpid(), time.Now().UnixNano()%1_000_000)
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

// stalePrefix begins every file prefix HugeDaemon makes, and nothing else's.
const stalePrefix = "ccbdc"

// removeStale deletes what the primaries of earlier HugeDaemon prefixes left
// when their test binary was killed before its cleanup, and nothing in use or
// anyone else's. A prefix names its test binary's process id; while that
// process lives its leftovers are its own cleanup's. Of the others: under the
// hugetlbfs mounts dirs, a hugepage file that no process holds (every DPDK
// process that maps one holds a shared flock on it); in /var/run/dpdk, a
// runtime directory whose config no primary holds (a running primary keeps a
// write lock on it, which is how DPDK itself tells that a primary is alive).
func removeStale(dirs []string) {
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, stalePrefix+"*map_*"))
		for _, f := range files {
			if !ownerAlive(filepath.Base(f)) &&
				unused(f, func(fd int) bool { return syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil }) {
				os.Remove(f)
			}
		}
	}
	runDirs, _ := filepath.Glob(filepath.Join("/var/run/dpdk", stalePrefix+"*"))
	for _, d := range runDirs {
		cfg := filepath.Join(d, "config")
		if _, err := os.Stat(cfg); err != nil || ownerAlive(filepath.Base(d)) {
			continue // not a primary's directory, or its test still runs
		}
		if unused(cfg, func(fd int) bool {
			lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
			return syscall.FcntlFlock(uintptr(fd), syscall.F_GETLK, &lk) == nil && lk.Type == syscall.F_UNLCK
		}) {
			os.RemoveAll(d)
		}
	}
}

// ownerAlive reports whether the process whose id follows stalePrefix in
// name (HugeDaemon's prefix, then a hugepage file's suffix) still runs; a
// name without one counts as alive (not ours to delete).
func ownerAlive(name string) bool {
	pid, _, ok := strings.Cut(strings.TrimPrefix(name, stalePrefix), "_")
	if n, err := strconv.Atoi(pid); !ok || err != nil || n <= 0 {
		return true
	}
	_, err := os.Stat(filepath.Join("/proc", pid))
	return err == nil
}

// unused opens path and reports free(fd): whether no process holds it.
func unused(path string, free func(fd int) bool) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return free(int(f.Fd()))
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
