package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/ccbed/ccbed/pktgen"
	"github.com/prometheus/client_golang/prometheus"
)

// PktgenSource is a running packet blaster: pktgen.Blaster, whose ReadLive
// reads the counters its lcores publish after every burst (and every
// millisecond for the tracked flows) and asks the receiving loops for
// copies of their latency histograms.
type PktgenSource interface {
	ReadLive(dst *pktgen.Live, timeout time.Duration) bool
}

// pktgenLiveTimeout bounds how long a render waits for the loops' copies.
const pktgenLiveTimeout = 200 * time.Millisecond

// pktgenCollector is Pktgen's collector.
type pktgenCollector struct {
	src    PktgenSource
	ports  []string
	tx, rx []bool
	fs     families

	mu   sync.Mutex // guards live, reused from render to render
	live pktgen.Live

	txPkts, txBytes, txFull, noMbuf,
	rxPkts, rxBytes, rxOther, rxLost, rxLate, latency, latMax,
	flowTxPkts, flowTxBytes, flowRxPkts, flowRxBytes, flowLat, flowLatMax *family
}

// Pktgen is the collector of a blaster running cfg: per port (label port,
// the device name), the send counters of a port that sends and the receive
// counters, loss and latency (count, sum, p50, p90, p99, p99.9 and max) of
// a port that receives (rx = true); per tracked flow (flow_stats; label
// flow, and stream on the receive side) its packets, bytes and latency. A
// scrape takes one pktgen.Blaster.ReadLive: atomic loads, and one copy of
// the histograms by each receiving loop.
func Pktgen(src PktgenSource, cfg *pktgen.Config) prometheus.Collector {
	c := &pktgenCollector{src: src}
	for i := range cfg.Ports {
		pc := &cfg.Ports[i]
		c.ports = append(c.ports, pc.Name)
		c.tx = append(c.tx, pc.TxEnabled())
		c.rx = append(c.rx, pc.Rx)
	}
	fs := &c.fs
	p := "port"
	c.txPkts = fs.counter("ccbed_pktgen_tx_packets_total", "Packets the port took for transmission.", p)
	c.txBytes = fs.counter("ccbed_pktgen_tx_bytes_total", "Bytes of the packets sent (L2: frames without FCS).", p)
	c.txFull = fs.counter("ccbed_pktgen_tx_full_packets_total", "Packets the port refused on their first try (kept and retried).", p)
	c.noMbuf = fs.counter("ccbed_pktgen_no_mbuf_bursts_total", "Bursts not built because the mempool was empty.", p)
	c.rxPkts = fs.counter("ccbed_pktgen_rx_packets_total", "Frames received on the port.", p)
	c.rxBytes = fs.counter("ccbed_pktgen_rx_bytes_total", "Bytes of the frames received (L2: without FCS).", p)
	c.rxOther = fs.counter("ccbed_pktgen_rx_other_packets_total", "Received frames that are not pktgen packets.", p)
	c.rxLost = fs.gauge("ccbed_pktgen_rx_lost_packets", "Sequence numbers skipped and not (yet) seen late, over every stream: falls when a late packet comes.", p)
	c.rxLate = fs.counter("ccbed_pktgen_rx_late_packets_total", "Packets that came after a higher sequence number (reordered or duplicated).", p)
	c.latency = fs.summary("ccbed_pktgen_latency_seconds", "One-way latency of the pktgen packets received since the start: count, sum and quantiles within 1/128.", p)
	c.latMax = fs.gauge("ccbed_pktgen_latency_max_seconds", "Largest one-way latency received since the start.", p)
	c.flowTxPkts = fs.counter("ccbed_pktgen_flow_tx_packets_total", "Frames built of one of the port's tracked flows (flow_stats).", p, "flow")
	c.flowTxBytes = fs.counter("ccbed_pktgen_flow_tx_bytes_total", "Bytes of the frames built of a tracked flow (L2).", p, "flow")
	c.flowRxPkts = fs.counter("ccbed_pktgen_flow_rx_packets_total", "Packets received of a tracked flow of a stream (the sending port's index).", p, "stream", "flow")
	c.flowRxBytes = fs.counter("ccbed_pktgen_flow_rx_bytes_total", "Bytes received of a tracked flow (L2).", p, "stream", "flow")
	c.flowLat = fs.summary("ccbed_pktgen_flow_latency_seconds", "One-way latency of a tracked flow's packets since the start: count, sum and quantiles within 1/128.", p, "stream", "flow")
	c.flowLatMax = fs.gauge("ccbed_pktgen_flow_latency_max_seconds", "Largest one-way latency of a tracked flow's packets.", p, "stream", "flow")
	return c
}

// Describe sends the Desc of every family.
func (c *pktgenCollector) Describe(ch chan<- *prometheus.Desc) { c.fs.describe(ch) }

// latencySummary sends a summary of seconds: count values summing to sumNs,
// with h's SummaryQuantiles.
func latencySummary(ch chan<- prometheus.Metric, f *family, h *pktgen.Histogram, count, sumNs uint64, labels ...string) {
	var q [len(pktgen.SummaryQuantiles)]int64
	h.Quantiles(pktgen.SummaryQuantiles[:], q[:])
	qs := make(map[float64]float64, len(q))
	for i, v := range q {
		qs[pktgen.SummaryQuantiles[i]] = float64(v) / 1e9
	}
	ch <- prometheus.MustNewConstSummary(f.desc, count, float64(sumNs)/1e9, qs, labels...)
}

// Collect reads the live stats once and sends their samples.
func (c *pktgenCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.src.ReadLive(&c.live, pktgenLiveTimeout)
	for i, s := range c.live.Counters {
		if i >= len(c.ports) || i >= len(c.live.Ports) {
			break
		}
		p, l := c.ports[i], &c.live.Ports[i]
		if c.tx[i] {
			c.txPkts.emit(ch, float64(s.TxPackets), p)
			c.txBytes.emit(ch, float64(s.TxBytes), p)
			c.txFull.emit(ch, float64(s.TxFull), p)
			c.noMbuf.emit(ch, float64(s.NoMbuf), p)
			for f, fc := range l.TxFlows {
				fl := strconv.Itoa(f)
				c.flowTxPkts.emit(ch, float64(fc.Packets), p, fl)
				c.flowTxBytes.emit(ch, float64(fc.Bytes), p, fl)
			}
		}
		if c.rx[i] {
			c.rxPkts.emit(ch, float64(s.RxPackets), p)
			c.rxBytes.emit(ch, float64(s.RxBytes), p)
			c.rxOther.emit(ch, float64(s.RxOther), p)
			c.rxLost.emit(ch, float64(s.Lost), p)
			c.rxLate.emit(ch, float64(s.Late), p)
			// Count and sum from the counters (published every burst), the
			// quantiles and max from the histogram copy.
			latencySummary(ch, c.latency, &l.Latency, s.LatCount, s.LatSumNs, p)
			c.latMax.emit(ch, float64(l.Latency.Max)/1e9, p)
			for k := range l.RxFlows {
				f := &l.RxFlows[k]
				st, fl := strconv.Itoa(f.Stream), strconv.Itoa(f.Flow)
				c.flowRxPkts.emit(ch, float64(f.Packets), p, st, fl)
				c.flowRxBytes.emit(ch, float64(f.Bytes), p, st, fl)
				latencySummary(ch, c.flowLat, &f.Latency, f.Latency.Count, f.Latency.Sum, p, st, fl)
				c.flowLatMax.emit(ch, float64(f.Latency.Max)/1e9, p, st, fl)
			}
		}
	}
}
