package metrics

import (
	"strconv"

	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
	"github.com/ccbed/ccbed/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// SwitchSource is the switch's engine: switchd.Engine, whose Snapshot reads
// the counters its lcores last published.
type SwitchSource interface {
	Snapshot() switchd.Snapshot
}

// SwitchAdapter is the DPDK adapter's own counters: switchd/dataplane.Switch.
type SwitchAdapter interface {
	Stats() dataplane.Stats
}

// switchCollector is Switch's collector.
type switchCollector struct {
	eng     SwitchSource
	adapter SwitchAdapter
	fs      families

	info, rxPkts, rxBytes, txPkts, txBytes, drops, refused, marked, notECT,
	intStamped, intFull, feedback, feedbackNoRoute, controlFwd,
	pausesSent, resumesSent, pfcOnsets, pausesRecv, resumesRecv, pausedSec,
	queue, queueMax, queuePrio, xoff, paused, fairRate,
	samplesDropped, ringDrops, noRoom *family
}

// Switch is the collector of a switch: every port's counters and gauges from
// eng's Snapshot (labels port, the port's name, and priority or a reason
// where they apply), and adapter's counters when adapter is not nil. A
// scrape takes one Snapshot: a few hundred atomic loads per port, no lock.
func Switch(eng SwitchSource, adapter SwitchAdapter) prometheus.Collector {
	c := &switchCollector{eng: eng, adapter: adapter}
	fs := &c.fs
	p := "port"
	c.info = fs.gauge("ccbed_switch_port_info", "A switch port (always 1): its index in the config and its CC scheme.", p, "index", "scheme")
	c.rxPkts = fs.counter("ccbed_switch_rx_packets_total", "Frames received on the port.", p)
	c.rxBytes = fs.counter("ccbed_switch_rx_bytes_total", "Bytes of the frames received on the port.", p)
	c.txPkts = fs.counter("ccbed_switch_tx_packets_total", "Frames transmitted on the port.", p)
	c.txBytes = fs.counter("ccbed_switch_tx_bytes_total", "Bytes of the frames transmitted on the port.", p)
	c.drops = fs.counter("ccbed_switch_drops_total", "Frames dropped, by reason; their sum is the JSON's drops.", p, "reason")
	c.refused = fs.counter("ccbed_switch_refused_total", "Frames refused by trust at the port they came in on, by kind: control frames, and data from a host with another's address (also in drops_total{reason=\"refused\"}).", p, "kind")
	c.marked = fs.counter("ccbed_switch_ecn_marked_total", "Packets this switch marked at the port's egress: ECN CE or TCD UE.", p, "mark")
	c.notECT = fs.counter("ccbed_switch_mark_not_ect_total", "Marks not applied because the packet was not ECN-capable.", p)
	c.intStamped = fs.counter("ccbed_switch_int_stamped_total", "INT records pushed at the port's egress.", p)
	c.intFull = fs.counter("ccbed_switch_int_full_total", "INT stamps asked on a full or absent INT stack.", p)
	c.feedback = fs.counter("ccbed_switch_feedback_sent_total", "Feedback packets the port's congestion point generated, by kind.", p, "kind")
	c.feedbackNoRoute = fs.counter("ccbed_switch_feedback_no_route_total", "Feedback whose flow source has no route.", p)
	c.controlFwd = fs.counter("ccbed_switch_control_forwarded_total", "Control packets (CNP, rate, feedback) forwarded ahead of data.", p)
	c.pausesSent = fs.counter("ccbed_switch_pfc_pauses_sent_total", "PFC XOFF frames sent upstream from the port, refreshes included.", p)
	c.resumesSent = fs.counter("ccbed_switch_pfc_resumes_sent_total", "PFC XON frames (pause time 0) sent from the port.", p)
	c.pfcOnsets = fs.counter("ccbed_switch_pfc_activations_total", "Times a priority of the port (as ingress) went into XOFF.", p)
	c.pausesRecv = fs.counter("ccbed_switch_pfc_pauses_received_total", "PFC frames received with a non-zero pause time.", p)
	c.resumesRecv = fs.counter("ccbed_switch_pfc_resumes_received_total", "PFC frames received with pause time 0.", p)
	c.pausedSec = fs.counter("ccbed_switch_paused_seconds_total", "Time the port's egress data was held by received PFC pauses.", p)
	c.queue = fs.gauge("ccbed_switch_queue_bytes", "Egress data queue of the port, every priority.", p)
	c.queueMax = fs.gauge("ccbed_switch_queue_max_bytes", "Largest egress data queue of the port seen so far.", p)
	c.queuePrio = fs.gauge("ccbed_switch_queue_priority_bytes", "Egress data queue of the port's priority.", p, "priority")
	c.xoff = fs.gauge("ccbed_switch_pfc_xoff", "1 while the priority of the port (as ingress) is in XOFF: the switch pauses its peer.", p, "priority")
	c.paused = fs.gauge("ccbed_switch_pfc_paused", "1 while the port's egress priority is held by a PFC pause received.", p, "priority")
	c.fairRate = fs.gauge("ccbed_switch_fair_rate_bytes_per_second", "RoCC fair rate of the port's congestion point (x8 for bit/s; 0 for a scheme without one).", p)
	c.samplesDropped = fs.counter("ccbed_switch_telemetry_samples_dropped_total", "Telemetry samples lost to a full sample ring.")
	if adapter != nil {
		c.ringDrops = fs.counter("ccbed_switch_adapter_ring_drops_total", "Pipeline mode: frames dropped because an inter-lcore ring was full.")
		c.noRoom = fs.counter("ccbed_switch_adapter_no_room_total", "Pipeline mode: frames dropped for want of tailroom for their metadata.")
	}
	return c
}

// Describe sends the Desc of every family.
func (c *switchCollector) Describe(ch chan<- *prometheus.Desc) { c.fs.describe(ch) }

// Collect reads one Snapshot and sends its samples.
func (c *switchCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.eng.Snapshot()
	var prio [wire.PFCPriorities]string
	for i := range prio {
		prio[i] = strconv.Itoa(i)
	}
	for i := range s.Ports {
		pc := &s.Ports[i]
		p := pc.Name
		c.info.emit(ch, 1, p, strconv.Itoa(pc.Port), pc.Scheme)
		c.rxPkts.emit(ch, float64(pc.RxPackets), p)
		c.rxBytes.emit(ch, float64(pc.RxBytes), p)
		c.txPkts.emit(ch, float64(pc.TxPackets), p)
		c.txBytes.emit(ch, float64(pc.TxBytes), p)
		for _, d := range [...]labelled{
			{"buffer_full", pc.DropBuffer}, {"headroom_full", pc.DropHeadroom}, {"no_route", pc.DropNoRoute},
			{"ttl", pc.DropTTL}, {"malformed", pc.DropMalformed}, {"not_ipv4", pc.DropNotIPv4},
			{"control_queue_full", pc.DropControl}, {"tx", pc.DropTx}, {"refused", pc.Refused},
		} {
			c.drops.emit(ch, float64(d.v), p, d.label)
		}
		for _, r := range [...]labelled{
			{"pfc", pc.RefusedPFC}, {"cnp", pc.RefusedCNP}, {"ack", pc.RefusedAck}, {"nak", pc.RefusedNak},
			{"rocc_rate", pc.RefusedRoCCRate}, {"p4qcn", pc.RefusedP4QCN}, {"qcn", pc.RefusedQCN},
			{"data", pc.RefusedData},
		} {
			c.refused.emit(ch, float64(r.v), p, r.label)
		}
		c.marked.emit(ch, float64(pc.MarkedCE), p, "ce")
		c.marked.emit(ch, float64(pc.MarkedUE), p, "ue")
		c.notECT.emit(ch, float64(pc.NotECT), p)
		c.intStamped.emit(ch, float64(pc.INTStamped), p)
		c.intFull.emit(ch, float64(pc.INTFull), p)
		c.feedback.emit(ch, float64(pc.RoCCRateSent), p, "rocc_rate")
		c.feedback.emit(ch, float64(pc.P4QCNSent), p, "p4qcn")
		c.feedback.emit(ch, float64(pc.QCNSent), p, "qcn")
		c.feedbackNoRoute.emit(ch, float64(pc.FeedbackNoPort), p)
		c.controlFwd.emit(ch, float64(pc.ControlFwd), p)
		c.pausesSent.emit(ch, float64(pc.PausesSent), p)
		c.resumesSent.emit(ch, float64(pc.ResumesSent), p)
		c.pfcOnsets.emit(ch, float64(pc.PFCOnsets), p)
		c.pausesRecv.emit(ch, float64(pc.PausesRecv), p)
		c.resumesRecv.emit(ch, float64(pc.ResumesRecv), p)
		c.pausedSec.emit(ch, float64(pc.PausedNs)/1e9, p)
		c.queue.emit(ch, float64(pc.QueueBytes), p)
		c.queueMax.emit(ch, float64(pc.QueueMaxBytes), p)
		for q := range pc.QueuePrioBytes {
			c.queuePrio.emit(ch, float64(pc.QueuePrioBytes[q]), p, prio[q])
			c.xoff.emit(ch, float64(pc.XOFFMask>>q&1), p, prio[q])
			c.paused.emit(ch, float64(pc.PausedMask>>q&1), p, prio[q])
		}
		c.fairRate.emit(ch, pc.FairRateGbps*1e9/8, p)
	}
	c.samplesDropped.emit(ch, float64(s.SamplesDropped))
	if c.adapter != nil {
		st := c.adapter.Stats()
		c.ringDrops.emit(ch, float64(st.RingDrops))
		c.noRoom.emit(ch, float64(st.NoRoom))
	}
}
