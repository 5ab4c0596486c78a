package switchd

import (
	"math/bits"
	"sync/atomic"

	"github.com/ccbed/ccbed/wire"
)

// counter indexes the per-port counter arrays. Each counter has one writer: the
// ingress-side ones (rx, drops before queueing) the Classify lcore, the others
// the tx+CC lcore.
type counter int

const (
	cRxPackets counter = iota
	cRxBytes
	cTxPackets
	cTxBytes
	cDropBuffer     // drop-tail: egress buffer full (lossy priority over its threshold)
	cDropHeadroom   // lossless frame from this ingress port dropped: its PFC headroom was full
	cDropNoRoute    // no route to the destination
	cDropTTL        // TTL expired
	cDropMalformed  // malformed frame (truncated, bad IPv4 header or checksum, bad RoCEv2)
	cDropNotIPv4    // neither IPv4 nor PFC (ARP, IPv6, ...)
	cDropControl    // control queue full (forwarded or generated control packets)
	cDropTx         // the NIC refused the frame or no mbuf for a generated one
	cMarkedCE       // packets this switch marked CE
	cMarkedUE       // packets this switch marked UE (TCD)
	cNotECT         // marks not applied: the packet is not ECN-capable
	cINTStamped     // INT records pushed
	cINTFull        // INT stamp asked on a full or absent INT stack
	cRoCCRateSent   // RoCC rate messages this port's CP generated
	cP4QCNSent      // P4QCN feedback packets this port's CP generated
	cQCNSent        // QCN feedback packets this port's CP generated
	cFeedbackNoPort // feedback whose source has no route
	cControlFwd     // control packets (CNP, rate, feedback) forwarded ahead of data
	cPausesSent     // PFC XOFF frames sent (refreshes included)
	cPFCOnsets      // PFC activations: a priority of this ingress port went into XOFF
	cResumesSent    // PFC XON frames (pause time 0) sent
	cPausesRecv     // PFC frames received with a non-zero pause time
	cResumesRecv    // PFC frames received with pause time 0
	cPausedNs       // time the port's data was held by received pauses
	cQueueMax       // largest egress queue seen, bytes (a gauge)
	cQueueBytes     // egress queue now, bytes (a gauge)
	cFairRateBps    // RoCC fair rate, bits/s (a gauge; 0 without one)
	// Frames refused by trust (switch.trust, ports[].faces,
	// ports[].ignore_pfc), counted at the port they came in on.
	cRefusedPFC      // PFC frames VLAN-tagged, not from the peer, or on a port that ignores PFC
	cRefusedCNP      // CNPs from a host port with another station's source address
	cRefusedAck      // ACKs from a host port with another station's source address
	cRefusedNak      // NAKs likewise
	cRefusedRoCCRate // RoCC rate messages from a host port (hosts have no CP)
	cRefusedP4QCN    // P4QCN feedback from a host port
	cRefusedQCN      // QCN feedback from a host port
	cRefusedData     // RoCEv2 data from a host port with another station's source address
	// Bytes of a lossless priority that entered on this port between its
	// XOFF and its XON (Engine.recordAfterXOFF): the largest, and how many
	// pause events fell in each AfterXOFFBucket.
	cAfterXOFFMax
	cRingGrowthBytes // bytes the port's rings allocated by growing (set when published; not in PortCounters)
	cAfterXOFFHist
	// Per priority (wire.PFCPriorities each): PFC XOFF frames sent
	// (refreshes included) and activations, by the paused priority.
	cPausesSentPrio = cAfterXOFFHist + AfterXOFFBuckets
	cPFCOnsetsPrio  = cPausesSentPrio + wire.PFCPriorities
	numCounters     = cPFCOnsetsPrio + wire.PFCPriorities
)

// AfterXOFFBuckets is the number of buckets of PortCounters.PFCAfterXOFFHist.
const AfterXOFFBuckets = 12

// AfterXOFFBucket is the histogram bucket of n bytes taken after an XOFF:
// 0 below 1 KiB, k in [2^(k-1), 2^k) KiB for k = 1..10, and 11 from 1 MiB on.
func AfterXOFFBucket(n int64) int {
	return min(bits.Len64(uint64(max(n, 0))>>10), AfterXOFFBuckets-1)
}

type counters [numCounters]uint64

// published is the atomically readable copy of a counter array.
type published [numCounters]atomic.Uint64

func (p *published) store(c *counters) {
	for i := range c {
		p[i].Store(c[i])
	}
}

// PortCounters are one port's counters, as Snapshot returns and the final JSON
// holds them. The groups are embedded, so their fields are PortCounters'
// own in Go (pc.RxPackets) and in the JSON, in the order written here.
type PortCounters struct {
	Port int    `json:"port"`
	Name string `json:"name"`
	TrafficCounters
	DropCounters
	CPCounters
	PFCCounters
	QueueMaxBytes uint64  `json:"queue_max_bytes"`
	QueueBytes    uint64  `json:"queue_bytes"`
	FairRateGbps  float64 `json:"fair_rate_gbps"`
	Scheme        string  `json:"scheme"`
	FeedbackSent  uint64  `json:"feedback_sent"`
	RefusedCounters
	DropsTotal     uint64 `json:"drops"`
	ECNMarkedTotal uint64 `json:"ecn_marked"`
	// PFC pause events of this ingress port (one tx shard; with several,
	// none are recorded): the bytes of the paused priority that entered
	// between each XOFF and its XON, what the peer and the link still
	// delivered after the pause was queued. PFCAfterXOFFMax is the largest;
	// PFCAfterXOFFHist[k] counts the events in AfterXOFFBucket k (below
	// 1 KiB, then [2^(k-1), 2^k) KiB, then 1 MiB and more). A lossless run
	// needs the port's headroom above what these show.
	PFCAfterXOFFMax  uint64                   `json:"pfc_after_xoff_max_bytes"`
	PFCAfterXOFFHist [AfterXOFFBuckets]uint64 `json:"pfc_after_xoff_hist"`
	// Live per-priority state, as last published (the metrics endpoint's
	// gauges); not in the JSON, whose final snapshot has empty queues:
	// QueuePrioBytes is the egress data queue of each priority, XOFFMask the
	// priorities of this ingress port in XOFF (bit p: PFC pauses sent
	// upstream), PausedMask the egress priorities held by PFC pauses
	// received.
	QueuePrioBytes [wire.PFCPriorities]int64 `json:"-"`
	// PausesSentPrio and PFCOnsetsPrio split PausesSent and PFCOnsets by
	// the paused priority (index p: priority p). Not in the JSON, whose
	// fields the engines' golden digests hash.
	PausesSentPrio [wire.PFCPriorities]uint64 `json:"-"`
	PFCOnsetsPrio  [wire.PFCPriorities]uint64 `json:"-"`
	XOFFMask       uint8                      `json:"-"`
	PausedMask     uint8                      `json:"-"`
}

// TrafficCounters are a port's frames and bytes received and sent.
type TrafficCounters struct {
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
}

// DropCounters are a port's frames dropped, by cause (refusals by trust
// aside: RefusedCounters).
type DropCounters struct {
	DropBuffer    uint64 `json:"drop_buffer_full"`
	DropHeadroom  uint64 `json:"drop_headroom_full"`
	DropNoRoute   uint64 `json:"drop_no_route"`
	DropTTL       uint64 `json:"drop_ttl"`
	DropMalformed uint64 `json:"drop_malformed"`
	DropNotIPv4   uint64 `json:"drop_not_ipv4"`
	DropControl   uint64 `json:"drop_control_queue_full"`
	DropTx        uint64 `json:"drop_tx"`
}

// CPCounters are what a port's congestion point did to frames (ECN marks,
// INT records), the feedback it generated, and the control frames the port
// forwarded ahead of data.
type CPCounters struct {
	MarkedCE       uint64 `json:"ecn_marked_ce"`
	MarkedUE       uint64 `json:"ecn_marked_ue"`
	NotECT         uint64 `json:"mark_not_ect"`
	INTStamped     uint64 `json:"int_stamped"`
	INTFull        uint64 `json:"int_full"`
	RoCCRateSent   uint64 `json:"rocc_rate_sent"`
	P4QCNSent      uint64 `json:"p4qcn_feedback_sent"`
	QCNSent        uint64 `json:"qcn_feedback_sent"`
	FeedbackNoPort uint64 `json:"feedback_no_route"`
	ControlFwd     uint64 `json:"control_forwarded"`
}

// PFCCounters are a port's PFC frames sent (as an ingress port pausing its
// peer) and received (as an egress port paused by it).
type PFCCounters struct {
	PausesSent  uint64 `json:"pfc_pauses_sent"`
	PFCOnsets   uint64 `json:"pfc_activations"`
	ResumesSent uint64 `json:"pfc_resumes_sent"`
	PausesRecv  uint64 `json:"pfc_pauses_received"`
	ResumesRecv uint64 `json:"pfc_resumes_received"`
	PausedNs    uint64 `json:"paused_ns"`
}

// RefusedCounters are the frames refused by trust (docs/switch.md,
// "Trust"), by kind, at the port they came in on: control frames, and
// RoCEv2 data from a host with another's address (RefusedData); Refused is
// their sum, also in PortCounters.DropsTotal.
type RefusedCounters struct {
	RefusedPFC      uint64 `json:"refused_pfc"`
	RefusedCNP      uint64 `json:"refused_cnp"`
	RefusedAck      uint64 `json:"refused_ack"`
	RefusedNak      uint64 `json:"refused_nak"`
	RefusedRoCCRate uint64 `json:"refused_rocc_rate"`
	RefusedP4QCN    uint64 `json:"refused_p4qcn"`
	RefusedQCN      uint64 `json:"refused_qcn"`
	RefusedData     uint64 `json:"refused_data"`
	Refused         uint64 `json:"refused"`
}

func (pc *PortCounters) fill(rx, tx *published) {
	get := func(c counter) uint64 { return rx[c].Load() + tx[c].Load() }
	pc.RxPackets = get(cRxPackets)
	pc.RxBytes = get(cRxBytes)
	pc.TxPackets = get(cTxPackets)
	pc.TxBytes = get(cTxBytes)
	pc.DropBuffer = get(cDropBuffer)
	pc.DropHeadroom = get(cDropHeadroom)
	pc.DropNoRoute = get(cDropNoRoute)
	pc.DropTTL = get(cDropTTL)
	pc.DropMalformed = get(cDropMalformed)
	pc.DropNotIPv4 = get(cDropNotIPv4)
	pc.DropControl = get(cDropControl)
	pc.DropTx = get(cDropTx)
	pc.MarkedCE = get(cMarkedCE)
	pc.MarkedUE = get(cMarkedUE)
	pc.NotECT = get(cNotECT)
	pc.INTStamped = get(cINTStamped)
	pc.INTFull = get(cINTFull)
	pc.RoCCRateSent = get(cRoCCRateSent)
	pc.P4QCNSent = get(cP4QCNSent)
	pc.QCNSent = get(cQCNSent)
	pc.FeedbackNoPort = get(cFeedbackNoPort)
	pc.ControlFwd = get(cControlFwd)
	pc.PausesSent = get(cPausesSent)
	pc.PFCOnsets = get(cPFCOnsets)
	pc.ResumesSent = get(cResumesSent)
	pc.PausesRecv = get(cPausesRecv)
	pc.ResumesRecv = get(cResumesRecv)
	pc.PausedNs = get(cPausedNs)
	pc.QueueMaxBytes = get(cQueueMax)
	pc.QueueBytes = get(cQueueBytes)
	pc.FairRateGbps = float64(get(cFairRateBps)) / 1e9
	pc.FeedbackSent = pc.RoCCRateSent + pc.P4QCNSent + pc.QCNSent
	pc.RefusedPFC = get(cRefusedPFC)
	pc.RefusedCNP = get(cRefusedCNP)
	pc.RefusedAck = get(cRefusedAck)
	pc.RefusedNak = get(cRefusedNak)
	pc.RefusedRoCCRate = get(cRefusedRoCCRate)
	pc.RefusedP4QCN = get(cRefusedP4QCN)
	pc.RefusedQCN = get(cRefusedQCN)
	pc.RefusedData = get(cRefusedData)
	pc.Refused = pc.RefusedPFC + pc.RefusedCNP + pc.RefusedAck + pc.RefusedNak + pc.RefusedRoCCRate +
		pc.RefusedP4QCN + pc.RefusedQCN + pc.RefusedData
	pc.DropsTotal = pc.DropBuffer + pc.DropHeadroom + pc.DropNoRoute + pc.DropTTL + pc.DropMalformed +
		pc.DropNotIPv4 + pc.DropControl + pc.DropTx + pc.Refused
	pc.ECNMarkedTotal = pc.MarkedCE + pc.MarkedUE
	pc.PFCAfterXOFFMax = get(cAfterXOFFMax)
	for k := range pc.PFCAfterXOFFHist {
		pc.PFCAfterXOFFHist[k] = get(cAfterXOFFHist + counter(k))
	}
	for p := range pc.PausesSentPrio {
		pc.PausesSentPrio[p] = get(cPausesSentPrio + counter(p))
		pc.PFCOnsetsPrio[p] = get(cPFCOnsetsPrio + counter(p))
	}
}
