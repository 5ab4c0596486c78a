package hostd

import (
	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// initFlows lays out the sender's flows: the static and incast flows by start
// time and the workload generators, of this engine's share (sh) of its
// host's, their streams seeded from the run's seed.
func (tx *sender) initFlows(now int64, sh shardSpec) {
	r := tx.r
	// Static and incast flows, by start time (stable: config order on ties).
	for i, f := range r.flows {
		tx.starts = append(tx.starts, pendingFlow{id: int64(f.ID), dst: r.flowDst[i], size: f.SizeBytes,
			start: now + f.StartNs, capBps: f.RateGbps * 1e9, prio: r.priority(f.Priority)})
	}
	for i, g := range r.incast {
		id := int64(g.IDBase)
		for k := 0; k < g.Repeat; k++ {
			t := now + g.StartNs + int64(k)*g.PeriodNs
			for j := 0; j < g.Flows; j++ {
				tx.starts = append(tx.starts, pendingFlow{id: id, dst: r.incastDst[i], size: g.SizeBytes,
					start: t, capBps: g.RateGbps * 1e9, prio: r.priority(g.Priority)})
				id++
			}
		}
	}
	if n := sh.count; n > 1 {
		// This engine's share: every n-th flow, in config order.
		mine := tx.starts[:0]
		for i, pf := range tx.starts {
			if i%n == sh.index {
				mine = append(mine, pf)
			}
		}
		tx.starts = mine
	}
	sort.SliceStable(tx.starts, func(i, j int) bool { return tx.starts[i].start < tx.starts[j].start })
	tx.maxPending = r.cfg.MaxPending
	tx.pending = make([]pendingFlow, min(r.cfg.MaxPending, initialSlots))
	// Engine 0 of several draws the streams of a host run as one engine;
	// the others, streams of their own.
	ss := uint64(sh.index) << 40
	tx.rng = rand.New(rand.NewPCG(r.seed, 0x9e3779b97f4a7c15^uint64(r.ip)^ss))
	tx.jrng = rand.New(rand.NewPCG(r.seed^0x6a09e667f3bcc908, uint64(r.ip)^ss))
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
		ws.next = now + w.cfg.StartNs + int64(tx.rng.ExpFloat64()*ws.meanIv)
		if w.cfg.StopNs > 0 {
			ws.stop = now + w.cfg.StopNs
		}
		tx.wls = append(tx.wls, ws)
	}
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

func (tx *sender) startFlows(now int64) {
	for tx.startIdx < len(tx.starts) && tx.starts[tx.startIdx].start <= now {
		tx.enqueue(&tx.starts[tx.startIdx])
		tx.startIdx++
	}
	for i := range tx.wls {
		w := &tx.wls[i]
		for w.next <= now && w.next < w.stop && (w.maxFlow == 0 || w.count < w.maxFlow) {
			pf := tx.arrival(w)
			tx.enqueue(&pf)
		}
		if w.maxFlow > 0 && w.count >= w.maxFlow {
			w.next = ccalgo.Never
		}
	}
	for tx.pendLen > 0 && tx.canStart() {
		pf := &tx.pending[tx.pendHead]
		tx.pendHead = (tx.pendHead + 1) % len(tx.pending)
		tx.pendLen--
		tx.tc.FlowsWaiting--
		tx.startFlow(now, pf)
	}
}

// arrival draws workload w's next flow, due at w.next, and the arrival
// after it.
func (tx *sender) arrival(w *wlState) pendingFlow {
	spec := w.spec
	pf := pendingFlow{
		id:     int64(spec.cfg.IDBase) + w.count*int64(tx.shards) + int64(tx.shard),
		dst:    spec.dsts[tx.rng.IntN(len(spec.dsts))],
		size:   spec.cdf.Sample(tx.rng.Float64()),
		start:  w.next,
		capBps: w.capBps,
		prio:   w.prio,
	}
	w.count++
	w.next += max(int64(tx.rng.ExpFloat64()*w.meanIv), 1)
	return pf
}

// otherDsts returns dsts without self, the sending host's own address: a
// host draws no flow to itself (as the HPCC simulator's generators do not,
// and as ns-3's flow.txt cannot hold). It returns dsts itself when self is
// not in it, else a new slice (dsts may be shared by several hosts).
func otherDsts(dsts []uint32, self uint32) []uint32 {
	if !slices.Contains(dsts, self) {
		return dsts
	}
	out := make([]uint32, 0, len(dsts)-1)
	for _, d := range dsts {
		if d != self {
			out = append(out, d)
		}
	}
	return out
}

// FlowLabel is Linux's rdma_calc_flow_label (include/rdma/ib_verbs.h): the
// 20-bit flow label of a connection between local and remote QP numbers
// lqpn and rqpn, the same from either end.
func FlowLabel(lqpn, rqpn uint32) uint32 {
	fl := uint64(lqpn) * uint64(rqpn)
	fl ^= fl >> 20
	fl ^= fl >> 40
	return uint32(fl & 0xfffff)
}

// FlowLabelSrcPort is Linux's rdma_flow_label_to_udp_sport: the RoCEv2 UDP
// source port, 0xc000-0xffff, of flow label fl (its low 14 bits xor its
// high 6).
func FlowLabelSrcPort(fl uint32) uint16 {
	lo, hi := fl&0x3fff, fl&0xfc000
	lo ^= hi >> 14
	return uint16(lo | 0xc000)
}

// NICQPN is the number the NIC of the host at address ip would have given
// QP qpn: ccbed numbers a flow's QP the same at both ends and alike on
// every host (from slot 0 up), where real NICs draw each end's QP number
// from the device's own pool. The rule: qpn plus a 24-bit Fibonacci hash of
// the address, mod 2^24.
func NICQPN(ip, qpn uint32) uint32 { return (qpn + (ip*0x9e3779b1)>>8) & 0xffffff }

// QPSrcPort is the UDP source port of QP qpn from src to dst, as Linux's
// RoCE stack picks it (rdma_get_udp_sport): FlowLabelSrcPort of FlowLabel
// of the two ends' NICQPN numbers. It differs from flow to flow and host to
// host, so that ECMP, which hashes on it, spreads QPs over paths; it is the
// same for both directions (the receiver echoes it).
func QPSrcPort(src, dst, qpn uint32) uint16 {
	return FlowLabelSrcPort(FlowLabel(NICQPN(src, qpn), NICQPN(dst, qpn)))
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
func (tx *sender) Arrivals(until int64, fn func(Arrival)) {
	for {
		var w *wlState
		for i := range tx.wls {
			x := &tx.wls[i]
			if x.next < until && x.next < x.stop && (x.maxFlow == 0 || x.count < x.maxFlow) && (w == nil || x.next < w.next) {
				w = x
			}
		}
		if w == nil {
			return
		}
		pf := tx.arrival(w)
		fn(Arrival{ID: pf.id, Dst: pf.dst, Size: pf.size, StartNs: pf.start, Priority: pf.prio})
	}
}

func (tx *sender) enqueue(pf *pendingFlow) {
	if tx.pendLen == len(tx.pending) && len(tx.pending) < tx.maxPending {
		tx.pending = growRing(tx.pending, tx.pendHead, tx.pendLen, min(2*len(tx.pending), tx.maxPending))
		tx.pendHead = 0
	}
	if tx.pendLen == len(tx.pending) {
		tx.tc.PendingDropped++
		return
	}
	tx.pending[(tx.pendHead+tx.pendLen)%len(tx.pending)] = *pf
	tx.pendLen++
	tx.tc.FlowsWaiting++
}

// canStart reports whether a flow can have a QP now: a free one, or room to
// grow.
func (tx *sender) canStart() bool { return len(tx.free) > 0 || len(tx.qps) < tx.maxQPs }

// growQPs makes n QP slots (n > len(tx.qps)): each with its RP, free, the
// lowest taken first, as if all had been made at the start. It allocates, at
// most log2(MaxQPs/16) times in an engine's life, when a flow finds every QP
// in use.
func (tx *sender) growQPs(n int, now int64) error {
	old := len(tx.qps)
	qps := append(tx.qps, make([]sendQP, n-old)...)
	free := make([]int32, len(tx.free), n)
	copy(free, tx.free)
	for i := n - 1; i >= old; i-- {
		s := &qps[i]
		var err error
		if s.rp, err = tx.r.scheme.NewRP(tx.r.params, tx.r.env); err != nil {
			return err
		}
		s.timer = ccalgo.Never
		s.actIdx = -1
		free = append(free, int32(i))
	}
	tx.qps, tx.free = qps, free
	if old > 0 {
		tx.sched.Grow(n, now)
	}
	tx.timers.grow(n)
	return nil
}

func (tx *sender) startFlow(now int64, pf *pendingFlow) {
	if len(tx.free) == 0 {
		if tx.growQPs(min(2*len(tx.qps), tx.maxQPs), now) != nil {
			tx.maxQPs = len(tx.qps) // the scheme's RP failed: no more QPs
			tx.enqueue(pf)
			return
		}
	}
	qp := tx.free[len(tx.free)-1]
	tx.free = tx.free[:len(tx.free)-1]
	s := &tx.qps[qp]
	s.gen++
	// A QP number: generation, engine index (several engines), slot.
	base := uint32(tx.shard)<<tx.slotBits | uint32(qp)
	qpn := (s.gen<<tx.genShift | base) & psnMask
	if qpn>>tx.genShift == 0 { // generation wrapped: skip 0 so that QP number 0 is never used
		s.gen = 1
		qpn = (s.gen<<tx.genShift | base) & psnMask
	}
	s.qpn = qpn
	if tx.rpTmpl == nil || !s.rp.(ccalgo.Resetter).ResetFrom(tx.rpTmpl) {
		// The scheme's RP is not a ccalgo.Resetter of its own type (a
		// wrapper around one): build a fresh one (allocates).
		rp, err := tx.r.scheme.NewRP(tx.r.params, tx.r.env)
		if err == nil {
			s.rp = rp
		}
		tx.tc.RPRebuilds++
	}
	s.active = true
	s.flowID = pf.id
	mac, ok := tx.r.peers[pf.dst]
	if !ok {
		mac = tx.r.gateway
	}
	s.ep = wire.Endpoints{DstMAC: mac, SrcMAC: tx.r.mac, SrcIP: tx.r.ip, DstIP: pf.dst,
		SrcPort: QPSrcPort(tx.r.ip, pf.dst, qpn), ICRC: tx.r.icrc}
	s.prio = pf.prio
	if tx.r.tagPrio {
		s.ep.DSCP = pf.prio << 3
	}
	if tx.r.tagPCP {
		s.ep.VLAN, s.ep.PCP = true, pf.prio
	}
	if int(qp) >= len(tx.tmpls) {
		// Templates for the slots in use only (slots are reused lowest
		// first), grown here (rarely: amortised).
		tx.tmpls = slices.Grow(tx.tmpls, int(qp)+1-len(tx.tmpls))[:qp+1]
	}
	tx.tmpls[qp].Init(&s.ep, qpn, tx.r.intStack)
	tx.tmpls[qp].LeaveICRC(tx.leaveICRC)
	s.ipID = 0
	s.size = uint64(pf.size)
	s.npkts = 0
	if pf.size > 0 {
		s.npkts = (s.size + uint64(tx.r.mtu) - 1) / uint64(tx.r.mtu)
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
	s.rate = tx.r.linkBps
	tx.sched.Reset(int(qp), s.rate, tx.r.burst, now)
	if t := tx.prioPause[s.prio]; t > now {
		tx.sched.HoldUntil(int(qp), t, now) // its priority is paused
	}
	s.actIdx = int32(len(tx.active))
	tx.active = append(tx.active, qp)
	tx.tc.FlowsStarted++
	tx.syncRP(qp, s, now)
	tx.syncQueue(qp, s, now)
}

func (tx *sender) complete(now int64, qp int32, s *sendQP) {
	tx.tc.FlowsCompleted++
	if len(tx.fcts) < tx.r.cfg.MaxFCTs {
		ov := dataOverhead + phyOverhead + vlanLen(tx.r.tagPCP)
		if tx.r.intStack {
			ov += wire.INTLen
		}
		bitsOnWire := float64(s.size+s.npkts*uint64(ov)) * 8
		tx.fcts = append(tx.fcts, FCT{
			Flow:      s.flowID,
			Dst:       s.ep.DstIP,
			SizeBytes: int64(s.size),
			StartNs:   s.start,
			FCTNs:     now - s.start,
			IdealNs:   tx.r.baseRTT + int64(math.Ceil(bitsOnWire*1e9/tx.r.linkBps)),
			Priority:  s.prio,
		})
	} else {
		tx.tc.FCTsDropped++
	}
	// Its last row is that of the period it completed in, which ends at the
	// next sample (or now, when that sample is due and not yet taken): the
	// bytes acknowledged since the last sample over the part of the period
	// up to now would be a rate over a sliver of time, up to a whole frame
	// in a nanosecond.
	tx.addSample(max(now, tx.nextSamp), s)
	s.active = false
	tx.sched.Reset(int(qp), tx.r.linkBps, tx.r.burst, now)
	tx.timers.set(qp, ccalgo.Never)
	s.timer = ccalgo.Never
	// Swap-remove from the active list.
	i := s.actIdx
	lastQP := tx.active[len(tx.active)-1]
	tx.active[i] = lastQP
	tx.qps[lastQP].actIdx = i
	tx.active = tx.active[:len(tx.active)-1]
	s.actIdx = -1
	tx.free = append(tx.free, qp)
}

// addSample appends flow s's row for the sample period that ends at end (it
// began at the previous sample, lastSamp): the payload newly acknowledged
// since the flow's previous row, and its rate over the whole period.
func (tx *sender) addSample(end int64, s *sendQP) {
	acked := tx.seqBytes(s, s.sndUna)
	if len(tx.samples) >= tx.r.maxSamples {
		tx.tc.SamplesDropped++
		return
	}
	bytes := int64(acked - s.sampled)
	tx.samples = append(tx.samples, RateSample{T: end, Flow: s.flowID, Bytes: bytes,
		Gbps: float64(bytes) * 8 / float64(end-tx.lastSamp), RateGbps: s.rate / 1e9, Window: s.window})
	s.sampled = acked
}

func (tx *sender) sample(now int64) {
	for _, qp := range tx.active {
		tx.addSample(now, &tx.qps[qp])
	}
	tx.lastSamp = now
	tx.nextSamp += tx.r.sampleNs
	if tx.nextSamp <= now {
		tx.nextSamp = now + tx.r.sampleNs
	}
}

// Samples is the per-flow rate time series recorded so far (tx side: read it
// when the loops have stopped).
func (tx *sender) Samples() []RateSample { return tx.samples }

// FCTs are the completed messages so far (tx side).
func (tx *sender) FCTs() []FCT { return tx.fcts }

// TakeResults hands fn the rate samples and FCT records recorded since the
// previous TakeResults (all of them the first time) and forgets them, so
// that a driver that streams its results (fabric.Virtual.StreamResults)
// holds the samples of a drain period, not of the run; MaxSamples and
// MaxFCTs then bound the rows between two calls. The slices are valid
// until the engine runs again. Call it between the engine's runs; it
// allocates nothing.
func (tx *sender) TakeResults(fn func(samples []RateSample, fcts []FCT)) {
	fn(tx.samples, tx.fcts)
	tx.samples, tx.fcts = tx.samples[:0], tx.fcts[:0]
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
func (tx *sender) ActiveFlows() []FlowState {
	out := make([]FlowState, 0, len(tx.active))
	for _, qp := range tx.active {
		s := &tx.qps[qp]
		out = append(out, FlowState{Flow: s.flowID, QPN: s.qpn, SizeBytes: int64(s.size),
			AckedBytes: int64(tx.seqBytes(s, s.sndUna)), SentBytes: int64(tx.seqBytes(s, s.sndMax)),
			RateBps: s.rate, Window: s.window})
	}
	return out
}

// RP returns the reaction point of the active flow with id flow, or nil (tx side;
// for tests and telemetry).
func (tx *sender) RP(flow int64) ccalgo.ReactionPoint {
	for _, qp := range tx.active {
		if s := &tx.qps[qp]; s.flowID == flow {
			return s.rp
		}
	}
	return nil
}
