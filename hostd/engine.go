package hostd

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/pacer"
	"github.com/ccbed/ccbed/wire"
)

const psnMask = 1<<24 - 1

// signext24 interprets a 24-bit PSN difference as a signed number in
// [-2^23, 2^23).
func signext24(d uint32) int64 { return int64(int32(d<<8) >> 8) }

// Engine is one host's NIC: sender QPs paced by a pacer.Scheduler under their
// RPs, and the receiver with the scheme's NP. It has two sides, each owned by one
// goroutine (lcore): the rx side (Receive, BuildControl) and the tx side
// (Service, NextData, CanSend, ChargeControl, the flow table and every RP). The
// rx side hands ACKs, NAKs, CNPs, feedback and PFC pauses to the tx side through
// a lock-free single-producer single-consumer ring. Results (Samples, FCTs,
// RxFlows, Counters) are read once the loops have stopped.
type Engine struct {
	r *resolved

	// tx side
	sched      *pacer.Scheduler
	nic        pacer.TokenBucket // line-rate ceiling of the NIC
	qps        []sendQP
	tmpls      []wire.DataTemplate // each QP slot's data frame headers, built at its flow's start
	onSend     bool                // the scheme's RP has an OnSend (ccalgo.SendHook)
	free       []int32
	maxQPs     int // the bound of qps (growQPs)
	active     []int32
	timers     *timerHeap
	slotBits   uint
	genShift   uint                 // slotBits plus the bits of the shard index: a QP number's generation starts here
	rpTmpl     ccalgo.ReactionPoint // pristine RP to reset a QP's RP from (ccalgo.Resetter); nil: rebuild
	starts     []pendingFlow        // static and incast flows, by start time
	startIdx   int
	pending    []pendingFlow // ring of flows waiting for a free QP; grows up to maxPending
	maxPending int
	pendHead   int
	pendLen    int
	wls        []wlState
	rng        *rand.Rand
	jrng       *rand.Rand // pacing jitter (its own stream: workloads do not change with it)
	pause      int64      // PFC: no data before this time (one priority: Config.PFCPriority's)
	nextSweep  int64
	nextSamp   int64
	lastSamp   int64
	samples    []RateSample
	fcts       []FCT
	tc         TxCounters

	// prioPause is each priority's pause end when the host's flows use
	// several priorities (resolved.prios): a pause holds only its
	// priority's QPs (pausePriority).
	prioPause [8]int64

	// shared, written only at construction
	shard, shards int       // this engine's index among its host's engines (NewEngines), and their number
	shardMask     uint32    // the shard index bits of a QP number, above its slot
	evIn          []*evRing // events for the tx side: one ring from each engine's rx side
	evOut         []*evRing // the rx side's rings, by the engine (tx side) they feed

	// rx side
	np       ccalgo.NotificationPoint
	table    *flowTable
	rflows   []recvFlow // grows up to maxRx (growRx)
	maxRx    int
	freeRx   []int32     // unused receiver slots
	doneQ    []doneEntry // ring of completed receiver flows, oldest first
	doneHead int
	doneLen  int
	evictAge int64           // a completed receiver flow may be evicted this long after its last packet
	_        uint64          // keeps fr at 8 mod 16 (TestFrameScratchPlace)
	fr       wire.Frame      // at 8 mod 16 in the engine (pad before it when fields move it): see TestFrameScratchPlace
	fb       ccalgo.Feedback // CP feedback decoded, before it goes to its QP's engine
	da       ccalgo.DataArrival
	rc       RxCounters
}

// sendQP is the sender state of one QP slot (one flow at a time).
type sendQP struct {
	// What sending a packet reads and writes comes first, in two cache
	// lines or so: 1,000 QPs served in turn do not fit a core's L2.
	rp     ccalgo.ReactionPoint
	sndNxt uint64 // next packet number to send
	sndUna uint64 // packets below this are acknowledged
	sndMax uint64 // highest packet number sent + 1
	size   uint64 // message bytes; 0 = unlimited
	npkts  uint64 // packets of the message; 0 = unlimited
	ipID   uint16 // IPv4 identification of the next packet
	active bool
	prio   uint8 // the flow's priority (0-7)
	// rtoShift doubles the retransmission timeout after each timeout without
	// progress (exponential backoff, at most maxRTOShift doublings), so that
	// timeouts shorter than a full queue's delay do not resend a window into
	// that queue again and again; an ACK that advances snd_una resets it.
	rtoShift uint8
	actIdx   int32
	progress int64 // last time snd_una advanced, or sending resumed from idle
	rate     float64
	window   int64
	halt     int64
	timer    int64
	capBps   float64

	gen     uint32
	qpn     uint32
	flowID  int64
	ep      wire.Endpoints // ep.IPID unused: ipID
	start   int64          // arrival (post) time of the message
	sampled uint64
	// backPSN is the packet number the last NAK sent the QP back to, and
	// backUntil the end of that go-back's RTT: with trust "topology", a NAK
	// for backPSN before backUntil is refused (onAck).
	backPSN   uint64
	backUntil int64
}

// pendingFlow is a flow (one message) waiting for its start time or a free QP.
type pendingFlow struct {
	id     int64
	dst    uint32
	prio   uint8 // priority (0-7)
	size   int64 // 0 = unlimited
	start  int64
	capBps float64
}

// wlState is a running workload generator.
type wlState struct {
	spec    *workloadSpec
	next    int64   // next arrival, ns
	stop    int64   // no arrival at or after this; Never when unbounded
	meanIv  float64 // mean inter-arrival, ns
	count   int64
	capBps  float64
	maxFlow int64
	prio    uint8
}

// doneEntry names a receiver flow that completed its message; epoch tells
// whether the slot has been reused since.
type doneEntry struct {
	slot  int32
	epoch uint32
}

// recvFlow is the receiver state of one incoming flow (source IP, QP number).
type recvFlow struct {
	key        uint64
	used       bool
	epoch      uint32
	srcIP      uint32
	qpn        uint32
	exp        uint64 // next packet number expected
	bytes      uint64 // payload bytes received in order
	msn        uint32
	sinceAck   uint32
	nakSent    bool
	done       bool
	nakPkt     uint64
	nakTime    int64
	frames     uint64
	frameBytes uint64
	first      int64
	last       int64
	firstTS    int64 // send timestamps of the first and last in-order packets
	lastTS     int64
}

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
}

// Slowdown is FCT / ideal FCT.
func (f *FCT) Slowdown() float64 { return float64(f.FCTNs) / float64(f.IdealNs) }

// RxFlow is what the receiver measured of one incoming flow.
type RxFlow struct {
	SrcIP      uint32
	QPN        uint32
	Bytes      uint64 // payload bytes delivered in order
	Frames     uint64 // data frames received (duplicates and gaps included)
	FrameBytes uint64 // their bytes
	FirstNs    int64  // first and last data frame arrival
	LastNs     int64
	// FirstSendNs and LastSendNs are the sender's timestamps of the first and
	// last packets delivered in order: the sender's time base.
	FirstSendNs int64
	LastSendNs  int64
	Messages    uint32 // messages completed
}

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
// (Config.Trust), by kind, and VLAN-tagged PFC frames (never a pause, under
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

// Add adds o's counts to r.
func (r *Refusals) Add(o *Refusals) {
	r.PFC += o.PFC
	r.CNP += o.CNP
	r.Ack += o.Ack
	r.Nak += o.Nak
	r.RoCCRate += o.RoCCRate
	r.P4QCN += o.P4QCN
	r.QCN += o.QCN
	r.NakRepeat += o.NakRepeat
}

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

// Controls are the control frames the receive side owes after one data frame:
// an ACK or NAK, and a CNP. The caller owns it and reuses it.
type Controls struct {
	N int
	C [2]Control
}

// ControlKind is the kind of a Control.
type ControlKind uint8

// Control kinds.
const (
	CtlAck ControlKind = iota + 1
	CtlNak
	CtlCNP
)

// Control is one control frame to build with BuildControl.
type Control struct {
	Kind   ControlKind
	Ep     wire.Endpoints
	Spec   wire.AckSpec // DestQP for a CNP too
	Fields ccalgo.AckFields
}

// NewEngine builds an engine from cfg at time now (ns). cfg is completed with
// ApplyDefaults; relative CDF paths are taken from the working directory. Use
// New with a *config.File to get errors located in the file.
func NewEngine(cfg Config, now int64) (*Engine, error) {
	cfg.ApplyDefaults()
	r, err := resolve(&cfg, nil, "", "")
	if err != nil {
		return nil, err
	}
	return newEngine(r, now, oneShard(r))
}

// NewEngineFromFile is NewEngine for a Config decoded from f under the table
// keyPrefix ("host"): errors name the file, line and key, and CDF paths are
// relative to baseDir (the file's directory).
func NewEngineFromFile(cfg Config, f *config.File, keyPrefix, baseDir string, now int64) (*Engine, error) {
	cfg.ApplyDefaults()
	r, err := resolve(&cfg, f, keyPrefix, baseDir)
	if err != nil {
		return nil, err
	}
	return newEngine(r, now, oneShard(r))
}

// shardSpec is an engine's place among the engines of one host (NewEngines):
// its index of count, and the event rings joining the rx sides to the tx
// sides.
type shardSpec struct {
	index, count int
	in           []*evRing // consumed by this engine's tx side
	out          []*evRing // produced by this engine's rx side, by destination engine
}

// oneShard is the shardSpec of a host run as one engine: one ring from its
// rx side to its tx side.
func oneShard(r *resolved) shardSpec {
	ring := newEvRing(r.cfg.EventRing)
	return shardSpec{index: 0, count: 1, in: []*evRing{ring}, out: []*evRing{ring}}
}

func newEngine(r *resolved, now int64, sh shardSpec) (*Engine, error) {
	c := &r.cfg
	e := &Engine{r: r, shard: sh.index, shards: sh.count, evIn: sh.in, evOut: sh.out}
	// The QP slots start at 16 and double when a flow finds them all in use
	// (growQPs), up to MaxQPs; QP numbers keep MaxQPs' slot bits.
	nqp := min(c.MaxQPs, initialSlots)
	sched, err := pacer.NewScheduler(pacer.Config{
		MaxQPs:         nqp,
		MaxPacketBytes: int64(r.mtu),
		RateBps:        r.linkBps,
		BurstBytes:     r.burst,
	}, now)
	if err != nil {
		return nil, fmt.Errorf("hostd: %w", err)
	}
	e.sched = sched
	// The NIC bucket holds one tx burst of full frames (the adapter hands the
	// port 32 frames at a time): the line rate holds over any longer interval,
	// and a tx loop that polls a little late does not lose line capacity.
	// An engine of several (NewEngines) paces its share of the line rate.
	e.nic.Init(r.linkBps/float64(sh.count), int64(c.NICBurstFrames)*int64(maxFrame(r.mtu)+vlanLen(r.tagPCP)+phyOverhead), now)
	e.slotBits = uint(max(bits.Len(uint(c.MaxQPs-1)), 1))
	e.genShift = e.slotBits + uint(bits.Len(uint(sh.count-1)))
	e.shardMask = 1<<(e.genShift-e.slotBits) - 1
	e.maxQPs = c.MaxQPs
	e.timers = newTimerHeap(0)
	tmpl, err := r.scheme.NewRP(r.params, r.env)
	if err != nil {
		return nil, err
	}
	if _, ok := tmpl.(ccalgo.Resetter); ok {
		e.rpTmpl = tmpl
	}
	e.onSend = true
	if h, ok := tmpl.(ccalgo.SendHook); ok {
		e.onSend = h.SendHook()
	}
	if err := e.growQPs(nqp, now); err != nil {
		return nil, err
	}
	if r.scheme.NewNP != nil {
		if e.np, err = r.scheme.NewNP(r.params, r.env); err != nil {
			return nil, err
		}
	}
	// The receiver's tables start small and double as flows arrive, up to
	// MaxRxFlows (growRx): a host holds what it uses, slots taken in the same
	// order as from tables allocated whole.
	e.maxRx = c.MaxRxFlows
	n := min(c.MaxRxFlows, initialSlots)
	e.table = newFlowTable(n)
	e.doneQ = make([]doneEntry, n)
	e.growRx(n)
	e.evictAge = 4 * r.rto

	// Static and incast flows, by start time (stable: config order on ties).
	for i, f := range r.flows {
		e.starts = append(e.starts, pendingFlow{id: int64(f.ID), dst: r.flowDst[i], size: f.SizeBytes,
			start: now + int64(f.StartUs*1000), capBps: f.RateGbps * 1e9, prio: r.priority(f.Priority)})
	}
	for i, g := range r.incast {
		id := int64(g.IDBase)
		for k := 0; k < g.Repeat; k++ {
			t := now + int64((g.StartUs+float64(k)*g.PeriodUs)*1000)
			for j := 0; j < g.Flows; j++ {
				e.starts = append(e.starts, pendingFlow{id: id, dst: r.incastDst[i], size: g.SizeBytes,
					start: t, capBps: g.RateGbps * 1e9, prio: r.priority(g.Priority)})
				id++
			}
		}
	}
	if n := sh.count; n > 1 {
		// This engine's share: every n-th flow, in config order.
		mine := e.starts[:0]
		for i, pf := range e.starts {
			if i%n == sh.index {
				mine = append(mine, pf)
			}
		}
		e.starts = mine
	}
	sort.SliceStable(e.starts, func(i, j int) bool { return e.starts[i].start < e.starts[j].start })
	e.maxPending = c.MaxPending
	e.pending = make([]pendingFlow, min(c.MaxPending, initialSlots))
	// Engine 0 of several draws the streams of a host run as one engine;
	// the others, streams of their own.
	ss := uint64(sh.index) << 40
	e.rng = rand.New(rand.NewPCG(r.seed, 0x9e3779b97f4a7c15^uint64(r.ip)^ss))
	e.jrng = rand.New(rand.NewPCG(r.seed^0x6a09e667f3bcc908, uint64(r.ip)^ss))
	for i := range r.workloads {
		w := &r.workloads[i]
		ws := wlState{spec: w, stop: ccalgo.Never, capBps: w.cfg.RateGbps * 1e9, maxFlow: int64(w.cfg.MaxFlows),
			prio: r.priority(w.cfg.Priority)}
		if n := int64(sh.count); n > 1 && ws.maxFlow > 0 {
			// Flows k*n + index of the workload's MaxFlows are this engine's.
			if ws.maxFlow = (ws.maxFlow - int64(sh.index) + n - 1) / n; ws.maxFlow == 0 {
				continue
			}
		}
		// n engines each offer 1/n of the load: their Poisson arrivals sum
		// to the workload's.
		ws.meanIv = MeanInterarrivalNs(w.cdf.Mean(), w.cfg.Load/float64(sh.count), r.linkBps)
		ws.next = now + int64(w.cfg.StartUs*1000) + int64(e.rng.ExpFloat64()*ws.meanIv)
		if w.cfg.StopUs > 0 {
			ws.stop = now + int64(w.cfg.StopUs*1000)
		}
		e.wls = append(e.wls, ws)
	}
	// The result slices start with room for a run's usual rows, so that an
	// lcore rarely allocates for them, and double beyond (up to their bounds;
	// reserving the bounds whole costs 100 MB a host). With GrowResults they
	// start small: a fabric of hundreds of hosts reserves little up front.
	rows, fcts := 1<<16, 1<<14
	if c.GrowResults {
		rows, fcts = initialSlots, initialSlots
	}
	e.samples = make([]RateSample, 0, min(r.maxSamples, rows))
	e.fcts = make([]FCT, 0, min(c.MaxFCTs, fcts))
	e.nextSweep = now + r.rto/4
	e.nextSamp = now + r.sampleNs
	e.lastSamp = now
	return e, nil
}

// EventsPending reports whether the rx side has handed the tx side events
// (ACKs, CNPs, feedback, pauses) that Service has not applied yet. Either side
// may ask.
func (e *Engine) EventsPending() bool {
	for _, r := range e.evIn {
		if !r.empty() {
			return true
		}
	}
	return false
}

// LinkBps is the NIC line rate, bits/s.
func (e *Engine) LinkBps() float64 { return e.r.linkBps }

// IP is the host's IPv4 address (host byte order).
func (e *Engine) IP() uint32 { return e.r.ip }

// SetMAC sets the host's MAC (the port's address) before the engine runs.
func (e *Engine) SetMAC(m wire.MAC) { e.r.mac = m }

// MaxFrameBytes is the largest frame the engine builds: mbufs must hold it.
func (e *Engine) MaxFrameBytes() int { return maxFrame(e.r.mtu) + vlanLen(e.r.tagPCP) }

// ---------------------------------------------------------------- rx side

// Receive handles one frame received at now. Data frames run the NP and the
// receiver's in-order check and fill out with the ACK / NAK and CNP owed
// (returned count, also out.N); control frames (ACK, NAK, CNP, RoCC rate
// message, P4QCN / QCN feedback, PFC) become events for the tx side and owe
// nothing. Malformed and foreign frames are counted and ignored. frame is only
// read, and not kept.
func (e *Engine) Receive(now int64, frame []byte, out *Controls) int {
	out.N = 0
	e.rc.Frames++
	fr := &e.fr
	if err := wire.Decode(frame, fr); err != nil {
		e.rc.Malformed++
		return 0
	}
	if fr.Kind == wire.KindPFC {
		e.rc.PFC++
		// PFC is link local: only the switch port at the other end sends it,
		// and never VLAN-tagged (a MAC Control frame's Length/Type is 88-08
		// right after the source address, IEEE 802.3 Clause 31), whatever
		// the trust.
		if fr.Eth.HasVLAN() || e.r.trusted && fr.Eth.Src() != e.r.gateway {
			e.rc.Refused.PFC++
			return 0
		}
		if ps := e.r.prios; ps&(ps-1) != 0 {
			// Flows of several priorities: an event per paused one.
			for p := 0; p < 8; p++ {
				if ps&(1<<p) != 0 && fr.PFC.Enabled(p) {
					e.postPause(now+wire.QuantaNs(fr.PFC.PauseQuanta(p), e.r.linkBps), uint32(p))
				}
			}
			return 0
		}
		p := e.r.pfcPrio
		if !fr.PFC.Enabled(p) {
			return 0
		}
		e.postPause(now+wire.QuantaNs(fr.PFC.PauseQuanta(p), e.r.linkBps), uint32(p))
		return 0
	}
	if fr.Kind == wire.KindOther {
		e.rc.Other++
		return 0
	}
	if fr.IP.Dst() != e.r.ip {
		e.rc.NotForUs++
		return 0
	}
	var kind evKind
	switch fr.Kind {
	case wire.KindData:
		return e.rxData(now, frame, out)
	case wire.KindAck:
		e.rc.Acks++
		kind = evAck
	case wire.KindNak:
		e.rc.Naks++
		kind = evNak
	case wire.KindCNP:
		e.rc.CNPs++
		kind = evCNP
	case wire.KindRoCCRate:
		e.rc.RoCCRate++
		kind = evFeedback
	case wire.KindP4QCN:
		e.rc.P4QCN++
		kind = evFeedback
	case wire.KindQCN:
		e.rc.QCN++
		kind = evFeedback
	default:
		e.rc.Other++
		return 0
	}
	if e.r.trusted && kind == evFeedback && !e.fromTrustedCP(fr) {
		switch fr.Kind {
		case wire.KindRoCCRate:
			e.rc.Refused.RoCCRate++
		case wire.KindP4QCN:
			e.rc.Refused.P4QCN++
		default:
			e.rc.Refused.QCN++
		}
		return 0
	}
	// The QP the frame names, and so the engine whose tx side owns it.
	var qpn uint32
	switch fr.Kind {
	case wire.KindRoCCRate:
		fr.Rate.Feedback(&e.fb)
		qpn = e.fb.Flow.DestQP
	case wire.KindP4QCN:
		fr.Feedback.Feedback(&e.fb, ccalgo.FeedbackP4QCN, fr.BTH.DestQP())
		qpn = e.fb.Flow.DestQP
	case wire.KindQCN:
		fr.Feedback.Feedback(&e.fb, ccalgo.FeedbackQCN, fr.BTH.DestQP())
		qpn = e.fb.Flow.DestQP
	default: // ACK, NAK, CNP
		qpn = fr.BTH.DestQP()
	}
	ring := e.evOut[0]
	if len(e.evOut) > 1 {
		ring = e.evOut[e.owner(qpn)]
	}
	ev := ring.slot()
	if ev == nil {
		e.rc.EventsDropped++
		return 0
	}
	ev.kind = kind
	ev.src = fr.IP.Src()
	ev.qpn = qpn
	switch fr.Kind {
	case wire.KindAck, wire.KindNak:
		ev.psn = fr.BTH.PSN()
		// The echo fields, as if zeroed then filled: the slot's INT hops
		// beyond the new stack are cleared, not the whole stack.
		f := &ev.ack.Fields
		if fr.Ext != nil {
			fr.Ext.Fields(f) // every field but INT
		} else {
			f.EchoTS, f.Mark, f.Window, f.ActiveFlows, f.RecvBytes = 0, 0, 0, 0, 0
		}
		old := f.INT.NHops
		f.INT.NHops = 0
		if fr.INT != nil {
			fr.INT.Stack(&f.INT)
		}
		if old > f.INT.NHops {
			clear(f.INT.Hops[f.INT.NHops:old])
		}
	case wire.KindRoCCRate, wire.KindP4QCN, wire.KindQCN:
		ev.fb = e.fb
	}
	ring.commit()
	return 0
}

// owner is the index of the engine whose tx side owns QP number qpn (its
// shard bits); a number no engine gives goes to this engine's own tx side,
// which counts it stale.
func (e *Engine) owner(qpn uint32) int {
	k := int(qpn>>e.slotBits) & int(e.shardMask)
	if k >= len(e.evOut) {
		return e.shard
	}
	return k
}

// fromTrustedCP reports whether the CP feedback fr (RoCC rate, P4QCN or QCN)
// comes from a trusted CP: its source address and the CP id it carries both
// lie in TrustedCPs.
func (e *Engine) fromTrustedCP(fr *wire.Frame) bool {
	var id uint32
	if fr.Kind == wire.KindRoCCRate {
		id = fr.Rate.CPID()
	} else {
		id = fr.Feedback.CPID()
	}
	return e.r.cps.has(fr.IP.Src()) && e.r.cps.has(id)
}

func (e *Engine) rxData(now int64, frame []byte, out *Controls) int {
	fr := &e.fr
	e.rc.Data++
	e.rc.DataBytes += uint64(len(frame))
	src := fr.IP.Src()
	bth := fr.BTH
	qpn := bth.DestQP()
	key := uint64(src)<<32 | uint64(qpn)
	idx, found := e.table.find(key)
	var slot int32
	if found {
		slot = e.table.vals[idx] - 1
	} else {
		if slot = e.allocRx(now); slot < 0 {
			e.rc.FlowTableFull++
			return 0
		}
		idx, _ = e.table.find(key) // an eviction may have moved entries
		e.table.insertAt(idx, key, slot)
	}
	rf := &e.rflows[slot]
	op := bth.Opcode()
	psn := bth.PSN()
	if !found || (rf.done && psn == 0 && wire.IsFirstOpcode(op)) {
		// A new flow, or a completed (source, QP) reused by the sender for a
		// new message stream.
		e.rc.NewFlows++
		ep := rf.epoch + 1
		*rf = recvFlow{key: key, used: true, epoch: ep, srcIP: src, qpn: qpn, first: now}
	}
	rf.frames++
	rf.frameBytes += uint64(len(frame))
	rf.last = now
	pn := int64(rf.exp) + signext24(psn-uint32(rf.exp))
	payload := len(fr.Payload) - wire.DataHeaderLen
	last := wire.IsLastOpcode(op)

	d := &e.da
	d.QP = slot
	d.Seq = rf.bytes
	if pn != int64(rf.exp) {
		d.Seq = uint64(max(int64(rf.bytes)+(pn-int64(rf.exp))*int64(e.r.mtu), 0))
	}
	d.PayloadBytes = payload
	d.WireBytes = len(frame)
	d.SendTS = fr.Data.SendTS()
	d.Mark = wire.MarkFromECN(fr.IP.ECN())
	d.FirstOfMessage = wire.IsFirstOpcode(op)
	d.LastOfMessage = last
	d.INT.NHops = 0
	if fr.INT != nil {
		fr.INT.Stack(&d.INT)
	}
	c := &out.C[0]
	ack := &c.Fields
	*ack = ccalgo.AckFields{}
	cnp := false
	if e.np != nil {
		cnp = e.np.OnData(now, d, ack)
	}
	if ack.EchoTS == 0 {
		ack.EchoTS = d.SendTS
	}
	ack.Mark = ack.Mark.Max(d.Mark)
	if fr.INT != nil && ack.INT.NHops == 0 {
		ack.INT = d.INT
	}

	var kind ControlKind
	switch {
	case pn == int64(rf.exp):
		e.rc.InOrder++
		if rf.exp == 0 {
			rf.firstTS = d.SendTS
		}
		rf.lastTS = d.SendTS
		rf.exp++
		rf.bytes += uint64(max(payload, 0))
		rf.nakSent = false
		rf.sinceAck++
		if last {
			rf.msn++
			rf.done = true
			e.markDone(slot, rf.epoch)
		}
		if rf.sinceAck >= e.r.ackEvery || last || bth.AckReq() {
			kind = CtlAck
		}
	case pn > int64(rf.exp):
		e.rc.OutOfOrder++
		if !rf.nakSent || rf.nakPkt != rf.exp || now-rf.nakTime >= e.r.nakIv {
			rf.nakSent, rf.nakPkt, rf.nakTime = true, rf.exp, now
			kind = CtlNak
		}
	default:
		// A duplicate of delivered data (a go-back-N resend, or an ACK was
		// lost): acknowledge again so that the sender moves on.
		e.rc.Duplicate++
		if last || bth.AckReq() || rf.sinceAck+1 >= e.r.ackEvery {
			kind = CtlAck
		} else {
			rf.sinceAck++
		}
	}
	n := 0
	if kind != 0 {
		c.Kind = kind
		e.fillEp(&c.Ep, fr)
		c.Spec = wire.AckSpec{DestQP: qpn, MSN: rf.msn, EchoINT: fr.INT != nil}
		if fr.INT != nil {
			c.Spec.PathID = fr.INT.PathID()
		}
		if kind == CtlAck {
			c.Spec.PSN = uint32(rf.exp-1) & psnMask
			c.Spec.Syndrome = wire.SyndromeAckNoCred
			rf.sinceAck = 0
			e.rc.AcksOwed++
		} else {
			c.Spec.PSN = uint32(rf.exp) & psnMask
			c.Spec.Syndrome = wire.SyndromeNAKSeq
			e.rc.NaksOwed++
		}
		n++
	}
	if cnp {
		cc := &out.C[n]
		cc.Kind = CtlCNP
		e.fillEp(&cc.Ep, fr)
		cc.Spec = wire.AckSpec{DestQP: qpn}
		e.rc.CNPsOwed++
		n++
	}
	out.N = n
	return n
}

// allocRx returns a free receiver slot, evicting the flow that completed first
// if it completed at least evictAge ago (so that a resend of its tail, after a
// lost ACK, still finds it); -1 when none can be had.
func (e *Engine) allocRx(now int64) int32 {
	if len(e.freeRx) == 0 && len(e.rflows) < e.maxRx {
		e.growRx(min(2*len(e.rflows), e.maxRx))
	}
	if n := len(e.freeRx); n > 0 {
		s := e.freeRx[n-1]
		e.freeRx = e.freeRx[:n-1]
		return s
	}
	for e.doneLen > 0 {
		d := e.doneQ[e.doneHead]
		rf := &e.rflows[d.slot]
		if rf.done && rf.epoch == d.epoch && now-rf.last < e.evictAge {
			return -1 // the oldest completion is still too recent
		}
		e.doneHead = (e.doneHead + 1) % len(e.doneQ)
		e.doneLen--
		if !rf.done || rf.epoch != d.epoch {
			continue // restarted since: not a candidate
		}
		e.table.remove(rf.key)
		rf.used = false
		e.rc.Evicted++
		return d.slot
	}
	return -1
}

// initialSlots is the size the receiver's tables and the ring of pending
// flows start at.
const initialSlots = 16

// growRx makes n receiver slots (n > len(e.rflows)): the new ones free, the
// lowest taken first, and the flow table rehashed to stay at most half full.
// It allocates, at most log2(MaxRxFlows/16) times in an engine's life, when a
// new flow finds every slot taken: never in a steady state.
func (e *Engine) growRx(n int) {
	old := len(e.rflows)
	e.rflows = append(e.rflows, make([]recvFlow, n-old)...)
	free := make([]int32, len(e.freeRx), n)
	copy(free, e.freeRx)
	for i := n - 1; i >= old; i-- {
		free = append(free, int32(i))
	}
	e.freeRx = free
	if t := e.table; 2*n > len(t.keys) {
		e.table = newFlowTable(n)
		for i, v := range t.vals {
			if v != 0 {
				at, _ := e.table.find(t.keys[i])
				e.table.insertAt(at, t.keys[i], v-1)
			}
		}
	}
}

// growRing returns ring (a FIFO of n entries from head) as a ring of size
// entries from index 0, in the same order.
func growRing[T any](ring []T, head, n, size int) []T {
	out := make([]T, size)
	for i := 0; i < n; i++ {
		out[i] = ring[(head+i)%len(ring)]
	}
	return out
}

// markDone queues a completed receiver flow for eviction.
func (e *Engine) markDone(slot int32, epoch uint32) {
	if e.doneLen == len(e.doneQ) && len(e.doneQ) < e.maxRx {
		e.doneQ = growRing(e.doneQ, e.doneHead, e.doneLen, min(2*len(e.doneQ), e.maxRx))
		e.doneHead = 0
	}
	if e.doneLen == len(e.doneQ) {
		e.doneHead = (e.doneHead + 1) % len(e.doneQ)
		e.doneLen--
	}
	e.doneQ[(e.doneHead+e.doneLen)%len(e.doneQ)] = doneEntry{slot: slot, epoch: epoch}
	e.doneLen++
}

// fillEp addresses a control frame back to the sender of the data frame fr.
func (e *Engine) fillEp(ep *wire.Endpoints, fr *wire.Frame) {
	*ep = wire.Endpoints{
		DstMAC:  fr.Eth.Src(),
		SrcMAC:  e.r.mac,
		SrcIP:   e.r.ip,
		DstIP:   fr.IP.Src(),
		SrcPort: fr.UDP.SrcPort(),
		DSCP:    fr.IP.DSCP(),
		ICRC:    e.r.icrc,
	}
	if fr.Eth.HasVLAN() { // the data's 802.1Q tag, echoed
		ep.VLAN, ep.PCP, ep.VLANID = true, fr.Eth.PCP(), fr.Eth.VLANID()
	}
}

// BuildControl writes c into b and returns the frame length, 0 when b is too
// small (counted). Called by the side that owns b (the rx side in 2-lcore mode).
func (e *Engine) BuildControl(b []byte, c *Control) int {
	var n int
	var err error
	if c.Kind == CtlCNP {
		n, err = wire.BuildCNP(b, &c.Ep, c.Spec.DestQP)
	} else {
		n, err = wire.BuildAck(b, &c.Ep, &c.Spec, &c.Fields)
	}
	if err != nil {
		e.rc.BuildErrors++
		return 0
	}
	return n
}

// ---------------------------------------------------------------- tx side

// seqBytes is the byte offset of packet number pn of a QP.
func (e *Engine) seqBytes(s *sendQP, pn uint64) uint64 {
	b := pn * uint64(e.r.mtu)
	if s.size > 0 && b > s.size {
		return s.size
	}
	return b
}

// ChargeControl accounts a control frame of n bytes sent at now against the
// NIC's line rate (control frames are never held back by it).
func (e *Engine) ChargeControl(now int64, n int) {
	e.nic.Take(int64(n+phyOverhead), now)
	e.tc.ControlFrames++
	e.tc.ControlBytes += uint64(n)
}

// Service does the tx side's work due at now, other than sending data: it
// applies the events from the rx side (ACK, NAK, CNP, feedback, PFC) to the QPs
// and their RPs, runs due RP timers, starts due flows and workload arrivals,
// checks retransmission timeouts and takes rate samples. It returns the number
// of events and timers handled.
func (e *Engine) Service(now int64) int {
	n := 0
	for _, r := range e.evIn {
		for k := 0; k < 1024; k++ {
			ev := r.peek()
			if ev == nil {
				break
			}
			e.handleEvent(now, ev)
			r.pop()
			n++
		}
	}
	for e.timers.len() > 0 {
		qp, t := e.timers.top()
		if t > now {
			break
		}
		s := &e.qps[qp]
		e.timers.set(qp, ccalgo.Never)
		s.timer = ccalgo.Never
		if s.rp.NextTimer() <= now {
			s.rp.OnTimer(now)
		}
		e.syncRP(qp, s, now)
		n++
	}
	e.startFlows(now)
	if now >= e.nextSweep {
		e.sweepRTO(now)
		e.nextSweep = now + max(e.r.rto/4, 1)
	}
	if now >= e.nextSamp {
		e.sample(now)
	}
	return n
}

// postPause hands a pause of priority p until t to every engine's tx side: a
// pause stops the whole NIC's data of that priority.
func (e *Engine) postPause(t int64, p uint32) {
	for _, r := range e.evOut {
		if ev := r.slot(); ev != nil {
			ev.kind = evPause
			ev.t = t
			ev.qpn = p
			r.commit()
		} else {
			e.rc.EventsDropped++
		}
	}
}

// pausePriority holds the QPs of priority p until t (a pause of 0 quanta,
// t = now, releases them): the pause of a host whose flows use several
// priorities, each QP held until the later of its RP's halt and its
// priority's pause.
func (e *Engine) pausePriority(now int64, p uint8, t int64) {
	e.prioPause[p] = t
	for _, qp := range e.active {
		if s := &e.qps[qp]; s.prio == p {
			e.sched.HoldUntil(int(qp), max(s.halt, t), now)
		}
	}
}

// qpOf returns the active QP slot that qpn names, or -1.
func (e *Engine) qpOf(qpn uint32) int32 {
	slot := int32(qpn & (1<<e.slotBits - 1))
	if int(slot) >= len(e.qps) {
		return -1
	}
	s := &e.qps[slot]
	if !s.active || s.qpn != qpn {
		return -1
	}
	return slot
}

func (e *Engine) handleEvent(now int64, ev *event) {
	if ev.kind == evPause {
		e.tc.PauseFrames++
		if ps := e.r.prios; ps&(ps-1) != 0 {
			e.pausePriority(now, uint8(ev.qpn&7), ev.t)
			return
		}
		e.pause = ev.t
		return
	}
	qp := e.qpOf(ev.qpn)
	if qp < 0 {
		e.tc.StaleEvents++
		return
	}
	s := &e.qps[qp]
	// CNPs, ACKs and NAKs come from the flow's receiver.
	if e.r.trusted && ev.kind != evFeedback && ev.src != s.ep.DstIP {
		switch ev.kind {
		case evAck:
			e.tc.Refused.Ack++
		case evNak:
			e.tc.Refused.Nak++
		default:
			e.tc.Refused.CNP++
		}
		return
	}
	switch ev.kind {
	case evAck, evNak:
		e.onAck(now, qp, s, ev)
		return
	case evCNP:
		s.rp.OnCNP(now)
	case evFeedback:
		s.rp.OnFeedback(now, &ev.fb)
	}
	e.syncRP(qp, s, now)
}

func (e *Engine) onAck(now int64, qp int32, s *sendQP, ev *event) {
	nak := ev.kind == evNak
	pn := int64(s.sndUna) + signext24(ev.psn-uint32(s.sndUna))
	through := pn + 1 // ACK: every packet up to pn arrived
	if nak {
		through = pn // NAK: every packet below pn arrived; resend from pn
	}
	// A PSN-sequence-error NAK carries the PSN the responder expects next:
	// every packet below it arrived, and the requester resends from it, go
	// back N (InfiniBand Architecture Specification Vol. 1, Chapter 9,
	// reliable connected service; RoCEv2 per its Annex A17). A genuine one
	// names a packet sent and not yet acknowledged, in [snd_una, snd_max):
	// the responder saw a later packet, so it was sent.
	if through < 0 || uint64(through) > s.sndMax || ((nak || e.r.trusted) && uint64(through) < s.sndUna) ||
		(nak && e.r.trusted && uint64(through) == s.sndMax) {
		// Trusted, an ACK outside [snd_una, snd_max] or a NAK outside
		// [snd_una, snd_max) is refused: the receiver acknowledges in
		// order, on one path, so no ACK it sends falls behind one that
		// arrived before it.
		switch {
		case !e.r.trusted:
			e.tc.BadAcks++
		case nak:
			e.tc.Refused.Nak++
		default:
			e.tc.Refused.Ack++
		}
		return
	}
	th := uint64(through)
	if nak && e.r.trusted && th == s.backPSN && now < s.backUntil {
		// At most one go-back for a PSN per base RTT (Config.BaseRTTUs,
		// the configured base RTT, not a measured one: a forger cannot
		// stretch it): a second NAK for the PSN the QP just went back to
		// cannot have seen the resent packets yet. snd_una is already
		// at it (the first NAK acknowledged everything below), so
		// refusing it loses nothing.
		e.tc.Refused.NakRepeat++
		return
	}
	var newly int64
	if th > s.sndUna {
		newly = int64(e.seqBytes(s, th) - e.seqBytes(s, s.sndUna))
		s.sndUna = th
		s.progress = now
		s.rtoShift = 0
	}
	if s.sndNxt < s.sndUna {
		s.sndNxt = s.sndUna
	}
	if nak && th < s.sndNxt {
		s.sndNxt = th // go back N
		s.backPSN, s.backUntil = th, now+e.r.baseRTT
		e.tc.NakRewinds++
	}
	a := &ev.ack // the rx side filled a.Fields
	a.AckedSeq = e.seqBytes(s, s.sndUna)
	a.NewlyAcked = newly
	a.SndNxt = e.seqBytes(s, s.sndNxt)
	a.RTT = 0
	if ts := a.Fields.EchoTS; ts > 0 && now > ts {
		a.RTT = now - ts
	}
	if nak {
		s.rp.OnNak(now, a)
	} else {
		s.rp.OnAck(now, a)
	}
	if s.npkts > 0 && s.sndUna >= s.npkts {
		e.complete(now, qp, s)
		return
	}
	e.syncQueue(qp, s, now)
	e.syncRP(qp, s, now)
}

// queueOf is the QP's backlog and bytes in flight, as the scheduler keeps them.
func (e *Engine) queueOf(s *sendQP) (backlog, inflight int64) {
	una, nxt := e.seqBytes(s, s.sndUna), e.seqBytes(s, s.sndNxt)
	backlog = pacer.UnlimitedBacklog
	if s.size != 0 {
		backlog = int64(s.size - nxt)
	}
	return backlog, int64(nxt - una)
}

// syncQueue tells the scheduler the QP's bytes in flight and backlog (one
// update of its place).
func (e *Engine) syncQueue(qp int32, s *sendQP, now int64) {
	backlog, inflight := e.queueOf(s)
	e.sched.SetQueue(int(qp), backlog, inflight, now)
}

// syncRP copies the RP's rate, window, halt and timer to the pacer and the timer
// heap where they changed.
func (e *Engine) syncRP(qp int32, s *sendQP, now int64) {
	r := s.rp.RateBps()
	if !(r > 0) {
		r = 0
	}
	if s.capBps > 0 && s.capBps < r {
		r = s.capBps
	}
	if r > e.r.linkBps {
		r = e.r.linkBps
	}
	if r != s.rate {
		s.rate = r
		e.sched.SetRate(int(qp), r, now)
	}
	if w := s.rp.WindowBytes(); w != s.window {
		s.window = w
		e.sched.SetWindow(int(qp), w, now)
	}
	if h := s.rp.HaltUntil(); h != s.halt {
		s.halt = h
		if ps := e.r.prios; ps&(ps-1) != 0 {
			h = max(h, e.prioPause[s.prio]) // a PFC pause of its priority holds it too
		}
		e.sched.HoldUntil(int(qp), h, now)
	}
	if t := s.rp.NextTimer(); t != s.timer {
		s.timer = t
		e.timers.set(qp, t)
	}
}

// CanSend reports whether NextData would build a packet at now.
func (e *Engine) CanSend(now int64) bool {
	if now < e.pause {
		return false
	}
	e.nic.Advance(now)
	return e.nic.Eligible(now) && e.sched.NextEligible(now) <= now
}

// NextData builds into b the next data packet the pacer allows at now and
// returns its length, or 0 when no QP may send (paused by PFC, the line rate,
// every QP's rate, window, halt or backlog). The packet counts as sent: a caller
// that fails to transmit it counts a drop, and go-back-N recovers it.
func (e *Engine) NextData(now int64, b []byte) int {
	if now < e.pause {
		return 0
	}
	e.nic.Advance(now)
	if !e.nic.Eligible(now) {
		return 0
	}
	q, ok := e.sched.Next(now)
	if !ok {
		return 0
	}
	return e.send(now, int32(q), b)
}

// NextDataBurst builds up to len(bufs) data packets the pacer allows at now,
// the i-th into bufs[i] with its length in lens[i] (len(lens) >= len(bufs)),
// and returns how many it built: the packets, counters and pacer state of as
// many NextData calls at now, for one call (the PFC and NIC checks once, no
// call per packet into the caller). The packets count as sent, as NextData's.
func (e *Engine) NextDataBurst(now int64, bufs [][]byte, lens []int) int {
	if now < e.pause {
		return 0
	}
	e.nic.Advance(now)
	lens = lens[:len(bufs)]
	k := 0
	for k < len(bufs) && e.nic.Eligible(now) {
		q, ok := e.sched.Next(now)
		if !ok {
			break
		}
		n := e.send(now, int32(q), bufs[k])
		if n == 0 {
			break
		}
		lens[k] = n
		k++
	}
	return k
}

// send builds into b the next packet of QP qp, which the pacer picked at now,
// and returns its length (0 when b is too small, counted).
func (e *Engine) send(now int64, qp int32, b []byte) int {
	s := &e.qps[qp]
	pn := s.sndNxt
	payload := e.r.mtu
	if s.size > 0 {
		payload = int(min(uint64(payload), s.size-e.seqBytes(s, pn)))
	}
	last := s.npkts > 0 && pn == s.npkts-1
	var op uint8
	switch {
	case pn == 0 && last:
		op = wire.OpSendOnly
	case pn == 0:
		op = wire.OpSendFirst
	case last:
		op = wire.OpSendLast
	default:
		op = wire.OpSendMiddle
	}
	// The QP's template holds the headers BuildData would write for s.ep,
	// s.qpn and the INT choice.
	n, err := e.tmpls[qp].Build(b, s.ipID, op, uint32(pn)&psnMask, last, now, wire.DataHeaderLen+payload)
	if err != nil {
		e.tc.BuildErrors++
		return 0
	}
	s.ipID++
	if s.sndUna == s.sndNxt {
		s.progress = now // the retransmission timer starts with the first outstanding packet
	}
	e.nic.Take(int64(n+phyOverhead), now)
	if e.onSend {
		s.rp.OnSend(now, e.seqBytes(s, pn), payload)
	}
	if pn < s.sndMax {
		e.tc.RetxFrames++
	}
	s.sndNxt++
	s.sndMax = max(s.sndMax, s.sndNxt)
	e.tc.DataFrames++
	e.tc.DataBytes += uint64(n)
	e.tc.PayloadBytes += uint64(payload)
	// One scheduler update for the packet: the bucket pays n frame bytes (or,
	// with pacing jitter, n times a factor of mean 1), the backlog and bytes
	// in flight are the QP's own (payload) accounting.
	charge := int64(n)
	if j := e.r.cfg.PacingJitter; j > 0 && s.rate < e.r.linkBps {
		charge = int64(float64(n) * (1 + j*(2*e.jrng.Float64()-1)))
	}
	backlog, inflight := e.queueOf(s)
	e.sched.OnSentQueue(int(qp), charge, inflight, backlog, now)
	if e.onSend {
		// Without OnSend the RP is as the last syncRP left it.
		e.syncRP(qp, s, now)
	}
	return n
}

// NextWake is the earliest time the tx side has something to do, given no
// received frame: a send, a timer, a flow start, a sweep or a sample.
func (e *Engine) NextWake(now int64) int64 {
	t := min(e.nextSweep, e.nextSamp)
	if e.timers.len() > 0 {
		_, tt := e.timers.top()
		t = min(t, tt)
	}
	if e.startIdx < len(e.starts) {
		t = min(t, e.starts[e.startIdx].start)
	}
	for i := range e.wls {
		if w := &e.wls[i]; w.next < w.stop {
			t = min(t, w.next)
		}
	}
	if d := e.sched.NextEligible(now); d != pacer.Never {
		d = max(d, e.pause)
		e.nic.Advance(now)
		d = max(d, e.nic.ReadyAt(0))
		t = min(t, d)
	}
	return max(t, now)
}

func (e *Engine) startFlows(now int64) {
	for e.startIdx < len(e.starts) && e.starts[e.startIdx].start <= now {
		e.enqueue(&e.starts[e.startIdx])
		e.startIdx++
	}
	for i := range e.wls {
		w := &e.wls[i]
		for w.next <= now && w.next < w.stop && (w.maxFlow == 0 || w.count < w.maxFlow) {
			pf := e.arrival(w)
			e.enqueue(&pf)
		}
		if w.maxFlow > 0 && w.count >= w.maxFlow {
			w.next = ccalgo.Never
		}
	}
	for e.pendLen > 0 && e.canStart() {
		pf := &e.pending[e.pendHead]
		e.pendHead = (e.pendHead + 1) % len(e.pending)
		e.pendLen--
		e.tc.FlowsWaiting--
		e.startFlow(now, pf)
	}
}

// arrival draws workload w's next flow, due at w.next, and the arrival
// after it.
func (e *Engine) arrival(w *wlState) pendingFlow {
	spec := w.spec
	pf := pendingFlow{
		id:     int64(spec.cfg.IDBase) + w.count*int64(e.shards) + int64(e.shard),
		dst:    spec.dsts[e.rng.IntN(len(spec.dsts))],
		size:   spec.cdf.Sample(e.rng.Float64()),
		start:  w.next,
		capBps: w.capBps,
		prio:   w.prio,
	}
	w.count++
	w.next += max(int64(e.rng.ExpFloat64()*w.meanIv), 1)
	return pf
}

// Arrival is a flow a workload generated: its id, destination address,
// size, posting time (engine time, ns) and priority.
type Arrival struct {
	ID       int64
	Dst      uint32
	Size     int64
	StartNs  int64
	Priority uint8
}

// Arrivals draws the flows the engine's workloads generate before until,
// in the order a run posts them (arrival time, ties by workload), and calls
// fn on each: the same flows, with the same ids, as a run of a fresh
// engine, which draws each arrival when it is due (a virtual-time run; a
// DPDK loop that polls late may draw the arrivals of two workloads in
// another order). Call it on a fresh engine in place of running it: it
// takes the generators' state with it.
func (e *Engine) Arrivals(until int64, fn func(Arrival)) {
	for {
		var w *wlState
		for i := range e.wls {
			x := &e.wls[i]
			if x.next < until && x.next < x.stop && (x.maxFlow == 0 || x.count < x.maxFlow) && (w == nil || x.next < w.next) {
				w = x
			}
		}
		if w == nil {
			return
		}
		pf := e.arrival(w)
		fn(Arrival{ID: pf.id, Dst: pf.dst, Size: pf.size, StartNs: pf.start, Priority: pf.prio})
	}
}

func (e *Engine) enqueue(pf *pendingFlow) {
	if e.pendLen == len(e.pending) && len(e.pending) < e.maxPending {
		e.pending = growRing(e.pending, e.pendHead, e.pendLen, min(2*len(e.pending), e.maxPending))
		e.pendHead = 0
	}
	if e.pendLen == len(e.pending) {
		e.tc.PendingDropped++
		return
	}
	e.pending[(e.pendHead+e.pendLen)%len(e.pending)] = *pf
	e.pendLen++
	e.tc.FlowsWaiting++
}

// canStart reports whether a flow can have a QP now: a free one, or room to
// grow.
func (e *Engine) canStart() bool { return len(e.free) > 0 || len(e.qps) < e.maxQPs }

// growQPs makes n QP slots (n > len(e.qps)): each with its RP, free, the
// lowest taken first, as if all had been made at the start. It allocates, at
// most log2(MaxQPs/16) times in an engine's life, when a flow finds every QP
// in use.
func (e *Engine) growQPs(n int, now int64) error {
	old := len(e.qps)
	qps := append(e.qps, make([]sendQP, n-old)...)
	free := make([]int32, len(e.free), n)
	copy(free, e.free)
	for i := n - 1; i >= old; i-- {
		s := &qps[i]
		var err error
		if s.rp, err = e.r.scheme.NewRP(e.r.params, e.r.env); err != nil {
			return err
		}
		s.timer = ccalgo.Never
		s.actIdx = -1
		free = append(free, int32(i))
	}
	e.qps, e.free = qps, free
	if old > 0 {
		e.sched.Grow(n, now)
	}
	e.timers.grow(n)
	return nil
}

func (e *Engine) startFlow(now int64, pf *pendingFlow) {
	if len(e.free) == 0 {
		if e.growQPs(min(2*len(e.qps), e.maxQPs), now) != nil {
			e.maxQPs = len(e.qps) // the scheme's RP failed: no more QPs
			e.enqueue(pf)
			return
		}
	}
	qp := e.free[len(e.free)-1]
	e.free = e.free[:len(e.free)-1]
	s := &e.qps[qp]
	s.gen++
	// A QP number: generation, engine index (several engines), slot.
	base := uint32(e.shard)<<e.slotBits | uint32(qp)
	qpn := (s.gen<<e.genShift | base) & psnMask
	if qpn>>e.genShift == 0 { // generation wrapped: skip 0 so that QP number 0 is never used
		s.gen = 1
		qpn = (s.gen<<e.genShift | base) & psnMask
	}
	s.qpn = qpn
	if e.rpTmpl != nil {
		s.rp.(ccalgo.Resetter).ResetFrom(e.rpTmpl)
	} else {
		// The scheme's RP is not a ccalgo.Resetter: build a fresh one (allocates).
		rp, err := e.r.scheme.NewRP(e.r.params, e.r.env)
		if err == nil {
			s.rp = rp
		}
		e.tc.RPRebuilds++
	}
	s.active = true
	s.flowID = pf.id
	mac, ok := e.r.peers[pf.dst]
	if !ok {
		mac = e.r.gateway
	}
	s.ep = wire.Endpoints{DstMAC: mac, SrcMAC: e.r.mac, SrcIP: e.r.ip, DstIP: pf.dst,
		SrcPort: uint16(0xc000 | qpn&0x3fff), ICRC: e.r.icrc}
	s.prio = pf.prio
	if e.r.tagPrio {
		s.ep.DSCP = pf.prio << 3
	}
	if e.r.tagPCP {
		s.ep.VLAN, s.ep.PCP = true, pf.prio
	}
	if int(qp) >= len(e.tmpls) {
		// Templates for the slots in use only (slots are reused lowest
		// first), grown here (rarely: amortised).
		e.tmpls = slices.Grow(e.tmpls, int(qp)+1-len(e.tmpls))[:qp+1]
	}
	e.tmpls[qp].Init(&s.ep, qpn, e.r.intStack)
	s.ipID = 0
	s.size = uint64(pf.size)
	s.npkts = 0
	if pf.size > 0 {
		s.npkts = (s.size + uint64(e.r.mtu) - 1) / uint64(e.r.mtu)
	}
	s.sndNxt, s.sndUna, s.sndMax = 0, 0, 0
	s.capBps = pf.capBps
	s.start = pf.start
	s.progress = now
	s.rtoShift = 0
	s.backPSN, s.backUntil = 0, 0
	s.sampled = 0
	s.window = ccalgo.NoWindow
	s.halt = 0
	s.timer = ccalgo.Never
	s.rate = e.r.linkBps
	e.sched.Reset(int(qp), s.rate, e.r.burst, now)
	if t := e.prioPause[s.prio]; t > now {
		e.sched.HoldUntil(int(qp), t, now) // its priority is paused
	}
	s.actIdx = int32(len(e.active))
	e.active = append(e.active, qp)
	e.tc.FlowsStarted++
	e.syncRP(qp, s, now)
	e.syncQueue(qp, s, now)
}

func (e *Engine) complete(now int64, qp int32, s *sendQP) {
	e.tc.FlowsCompleted++
	if len(e.fcts) < e.r.cfg.MaxFCTs {
		ov := dataOverhead + phyOverhead + vlanLen(e.r.tagPCP)
		if e.r.intStack {
			ov += wire.INTLen
		}
		bitsOnWire := float64(s.size+s.npkts*uint64(ov)) * 8
		e.fcts = append(e.fcts, FCT{
			Flow:      s.flowID,
			Dst:       s.ep.DstIP,
			SizeBytes: int64(s.size),
			StartNs:   s.start,
			FCTNs:     now - s.start,
			IdealNs:   e.r.baseRTT + int64(math.Ceil(bitsOnWire*1e9/e.r.linkBps)),
		})
	} else {
		e.tc.FCTsDropped++
	}
	// Its last row is that of the period it completed in, which ends at the
	// next sample (or now, when that sample is due and not yet taken): the
	// bytes acknowledged since the last sample over the part of the period
	// up to now would be a rate over a sliver of time, up to a whole frame
	// in a nanosecond.
	e.addSample(max(now, e.nextSamp), s)
	s.active = false
	e.sched.Reset(int(qp), e.r.linkBps, e.r.burst, now)
	e.timers.set(qp, ccalgo.Never)
	s.timer = ccalgo.Never
	// Swap-remove from the active list.
	i := s.actIdx
	lastQP := e.active[len(e.active)-1]
	e.active[i] = lastQP
	e.qps[lastQP].actIdx = i
	e.active = e.active[:len(e.active)-1]
	s.actIdx = -1
	e.free = append(e.free, qp)
}

// sweepRTO goes back to snd_una on every QP with packets outstanding and no
// progress for the RTO.
// maxRTOShift bounds the retransmission timeout's backoff at 64 x rto_us.
const maxRTOShift = 6

func (e *Engine) sweepRTO(now int64) {
	for _, qp := range e.active {
		s := &e.qps[qp]
		if s.sndUna < s.sndMax && now-s.progress >= e.r.rto<<s.rtoShift {
			e.tc.Timeouts++
			s.sndNxt = s.sndUna
			s.progress = now
			if s.rtoShift < maxRTOShift {
				s.rtoShift++
			}
			e.syncQueue(qp, s, now)
		}
	}
}

// addSample appends flow s's row for the sample period that ends at end (it
// began at the previous sample, lastSamp): the payload newly acknowledged
// since the flow's previous row, and its rate over the whole period.
func (e *Engine) addSample(end int64, s *sendQP) {
	acked := e.seqBytes(s, s.sndUna)
	if len(e.samples) >= e.r.maxSamples {
		e.tc.SamplesDropped++
		return
	}
	bytes := int64(acked - s.sampled)
	e.samples = append(e.samples, RateSample{T: end, Flow: s.flowID, Bytes: bytes,
		Gbps: float64(bytes) * 8 / float64(end-e.lastSamp), RateGbps: s.rate / 1e9, Window: s.window})
	s.sampled = acked
}

func (e *Engine) sample(now int64) {
	for _, qp := range e.active {
		e.addSample(now, &e.qps[qp])
	}
	e.lastSamp = now
	e.nextSamp += e.r.sampleNs
	if e.nextSamp <= now {
		e.nextSamp = now + e.r.sampleNs
	}
}

// ---------------------------------------------------------------- results

// Samples is the per-flow rate time series recorded so far (tx side: read it
// when the loops have stopped).
func (e *Engine) Samples() []RateSample { return e.samples }

// FCTs are the completed messages so far (tx side).
func (e *Engine) FCTs() []FCT { return e.fcts }

// TakeResults hands fn the rate samples and FCT records recorded since the
// previous TakeResults (all of them the first time) and forgets them, so
// that a driver that streams its results (fabric.Virtual.StreamResults)
// holds the samples of a drain period, not of the run; MaxSamples and
// MaxFCTs then bound the rows between two calls. The slices are valid
// until the engine runs again. Call it between the engine's runs; it
// allocates nothing.
func (e *Engine) TakeResults(fn func(samples []RateSample, fcts []FCT)) {
	fn(e.samples, e.fcts)
	e.samples, e.fcts = e.samples[:0], e.fcts[:0]
}

// RxFlows is what the receiver measured of each incoming flow (rx side).
func (e *Engine) RxFlows() []RxFlow {
	var out []RxFlow
	for i := range e.rflows {
		rf := &e.rflows[i]
		if !rf.used {
			continue
		}
		out = append(out, RxFlow{SrcIP: rf.srcIP, QPN: rf.qpn, Bytes: rf.bytes, Frames: rf.frames,
			FrameBytes: rf.frameBytes, FirstNs: rf.first, LastNs: rf.last, Messages: rf.msn,
			FirstSendNs: rf.firstTS, LastSendNs: rf.lastTS})
	}
	return out
}

// FlowState is a snapshot of one active sender flow.
type FlowState struct {
	Flow       int64
	QPN        uint32
	SizeBytes  int64
	AckedBytes int64
	SentBytes  int64
	RateBps    float64 // pacing rate in force: min(RP, cap, line rate)
	Window     int64
}

// ActiveFlows returns the sender flows in progress (tx side).
func (e *Engine) ActiveFlows() []FlowState {
	out := make([]FlowState, 0, len(e.active))
	for _, qp := range e.active {
		s := &e.qps[qp]
		out = append(out, FlowState{Flow: s.flowID, QPN: s.qpn, SizeBytes: int64(s.size),
			AckedBytes: int64(e.seqBytes(s, s.sndUna)), SentBytes: int64(e.seqBytes(s, s.sndMax)),
			RateBps: s.rate, Window: s.window})
	}
	return out
}

// RP returns the reaction point of the active flow with id flow, or nil (tx side;
// for tests and telemetry).
func (e *Engine) RP(flow int64) ccalgo.ReactionPoint {
	for _, qp := range e.active {
		if s := &e.qps[qp]; s.flowID == flow {
			return s.rp
		}
	}
	return nil
}

// Counters returns the engine's counters (read when the loops have stopped, or
// accept a slightly torn snapshot).
func (e *Engine) Counters() (RxCounters, TxCounters) { return e.rc, e.tc }

// Refused is every control frame the engine refused under trust "topology",
// by kind: the receive side's and the send side's (read as Counters).
func (e *Engine) Refused() Refusals {
	r := e.rc.Refused
	r.Add(&e.tc.Refused)
	return r
}
