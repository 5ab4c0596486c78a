package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/pktgen"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeBlaster is a PktgenSource with fixed stats.
type fakeBlaster struct {
	counters []pktgen.PortStats
	ports    []pktgen.PortLive
}

func (f *fakeBlaster) ReadLive(dst *pktgen.Live, _ time.Duration) bool {
	dst.Counters, dst.Ports, dst.Fresh = f.counters, f.ports, true
	return true
}

// TestPktgenCollector: a sending port shows its tx counters and tracked
// flows only, a receive-only port its rx counters, loss, latency
// quantiles and tracked flows only.
func TestPktgenCollector(t *testing.T) {
	no := false
	cfg := &pktgen.Config{Ports: []pktgen.PortConfig{{Name: "net_ring0"}, {Name: "net_ring1", Tx: &no, Rx: true}}}
	src := &fakeBlaster{counters: []pktgen.PortStats{
		{TxPackets: 1, TxBytes: 2, TxFull: 3, NoMbuf: 4, RxPackets: 99}, // rx counters of a tx-only port are not shown
		{RxPackets: 5, RxBytes: 6, RxOther: 7, Lost: 8, Late: 9, LatCount: 4, LatSumNs: 10_000},
	}, ports: make([]pktgen.PortLive, 2)}
	src.ports[0].TxFlows = []pktgen.FlowStat{{Packets: 11, Bytes: 704}, {Packets: 10, Bytes: 640}}
	for _, v := range []int64{1000, 2000, 3000, 4000} {
		src.ports[1].Latency.Record(v)
	}
	src.ports[1].RxFlows = make([]pktgen.FlowRx, 1)
	fl := &src.ports[1].RxFlows[0]
	fl.Stream, fl.Flow, fl.Packets, fl.Bytes = 0, 1, 2, 128
	fl.Latency.Record(100)
	fl.Latency.Record(300)
	c := Pktgen(src, cfg)
	want := `
# HELP ccbed_pktgen_tx_packets_total Packets the port took for transmission.
# TYPE ccbed_pktgen_tx_packets_total counter
ccbed_pktgen_tx_packets_total{port="net_ring0"} 1
# HELP ccbed_pktgen_tx_bytes_total Bytes of the packets sent (L2: frames without FCS).
# TYPE ccbed_pktgen_tx_bytes_total counter
ccbed_pktgen_tx_bytes_total{port="net_ring0"} 2
# HELP ccbed_pktgen_tx_full_packets_total Packets the port refused on their first try (kept and retried).
# TYPE ccbed_pktgen_tx_full_packets_total counter
ccbed_pktgen_tx_full_packets_total{port="net_ring0"} 3
# HELP ccbed_pktgen_no_mbuf_bursts_total Bursts not built because the mempool was empty.
# TYPE ccbed_pktgen_no_mbuf_bursts_total counter
ccbed_pktgen_no_mbuf_bursts_total{port="net_ring0"} 4
# HELP ccbed_pktgen_rx_packets_total Frames received on the port.
# TYPE ccbed_pktgen_rx_packets_total counter
ccbed_pktgen_rx_packets_total{port="net_ring1"} 5
# HELP ccbed_pktgen_rx_bytes_total Bytes of the frames received (L2: without FCS).
# TYPE ccbed_pktgen_rx_bytes_total counter
ccbed_pktgen_rx_bytes_total{port="net_ring1"} 6
# HELP ccbed_pktgen_rx_other_packets_total Received frames that are not pktgen packets.
# TYPE ccbed_pktgen_rx_other_packets_total counter
ccbed_pktgen_rx_other_packets_total{port="net_ring1"} 7
# HELP ccbed_pktgen_rx_lost_packets Sequence numbers skipped and not (yet) seen late, over every stream: falls when a late packet comes.
# TYPE ccbed_pktgen_rx_lost_packets gauge
ccbed_pktgen_rx_lost_packets{port="net_ring1"} 8
# HELP ccbed_pktgen_rx_late_packets_total Packets that came after a higher sequence number (reordered or duplicated).
# TYPE ccbed_pktgen_rx_late_packets_total counter
ccbed_pktgen_rx_late_packets_total{port="net_ring1"} 9
# HELP ccbed_pktgen_latency_seconds One-way latency of the pktgen packets received since the start: count, sum and quantiles within 1/128.
# TYPE ccbed_pktgen_latency_seconds summary
ccbed_pktgen_latency_seconds{port="net_ring1",quantile="0.5"} 2.008e-06
ccbed_pktgen_latency_seconds{port="net_ring1",quantile="0.9"} 4e-06
ccbed_pktgen_latency_seconds{port="net_ring1",quantile="0.99"} 4e-06
ccbed_pktgen_latency_seconds{port="net_ring1",quantile="0.999"} 4e-06
ccbed_pktgen_latency_seconds_sum{port="net_ring1"} 1e-05
ccbed_pktgen_latency_seconds_count{port="net_ring1"} 4
# HELP ccbed_pktgen_latency_max_seconds Largest one-way latency received since the start.
# TYPE ccbed_pktgen_latency_max_seconds gauge
ccbed_pktgen_latency_max_seconds{port="net_ring1"} 4e-06
# HELP ccbed_pktgen_flow_tx_packets_total Frames built of one of the port's tracked flows (flow_stats).
# TYPE ccbed_pktgen_flow_tx_packets_total counter
ccbed_pktgen_flow_tx_packets_total{flow="0",port="net_ring0"} 11
ccbed_pktgen_flow_tx_packets_total{flow="1",port="net_ring0"} 10
# HELP ccbed_pktgen_flow_tx_bytes_total Bytes of the frames built of a tracked flow (L2).
# TYPE ccbed_pktgen_flow_tx_bytes_total counter
ccbed_pktgen_flow_tx_bytes_total{flow="0",port="net_ring0"} 704
ccbed_pktgen_flow_tx_bytes_total{flow="1",port="net_ring0"} 640
# HELP ccbed_pktgen_flow_rx_packets_total Packets received of a tracked flow of a stream (the sending port's index).
# TYPE ccbed_pktgen_flow_rx_packets_total counter
ccbed_pktgen_flow_rx_packets_total{flow="1",port="net_ring1",stream="0"} 2
# HELP ccbed_pktgen_flow_rx_bytes_total Bytes received of a tracked flow (L2).
# TYPE ccbed_pktgen_flow_rx_bytes_total counter
ccbed_pktgen_flow_rx_bytes_total{flow="1",port="net_ring1",stream="0"} 128
# HELP ccbed_pktgen_flow_latency_seconds One-way latency of a tracked flow's packets since the start: count, sum and quantiles within 1/128.
# TYPE ccbed_pktgen_flow_latency_seconds summary
ccbed_pktgen_flow_latency_seconds{flow="1",port="net_ring1",stream="0",quantile="0.5"} 1e-07
ccbed_pktgen_flow_latency_seconds{flow="1",port="net_ring1",stream="0",quantile="0.9"} 3e-07
ccbed_pktgen_flow_latency_seconds{flow="1",port="net_ring1",stream="0",quantile="0.99"} 3e-07
ccbed_pktgen_flow_latency_seconds{flow="1",port="net_ring1",stream="0",quantile="0.999"} 3e-07
ccbed_pktgen_flow_latency_seconds_sum{flow="1",port="net_ring1",stream="0"} 4e-07
ccbed_pktgen_flow_latency_seconds_count{flow="1",port="net_ring1",stream="0"} 2
# HELP ccbed_pktgen_flow_latency_max_seconds Largest one-way latency of a tracked flow's packets.
# TYPE ccbed_pktgen_flow_latency_max_seconds gauge
ccbed_pktgen_flow_latency_max_seconds{flow="1",port="net_ring1",stream="0"} 3e-07
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	lintClean(t, c)
	pedanticGather(t, c)
}
