package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostdArgsEnv, when set, makes the test binary hostd's command line with
// these (space-separated) arguments (TestMain).
const hostdArgsEnv = "HOSTD_TEST_ARGS"

// freeLoopbackAddr is a 127.0.0.1 address with a port that was free a
// moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeMetrics GETs http://addr/metrics.
func scrapeMetrics(addr string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(b), err
}

// metricValue is the value of the sample name{labels} in a scrape (labels as
// the text format writes them, sorted by name; "" for none); false when
// there is none.
func metricValue(text, name, labels string) (float64, bool) {
	prefix := name + " "
	if labels != "" {
		prefix = name + "{" + labels + "} "
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestMetricsEndpoint: a running hostd with -metrics serves its counters at
// /metrics on loopback (a net_null port: a frame on every poll, each counted
// as received and as other, not IPv4), and stops serving when it exits on SIGTERM; a
// non-loopback address without -metrics-any is a usage error.
func TestMetricsEndpoint(t *testing.T) {
	if rc := command([]string{"-c", "unused.toml", "-metrics", "0.0.0.0:9100"}); rc != 2 {
		t.Errorf("-metrics 0.0.0.0:9100: exit %d, want 2 (usage)", rc)
	}
	skipUnlessRoot(t)
	dir := t.TempDir()
	cfg := nullHost(t, dir, 1024, 0)
	addr := freeLoopbackAddr(t)
	d := startDaemon(t, "hostd", "", []string{hostdArgsEnv + "=-c " + cfg + " -metrics " + addr}, os.Args[0], "-test.run=^$")
	var text string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if text, err = scrapeMetrics(addr); err == nil {
			if v, _ := metricValue(text, "ccbed_host_port_rx_frames_total", `port="net_null0"`); v > 0 {
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
		if v, ok := metricValue(text, s.name, s.labels); !ok || v < s.min {
			t.Errorf("scrape: %s{%s} = %v (present %v), want >= %v", s.name, s.labels, v, ok, s.min)
		}
	}
	rx, _ := metricValue(text, "ccbed_host_port_rx_frames_total", `port="net_null0"`)
	if other, _ := metricValue(text, "ccbed_host_rx_frames_total", `kind="other"`); other != rx {
		t.Errorf("one hand-off: port rx %v frames, engine %v other frames; want them equal", rx, other)
	}
	if !strings.Contains(text, "ccbed_build_info{") {
		t.Error("scrape lacks ccbed_build_info")
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	d.stop(t, 10*time.Second)
	if _, err := scrapeMetrics(addr); err == nil {
		t.Error("the endpoint still answers after hostd exited")
	}
}
