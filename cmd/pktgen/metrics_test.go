package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/metrics/metricstest"
)

// pktgenArgsEnv, when set, makes the test binary pktgen's command line with
// these (space-separated) arguments: the tests run pktgen as its own process
// (own EAL, signals, exit code) without a separate go build.
const pktgenArgsEnv = "PKTGEN_TEST_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(pktgenArgsEnv); args != "" {
		os.Exit(run(strings.Fields(args)))
	}
	os.Exit(m.Run())
}

// lockedBuffer is a child's combined output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMetricsEndpoint: pktgen with -metrics serves its port counters at
// /metrics on loopback while it sends (net_null0 at 0.1 Mpps, also
// receiving: net_null makes a frame on every poll), and stops serving when
// SIGTERM ends the run; a non-loopback address without -metrics-any is a
// usage error.
func TestMetricsEndpoint(t *testing.T) {
	if rc := run([]string{"-metrics", ":9100"}); rc != 2 {
		t.Errorf("-metrics :9100: exit %d, want 2 (usage)", rc)
	}
	if testing.Short() {
		t.Skip("daemon test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("pktgen needs root for DPDK")
	}
	dir := t.TempDir()
	id := strconv.Itoa(os.Getpid()%100000) + strconv.Itoa(int(time.Now().UnixNano()%1000))
	t.Cleanup(func() { os.RemoveAll("/var/run/dpdk/ccbpg" + id) })
	cfg := filepath.Join(dir, "pktgen.toml")
	text := fmt.Sprintf(`eal_args = ["--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0-1", "--file-prefix=ccbpg%s", "--log-level=lib.eal:error", "--vdev=net_null0"]
lcores = [1]
pool_mbufs = 2047

[[ports]]
name = "net_null0"
size = 64
rate_mpps = 0.1
rx = true
`, id)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := metricstest.FreeLoopbackAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pktgenArgsEnv+"=-c "+cfg+" -interval 0 -metrics "+addr)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once the process has exited; waitErr is then set
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})

	var scrape string
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if scrape, err = metricstest.Scrape(addr); err == nil {
			if v, _ := metricstest.Value(scrape, "ccbed_pktgen_tx_packets_total", `port="net_null0"`); v > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape with packets sent after 20 s (%v):\n%s\n%s", err, scrape, out.String())
		}
	}
	for _, name := range []string{"ccbed_pktgen_tx_packets_total", "ccbed_pktgen_tx_bytes_total", "ccbed_pktgen_rx_packets_total", "ccbed_pktgen_rx_other_packets_total"} {
		if v, ok := metricstest.Value(scrape, name, `port="net_null0"`); !ok || v <= 0 {
			t.Errorf("scrape: %s{port=\"net_null0\"} = %v (present %v), want > 0", name, v, ok)
		}
	}
	for _, want := range []string{"ccbed_build_info{", `ccbed_pktgen_latency_seconds_count{port="net_null0"} `, `ccbed_pktgen_rx_lost_packets{port="net_null0"} `} {
		if !strings.Contains(scrape, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("pktgen exit after SIGTERM: %v\n%s", waitErr, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("pktgen did not stop on SIGTERM:\n%s", out.String())
	}
	if _, err := metricstest.Scrape(addr); err == nil {
		t.Error("the endpoint still answers after pktgen exited")
	}
	if t.Failed() {
		t.Logf("pktgen output:\n%s", out.String())
	}
}
