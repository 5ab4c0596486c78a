package testbed

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/metrics/metricstest"
)

// nodeSum is the sum of every sample of metric name whose labels hold
// node="node" in a scrape, and whether there was one.
func nodeSum(text, name, node string) (float64, bool) {
	sum, found := 0.0, false
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !strings.Contains(","+labels+",", `,node="`+node+`",`) {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// TestRunServesMetrics: testbed run -clock dpdk -metrics serves every
// switch's and host's counters, each labelled with its node, while the run
// goes, and stops serving when it ends. The wait is on the counters moving,
// bounded by the run's own length.
func TestRunServesMetrics(t *testing.T) {
	e, err := Decode("e2e.toml", strings.Replace(small, "duration_ms = 150", "duration_ms = 60_000", 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	if e.Experiment.Clock != ClockDPDK {
		t.Fatalf("clock %q, want the DPDK clock", e.Experiment.Clock)
	}
	e.Experiment.OutputDir = t.TempDir()
	addr := metricstest.FreeLoopbackAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		var out strings.Builder
		res, err := RunWith(ctx, e, &out, RunOptions{Metrics: &metrics.Flags{Addr: addr}})
		done <- ran{res, err}
	}()

	// The senders h0 and h1 (h2's flow starts at 20 ms) and the switch s0.
	want := []struct{ name, node string }{
		{"ccbed_switch_rx_packets_total", "s0"},
		{"ccbed_host_tx_data_frames_total", "h0"},
		{"ccbed_host_tx_data_frames_total", "h1"},
		{"ccbed_host_rx_data_frames_total", "h3"},
	}
	var text string
	for moving := false; !moving; {
		select {
		case r := <-done:
			t.Fatalf("the run ended (%v) before its counters moved at /metrics; last scrape:\n%s", r.err, text)
		default:
		}
		time.Sleep(20 * time.Millisecond) // pace the scrapes; the bound is the run's end
		if text, err = metricstest.Scrape(addr); err != nil {
			continue // not listening yet: the EAL and the ports come up first
		}
		moving = true
		for _, w := range want {
			if v, ok := nodeSum(text, w.name, w.node); !ok || v == 0 {
				moving = false
			}
		}
	}
	for _, node := range []string{"h0", "h1", "h2", "h3"} {
		if v, ok := nodeSum(text, "ccbed_host_info", node); !ok || v != 1 {
			t.Errorf("ccbed_host_info{node=%q}: %v %v", node, v, ok)
		}
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Interrupted {
		t.Error("a run stopped by its context is not marked interrupted")
	}
	if _, err := metricstest.Scrape(addr); err == nil {
		t.Error("/metrics still served after the run ended")
	}
}
