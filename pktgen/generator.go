// Package pktgen is ccbed's pktgen-like traffic blaster for raw throughput
// tests: it sends on one or more ports at line rate or a set rate, a fixed
// frame size or a size mix, cycling through N flows that vary UDP ports, IP
// addresses or the RoCEv2 destination QP, or pacing each flow at a rate of
// its own ([[ports.flow]]: one token bucket a flow, interleaved in one loop
// by the earliest eligible flow, flowsched.go), for a duration or a packet
// count, and optionally receives, counting loss from sequence numbers and
// latency from the timestamps it embeds.
//
// Where it sits: the engine (Generator, Receiver, Histogram) is pure Go: it
// builds and parses frames as byte slices, takes the time (ns) as an argument and
// never reads a clock, so it is tested in virtual time. The adapter (Blaster, in
// blaster.go) connects it to mbufs, ports and lcores: its TxPort.Poll and
// RxPort.Poll have the func(now int64) int shape the testbed polls from its own
// lcore loops. On an ethdev queue a TxPort has the frames built and sent by
// dpdk.TxGen, the same per-packet work in C, one cgo call a burst (txfast.go);
// the loop, the rates, the flows' picks and the counters stay the Generator's.
// cmd/pktgen is the thin main with live stats.
//
// Packet layout. Every packet carries a 16-byte pktgen header:
//
//	0 magic 0xCCB0 (2)   2 tag (2)   4 sequence, low 32 bits (4)   8 send time, ns (8)
//
// The tag's low 6 bits are the stream, its high 10 bits the flow's id: flow
// i + 1 for the first MaxFlowStats flows, 0 for the others (a receiver
// tracks flows by it: Receiver.Flows).
//
// proto "udp": Ethernet / IPv4 / UDP / pktgen header / payload (60 bytes minimum,
// the header starts at byte 42). proto "roce": Ethernet / IPv4 (ECT(0)) / UDP
// 4791 / BTH (SEND Only, PSN = sequence mod 2^24) / ccbed DataHeader (send time)
// / pktgen header / payload / ICRC (zero: not computed), built by
// wire.BuildData (82 bytes minimum, header at byte 62), so that switchd and
// hostd see ordinary ccbed data packets. The stream is the index of the sending
// port in the Blaster's configuration. Frames are untagged; payload bytes after
// the header are left as the mbuf had them (not zeroed, as in pktgen-dpdk).
//
// Templates are built once per frame size; the per-packet work is a copy of the
// header bytes and patches of the flow fields, the IPv4 checksum (from
// precomputed partial sums), the sequence number and the timestamp.
package pktgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ccbed/ccbed/wire"
)

// Header constants.
const (
	// Magic opens the pktgen header.
	Magic = 0xCCB0
	// HeaderLen is the pktgen header's length.
	HeaderLen = 16
	// MaxStreams bounds the stream ids (ports) a Receiver tracks: the tag's
	// low streamBits bits.
	MaxStreams = 1 << streamBits
	streamBits = 6
	// MaxFlowStats bounds the flows of a stream that carry a flow id (the
	// tag's high 10 bits, 1..MaxFlowStats) and so the flows a port's live
	// per-flow stats can track (flow_stats).
	MaxFlowStats = 1<<(16-streamBits) - 1
	// MaxFlows bounds the flows of one stream.
	MaxFlows = 1 << 16

	udpHdrOff  = wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen                                    // 42
	roceHdrOff = wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + wire.DataHeaderLen // 62
	ipOff      = wire.EthernetLen
	udpOff     = wire.EthernetLen + wire.IPv4MinLen
	bthOff     = udpOff + wire.UDPLen
	maxSched   = 4096
)

func minFrame(roce bool) int {
	if roce {
		return roceHdrOff + HeaderLen + wire.ICRCLen
	}
	return MinFrameLen
}

// ErrBufTooSmall is returned (as a zero length) when Build gets a buffer shorter
// than the next frame; the adapter checks the pool's room up front.
var ErrBufTooSmall = errors.New("pktgen: buffer smaller than frame")

type flowFields struct {
	srcIP, dstIP     uint32
	srcPort, dstPort uint16
	destQP           uint32
	ipSum            uint32 // ones' complement partial sum of the four address words
	tag              uint16 // the pktgen header's stream and flow id
}

type sizeClass struct {
	size  int
	tmpl  []byte // the frame's first hdrEnd bytes
	ipSum uint32 // partial sum of the IPv4 header without addresses and checksum
	cost  int64  // token cost, in rate units times 1e9
}

// GenStats are a Generator's counters.
type GenStats struct {
	Packets uint64 // frames built
	Bytes   uint64 // their bytes (without FCS)
}

// Generator builds one stream's frames at its rate: Grant says how many may leave
// now, Build writes each into a buffer. It is owned by one lcore.
type Generator struct {
	stream uint16
	roce   bool
	hdrOff int
	hdrEnd int

	classes []sizeClass
	sched   []uint16 // class of each packet, repeating
	pos     int
	flows   []flowFields
	flow    int // next flow when cycling
	seq     uint64
	// perFlow paces the flows by their own rates (nil: they take turns).
	perFlow *flowScheduler
	// cyc counts the first tracked flows' frames when the flows take turns
	// through a size mix (nil otherwise: FlowCount derives them from the
	// totals).
	cyc []FlowStat
	// shape modulates the rate over time ([ports.shape]; nil: constant).
	shape *shaper
	// replay is a replay's recorded timing (nil: none; replay.go).
	replay *replayTiming

	// Token bucket in units of (bits or packets) x 1e9, refilled by rate units
	// per second of the time argument: exact integer arithmetic, no drift.
	limited   bool
	perPacket bool // the rate counts packets (rate_mpps), not bits
	rate      int64
	tokens    int64
	depth     int64
	last      int64

	started  bool
	start    int64
	duration int64 // ns; 0 none
	count    uint64

	stats GenStats
}

// NewGenerator builds stream's templates and schedule from p (validated or
// not: it validates). durationNs stops the stream that long after its first
// Grant (0: no limit).
func NewGenerator(stream int, p *PortConfig, durationNs int64) (*Generator, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if stream < 0 || stream >= MaxStreams {
		return nil, fmt.Errorf("stream %d out of range 0..%d", stream, MaxStreams-1)
	}
	g := &Generator{stream: uint16(stream), roce: p.Proto == "roce", duration: durationNs, count: p.Count}
	g.hdrOff = udpHdrOff
	if g.roce {
		g.hdrOff = roceHdrOff
	}
	g.hdrEnd = g.hdrOff + HeaderLen
	ep, _ := p.endpoints()
	mix, _ := p.SizeMix()

	g.setRate(p)
	maxCost := int64(0)
	for _, sw := range mix {
		c := sizeClass{size: sw.Size, tmpl: make([]byte, sw.Size)}
		if err := g.buildTemplate(c.tmpl, &ep, p); err != nil {
			return nil, err
		}
		c.tmpl = c.tmpl[:g.hdrEnd]
		ip := c.tmpl[ipOff : ipOff+wire.IPv4MinLen]
		c.ipSum = sum16(ip[:10], 0) // addresses (12..20) and checksum (10..12) are per flow
		c.cost = 1e9
		if p.RateGbps > 0 {
			c.cost = int64(sw.Size+L1Overhead) * 8 * 1e9
		}
		maxCost = max(maxCost, c.cost)
		g.classes = append(g.classes, c)
	}
	g.sched = smoothSchedule(mix)
	bucket := p.BucketPackets
	if bucket == 0 {
		bucket = p.Burst
		if bucket == 0 {
			bucket = DefaultBurst
		}
	}
	g.depth = int64(bucket) * maxCost
	if g.limited {
		g.shape = newShaper(&p.Shape, g.perPacket, g.depth, g.rate)
	}

	nflows := p.NumFlows()
	destQP := p.DestQP
	if destQP == 0 {
		destQP = 1
	}
	g.flows = make([]flowFields, nflows)
	for i := range g.flows {
		g.flows[i] = flowFields{srcIP: ep.SrcIP, dstIP: ep.DstIP, srcPort: ep.SrcPort, dstPort: ep.DstPort, destQP: destQP}
	}
	plan, _ := p.plan() // validated above
	for k, v := range plan {
		if v == nil {
			continue
		}
		switch fieldSpecs[k].name {
		case "src_port":
			v.fill(k, uint64(ep.SrcPort), nflows, func(i int, x uint64) { g.flows[i].srcPort = uint16(x) })
		case "dst_port":
			v.fill(k, uint64(ep.DstPort), nflows, func(i int, x uint64) { g.flows[i].dstPort = uint16(x) })
		case "src_ip":
			v.fill(k, uint64(ep.SrcIP), nflows, func(i int, x uint64) { g.flows[i].srcIP = uint32(x) })
		case "dst_ip":
			v.fill(k, uint64(ep.DstIP), nflows, func(i int, x uint64) { g.flows[i].dstIP = uint32(x) })
		case "dest_qp":
			v.fill(k, uint64(destQP), nflows, func(i int, x uint64) { g.flows[i].destQP = uint32(x) })
		}
	}
	for i := range g.flows {
		f := &g.flows[i]
		f.ipSum = f.srcIP>>16 + f.srcIP&0xffff + f.dstIP>>16 + f.dstIP&0xffff
		f.tag = flowTag(stream, i)
	}
	if p.perFlowRates() {
		fs, err := newFlowScheduler(p.Flow, g.MaxSize(), bucket, MaxBurst)
		if err != nil {
			return nil, err
		}
		g.perFlow = fs
	} else if n := min(p.TrackedFlows(), nflows); n > 0 && nflows > 1 && len(g.classes) > 1 {
		g.cyc = make([]FlowStat, n)
	}
	return g, nil
}

// setRate sets the token bucket's rate from the port's rate_gbps (bits a
// second) or rate_mpps (packets a second); neither: unlimited.
func (g *Generator) setRate(p *PortConfig) {
	switch {
	case p.RateGbps > 0:
		g.limited, g.rate = true, int64(math.Round(p.RateGbps*1e9))
	case p.RateMpps > 0:
		g.limited, g.perPacket, g.rate = true, true, int64(math.Round(p.RateMpps*1e6))
	}
}

// flowTag is the pktgen header's tag of flow i of stream: the stream in the
// low bits, i+1 above them for the first MaxFlowStats flows (0: no id).
func flowTag(stream, i int) uint16 {
	id := 0
	if i < MaxFlowStats {
		id = i + 1
	}
	return uint16(id<<streamBits | stream)
}

// buildTemplate writes a whole frame of len(b) bytes for the base flow.
func (g *Generator) buildTemplate(b []byte, ep *wire.Endpoints, p *PortConfig) error {
	if g.roce {
		d := wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: 1,
			PayloadLen: len(b) - bthOff - wire.BTHLen - wire.ICRCLen}
		n, err := wire.BuildData(b, ep, &d)
		if err != nil {
			return err
		}
		if n != len(b) {
			return fmt.Errorf("pktgen: roce template of %d bytes, want %d", n, len(b))
		}
	} else {
		copy(b[0:6], ep.DstMAC[:])
		copy(b[6:12], ep.SrcMAC[:])
		binary.BigEndian.PutUint16(b[12:], wire.EtherTypeIPv4)
		ip := b[ipOff:]
		ip[0], ip[1] = 0x45, ep.DSCP<<2
		binary.BigEndian.PutUint16(ip[2:], uint16(len(b)-ipOff))
		binary.BigEndian.PutUint16(ip[4:], 0)
		binary.BigEndian.PutUint16(ip[6:], 0x4000) // DF
		ip[8], ip[9] = wire.DefaultTTL, wire.IPProtoUDP
		u := b[udpOff:]
		binary.BigEndian.PutUint16(u[4:], uint16(len(b)-udpOff))
		u[6], u[7] = 0, 0
	}
	h := b[g.hdrOff:]
	binary.BigEndian.PutUint16(h[0:], Magic)
	binary.BigEndian.PutUint16(h[2:], g.stream)
	return nil
}

// smoothSchedule spreads the sizes over one cycle of sum(weights) packets (the
// weights scaled down to at most maxSched) by smooth weighted round robin, so
// that every cycle sends exactly the mix and no size comes in long runs.
func smoothSchedule(mix []SizeWeight) []uint16 {
	total := 0
	for _, sw := range mix {
		total += sw.Weight
	}
	w := make([]int, len(mix))
	sum := 0
	for i, sw := range mix {
		w[i] = sw.Weight
		if total > maxSched {
			w[i] = max(1, sw.Weight*maxSched/total)
		}
		sum += w[i]
	}
	cur := make([]int, len(mix))
	out := make([]uint16, sum)
	for k := range out {
		best := 0
		for i := range cur {
			cur[i] += w[i]
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= sum
		out[k] = uint16(best)
	}
	return out
}

// Grant refills the token bucket to now and returns how many packets (at most
// max) may be built now: all max when the stream is unlimited, fewer when its
// rate, count or duration says so. It consumes nothing of the port's rate:
// Build does, so a burst that cannot be allocated costs no tokens. With flow
// rates it also picks the flows of the packets it grants (max is then at most
// MaxBurst), taking their tokens at once; picks not built stay first in line.
// Time must not go backwards.
func (g *Generator) Grant(now int64, max int) int {
	if !g.started {
		g.started, g.start, g.last = true, now, now
		g.tokens = g.classes[g.sched[g.pos]].cost // the first packet leaves at once
		if g.perFlow != nil {
			g.perFlow.start(now)
		}
		if g.shape != nil {
			g.shape.next = now
			if len(g.shape.steps) > 0 {
				g.tokens = 0 // a schedule's rate applies from the start
			}
		}
	}
	if g.duration > 0 && now-g.start >= g.duration {
		return 0
	}
	if g.count > 0 {
		if left := g.count - g.stats.Packets; left < uint64(max) {
			max = int(left)
		}
	}
	if g.replay != nil {
		return g.grantRecorded(now, max)
	}
	if !g.limited {
		return g.pickFlows(now, max)
	}
	if g.shape != nil && g.shape.poisson {
		return g.pickFlows(now, g.grantPoisson(now, max))
	}
	if dt := now - g.last; dt > 0 {
		room := g.depth - g.tokens
		switch {
		case g.shape != nil:
			g.tokens += g.shape.credit(g.last-g.start, now-g.start, g.rate, room)
		case dt > room/g.rate:
			g.tokens = g.depth
		default:
			g.tokens += dt * g.rate
		}
		g.last = now
	}
	t, pos, k := g.tokens, g.pos, 0
	for k < max {
		c := g.classes[g.sched[pos]].cost
		if t < c {
			break
		}
		t -= c
		k++
		if pos++; pos == len(g.sched) {
			pos = 0
		}
	}
	return g.pickFlows(now, k)
}

// pickFlows returns how many of k packets have a flow: k when the flows take
// turns, else the picks pending after the scheduler's turn at now.
func (g *Generator) pickFlows(now int64, k int) int {
	if g.perFlow == nil || k == 0 {
		return k
	}
	return g.perFlow.fill(now, min(k, MaxBurst), g)
}

// NextSize is the length of the frame the next Build writes.
func (g *Generator) NextSize() int { return g.classes[g.sched[g.pos]].size }

// MaxSize is the largest frame of the stream.
func (g *Generator) MaxSize() int {
	m := 0
	for _, c := range g.classes {
		m = max(m, c.size)
	}
	return m
}

// Build writes the next frame into b, stamped with now, consumes its tokens and
// returns its length, or 0 when b is too short (nothing consumed). Call it at
// most Grant's count times after Grant (with flow rates it also returns 0 when
// no pick is pending).
func (g *Generator) Build(b []byte, now int64) int {
	c := &g.classes[g.sched[g.pos]]
	if len(b) < c.size || g.perFlow != nil && len(g.perFlow.pending()) == 0 {
		return 0
	}
	var f *flowFields
	if g.perFlow != nil {
		f = &g.flows[g.perFlow.take(c.size)]
	} else {
		f = &g.flows[g.flow]
		if g.flow < len(g.cyc) {
			g.cyc[g.flow].Packets++
			g.cyc[g.flow].Bytes += uint64(c.size)
		}
		if g.flow++; g.flow == len(g.flows) {
			g.flow = 0
		}
	}
	seq := g.seq
	csum := ^fold(c.ipSum + f.ipSum)
	if g.roce {
		// Fixed-size array views: constant offsets, no bounds checks, and
		// the template copy compiles to a few vector moves.
		p := (*[roceHdrOff + HeaderLen]byte)(b)
		*p = *(*[roceHdrOff + HeaderLen]byte)(c.tmpl)
		patchFlow((*[udpHdrOff]byte)(b), f, csum)
		p[bthOff+5], p[bthOff+6], p[bthOff+7] = byte(f.destQP>>16), byte(f.destQP>>8), byte(f.destQP)
		p[bthOff+9], p[bthOff+10], p[bthOff+11] = byte(seq>>16), byte(seq>>8), byte(seq)
		binary.BigEndian.PutUint64(p[bthOff+wire.BTHLen:], uint64(now))
		binary.BigEndian.PutUint16(p[roceHdrOff+2:], f.tag)
		binary.BigEndian.PutUint32(p[roceHdrOff+4:], uint32(seq))
		binary.BigEndian.PutUint64(p[roceHdrOff+8:], uint64(now))
		clear(b[c.size-wire.ICRCLen : c.size])
	} else {
		p := (*[udpHdrOff + HeaderLen]byte)(b)
		*p = *(*[udpHdrOff + HeaderLen]byte)(c.tmpl)
		patchFlow((*[udpHdrOff]byte)(b), f, csum)
		binary.BigEndian.PutUint16(p[udpHdrOff+2:], f.tag)
		binary.BigEndian.PutUint32(p[udpHdrOff+4:], uint32(seq))
		binary.BigEndian.PutUint64(p[udpHdrOff+8:], uint64(now))
	}
	g.seq++
	if g.pos++; g.pos == len(g.sched) {
		g.pos = 0
	}
	if g.limited {
		g.tokens -= c.cost
		if g.shape != nil && g.shape.due > 0 {
			g.shape.due--
		}
	}
	g.stats.Packets++
	g.stats.Bytes += uint64(c.size)
	return c.size
}

// advance does what k calls of Build would do, but write frames: the C
// builder (dpdk.TxGen) wrote them from the cursor, frames of bytes bytes in
// all. With flow rates it consumes k picks.
func (g *Generator) advance(k int, bytes uint64) {
	if k <= 0 {
		return
	}
	if fs := g.perFlow; fs != nil {
		pos := g.pos
		for range k {
			fs.take(g.classes[g.sched[pos]].size)
			if pos++; pos == len(g.sched) {
				pos = 0
			}
		}
	} else {
		if g.cyc != nil {
			g.countCycling(k)
		}
		g.flow = wrap(g.flow+k, len(g.flows))
	}
	g.pos = wrap(g.pos+k, len(g.sched))
	g.seq += uint64(k)
	if g.shape != nil {
		g.shape.due = max(g.shape.due-k, 0)
	}
	if g.limited {
		if g.perPacket { // one unit a packet
			g.tokens -= int64(k) * 1e9
		} else { // each frame's L1 bits
			g.tokens -= (int64(bytes) + int64(k)*L1Overhead) * 8 * 1e9
		}
	}
	g.stats.Packets += uint64(k)
	g.stats.Bytes += bytes
}

// countCycling counts k frames from the cursor into the tracked flows'
// counters (flows taking turns through a size mix).
func (g *Generator) countCycling(k int) {
	pos, flow := g.pos, g.flow
	for range k {
		if flow < len(g.cyc) {
			g.cyc[flow].Packets++
			g.cyc[flow].Bytes += uint64(g.classes[g.sched[pos]].size)
		}
		if pos++; pos == len(g.sched) {
			pos = 0
		}
		if flow++; flow == len(g.flows) {
			flow = 0
		}
	}
}

// FlowCount is what the stream has built of flow f so far: counted per
// frame with flow rates or a size mix, else derived from the totals (the
// flows take turns from flow 0, one frame each). f must be below the flows
// tracked (flow_stats) unless the flows have rates. Owned by the stream's
// lcore, as Build.
func (g *Generator) FlowCount(f int) FlowStat {
	n := uint64(len(g.flows))
	switch {
	case g.perFlow != nil:
		return FlowStat{g.perFlow.packets[f], g.perFlow.bytes[f]}
	case n == 1:
		return FlowStat{g.stats.Packets, g.stats.Bytes}
	case g.cyc != nil:
		return g.cyc[f]
	}
	p := g.stats.Packets / n
	if uint64(f) < g.stats.Packets%n {
		p++
	}
	return FlowStat{p, p * uint64(g.classes[0].size)}
}

// NumFlows is the number of the stream's flows.
func (g *Generator) NumFlows() int { return len(g.flows) }

// wrap is i mod n for i >= 0, without a division in the common cases (one
// flow or one size; i already below n).
func wrap(i, n int) int {
	switch {
	case n == 1:
		return 0
	case i < n:
		return i
	}
	return i % n
}

// FlowStat is what a stream with flow rates built of one flow.
type FlowStat struct {
	Packets, Bytes uint64 // frames built and their bytes (no FCS)
}

// FlowStats returns each flow's counters when the flows have rates of their
// own, else nil. Read it when the loops are stopped.
func (g *Generator) FlowStats() []FlowStat {
	if g.perFlow == nil {
		return nil
	}
	out := make([]FlowStat, len(g.perFlow.packets))
	for i := range out {
		out[i] = FlowStat{g.perFlow.packets[i], g.perFlow.bytes[i]}
	}
	return out
}

// patchFlow writes a flow's addresses, IPv4 checksum and UDP ports.
func patchFlow(p *[udpHdrOff]byte, f *flowFields, csum uint16) {
	binary.BigEndian.PutUint16(p[ipOff+10:], csum)
	binary.BigEndian.PutUint32(p[ipOff+12:], f.srcIP)
	binary.BigEndian.PutUint32(p[ipOff+16:], f.dstIP)
	binary.BigEndian.PutUint16(p[udpOff:], f.srcPort)
	binary.BigEndian.PutUint16(p[udpOff+2:], f.dstPort)
}

// Done reports whether the stream has sent its count or run its duration as of now.
func (g *Generator) Done(now int64) bool {
	return g.count > 0 && g.stats.Packets >= g.count || g.started && g.duration > 0 && now-g.start >= g.duration
}

// Stats returns the counters.
func (g *Generator) Stats() GenStats { return g.stats }

// sum16 adds b as big-endian 16-bit words (len(b) even) to s.
func sum16(b []byte, s uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	return s
}

// fold reduces a ones' complement sum to 16 bits.
func fold(s uint32) uint16 {
	s = s>>16 + s&0xffff
	s = s>>16 + s&0xffff
	return uint16(s)
}
