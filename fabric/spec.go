package fabric

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all" // every scheme, chosen by name

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// Spec is an experiment on a topology: the scheme, the network's settings and
// the traffic, in Go units (ns, bits/s). testbed's experiment files decode into
// one; tests build one directly. Plan turns it into each node's config.
type Spec struct {
	Topo *Topology
	// Scheme is the ccalgo scheme of every switch port and host.
	Scheme string
	// Params are the parameters set over the scheme's defaults for each
	// node's link (an experiment's [cc.params], decoded where the file is
	// read: config.DecodeOverrides); Typed the struct itself (the pointer
	// DefaultParams returns, modified), which wins. Neither: the paper's
	// defaults for each node's link.
	Params ccalgo.Overrides
	Typed  any
	// ExpectedFlows is the schemes' Env.ExpectedFlows (default 16).
	ExpectedFlows int
	// MTU is the data payload of a full packet (default 1000).
	MTU int
	// AckEvery: the receiver acknowledges every k-th packet (default 1).
	AckEvery int
	// BaseRTTNs is the base RTT the schemes and the ideal FCT assume; 0: the
	// largest between any two hosts (a full data frame out, its ACK back).
	BaseRTTNs int64
	// BufferBytes caps every switch port's egress queues (default 4 MiB):
	// with Buffer.Mode "static" the port's whole buffer, with "shared" a cap
	// above the shared buffer's dynamic threshold.
	BufferBytes int64
	// Buffer is every switch's packet buffer; zero fields take switchd's
	// defaults (a 12 MiB shared buffer, alpha 1/8, 4 KiB reserve, 3 KiB
	// resume offset). Zero HeadroomBytes: each port's from its link's rate
	// and delays (switchd.HeadroomBytes).
	Buffer switchd.BufferConfig
	// Queues is every switch port's scheduling of its 8 priorities; zero:
	// DWRR with equal weights.
	Queues switchd.QueuesConfig
	// PFC turns priority flow control on in every switch.
	PFC PFC
	// HostPriority is the priority (0-7) of the listed hosts' data, which
	// they tag in the DSCP and obey PFC for; other hosts use PFC's priority 3.
	// A flow, incast or workload with a Priority of its own is sent in that
	// one instead.
	HostPriority map[int]uint8
	// RTONs and NakIntervalNs are the hosts' retransmission timeout and NAK
	// repeat interval; 0: 2 x (base RTT + time to drain a full buffer at the
	// slowest host link) + 100 us.
	RTONs, NakIntervalNs int64
	// SampleNs is the period of the queue, fair-rate and flow-rate series
	// (default 100 us).
	SampleNs int64
	// Seed seeds the workload generators and the pacing jitter (default 1).
	Seed uint64
	// PacingJitter is every host's hostd.Spec.PacingJitter: 0 paces exactly.
	PacingJitter float64
	// MemBytes is every host's hostd.Spec.MemBytes: the memory that bounds
	// the tables a host sizes (0: no bound but each field's own). The plan
	// reads no machine state; testbed fills in the machine's
	// (config.MemTotal).
	MemBytes int64
	// Failures are faults injected into the links (virtual time only).
	Failures Failures
	// TrustAll makes every switch and host take control frames from anyone
	// (switchd's and hostd's trust "all"), for experiments that forge them.
	// Off (the default), each takes them only from where the topology says
	// they can come (trust "topology"): a switch port facing a host refuses
	// CP feedback and the CNPs, ACKs and NAKs of other addresses than the
	// host's, PFC comes only from a link's peer, and a host takes CP
	// feedback only from the switches' addresses and CP ids (CPRanges).
	TrustAll bool
	// ICRC makes hosts compute the RoCEv2 ICRC of every frame they build
	// (hostd.Spec.ICRC), for captures that Wireshark checks.
	ICRC bool
	// TagPCP makes hosts tag each flow's priority in an 802.1Q tag's PCP
	// (hostd.Spec.TagPCP) instead of the DSCP, and switches take
	// priorities from the PCP (switch.priority_from "pcp").
	TagPCP bool
	// Exact shapes switch ports and host NICs without bursts: frames leave
	// exactly when their predecessor's last bit has left. The virtual-time
	// driver sets it; DPDK drivers keep the bursts that absorb late polls.
	Exact bool

	Flows     []Flow
	Incast    []Incast
	Workloads []Workload
}

// PFC is priority flow control: Priorities are the lossless ones (default
// [3]); XOFFBytes and XONOffsetBytes the thresholds of Buffer.Mode "static".
type PFC struct {
	Enabled        bool
	Priorities     []uint8
	XOFFBytes      int64
	XONOffsetBytes int64
}

// DefaultPriority is the priority of data that no setting names: RoCEv2's
// customary lossless class.
const DefaultPriority = 3

// Flow is a static flow (one message) between two hosts.
type Flow struct {
	ID        int
	Src, Dst  int
	SizeBytes int64 // 0: unlimited
	StartNs   int64
	RateBps   float64 // offered-rate cap; 0: none
	// Priority is the flow's priority (0-7); nil: its host's
	// (HostPriority, else DefaultPriority).
	Priority *int
}

// Incast is every sender sending FlowsPerSender flows of SizeBytes to Dst at
// StartNs, repeated Repeat times every PeriodNs.
type Incast struct {
	IDBase         int
	Senders        []int
	Dst            int
	FlowsPerSender int
	SizeBytes      int64
	StartNs        int64
	Repeat         int
	PeriodNs       int64
	// Priority is the flows' priority (0-7); nil: each sender's.
	Priority *int
}

// Workload draws flow sizes from CDF with Poisson arrivals at Load of each
// sender's line rate, to destinations drawn from Dsts.
type Workload struct {
	IDBase int
	// CDF is the flow-size distribution, already read (the file is the
	// caller's: testbed reads it where it reads the experiment).
	CDF      *hostd.CDF
	Senders  []int
	Dsts     []int
	Load     float64
	StartNs  int64
	StopNs   int64 // 0: no end
	MaxFlows int
	// Priority is the flows' priority (0-7); nil: each sender's.
	Priority *int
}

// WorkloadIDBase is the first flow id of sender k of workload wi: each sender
// of each workload gets its own range of a million ids.
func WorkloadIDBase(w *Workload, wi, k, senders int) int {
	return w.IDBase + (wi*senders+k)*1_000_000
}

// Plan is a Spec made concrete: every switch's and host's config, ready for a
// driver to build the engines from.
type Plan struct {
	Spec *Spec
	Topo *Topology
	// Switches are the switches' specs, as switchd.New takes them.
	Switches []switchd.Spec
	// Hosts are the hosts' specs, as hostd.NewEngine takes them: no file
	// format between the plan and the engines.
	Hosts []hostd.Spec
	// BaseRTTNs is the base RTT the nodes were given.
	BaseRTTNs int64
}

// frameOverhead is what a frame costs on the wire beyond its bytes: preamble
// and start delimiter 8, FCS 4, inter-frame gap 12 (the shapers' overhead).
const frameOverhead = 24

// ackFrameBytes is a plain ACK's frame (Ethernet, IPv4, UDP, BTH, AETH, ICRC and
// ccbed's ACK extension): an estimate for base RTTs.
const ackFrameBytes = 90

func (s *Spec) defaults() {
	if s.ExpectedFlows == 0 {
		s.ExpectedFlows = 16
	}
	if s.MTU == 0 {
		s.MTU = 1000
	}
	if s.AckEvery == 0 {
		s.AckEvery = 1
	}
	if s.BufferBytes == 0 {
		s.BufferBytes = 4 << 20
	}
	if s.SampleNs == 0 {
		s.SampleNs = 100_000
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Scheme == "" {
		s.Scheme = "none"
	}
	d := switchd.DefaultSpec()
	b := &s.Buffer
	if b.Mode == "" {
		b.Mode = d.Buffer.Mode
	}
	if b.SizeBytes == 0 {
		b.SizeBytes = d.Buffer.SizeBytes
	}
	if b.Alpha == 0 {
		b.Alpha = d.Buffer.Alpha
	}
	if b.ReserveBytes == 0 {
		b.ReserveBytes = d.Buffer.ReserveBytes
	}
	if b.ResumeOffsetBytes == 0 {
		b.ResumeOffsetBytes = d.Buffer.ResumeOffsetBytes
	}
	if s.Queues.QuantumBytes == 0 {
		s.Queues.QuantumBytes = d.Queues.QuantumBytes
	}
	if s.PFC.Enabled {
		if s.PFC.XOFFBytes == 0 {
			s.PFC.XOFFBytes = 500_000
		}
		if s.PFC.XONOffsetBytes == 0 {
			s.PFC.XONOffsetBytes = 3_000
		}
	}
}

// queueBound is the most one switch port can queue: its buffer_bytes cap, and
// with a shared buffer no more than the buffer.
func (s *Spec) queueBound() int64 {
	if s.Buffer.Mode == switchd.BufferShared {
		return min(s.BufferBytes, s.Buffer.SizeBytes)
	}
	return s.BufferBytes
}

// headroom is the PFC headroom of port p of switch node v: what its peer
// sends in the round trip of a pause over that link (each direction's
// propagation), three full frames, and the peer's burst after a late poll on
// DPDK (none in exact time). 0 with Buffer.HeadroomBytes set, which then
// applies to every port.
func (s *Spec) headroom(t *Topology, v, p int) int64 {
	if s.Buffer.HeadroomBytes > 0 {
		return 0
	}
	peer, peerPort, out := t.Peer(v, p)
	_, _, in := t.Peer(peer, peerPort)
	frame := s.MTU + hostd.DataOverhead + wire.INTLen + frameOverhead + s.vlanLen()
	burst := 0
	if !s.Exact {
		burst = switchd.DefaultSpec().BurstBytes
		if t.IsHost(peer) {
			burst = hostNICBurstFrames * frame
		}
	}
	return switchd.HeadroomBytes(in.Bps, (in.DelayNs+out.DelayNs+1)/2, frame, burst)
}

// vlanLen is what the hosts' 802.1Q tag adds to a frame (TagPCP).
func (s *Spec) vlanLen() int {
	if s.TagPCP {
		return wire.VLANTagLen
	}
	return 0
}

// hostNICBurstFrames is hostd's default NIC burst on DPDK, in frames.
const hostNICBurstFrames = 32

// latencyTo fills lat (one per node) with every node's one-way latency to host
// d for a frame of b bytes, on idle links, on the first shortest path (the
// routes' first choice at every hop), and returns it.
func (t *Topology) latencyTo(d, b int, lat []float64) []float64 {
	dist := t.hopsTo(d)
	clear(lat)
	// Visit nodes in increasing distance: each takes its first next hop.
	var order [][]int
	for v, x := range dist {
		if x < 0 {
			continue
		}
		for len(order) <= x {
			order = append(order, nil)
		}
		order[x] = append(order[x], v)
	}
	for x := 1; x < len(order); x++ {
		for _, v := range order[x] {
			for p := range t.ports[v] {
				u, _, dir := t.Peer(v, p)
				if dist[u] == x-1 && (u == d || !t.IsHost(u)) {
					lat[v] = lat[u] + float64(b+frameOverhead)*8e9/dir.Bps + float64(dir.DelayNs)
					break
				}
			}
		}
	}
	return lat
}

// maxBaseRTT is the largest base RTT between two hosts, for a full data frame
// of mtu payload out and an ACK back, on the first shortest path each way.
// Hosts on one switch with links of the same rates and delays (a class) are
// alike: a host's latencies to and from any host of another class are its
// class's, so the latencies are computed per class (two breadth-first
// searches each, not per host) and the largest is taken over pairs of
// classes, by the same float operations in the same order as per host.
func (t *Topology) maxBaseRTT(mtu int) int64 {
	data := mtu + hostd.DataOverhead
	n := len(t.Hosts)
	lat := make([]float64, t.NumNodes())
	oneWay := func(d, b int) []float64 { return t.latencyTo(d, b, lat) }
	// members[c]: the hosts of class c, in host order.
	type key struct {
		leaf    int
		out, in Dir
	}
	classOf := map[key]int{}
	var members [][]int
	for h := 0; h < n; h++ {
		leaf, port, out := t.Peer(h, 0)
		_, _, in := t.Peer(leaf, port)
		k := key{leaf, out, in}
		c, ok := classOf[k]
		if !ok {
			c = len(members)
			classOf[k] = c
			members = append(members, nil)
		}
		members[c] = append(members[c], h)
	}
	nc := len(members)
	// dataTo[d*nc+s], ackTo[d*nc+s]: the latency to a host of class d from
	// another host of class s (NaN: class d is one host).
	dataTo := make([]float64, nc*nc)
	ackTo := make([]float64, nc*nc)
	for d := range members {
		rep := members[d][0]
		for _, x := range []struct {
			to    []float64
			bytes int
		}{{dataTo, data}, {ackTo, ackFrameBytes}} {
			l := oneWay(rep, x.bytes)
			for s := range members {
				from := members[s][0]
				if s == d {
					if len(members[s]) < 2 {
						x.to[d*nc+s] = math.NaN()
						continue
					}
					from = members[s][1]
				}
				x.to[d*nc+s] = l[from]
			}
		}
	}
	best := 0.0
	for s := 0; s < nc; s++ {
		for d := 0; d < nc; d++ {
			if v := dataTo[d*nc+s] + ackTo[s*nc+d]; !math.IsNaN(v) {
				best = math.Max(best, v)
			}
		}
	}
	return int64(math.Ceil(best))
}

// Plan checks the spec and builds every node's config.
func (s *Spec) Plan() (*Plan, error) {
	if s.Topo == nil {
		return nil, fmt.Errorf("fabric: spec without a topology")
	}
	t := s.Topo
	if err := t.Validate(); err != nil {
		return nil, err
	}
	s.defaults()
	if err := s.Failures.check(t); err != nil {
		return nil, err
	}
	nh := len(t.Hosts)
	host := func(what string, h int) error {
		if h < 0 || h >= nh {
			return fmt.Errorf("fabric: %s: host %d out of range 0..%d", what, h, nh-1)
		}
		return nil
	}
	for i, f := range s.Flows {
		if err := host(fmt.Sprintf("flow %d src", i), f.Src); err != nil {
			return nil, err
		}
		if err := host(fmt.Sprintf("flow %d dst", i), f.Dst); err != nil {
			return nil, err
		}
		if f.Src == f.Dst {
			return nil, fmt.Errorf("fabric: flow %d from host %d to itself", f.ID, f.Src)
		}
	}
	for i, in := range s.Incast {
		for _, h := range append([]int{in.Dst}, in.Senders...) {
			if err := host(fmt.Sprintf("incast %d", i), h); err != nil {
				return nil, err
			}
		}
	}
	prio := func(what string, p *int) error {
		if p != nil && (*p < 0 || *p > 7) {
			return fmt.Errorf("fabric: %s: priority %d: want 0..7", what, *p)
		}
		return nil
	}
	for i, f := range s.Flows {
		if err := prio(fmt.Sprintf("flow %d", i), f.Priority); err != nil {
			return nil, err
		}
	}
	for i, in := range s.Incast {
		if err := prio(fmt.Sprintf("incast %d", i), in.Priority); err != nil {
			return nil, err
		}
	}
	for i, w := range s.Workloads {
		if err := prio(fmt.Sprintf("workload %d", i), w.Priority); err != nil {
			return nil, err
		}
	}
	for h, pr := range s.HostPriority {
		if err := host("host priority", h); err != nil {
			return nil, err
		}
		if pr > 7 {
			return nil, fmt.Errorf("fabric: host %d: priority %d: want 0..7", h, pr)
		}
	}
	for i, w := range s.Workloads {
		for _, h := range append(append([]int{}, w.Senders...), w.Dsts...) {
			if err := host(fmt.Sprintf("workload %d", i), h); err != nil {
				return nil, err
			}
		}
	}
	p := &Plan{Spec: s, Topo: t, BaseRTTNs: s.BaseRTTNs}
	if p.BaseRTTNs == 0 {
		p.BaseRTTNs = t.maxBaseRTT(s.MTU + s.vlanLen()) // a tagged frame is 4 bytes longer
	}
	slowest := math.Inf(1)
	for h := range t.Hosts {
		_, _, d := t.Peer(h, 0)
		slowest = math.Min(slowest, d.Bps)
	}
	// The worst round trip the topology allows: 2 x (base RTT + a full
	// buffer's drain at the slowest link) + 100 us.
	worstNs := int64(2*(float64(p.BaseRTTNs)+float64(s.queueBound())*8e9/slowest) + 100e3)
	rtoNs, nakNs := worstNs, worstNs
	if s.RTONs > 0 {
		rtoNs = s.RTONs
	}
	if s.NakIntervalNs > 0 {
		nakNs = s.NakIntervalNs
	}

	rt := t.routing()
	var cpRanges []hostd.AddrRange
	if !s.TrustAll {
		cpRanges = t.cpRanges()
	}
	for si, sw := range t.Switches {
		c := switchd.DefaultSpec()
		c.ID = sw.ID & 0xfff
		c.IP = sw.IP
		if s.Exact {
			c.BurstBytes = 0
		}
		c.SampleNs = s.SampleNs
		if s.Exact {
			// The virtual driver drains every ms of simulated time: room for
			// four ms of samples of every port.
			c.SampleBuffer = max(256, 4*t.NumPorts(nh+si)*int(max(1_000_000/s.SampleNs, 1)))
		}
		v := nh + si
		for port := 0; port < t.NumPorts(v); port++ {
			peer, peerPort, out := t.Peer(v, port)
			var pm [6]byte
			if t.IsHost(peer) {
				pm = t.Hosts[peer].MAC
			} else {
				pm = t.Switches[peer-nh].PortMACs[peerPort]
			}
			faces := switchd.FacesSwitch
			if t.IsHost(peer) {
				faces = switchd.FacesHost
			}
			c.Ports = append(c.Ports, switchd.PortSpec{
				Name: "p" + strconv.Itoa(port), MAC: wire.MAC(sw.PortMACs[port]), PeerMAC: wire.MAC(pm),
				LinkBps: out.Bps, BufferBytes: s.BufferBytes,
				HeadroomBytes: s.headroom(t, v, port), Faces: faces,
			})
		}
		c.Trust = switchd.TrustTopology
		if s.TrustAll {
			c.Trust = switchd.TrustAll
		}
		// ECMP groups share one slice of ports (switchd reads it only).
		c.Routes = rt.prefixRoutes(t, si, nil)
		c.CC = switchd.CCSpec{Scheme: s.Scheme, BaseRTTNs: p.BaseRTTNs, MTU: s.MTU, ExpectedFlows: s.ExpectedFlows}
		for port := range c.Ports {
			params, err := s.schemeParams(c.Env(port))
			if err != nil {
				return nil, fmt.Errorf("fabric: switch %s: port %s: %w", sw.Name, c.Ports[port].Name, err)
			}
			c.Ports[port].Params = params
		}
		c.PFC.Enabled = s.PFC.Enabled
		c.PFC.Priority = DefaultPriority
		c.PFC.Priorities = s.PFC.Priorities
		if s.PFC.Enabled {
			c.PFC.XOFFBytes, c.PFC.XONOffsetBytes = s.PFC.XOFFBytes, s.PFC.XONOffsetBytes
		}
		// Hosts tag their data's priority in the DSCP, or the PCP.
		c.PriorityFromDSCP = !s.TagPCP
		c.Buffer = s.Buffer
		c.Queues = s.Queues
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("fabric: switch %s: %w", sw.Name, err)
		}
		p.Switches = append(p.Switches, c)
	}

	frame := s.MTU + hostd.DataOverhead + wire.INTLen + s.vlanLen()
	for h, hs := range t.Hosts {
		peer, peerPort, out := t.Peer(h, 0)
		c := hostd.Spec{
			Name: hs.Name, IP: hs.IP, MAC: wire.MAC(hs.MAC),
			GatewayMAC: wire.MAC(t.Switches[peer-nh].PortMACs[peerPort]),
			LinkGbps:   out.Bps / 1e9, MTUBytes: s.MTU, BaseRTTNs: p.BaseRTTNs,
			Scheme: s.Scheme, ExpectedFlows: s.ExpectedFlows,
			AckEvery: s.AckEvery, RTONs: rtoNs, NakIntervalNs: nakNs,
			SampleNs: s.SampleNs, Seed: s.Seed,
			// MaxRxFlows stays hostd's default (65,536): the receiver's
			// tables grow from 16 by use, and a receiver keeps each flow
			// 4 RTOs after its end (a resend of its tail must find it), so
			// small flows arriving fast need tens of thousands of slots
			// (1 KB flows at 90 % of 100 Gb/s: ~11 M a second, ~45,000 held).
			MaxPending: 4096, PacingJitter: s.PacingJitter,
			PFCPriority: DefaultPriority, TagPriority: !s.TagPCP, TagPCP: s.TagPCP, ICRC: s.ICRC,
			MemBytes: s.MemBytes,
		}
		params, err := s.hostParams(&c)
		if err != nil {
			return nil, fmt.Errorf("fabric: host %s: %w", hs.Name, err)
		}
		c.Params = params
		if p, ok := s.HostPriority[h]; ok {
			c.PFCPriority = int(p)
		}
		c.Trust = hostd.TrustAll
		if !s.TrustAll {
			c.Trust, c.TrustedCPs = hostd.TrustTopology, cpRanges
		}
		if s.Exact {
			c.GrowResults = true
			c.NICBurstFrames = 1
			c.BurstBytes = int64(frame)
			// The virtual-time driver serves a host's send side right after
			// each frame it receives: the ring never holds more than one
			// event, and its smallest size keeps it in the cache (256 slots,
			// 70 KB a host, swept one new line per event, were 18 MB at 256
			// hosts).
			c.EventRing = 16
		}
		p.Hosts = append(p.Hosts, c)
	}
	ip := func(h int) uint32 { return t.Hosts[h].IP }
	// flowPrio is the priority a flow of host h that names pr is sent in,
	// for hostd: nil keeps the host's PFCPriority, except for a host of
	// priority 0, which hostd's config cannot say (0 there is its default,
	// 3): its flows name 0 each.
	zero := 0
	flowPrio := func(h int, pr *int) *int {
		if p, ok := s.HostPriority[h]; pr == nil && ok && p == 0 {
			return &zero
		}
		return pr
	}
	for _, f := range s.Flows {
		hc := &p.Hosts[f.Src]
		hc.Flows = append(hc.Flows, hostd.Flow{ID: f.ID, Dst: ip(f.Dst), SizeBytes: f.SizeBytes,
			StartNs: f.StartNs, RateGbps: f.RateBps / 1e9, Priority: flowPrio(f.Src, f.Priority)})
	}
	for _, in := range s.Incast {
		per := max(in.FlowsPerSender, 1)
		for k, snd := range in.Senders {
			hc := &p.Hosts[snd]
			hc.Incast = append(hc.Incast, hostd.Incast{
				IDBase: in.IDBase + k*per*max(in.Repeat, 1), Dst: ip(in.Dst), Flows: per, SizeBytes: in.SizeBytes,
				StartNs: in.StartNs, Repeat: in.Repeat, PeriodNs: in.PeriodNs,
				Priority: flowPrio(snd, in.Priority)})
		}
	}
	for wi := range s.Workloads {
		w := &s.Workloads[wi]
		// One CDF and one slice of destinations for every sender (hostd
		// keeps them as they are).
		cdf := w.CDF
		if cdf == nil {
			return nil, fmt.Errorf("fabric: workload %d: no flow-size CDF", wi)
		}
		var dsts []uint32
		for _, d := range w.Dsts {
			dsts = append(dsts, t.Hosts[d].IP)
		}
		for k, snd := range w.Senders {
			hc := &p.Hosts[snd]
			hc.Workloads = append(hc.Workloads, hostd.Workload{
				IDBase: WorkloadIDBase(w, wi, k, len(w.Senders)), CDF: cdf, Dsts: dsts, Load: w.Load,
				StartNs: w.StartNs, StopNs: w.StopNs, MaxFlows: w.MaxFlows,
				Priority: flowPrio(snd, w.Priority)})
		}
	}
	return p, nil
}

// CPRanges are the addresses of the topology's congestion points, as
// hostd's trusted_cps: every switch's address (the source of its CP
// feedback) and its ports' CP ids (switchd's default, the switch's address +
// the port's index), in ranges of consecutive addresses, two ranges joined
// when no host's address lies between them (a fabric's hosts are numbered
// below its switches: one range then holds them all).
func (t *Topology) CPRanges() []string {
	var out []string
	for _, r := range t.cpRanges() {
		out = append(out, r.String())
	}
	return out
}

// cpRanges are CPRanges as hostd takes them.
func (t *Topology) cpRanges() []hostd.AddrRange {
	type span struct{ lo, hi uint32 }
	spans := make([]span, 0, len(t.Switches))
	for si, sw := range t.Switches {
		n := uint32(max(t.NumPorts(len(t.Hosts)+si), 1))
		spans = append(spans, span{sw.IP, max(sw.IP+n-1, sw.IP)}) // max: no wrap past 255.255.255.255
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	hosts := make([]uint32, len(t.Hosts))
	for i, h := range t.Hosts {
		hosts[i] = h.IP
	}
	slices.Sort(hosts)
	// hostIn reports whether a host's address lies in [lo, hi].
	hostIn := func(lo, hi uint32) bool {
		i, _ := slices.BinarySearch(hosts, lo)
		return i < len(hosts) && hosts[i] <= hi
	}
	var out []hostd.AddrRange
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && (spans[i].lo <= cur.hi || !hostIn(cur.hi, spans[i].lo)); i++ {
			cur.hi = max(cur.hi, spans[i].hi)
		}
		out = append(out, hostd.AddrRange{Lo: cur.lo, Hi: cur.hi})
	}
	return out
}

// Priorities are the priorities the traffic's data is sent in, a bit each:
// every flow's, incast's and workload's own, or its senders' (HostPriority,
// else DefaultPriority).
func (s *Spec) Priorities() uint8 {
	var m uint8
	add := func(p *int, senders ...int) {
		if p != nil {
			m |= 1 << *p
			return
		}
		for _, h := range senders {
			pr, ok := s.HostPriority[h]
			if !ok {
				pr = DefaultPriority
			}
			m |= 1 << pr
		}
	}
	for _, f := range s.Flows {
		add(f.Priority, f.Src)
	}
	for _, in := range s.Incast {
		add(in.Priority, in.Senders...)
	}
	for _, w := range s.Workloads {
		add(w.Priority, w.Senders...)
	}
	return m
}

// FlowDst returns the destination host of the flow with id sent by host src,
// or -1 for a workload flow (its destination is drawn at random).
func (s *Spec) FlowDst(src int, id int64) int {
	for _, f := range s.Flows {
		if f.Src == src && int64(f.ID) == id {
			return f.Dst
		}
	}
	for _, in := range s.Incast {
		per := max(in.FlowsPerSender, 1) * max(in.Repeat, 1)
		for k, snd := range in.Senders {
			base := int64(in.IDBase + k*per)
			if snd == src && id >= base && id < base+int64(per) {
				return in.Dst
			}
		}
	}
	return -1
}

// hostParams is the scheme's parameters for host c (its spec with the
// fields its Env reads): Typed as it is, else the scheme's defaults for the
// host with Params laid over them.
func (s *Spec) hostParams(c *hostd.Spec) (any, error) {
	d := *c
	d.ApplyDefaults()
	return s.schemeParams(d.Env())
}

// schemeParams is the scheme's parameter struct for a node told env: Typed,
// or the scheme's defaults for env with Params laid over them.
func (s *Spec) schemeParams(env ccalgo.Env) (any, error) {
	if s.Typed != nil {
		return s.Typed, nil
	}
	sc, err := ccalgo.Lookup(s.Scheme)
	if err != nil {
		return nil, err
	}
	p := sc.DefaultParams(env)
	if err := s.Params.Apply(p); err != nil {
		return nil, fmt.Errorf("cc params: scheme %s: %w", s.Scheme, err)
	}
	return p, nil
}
