package hostd

import "unsafe"

// RateSample is one row of the per-flow rate time series: the goodput (bytes
// newly acknowledged) of a flow over the sample period ending at T, and the
// sending rate and window in force when it was taken (min(RP rate, offered
// cap, line rate), and the RP's window). The period begins at the host's
// previous sample; a flow that completes has its last row at the end of the
// period it completed in (the next sample's planned time), so that in
// virtual time every row lies on the sampling grid and covers a whole
// period. A period counts a frame's payload when its ACK arrives, so a
// sample can exceed the link's payload rate by about one frame per period.
type RateSample struct {
	T     int64 // ns
	Flow  int64
	Bytes int64 // payload newly acknowledged in the period
	// Gbps is Bytes over the period's length.
	Gbps     float64
	RateGbps float64
	Window   int64 // bytes; ccalgo.NoWindow when the RP has none
}

// FCT is one completed message.
type FCT struct {
	Flow      int64
	Dst       uint32
	SizeBytes int64
	StartNs   int64 // when the message was posted
	FCTNs     int64 // from StartNs to the ACK of its last byte
	IdealNs   int64 // base RTT + its frames' transmission time at line rate
	// Priority is the message's priority (0-7), its traffic class. Left out
	// of JSON, as the engine digests were made without it.
	Priority uint8 `json:"-"`
}

// Slowdown is FCT / ideal FCT.
func (f *FCT) Slowdown() float64 { return float64(f.FCTNs) / float64(f.IdealNs) }

// RxCounters are the receive side's counters.
type RxCounters struct {
	Frames        uint64 `json:"frames"`
	Malformed     uint64 `json:"malformed"`
	Other         uint64 `json:"other"`
	NotForUs      uint64 `json:"not_for_us"`
	Data          uint64 `json:"data"`
	DataBytes     uint64 `json:"data_bytes"`
	InOrder       uint64 `json:"in_order"`
	Duplicate     uint64 `json:"duplicate"`
	OutOfOrder    uint64 `json:"out_of_order"`
	NewFlows      uint64 `json:"new_flows"`
	FlowTableFull uint64 `json:"flow_table_full"`
	Evicted       uint64 `json:"evicted"`
	AcksOwed      uint64 `json:"acks_owed"`
	NaksOwed      uint64 `json:"naks_owed"`
	CNPsOwed      uint64 `json:"cnps_owed"`
	Acks          uint64 `json:"acks"`
	Naks          uint64 `json:"naks"`
	CNPs          uint64 `json:"cnps"`
	RoCCRate      uint64 `json:"rocc_rate"`
	P4QCN         uint64 `json:"p4qcn"`
	QCN           uint64 `json:"qcn"`
	PFC           uint64 `json:"pfc"`
	EventsDropped uint64 `json:"events_dropped"`
	BuildErrors   uint64 `json:"build_errors"`
	// Refused counts the control frames the receive side refused under
	// trust "topology": PFC, RoCC rate, P4QCN and QCN (counted above too,
	// as received); and VLAN-tagged PFC frames under any trust.
	Refused Refusals `json:"refused"`
}

// Refusals counts control frames refused under trust "topology"
// (Spec.Trust), by kind, and VLAN-tagged PFC frames (never a pause, under
// any trust). The receive side refuses PFC frames and CP
// feedback (by their source), the send side CNPs, ACKs and NAKs (by the flow
// they name), each in its own counters; Engine.Refused sums both.
type Refusals struct {
	PFC      uint64 `json:"pfc"`
	CNP      uint64 `json:"cnp"`
	Ack      uint64 `json:"ack"`
	Nak      uint64 `json:"nak"`
	RoCCRate uint64 `json:"rocc_rate"`
	P4QCN    uint64 `json:"p4qcn"`
	QCN      uint64 `json:"qcn"`
	// NakRepeat counts NAKs for the PSN the QP went back to less than a
	// base RTT before (at most one go-back per PSN and RTT); Nak those
	// not from the flow's destination or outside [snd_una, snd_max).
	NakRepeat uint64 `json:"nak_repeat"`
}

// Total is the number of frames refused.
func (r *Refusals) Total() uint64 {
	return r.PFC + r.CNP + r.Ack + r.Nak + r.RoCCRate + r.P4QCN + r.QCN + r.NakRepeat
}

// Add adds o's counts to r's.
func (r *Refusals) Add(o *Refusals) { addCounts(r, o) }

// TxCounters are the send side's counters.
type TxCounters struct {
	DataFrames     uint64 `json:"data_frames"`
	DataBytes      uint64 `json:"data_bytes"`
	PayloadBytes   uint64 `json:"payload_bytes"`
	RetxFrames     uint64 `json:"retx_frames"`
	NakRewinds     uint64 `json:"nak_rewinds"`
	Timeouts       uint64 `json:"timeouts"`
	StaleEvents    uint64 `json:"stale_events"`
	BadAcks        uint64 `json:"bad_acks"`
	ControlFrames  uint64 `json:"control_frames"`
	ControlBytes   uint64 `json:"control_bytes"`
	PauseFrames    uint64 `json:"pause_frames"`
	FlowsStarted   uint64 `json:"flows_started"`
	FlowsCompleted uint64 `json:"flows_completed"`
	PendingDropped uint64 `json:"pending_dropped"`
	// FlowsWaiting is the flows that arrived and wait for a free QP (a
	// level, not a count of events): at the end of a run, the flows that
	// were never started.
	FlowsWaiting   uint64 `json:"flows_waiting"`
	SamplesDropped uint64 `json:"samples_dropped"`
	FCTsDropped    uint64 `json:"fcts_dropped"`
	BuildErrors    uint64 `json:"build_errors"`
	RPRebuilds     uint64 `json:"rp_rebuilds"`
	// Refused counts the CNPs, ACKs and NAKs the send side refused under
	// trust "topology": not from the flow's destination, (ACK, NAK) for
	// packets never sent or already acknowledged, or (NakRepeat) a second
	// go-back to one PSN within a base RTT. Not in BadAcks.
	Refused Refusals `json:"refused"`
}

// Add adds o's counts to c's.
func (c *RxCounters) Add(o *RxCounters) { addCounts(c, o) }

// Add adds o's counts to c's.
func (c *TxCounters) Add(o *TxCounters) { addCounts(c, o) }

// addCounts adds every count of o to c's. The counters types are uint64
// fields only, nested structs of them included (TestCountersAdd fails on a
// field of another kind), so that a value is an array of uint64 words, and
// summing two is summing their words: no field can be left out, and no
// reflection runs.
func addCounts[T RxCounters | TxCounters | Refusals | PortCounter](c, o *T) {
	n := unsafe.Sizeof(*c) / unsafe.Sizeof(uint64(0))
	dst := unsafe.Slice((*uint64)(unsafe.Pointer(c)), n)
	src := unsafe.Slice((*uint64)(unsafe.Pointer(o)), n)
	for i := range dst {
		dst[i] += src[i]
	}
}
