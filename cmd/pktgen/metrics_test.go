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

// pktgenProc is pktgen running as a child process with -metrics.
type pktgenProc struct {
	cmd     *exec.Cmd
	addr    string
	out     *lockedBuffer
	exited  chan struct{} // closed once the process has exited; waitErr is then set
	waitErr error
}

// startPktgen writes a config of the EAL arguments for vdev and body, and
// runs pktgen on it with -interval 0 -metrics on a free loopback port; the
// process is killed at cleanup if still running. It skips the test in
// -short mode and without root (DPDK).
func startPktgen(t *testing.T, vdev, body string) *pktgenProc {
	t.Helper()
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
	text := fmt.Sprintf(`eal_args = ["--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0-1", "--file-prefix=ccbpg%s", "--log-level=lib.eal:error", "--vdev=%s"]
lcores = [1]
pool_mbufs = 2047
%s`, id, vdev, body)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &pktgenProc{addr: metricstest.FreeLoopbackAddr(t), out: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), pktgenArgsEnv+"=-c "+cfg+" -interval 0 -metrics "+p.addr)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// scrapeUntil scrapes until ok accepts a scrape (bounded: 20 s) and returns it.
func (p *pktgenProc) scrapeUntil(t *testing.T, what string, ok func(scrape string) bool) string {
	t.Helper()
	var scrape string
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if scrape, err = metricstest.Scrape(p.addr); err == nil && ok(scrape) {
			return scrape
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape with %s after 20 s (%v):\n%s\n%s", what, err, scrape, p.out.String())
		}
	}
}

// stop sends SIGTERM and waits (bounded) for a clean exit.
func (p *pktgenProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			t.Fatalf("pktgen exit after SIGTERM: %v\n%s", p.waitErr, p.out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("pktgen did not stop on SIGTERM:\n%s", p.out.String())
	}
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
	p := startPktgen(t, "net_null0", `
[[ports]]
name = "net_null0"
size = 64
rate_mpps = 0.1
rx = true
`)
	scrape := p.scrapeUntil(t, "packets sent", func(s string) bool {
		v, _ := metricstest.Value(s, "ccbed_pktgen_tx_packets_total", `port="net_null0"`)
		return v > 0
	})
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
	p.stop(t)
	if _, err := metricstest.Scrape(p.addr); err == nil {
		t.Error("the endpoint still answers after pktgen exited")
	}
	if t.Failed() {
		t.Logf("pktgen output:\n%s", p.out.String())
	}
}

// TestMetricsFlows: a 16-flow stream on a looped net_ring0 (what it sends
// it receives) shows, per flow, the packets sent and received and the
// latency (count and quantiles) at /metrics while it runs.
func TestMetricsFlows(t *testing.T) {
	p := startPktgen(t, "net_ring0", `
[[ports]]
name = "net_ring0"
rate_mpps = 0.1
flows = 16
rx = true
`)
	flowRx := func(s string, f int) float64 {
		v, _ := metricstest.Value(s, "ccbed_pktgen_flow_latency_seconds_count", fmt.Sprintf(`flow="%d",port="net_ring0",stream="0"`, f))
		return v
	}
	scrape := p.scrapeUntil(t, "every flow's latency", func(s string) bool {
		for f := range 16 {
			if flowRx(s, f) == 0 {
				return false
			}
		}
		return true
	})
	for f := range 16 {
		tx, _ := metricstest.Value(scrape, "ccbed_pktgen_flow_tx_packets_total", fmt.Sprintf(`flow="%d",port="net_ring0"`, f))
		rx, _ := metricstest.Value(scrape, "ccbed_pktgen_flow_rx_packets_total", fmt.Sprintf(`flow="%d",port="net_ring0",stream="0"`, f))
		q, ok := metricstest.Value(scrape, "ccbed_pktgen_flow_latency_seconds", fmt.Sprintf(`flow="%d",port="net_ring0",stream="0",quantile="0.99"`, f))
		if tx <= 0 || rx <= 0 || !ok || q <= 0 {
			t.Errorf("flow %d: tx %v rx %v p99 %v (present %v)", f, tx, rx, q, ok)
		}
	}
	if _, ok := metricstest.Value(scrape, "ccbed_pktgen_flow_tx_packets_total", `flow="16",port="net_ring0"`); ok {
		t.Error("a 17th flow in a 16-flow run")
	}
	p.stop(t)
}
