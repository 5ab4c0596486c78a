package metrics

import (
	"github.com/ccbed/ccbed/pktgen"
	"github.com/prometheus/client_golang/prometheus"
)

// PktgenSource is a running packet blaster: pktgen.Blaster, whose Snapshot
// reads the counters its lcores publish after every burst.
type PktgenSource interface {
	Snapshot() []pktgen.PortStats
}

// pktgenCollector is Pktgen's collector.
type pktgenCollector struct {
	src    PktgenSource
	ports  []string
	tx, rx []bool
	fs     families

	txPkts, txBytes, txFull, noMbuf,
	rxPkts, rxBytes, rxOther, rxLost, rxLate, latency *family
}

// Pktgen is the collector of a blaster running cfg: per port (label port,
// the device name), the send counters of a port that sends and the receive
// counters, loss and latency of a port that receives (rx = true). A scrape
// takes one Snapshot: atomic loads, no lock.
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
	c.latency = fs.summary("ccbed_pktgen_latency_seconds", "One-way latency of the pktgen packets received (count and sum).", p)
	return c
}

// Describe sends the Desc of every family.
func (c *pktgenCollector) Describe(ch chan<- *prometheus.Desc) { c.fs.describe(ch) }

// Collect reads one Snapshot and sends its samples.
func (c *pktgenCollector) Collect(ch chan<- prometheus.Metric) {
	for i, s := range c.src.Snapshot() {
		if i >= len(c.ports) {
			break
		}
		p := c.ports[i]
		if c.tx[i] {
			c.txPkts.emit(ch, float64(s.TxPackets), p)
			c.txBytes.emit(ch, float64(s.TxBytes), p)
			c.txFull.emit(ch, float64(s.TxFull), p)
			c.noMbuf.emit(ch, float64(s.NoMbuf), p)
		}
		if c.rx[i] {
			c.rxPkts.emit(ch, float64(s.RxPackets), p)
			c.rxBytes.emit(ch, float64(s.RxBytes), p)
			c.rxOther.emit(ch, float64(s.RxOther), p)
			c.rxLost.emit(ch, float64(s.Lost), p)
			c.rxLate.emit(ch, float64(s.Late), p)
			ch <- prometheus.MustNewConstSummary(c.latency.desc, s.LatCount, float64(s.LatSumNs)/1e9, nil, p)
		}
	}
}
