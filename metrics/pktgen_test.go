package metrics

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/pktgen"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeBlaster is a PktgenSource with fixed stats.
type fakeBlaster []pktgen.PortStats

func (f fakeBlaster) Snapshot() []pktgen.PortStats { return f }

// TestPktgenCollector: a sending port shows its tx counters only, a
// receive-only port its rx counters, loss and latency only.
func TestPktgenCollector(t *testing.T) {
	no := false
	cfg := &pktgen.Config{Ports: []pktgen.PortConfig{{Name: "net_ring0"}, {Name: "net_ring1", Tx: &no, Rx: true}}}
	src := fakeBlaster{
		{TxPackets: 1, TxBytes: 2, TxFull: 3, NoMbuf: 4, RxPackets: 99}, // rx counters of a tx-only port are not shown
		{RxPackets: 5, RxBytes: 6, RxOther: 7, Lost: 8, Late: 9, LatCount: 4, LatSumNs: 10_000},
	}
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
# HELP ccbed_pktgen_latency_seconds One-way latency of the pktgen packets received (count and sum).
# TYPE ccbed_pktgen_latency_seconds summary
ccbed_pktgen_latency_seconds_sum{port="net_ring1"} 1e-05
ccbed_pktgen_latency_seconds_count{port="net_ring1"} 4
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	lintClean(t, c)
	pedanticGather(t, c)
}
