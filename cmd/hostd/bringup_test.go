package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/internal/daemontest"
)

// nullHost writes a hostd file on a net_null vdev (its rx makes a frame on
// every poll, which the host counts as malformed; its tx drops) with the
// given mtu_bytes and duration_s, and returns the file's path.
func nullHost(t *testing.T, dir string, mtu int, durationS float64) string {
	t.Helper()
	id := strconv.Itoa(os.Getpid()%100000) + strconv.Itoa(int(time.Now().UnixNano()%1000))
	t.Cleanup(func() { os.RemoveAll("/var/run/dpdk/ccbhn" + id) })
	return hostFile(t, dir, `"--no-huge", "-m", "256", "--no-shconf", "--file-prefix=ccbhn`+id+`"`, "net_null0", 0, mtu, durationS, "")
}

// hostFile writes a hostd file h0 (10.0.0.1) on one port, a vdev of that
// name, and one lcore of id lcore on CPU 1, with eal (EAL arguments quoted
// for TOML, beside those every test host has), mtu_bytes, duration_s and
// extra (TOML appended to [host]), and returns the file's path.
func hostFile(t *testing.T, dir, eal, port string, lcore, mtu int, durationS float64, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`eal_args = [%s, "--no-pci", "--no-telemetry", "--lcores=%d@1", "--log-level=lib.eal:error", "--vdev=%s"]
port = %q
lcores = [%d]
mbufs = 2047
duration_s = %g
results_dir = %q

[host]
name = "h0"
ip = "10.0.0.1"
gateway_mac = "02:00:00:00:00:02"
link_gbps = 1
mtu_bytes = %d
%s`, eal, lcore, port, port, lcore, durationS, filepath.Join(dir, "results"), mtu, extra)
	p := filepath.Join(dir, "host.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJumboMTUAndCleanExit: a host with a jumbo mtu_bytes gets mbufs that
// hold its frames (it used to fail at start: "mbuf room 2048 < largest
// frame"), runs its duration, writes run.json not interrupted and a final
// progress.json, and exits without DPDK's "rx_pkt_burst for not ready port"
// stack dump (it drained its port after stopping it).
func TestJumboMTUAndCleanExit(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "hostd")
	dir := t.TempDir()
	cfg := nullHost(t, dir, 8000, 0.5)
	d := startDaemon(t, "hostd", "", []string{hostdConfigEnv + "=" + cfg}, os.Args[0], "-test.run=^$")
	d.wait(t, 30*time.Second)
	out := d.output()
	t.Logf("hostd:\n%s", out)
	for _, bad := range []string{"not ready port", "Stack dump", "PANIC"} {
		if strings.Contains(out, bad) {
			t.Errorf("hostd output has %q", bad)
		}
	}
	if !strings.Contains(out, `"mbufs_in_use": 0}`) || !strings.Contains(out, "hostd: port up") {
		t.Errorf("want link up and every mbuf returned")
	}
	var info hostd.RunInfo
	daemontest.ReadJSON(t, filepath.Join(dir, "results", hostd.RunInfoFile), &info)
	var pr hostd.Progress
	daemontest.ReadJSON(t, filepath.Join(dir, "results", hostd.ProgressFile), &pr)
	if info.Interrupted || !pr.Final || pr.Interrupted {
		t.Errorf("a run that ran its duration: run.json interrupted %v, progress final %v interrupted %v", info.Interrupted, pr.Final, pr.Interrupted)
	}
}

// TestCheckpointAndSignals: while hostd runs, progress.json is rewritten
// every 2 s (final false), so a SIGKILL keeps the counters up to then; a
// SIGTERM ends the run with run.json and progress.json marked interrupted.
func TestCheckpointAndSignals(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "hostd")
	dir := t.TempDir()
	cfg := nullHost(t, dir, 1024, 0)
	progress := filepath.Join(dir, "results", hostd.ProgressFile)

	d := startDaemon(t, "hostd", "", []string{hostdConfigEnv + "=" + cfg}, os.Args[0], "-test.run=^$")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(progress); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 20 s:\n%s", hostd.ProgressFile, d.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	var pr hostd.Progress
	daemontest.ReadJSON(t, progress, &pr)
	if pr.Final || pr.TS < 1 || pr.Port.RxFrames == 0 || pr.Rx.Frames == 0 {
		t.Errorf("after SIGKILL: %+v: want a checkpoint (final false) of >= 1 s with frames counted", pr)
	}

	os.RemoveAll(filepath.Join(dir, "results"))
	d = startDaemon(t, "hostd", "", []string{hostdConfigEnv + "=" + cfg}, os.Args[0], "-test.run=^$")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(progress); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 20 s:\n%s", hostd.ProgressFile, d.output())
		}
	}
	d.stop(t, 10*time.Second)
	var info hostd.RunInfo
	daemontest.ReadJSON(t, filepath.Join(dir, "results", hostd.RunInfoFile), &info)
	daemontest.ReadJSON(t, progress, &pr)
	if !info.Interrupted || info.Signal != "terminated" || !pr.Final || !pr.Interrupted {
		t.Errorf("after SIGTERM: run.json interrupted %v signal %q; progress final %v interrupted %v",
			info.Interrupted, info.Signal, pr.Final, pr.Interrupted)
	}
	if out := d.output(); strings.Contains(out, "not ready port") || !strings.Contains(out, `"mbufs_in_use": 0}`) {
		t.Errorf("unclean exit:\n%s", out)
	}
}
