package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/metrics/metricstest"
)

// TestMetricsEndpoint: with -metrics, a running switchd serves its port
// counters and build at /metrics on loopback, and stops serving when it
// exits on SIGTERM; a non-loopback address without -metrics-any is a usage
// error before DPDK starts. (TestNetnsPeers checks counters after traffic.)
func TestMetricsEndpoint(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	dir := t.TempDir()
	cfg := vdevConfig(t, dir, "", filepath.Join(dir, "q.csv"), filepath.Join(dir, "s.json"), 1024)

	p := startSwitchd(t, "-c", cfg, "-metrics", "0.0.0.0:0")
	if rc := p.finish(t, 20*time.Second); rc != 2 || !strings.Contains(p.out.String(), "not a loopback address") ||
		!strings.Contains(p.out.String(), "-metrics-any") {
		t.Errorf("-metrics 0.0.0.0:0: exit %d, want a usage error (2) naming -metrics-any:\n%s", rc, p.out.String())
	}

	addr := metricstest.FreeLoopbackAddr(t)
	p = startSwitchd(t, "-c", cfg, "-metrics", addr)
	if !p.waitFor("switchd: running", 20*time.Second) {
		t.Fatalf("switchd did not start:\n%s", p.out.String())
	}
	text, err := metricstest.Scrape(addr)
	if err != nil {
		t.Fatalf("scrape of a running switchd: %v\n%s", err, p.out.String())
	}
	t.Logf("scraped %d lines from the running switchd", strings.Count(text, "\n"))
	for _, s := range []struct{ name, labels string }{
		{"ccbed_switch_port_info", `index="0",port="p0",scheme="dcqcn"`},
		{"ccbed_switch_port_info", `index="1",port="p1",scheme="dcqcn"`},
		{"ccbed_switch_rx_packets_total", `port="p0"`},
		{"ccbed_switch_tx_bytes_total", `port="p1"`},
		{"ccbed_switch_drops_total", `port="p1",reason="buffer_full"`},
		{"ccbed_switch_queue_priority_bytes", `port="p0",priority="3"`},
		{"ccbed_switch_pfc_pauses_sent_total", `port="p0"`},
	} {
		if _, ok := metricstest.Value(text, s.name, s.labels); !ok {
			t.Errorf("scrape lacks %s{%s}", s.name, s.labels)
		}
	}
	for _, want := range []string{"ccbed_build_info{", "ccbed_switch_adapter_ring_drops_total ", "process_cpu_seconds_total "} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if rc := p.finish(t, 10*time.Second); rc != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", rc, p.out.String())
	}
	if _, err := metricstest.Scrape(addr); err == nil {
		t.Error("the endpoint still answers after switchd exited")
	}
}
