package metrics

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/internal/switchtest"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
	"github.com/ccbed/ccbed/wire"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

// fakeSwitch is a SwitchSource and SwitchAdapter with a fixed snapshot.
type fakeSwitch struct {
	snap  switchd.Snapshot
	stats dataplane.Stats
}

func (f *fakeSwitch) Snapshot() switchd.Snapshot { return f.snap }
func (f *fakeSwitch) Stats() dataplane.Stats     { return f.stats }

// TestSwitchCollectorMapsEveryField checks every family against a snapshot
// whose counters all differ, so that a field read into the wrong metric
// shows.
func TestSwitchCollectorMapsEveryField(t *testing.T) {
	pc := switchd.PortCounters{
		Port: 1, Name: "sw1-p1", Scheme: "dcqcn",
		TrafficCounters: switchd.TrafficCounters{RxPackets: 1, RxBytes: 2, TxPackets: 3, TxBytes: 4},
		DropCounters: switchd.DropCounters{DropBuffer: 5, DropHeadroom: 6, DropNoRoute: 7, DropTTL: 8, DropMalformed: 9,
			DropNotIPv4: 10, DropControl: 11, DropTx: 12},
		CPCounters: switchd.CPCounters{MarkedCE: 13, MarkedUE: 14, NotECT: 15, INTStamped: 16, INTFull: 17,
			RoCCRateSent: 18, P4QCNSent: 19, QCNSent: 20, FeedbackNoPort: 21, ControlFwd: 22},
		PFCCounters: switchd.PFCCounters{PausesSent: 23, PFCOnsets: 24, ResumesSent: 25, PausesRecv: 26, ResumesRecv: 27,
			PausedNs: 2_500_000_000},
		QueueMaxBytes: 28, QueueBytes: 29, FairRateGbps: 8,
		RefusedCounters: switchd.RefusedCounters{RefusedPFC: 30, RefusedCNP: 31, RefusedAck: 32, RefusedNak: 33,
			RefusedRoCCRate: 34, RefusedP4QCN: 35, RefusedQCN: 36, RefusedData: 40, Refused: 271},
		QueuePrioBytes: [wire.PFCPriorities]int64{0, 0, 0, 29},
		XOFFMask:       1 << 3, PausedMask: 1<<3 | 1<<5,
	}
	src := &fakeSwitch{snap: switchd.Snapshot{Ports: []switchd.PortCounters{pc}, SamplesDropped: 37},
		stats: dataplane.Stats{RingDrops: 38, NoRoom: 39}}
	c := Switch(src, src)

	want := `
# HELP ccbed_switch_port_info A switch port (always 1): its index in the config and its CC scheme.
# TYPE ccbed_switch_port_info gauge
ccbed_switch_port_info{index="1",port="sw1-p1",scheme="dcqcn"} 1
# HELP ccbed_switch_rx_packets_total Frames received on the port.
# TYPE ccbed_switch_rx_packets_total counter
ccbed_switch_rx_packets_total{port="sw1-p1"} 1
# HELP ccbed_switch_rx_bytes_total Bytes of the frames received on the port.
# TYPE ccbed_switch_rx_bytes_total counter
ccbed_switch_rx_bytes_total{port="sw1-p1"} 2
# HELP ccbed_switch_tx_packets_total Frames transmitted on the port.
# TYPE ccbed_switch_tx_packets_total counter
ccbed_switch_tx_packets_total{port="sw1-p1"} 3
# HELP ccbed_switch_tx_bytes_total Bytes of the frames transmitted on the port.
# TYPE ccbed_switch_tx_bytes_total counter
ccbed_switch_tx_bytes_total{port="sw1-p1"} 4
# HELP ccbed_switch_drops_total Frames dropped, by reason; their sum is the JSON's drops.
# TYPE ccbed_switch_drops_total counter
ccbed_switch_drops_total{port="sw1-p1",reason="buffer_full"} 5
ccbed_switch_drops_total{port="sw1-p1",reason="headroom_full"} 6
ccbed_switch_drops_total{port="sw1-p1",reason="no_route"} 7
ccbed_switch_drops_total{port="sw1-p1",reason="ttl"} 8
ccbed_switch_drops_total{port="sw1-p1",reason="malformed"} 9
ccbed_switch_drops_total{port="sw1-p1",reason="not_ipv4"} 10
ccbed_switch_drops_total{port="sw1-p1",reason="control_queue_full"} 11
ccbed_switch_drops_total{port="sw1-p1",reason="tx"} 12
ccbed_switch_drops_total{port="sw1-p1",reason="refused"} 271
# HELP ccbed_switch_refused_total Frames refused by trust at the port they came in on, by kind: control frames, and data from a host with another's address (also in drops_total{reason="refused"}).
# TYPE ccbed_switch_refused_total counter
ccbed_switch_refused_total{kind="pfc",port="sw1-p1"} 30
ccbed_switch_refused_total{kind="cnp",port="sw1-p1"} 31
ccbed_switch_refused_total{kind="ack",port="sw1-p1"} 32
ccbed_switch_refused_total{kind="nak",port="sw1-p1"} 33
ccbed_switch_refused_total{kind="rocc_rate",port="sw1-p1"} 34
ccbed_switch_refused_total{kind="p4qcn",port="sw1-p1"} 35
ccbed_switch_refused_total{kind="qcn",port="sw1-p1"} 36
ccbed_switch_refused_total{kind="data",port="sw1-p1"} 40
# HELP ccbed_switch_ecn_marked_total Packets this switch marked at the port's egress: ECN CE or TCD UE.
# TYPE ccbed_switch_ecn_marked_total counter
ccbed_switch_ecn_marked_total{mark="ce",port="sw1-p1"} 13
ccbed_switch_ecn_marked_total{mark="ue",port="sw1-p1"} 14
# HELP ccbed_switch_mark_not_ect_total Marks not applied because the packet was not ECN-capable.
# TYPE ccbed_switch_mark_not_ect_total counter
ccbed_switch_mark_not_ect_total{port="sw1-p1"} 15
# HELP ccbed_switch_int_stamped_total INT records pushed at the port's egress.
# TYPE ccbed_switch_int_stamped_total counter
ccbed_switch_int_stamped_total{port="sw1-p1"} 16
# HELP ccbed_switch_int_full_total INT stamps asked on a full or absent INT stack.
# TYPE ccbed_switch_int_full_total counter
ccbed_switch_int_full_total{port="sw1-p1"} 17
# HELP ccbed_switch_feedback_sent_total Feedback packets the port's congestion point generated, by kind.
# TYPE ccbed_switch_feedback_sent_total counter
ccbed_switch_feedback_sent_total{kind="rocc_rate",port="sw1-p1"} 18
ccbed_switch_feedback_sent_total{kind="p4qcn",port="sw1-p1"} 19
ccbed_switch_feedback_sent_total{kind="qcn",port="sw1-p1"} 20
# HELP ccbed_switch_feedback_no_route_total Feedback whose flow source has no route.
# TYPE ccbed_switch_feedback_no_route_total counter
ccbed_switch_feedback_no_route_total{port="sw1-p1"} 21
# HELP ccbed_switch_control_forwarded_total Control packets (CNP, rate, feedback) forwarded ahead of data.
# TYPE ccbed_switch_control_forwarded_total counter
ccbed_switch_control_forwarded_total{port="sw1-p1"} 22
# HELP ccbed_switch_pfc_pauses_sent_total PFC XOFF frames sent upstream from the port, refreshes included.
# TYPE ccbed_switch_pfc_pauses_sent_total counter
ccbed_switch_pfc_pauses_sent_total{port="sw1-p1"} 23
# HELP ccbed_switch_pfc_resumes_sent_total PFC XON frames (pause time 0) sent from the port.
# TYPE ccbed_switch_pfc_resumes_sent_total counter
ccbed_switch_pfc_resumes_sent_total{port="sw1-p1"} 25
# HELP ccbed_switch_pfc_activations_total Times a priority of the port (as ingress) went into XOFF.
# TYPE ccbed_switch_pfc_activations_total counter
ccbed_switch_pfc_activations_total{port="sw1-p1"} 24
# HELP ccbed_switch_pfc_pauses_received_total PFC frames received with a non-zero pause time.
# TYPE ccbed_switch_pfc_pauses_received_total counter
ccbed_switch_pfc_pauses_received_total{port="sw1-p1"} 26
# HELP ccbed_switch_pfc_resumes_received_total PFC frames received with pause time 0.
# TYPE ccbed_switch_pfc_resumes_received_total counter
ccbed_switch_pfc_resumes_received_total{port="sw1-p1"} 27
# HELP ccbed_switch_paused_seconds_total Time the port's egress data was held by received PFC pauses.
# TYPE ccbed_switch_paused_seconds_total counter
ccbed_switch_paused_seconds_total{port="sw1-p1"} 2.5
# HELP ccbed_switch_queue_bytes Egress data queue of the port, every priority.
# TYPE ccbed_switch_queue_bytes gauge
ccbed_switch_queue_bytes{port="sw1-p1"} 29
# HELP ccbed_switch_queue_max_bytes Largest egress data queue of the port seen so far.
# TYPE ccbed_switch_queue_max_bytes gauge
ccbed_switch_queue_max_bytes{port="sw1-p1"} 28
# HELP ccbed_switch_fair_rate_bytes_per_second RoCC fair rate of the port's congestion point (x8 for bit/s; 0 for a scheme without one).
# TYPE ccbed_switch_fair_rate_bytes_per_second gauge
ccbed_switch_fair_rate_bytes_per_second{port="sw1-p1"} 1e+09
# HELP ccbed_switch_telemetry_samples_dropped_total Telemetry samples lost to a full sample ring.
# TYPE ccbed_switch_telemetry_samples_dropped_total counter
ccbed_switch_telemetry_samples_dropped_total 37
# HELP ccbed_switch_adapter_ring_drops_total Pipeline mode: frames dropped because an inter-lcore ring was full.
# TYPE ccbed_switch_adapter_ring_drops_total counter
ccbed_switch_adapter_ring_drops_total 38
# HELP ccbed_switch_adapter_no_room_total Pipeline mode: frames dropped for want of tailroom for their metadata.
# TYPE ccbed_switch_adapter_no_room_total counter
ccbed_switch_adapter_no_room_total 39
`
	want += perPriority("ccbed_switch_queue_priority_bytes", "gauge", "Egress data queue of the port's priority.", "sw1-p1", map[int]string{3: "29"})
	want += perPriority("ccbed_switch_pfc_xoff", "gauge", "1 while the priority of the port (as ingress) is in XOFF: the switch pauses its peer.", "sw1-p1", map[int]string{3: "1"})
	want += perPriority("ccbed_switch_pfc_paused", "gauge", "1 while the port's egress priority is held by a PFC pause received.", "sw1-p1", map[int]string{3: "1", 5: "1"})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c); n != 44+3*wire.PFCPriorities {
		t.Errorf("%d samples, want %d (every family checked above)", n, 44+3*wire.PFCPriorities)
	}
	lintClean(t, c)
	pedanticGather(t, c)
}

// perPriority is the text exposition of a family with one sample per
// priority of port, "0" where vals has none.
func perPriority(name, typ, help, port string, vals map[int]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	for q := 0; q < wire.PFCPriorities; q++ {
		v := vals[q]
		if v == "" {
			v = "0"
		}
		fmt.Fprintf(&b, "%s{port=%q,priority=\"%d\"} %s\n", name, port, q, v)
	}
	return b.String()
}

// lintClean fails when promlint finds a naming problem in c's metrics.
func lintClean(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// pedanticGather registers c with a pedantic registry (collected metrics must
// match the described ones) and gathers once.
func pedanticGather(t *testing.T, c prometheus.Collector) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// testSwitch is a switch of two ports.
func testSwitch(t *testing.T) *switchd.Engine { return newSwitch(t, 2) }

// newSwitch is a switch of n ports; host i (10.0.i.1) is behind port pi,
// as in switchd's tests (switchtest).
func newSwitch(tb testing.TB, n int) *switchd.Engine {
	tb.Helper()
	c := switchd.DefaultSpec()
	for i := 0; i < n; i++ {
		c.Ports = append(c.Ports, switchd.PortSpec{
			Name: fmt.Sprintf("p%d", i), MAC: switchtest.PortMAC(i),
			PeerMAC: switchtest.HostMAC(i), LinkBps: 10e9, BufferBytes: 1 << 20,
		})
		c.Routes = append(c.Routes, switchd.Route{Addr: 0x0a000000 | uint32(i)<<8, Len: 24, Ports: []int{i}})
	}
	e, err := switchd.New(&c)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// BenchmarkSwitchScrape is one scrape's work on the control plane of a
// 4-port and a 64-port switch: Snapshot, then every sample built and encoded
// in the text format, as the endpoint does.
func BenchmarkSwitchScrape(b *testing.B) {
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(Switch(newSwitch(b, n), nil))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSwitchCollectorOnEngine drives a real engine (no DPDK): frames in on
// p0, some dropped, the rest queued on p1, then sent; each scrape shows the
// counters as the engine last published them.
func TestSwitchCollectorOnEngine(t *testing.T) {
	e := testSwitch(t)
	c := Switch(e, nil)
	var m switchd.Meta
	var frames [][]byte
	const n = 8
	for i := 0; i < n; i++ {
		f := switchtest.DataFrame(t, 0, 1, 7, 256)
		if !e.Classify(0, f, &m) || !e.Enqueue(0, &m, f, switchd.Handle(uintptr(unsafe.Pointer(&f[0])))) {
			t.Fatalf("frame %d not queued", i)
		}
		frames = append(frames, f)
	}
	if e.Classify(0, switchtest.DataFrame(t, 0, 9, 7, 256), &m) { // 10.0.9.1: no route
		t.Fatal("frame without a route classified")
	}
	if e.Classify(0, switchtest.DataFrame(t, 0, 1, 7, 256)[:30], &m) { // truncated
		t.Fatal("truncated frame classified")
	}
	fl := len(frames[0])

	// Nothing published yet: the scrape shows zeros, not the live counters.
	if v := value(t, c, "ccbed_switch_rx_packets_total", `port="p0"`); v != 0 {
		t.Errorf("rx_packets_total before a publish = %v, want 0", v)
	}
	e.PublishIngress()
	e.PublishEgress()
	check := func(name, labels string, want float64) {
		t.Helper()
		if v := value(t, c, name, labels); v != want {
			t.Errorf("%s{%s} = %v, want %v", name, labels, v, want)
		}
	}
	check("ccbed_switch_rx_packets_total", `port="p0"`, n+2)
	check("ccbed_switch_rx_bytes_total", `port="p0"`, float64(n*fl+fl+30))
	check("ccbed_switch_drops_total", `port="p0",reason="no_route"`, 1)
	check("ccbed_switch_drops_total", `port="p0",reason="malformed"`, 1)
	check("ccbed_switch_queue_bytes", `port="p1"`, float64(e.QueueBytes(1)))
	if e.QueueBytes(1) < int64(n*fl) {
		t.Errorf("queue %d bytes, want at least %d", e.QueueBytes(1), n*fl)
	}
	check("ccbed_switch_queue_priority_bytes", `port="p1",priority="3"`, float64(e.QueueBytes(1)))
	check("ccbed_switch_queue_priority_bytes", `port="p1",priority="0"`, 0)
	check("ccbed_switch_tx_packets_total", `port="p1"`, 0)

	out := make([]switchd.TxItem, 64)
	sent := 0
	for now := int64(0); sent < n && now < 1e6; now += 1000 {
		e.Service(now)
		sent += e.Transmit(now, 1, out)
	}
	if sent != n {
		t.Fatalf("%d frames sent, want %d", sent, n)
	}
	e.PublishEgress()
	check("ccbed_switch_tx_packets_total", `port="p1"`, n)
	check("ccbed_switch_tx_bytes_total", `port="p1"`, float64(n*fl))
	check("ccbed_switch_queue_bytes", `port="p1"`, 0)
	check("ccbed_switch_queue_priority_bytes", `port="p1",priority="3"`, 0)
	check("ccbed_switch_queue_max_bytes", `port="p1"`, float64(n*fl))
	check("ccbed_switch_port_info", `index="1",port="p1",scheme="none"`, 1)
	lintClean(t, c)
	pedanticGather(t, c)
}

// value is the value of the sample of family name with exactly the labels
// labels (as the text format writes them: sorted by name, "" for none).
func value(t *testing.T, c prometheus.Collector, name, labels string) float64 {
	t.Helper()
	text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, name)
	if err != nil {
		t.Fatal(err)
	}
	prefix := name + " "
	if labels != "" {
		prefix = name + "{" + labels + "} "
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s{%s} in\n%s", name, labels, text)
	return 0
}
