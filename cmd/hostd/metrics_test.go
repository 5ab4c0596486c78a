package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/metrics/metricstest"
)

// hostdArgsEnv, when set, makes the test binary hostd's command line with
// these (space-separated) arguments (TestMain).
const hostdArgsEnv = "HOSTD_TEST_ARGS"

// TestMetricsEndpoint: a running hostd with -metrics serves its counters at
// /metrics on loopback (a net_null port: a frame on every poll, each counted
// as received and as other, not IPv4), and stops serving when it exits on SIGTERM; a
// non-loopback address without -metrics-any is a usage error.
func TestMetricsEndpoint(t *testing.T) {
	if rc := command([]string{"-c", "unused.toml", "-metrics", "0.0.0.0:9100"}); rc != 2 {
		t.Errorf("-metrics 0.0.0.0:9100: exit %d, want 2 (usage)", rc)
	}
	daemontest.SkipUnlessRoot(t, "hostd")
	dir := t.TempDir()
	cfg := nullHost(t, dir, 1024, 0)
	addr := metricstest.FreeLoopbackAddr(t)
	d := startDaemon(t, "hostd", "", []string{hostdArgsEnv + "=-c " + cfg + " -metrics " + addr}, os.Args[0], "-test.run=^$")
	var text string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if text, err = metricstest.Scrape(addr); err == nil {
			if v, _ := metricstest.Value(text, "ccbed_host_port_rx_frames_total", `port="net_null0"`); v > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape with frames received after 20 s (%v):\n%s\n%s", err, text, d.output())
		}
	}
	for _, s := range []struct {
		name, labels string
		min          float64
	}{
		{"ccbed_host_info", `host="h0",port="net_null0"`, 1},
		{"ccbed_host_loops_responding", "", 1},
		{"ccbed_host_port_rx_frames_total", `port="net_null0"`, 1},
		{"ccbed_host_rx_frames_total", `kind="other"`, 1},
		{"ccbed_host_port_drops_total", `port="net_null0",reason="no_mbuf"`, 0},
		{"ccbed_host_tx_data_frames_total", "", 0},
		{"ccbed_host_flows_active", "", 0},
	} {
		if v, ok := metricstest.Value(text, s.name, s.labels); !ok || v < s.min {
			t.Errorf("scrape: %s{%s} = %v (present %v), want >= %v", s.name, s.labels, v, ok, s.min)
		}
	}
	rx, _ := metricstest.Value(text, "ccbed_host_port_rx_frames_total", `port="net_null0"`)
	if other, _ := metricstest.Value(text, "ccbed_host_rx_frames_total", `kind="other"`); other != rx {
		t.Errorf("one hand-off: port rx %v frames, engine %v other frames; want them equal", rx, other)
	}
	if !strings.Contains(text, "ccbed_build_info{") {
		t.Error("scrape lacks ccbed_build_info")
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	d.stop(t, 10*time.Second)
	if _, err := metricstest.Scrape(addr); err == nil {
		t.Error("the endpoint still answers after hostd exited")
	}
}
