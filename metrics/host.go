package metrics

import (
	"time"

	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/prometheus/client_golang/prometheus"
)

// HostSource is a running host: hostd/dataplane.Host, whose Progress asks
// its lcore loops for a copy of their counters (each copies its own at the
// end of its next poll).
type HostSource interface {
	Progress(timeout time.Duration) (hostdp.Progress, bool)
}

// HostProgressTimeout is how long a scrape waits for a host's loops to hand
// their counters over (hostd's checkpoints wait as long).
const HostProgressTimeout = 500 * time.Millisecond

// hostCollector is Host's collector.
type hostCollector struct {
	src        HostSource
	name, port string
	fs         families

	info, responding, portRx, portTx, portDrops,
	rxFrames, rxDataBytes, rxData, rxFlows, rxEvicted, owed, refused,
	eventsDropped, buildErrors,
	txData, txDataBytes, txPayload, txRetx, txNakRewinds, txTimeouts, txStale, txBadAcks,
	txCtl, txCtlBytes, pauses, flowsStarted, flowsDone, flowsActive,
	pendingDropped, samplesDropped, fctsDropped, rpRebuilds *family
}

// Host is the collector of a host: its port's, receive side's and send
// side's counters from one Progress hand-off per scrape (labels port, and a
// kind, reason or result where they apply), and ccbed_host_info with the
// host's name and port. When the loops do not answer within
// HostProgressTimeout (stopped, stalled), a scrape has only
// ccbed_host_info and ccbed_host_loops_responding 0.
func Host(src HostSource, name, port string) prometheus.Collector {
	c := &hostCollector{src: src, name: name, port: port}
	fs := &c.fs
	p := "port"
	c.info = fs.gauge("ccbed_host_info", "The host (always 1): its name and port device.", "host", p)
	c.responding = fs.gauge("ccbed_host_loops_responding", "1 when the host's lcore loops handed their counters over for this scrape, 0 when they did not answer in time.")
	c.portRx = fs.counter("ccbed_host_port_rx_frames_total", "Frames received from the port.", p)
	c.portTx = fs.counter("ccbed_host_port_tx_frames_total", "Frames the port took for transmission.", p)
	c.portDrops = fs.counter("ccbed_host_port_drops_total", "Frames dropped at the port adapter, by reason.", p, "reason")
	c.rxFrames = fs.counter("ccbed_host_rx_frames_total", "Frames the receive side handled, by kind; they sum to every frame received.", "kind")
	c.rxDataBytes = fs.counter("ccbed_host_rx_data_bytes_total", "Bytes of the data frames received.")
	c.rxData = fs.counter("ccbed_host_rx_data_frames_total", "Data frames received, by result: in order, out of order (a gap), duplicate, or no room in the flow table.", "result")
	c.rxFlows = fs.counter("ccbed_host_rx_flows_total", "Incoming flows (source, QP) the receiver started.")
	c.rxEvicted = fs.counter("ccbed_host_rx_flows_evicted_total", "Completed incoming flows evicted from the flow table to make room for new ones.")
	c.owed = fs.counter("ccbed_host_controls_owed_total", "Control frames the receiver owed its senders, by kind.", "kind")
	c.refused = fs.counter("ccbed_host_refused_total", "Control frames refused under trust \"topology\", by kind (receive and send sides).", "kind")
	c.eventsDropped = fs.counter("ccbed_host_events_dropped_total", "Control events lost to a full receive-to-send event ring.")
	c.buildErrors = fs.counter("ccbed_host_build_errors_total", "Frames that could not be built, by side.", "side")
	c.txData = fs.counter("ccbed_host_tx_data_frames_total", "Data frames sent, retransmissions included.")
	c.txDataBytes = fs.counter("ccbed_host_tx_data_bytes_total", "Bytes of the data frames sent.")
	c.txPayload = fs.counter("ccbed_host_tx_payload_bytes_total", "Payload bytes of the data frames sent.")
	c.txRetx = fs.counter("ccbed_host_tx_retransmitted_frames_total", "Data frames sent again (go-back-N after a NAK or a timeout).")
	c.txNakRewinds = fs.counter("ccbed_host_tx_nak_rewinds_total", "Go-back-N rewinds on a NAK.")
	c.txTimeouts = fs.counter("ccbed_host_tx_timeouts_total", "Retransmission timeouts.")
	c.txStale = fs.counter("ccbed_host_tx_stale_events_total", "Events for a flow that had already ended.")
	c.txBadAcks = fs.counter("ccbed_host_tx_bad_acks_total", "ACKs that acknowledged nothing the sender had sent.")
	c.txCtl = fs.counter("ccbed_host_tx_control_frames_total", "Control frames (ACK, NAK, CNP) sent.")
	c.txCtlBytes = fs.counter("ccbed_host_tx_control_bytes_total", "Bytes of the control frames sent.")
	c.pauses = fs.counter("ccbed_host_pfc_pauses_honoured_total", "PFC pauses for the data priority that stopped the sender.")
	c.flowsStarted = fs.counter("ccbed_host_flows_started_total", "Sender flows started.")
	c.flowsDone = fs.counter("ccbed_host_flows_completed_total", "Sender flows completed (last byte acknowledged).")
	c.flowsActive = fs.gauge("ccbed_host_flows_active", "Sender flows started and not yet completed.")
	c.pendingDropped = fs.counter("ccbed_host_flows_pending_dropped_total", "Flows dropped because the queue of flows waiting for a QP was full.")
	c.samplesDropped = fs.counter("ccbed_host_rate_samples_dropped_total", "Rate samples not recorded (the sample buffer was full).")
	c.fctsDropped = fs.counter("ccbed_host_fcts_dropped_total", "Flow completion times not recorded (the FCT buffer was full).")
	c.rpRebuilds = fs.counter("ccbed_host_rp_rebuilds_total", "Reaction points rebuilt (allocating) rather than copied for a new flow.")
	return c
}

// Describe sends the Desc of every family.
func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) { c.fs.describe(ch) }

// Collect asks the loops for their counters and sends them.
func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	c.info.emit(ch, 1, c.name, c.port)
	pr, ok := c.src.Progress(HostProgressTimeout)
	if !ok {
		c.responding.emit(ch, 0)
		return
	}
	c.responding.emit(ch, 1)
	c.collectPort(ch, &pr.Port)
	c.collectRx(ch, &pr.Rx)
	c.collectTx(ch, &pr.Tx)
	ref := pr.Rx.Refused
	ref.Add(&pr.Tx.Refused)
	for _, r := range [...]labelled{
		{"pfc", ref.PFC}, {"cnp", ref.CNP}, {"ack", ref.Ack}, {"nak", ref.Nak},
		{"rocc_rate", ref.RoCCRate}, {"p4qcn", ref.P4QCN}, {"qcn", ref.QCN},
		{"nak_repeat", ref.NakRepeat},
	} {
		c.refused.emit(ch, float64(r.v), r.label)
	}
	c.buildErrors.emit(ch, float64(pr.Rx.BuildErrors), "rx")
	c.buildErrors.emit(ch, float64(pr.Tx.BuildErrors), "tx")
}

func (c *hostCollector) collectPort(ch chan<- prometheus.Metric, pc *hostd.PortCounter) {
	c.portRx.emit(ch, float64(pc.RxFrames), c.port)
	c.portTx.emit(ch, float64(pc.TxFrames), c.port)
	c.portDrops.emit(ch, float64(pc.TxDrops), c.port, "tx_full")
	c.portDrops.emit(ch, float64(pc.NoMbuf), c.port, "no_mbuf")
	c.portDrops.emit(ch, float64(pc.CtlRingDrops), c.port, "control_ring_full")
}

func (c *hostCollector) collectRx(ch chan<- prometheus.Metric, rx *hostd.RxCounters) {
	for _, k := range [...]labelled{
		{"data", rx.Data}, {"ack", rx.Acks}, {"nak", rx.Naks}, {"cnp", rx.CNPs}, {"rocc_rate", rx.RoCCRate},
		{"p4qcn", rx.P4QCN}, {"qcn", rx.QCN}, {"pfc", rx.PFC}, {"malformed", rx.Malformed},
		{"other", rx.Other}, {"not_for_us", rx.NotForUs},
	} {
		c.rxFrames.emit(ch, float64(k.v), k.label)
	}
	c.rxDataBytes.emit(ch, float64(rx.DataBytes))
	for _, r := range [...]labelled{
		{"in_order", rx.InOrder}, {"out_of_order", rx.OutOfOrder}, {"duplicate", rx.Duplicate},
		{"flow_table_full", rx.FlowTableFull},
	} {
		c.rxData.emit(ch, float64(r.v), r.label)
	}
	c.rxFlows.emit(ch, float64(rx.NewFlows))
	c.rxEvicted.emit(ch, float64(rx.Evicted))
	c.owed.emit(ch, float64(rx.AcksOwed), "ack")
	c.owed.emit(ch, float64(rx.NaksOwed), "nak")
	c.owed.emit(ch, float64(rx.CNPsOwed), "cnp")
	c.eventsDropped.emit(ch, float64(rx.EventsDropped))
}

func (c *hostCollector) collectTx(ch chan<- prometheus.Metric, tx *hostd.TxCounters) {
	c.txData.emit(ch, float64(tx.DataFrames))
	c.txDataBytes.emit(ch, float64(tx.DataBytes))
	c.txPayload.emit(ch, float64(tx.PayloadBytes))
	c.txRetx.emit(ch, float64(tx.RetxFrames))
	c.txNakRewinds.emit(ch, float64(tx.NakRewinds))
	c.txTimeouts.emit(ch, float64(tx.Timeouts))
	c.txStale.emit(ch, float64(tx.StaleEvents))
	c.txBadAcks.emit(ch, float64(tx.BadAcks))
	c.txCtl.emit(ch, float64(tx.ControlFrames))
	c.txCtlBytes.emit(ch, float64(tx.ControlBytes))
	c.pauses.emit(ch, float64(tx.PauseFrames))
	c.flowsStarted.emit(ch, float64(tx.FlowsStarted))
	c.flowsDone.emit(ch, float64(tx.FlowsCompleted))
	c.flowsActive.emit(ch, float64(tx.FlowsStarted-tx.FlowsCompleted))
	c.pendingDropped.emit(ch, float64(tx.PendingDropped))
	c.samplesDropped.emit(ch, float64(tx.SamplesDropped))
	c.fctsDropped.emit(ch, float64(tx.FCTsDropped))
	c.rpRebuilds.emit(ch, float64(tx.RPRebuilds))
}
