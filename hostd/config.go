package hostd

import (
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config/bounds"
	"github.com/ccbed/ccbed/wire"
)

// Trust settings (Spec.Trust).
const (
	// TrustAll accepts every control frame.
	TrustAll = "all"
	// TrustTopology accepts control frames only from where they can come.
	TrustTopology = "topology"
)

// dataOverhead is the frame bytes of a data packet beyond its application
// payload, without INT: Ethernet 14, IPv4 20, UDP 8, BTH 12, DataHeader 8, ICRC 4.
const dataOverhead = DataOverhead

// DataOverhead is the frame bytes of a data packet beyond its application
// payload, without INT.
const DataOverhead = wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + wire.DataHeaderLen + wire.ICRCLen

// phyOverhead is what a frame costs on the wire beyond its bytes: preamble and
// start delimiter 8, FCS 4, inter-frame gap 12.
const phyOverhead = 24

// maxFrame is the largest data frame a host builds for mtu.
func maxFrame(mtu int) int { return mtu + dataOverhead + wire.INTLen }

// vlanLen is the bytes an 802.1Q tag adds to every frame of a host that
// tags (Spec.TagPCP).
func vlanLen(tagPCP bool) int {
	if tagPCP {
		return wire.VLANTagLen
	}
	return 0
}

// Upper bounds of Spec fields that no table size derives.
const (
	// MaxLinkGbps bounds link and offered rates: 1.6 Tb/s, the fastest
	// Ethernet standardised.
	MaxLinkGbps = 1600
	// MaxMessageBytes bounds a message size: 2^53, the largest integer a
	// float64 holds exactly (rates, ideal FCTs and CDF sizes are float64).
	MaxMessageBytes = 1 << 53
	// maxBurstBytes bounds a token bucket's depth: 1 GiB, beyond which a
	// bucket no longer paces anything a run sends.
	maxBurstBytes = 1 << 30
	// maxNICBurstFrames bounds the NIC bucket's depth in frames (its bytes
	// stay within maxBurstBytes at the largest frame).
	maxNICBurstFrames = maxBurstBytes / 9216
)

// check is one numeric field's range check: err is a bounds helper's
// result, note a remark the error ends with ("0: unlimited").
type check struct {
	key  string
	err  error
	note string
}

// firstBad returns the first failed check as an error at key(check.key).
func firstBad(key func(string) string, checks []check) error {
	for _, c := range checks {
		if c.err == nil {
			continue
		}
		if c.note != "" {
			return specErr(key(c.key), "%v; %s", c.err, c.note)
		}
		return specErr(key(c.key), "%v", c.err)
	}
	return nil
}

// ident is the key of a top-level field.
func ident(k string) string { return k }

// maxEntries is how many entries of entryBytes a table may have: those
// that fit in a quarter of mem, or with mem 0 (no bound given) in an int64
// of bytes.
func maxEntries(entryBytes uintptr, mem int64) int64 {
	if mem <= 0 {
		mem = math.MaxInt64
	}
	return mem / 4 / int64(max(entryBytes, 1))
}

// entries returns nil when lo <= n <= maxEntries(entryBytes, mem): the bound
// of a count the engine allocates entryBytes for each of.
func entries(n, lo int64, entryBytes uintptr, mem int64) error {
	if hi := maxEntries(entryBytes, mem); n < lo || n > hi {
		return fmt.Errorf("got %d: want %d..%d (%s)", n, lo, hi, entriesBound(entryBytes, mem))
	}
	return nil
}

// entriesBound says where maxEntries(entryBytes, mem) comes from.
func entriesBound(entryBytes uintptr, mem int64) string {
	if mem <= 0 {
		return fmt.Sprintf("%d B each", entryBytes)
	}
	return fmt.Sprintf("%d B each, at most a quarter of this machine's %.1f GiB of memory", entryBytes, float64(mem)/(1<<30))
}

// checkNumbers range-checks every numeric field of s's top level (the
// flows, incasts and workloads are checked where resolve reads them). The
// bounds of tables the engine allocates whole derive from the entry size
// and s.MemBytes.
func checkNumbers(s *Spec) error {
	mem := s.MemBytes
	if err := firstBad(ident, []check{
		{"link_gbps", bounds.Positive(s.LinkGbps, MaxLinkGbps), ""},
		{"mtu_bytes", bounds.Int(int64(s.MTUBytes), 64, 9216-dataOverhead-wire.INTLen), "a full frame is at most 9216 bytes"},
		{"base_rtt_ns", timeNs(s.BaseRTTNs, 1), ""},
		{"expected_flows", bounds.Int(int64(s.ExpectedFlows), 1, 1<<22), ""},
		{"ack_every", bounds.Int(int64(s.AckEvery), 1, math.MaxUint32), ""},
		{"nak_interval_ns", timeNs(s.NakIntervalNs, 1), ""},
		{"rto_ns", timeNs(s.RTONs, 1), ""},
		{"max_qps", bounds.Int(int64(s.MaxQPs), 1, 1<<16), ""},
		{"max_rx_flows", bounds.Int(int64(s.MaxRxFlows), 1, 1<<22), ""},
		{"max_pending", entries(int64(s.MaxPending), 1, unsafe.Sizeof(pendingFlow{}), mem), ""},
		{"event_ring", bounds.Int(int64(s.EventRing), 16, 1<<20), ""},
		{"burst_bytes", bounds.Int(s.BurstBytes, 0, maxBurstBytes), ""},
		{"nic_burst_frames", bounds.Int(int64(s.NICBurstFrames), 1, maxNICBurstFrames), ""},
		{"pfc_priority", bounds.Int(int64(s.PFCPriority), 0, 7), ""},
		{"sample_ns", timeNs(s.SampleNs, 1), ""},
		{"max_samples", entries(int64(s.MaxSamples), 1, unsafe.Sizeof(RateSample{}), mem), ""},
		{"max_fcts", entries(int64(s.MaxFCTs), 1, unsafe.Sizeof(FCT{}), mem), ""},
	}); err != nil {
		return err
	}
	if !(s.PacingJitter >= 0 && s.PacingJitter < 1) {
		return specErr("pacing_jitter", "got %v: want a number in [0, 1)", s.PacingJitter)
	}
	return nil
}

// timeNs returns nil when lo <= v <= bounds.MaxTimeNs: the range of a time
// or duration in ns.
func timeNs(v, lo int64) error {
	if v < lo || v > bounds.MaxTimeNs {
		return fmt.Errorf("got %d ns: want %d..%d ns (2^60 ns: the engines' int64-ns clocks stay far from overflow)",
			v, lo, int64(bounds.MaxTimeNs))
	}
	return nil
}

// priorityCheck range-checks a flow's priority and adds it to r.prios.
func (r *resolved) priorityCheck(p *int) check {
	if p == nil {
		return check{}
	}
	err := bounds.Int(int64(*p), 0, 7)
	if err == nil {
		r.prios |= 1 << *p
	}
	return check{key: "priority", err: err}
}

// priority is the priority of a flow whose config says p.
func (r *resolved) priority(p *int) uint8 {
	if p == nil {
		return uint8(r.pfcPrio)
	}
	return uint8(*p)
}

// resolved is a validated Spec turned into the engine's units.
type resolved struct {
	ip         uint32
	mac        wire.MAC
	gateway    wire.MAC
	linkBps    float64
	mtu        int
	baseRTT    int64
	scheme     ccalgo.Scheme
	params     any
	env        ccalgo.Env
	intStack   bool
	ackEvery   uint32
	nakIv      int64
	rto        int64
	burst      int64
	pfcPrio    int
	tagPrio    bool  // tag each flow's priority in its DSCP
	tagPCP     bool  // tag each flow's priority in an 802.1Q tag's PCP
	prios      uint8 // the priorities the host's flows use, a bit each (pfcPrio's always)
	icrc       bool  // compute the ICRC of every frame built
	sampleNs   int64
	peers      map[uint32]wire.MAC
	flows      []Flow
	incast     []Incast
	workloads  []workloadSpec
	cfg        Spec
	flowDst    []uint32
	incastDst  []uint32
	seed       uint64
	maxSamples int
	// trusted: Trust is "topology"; cps the TrustedCPs.
	trusted bool
	cps     addrRanges
}

type workloadSpec struct {
	cfg  Workload
	cdf  *CDF
	dsts []uint32
}

// maxTrustedCPs bounds TrustedCPs: a fabric's hosts get one range for all
// its switches, and a hand-written list names a few switches.
const maxTrustedCPs = 1 << 16

// addrRange is the IPv4 addresses lo..hi, host byte order.
type addrRange struct{ lo, hi uint32 }

// addrRanges is a set of IPv4 addresses as ranges, sorted and disjoint after
// merged: has is a binary search, with no allocation.
type addrRanges []addrRange

// merged sorts the ranges and joins those that overlap or touch.
func (rs addrRanges) merged() addrRanges {
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && (r.lo <= out[n-1].hi || r.lo-1 == out[n-1].hi) {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// has reports whether a lies in one of the ranges.
func (rs addrRanges) has(a uint32) bool {
	lo, hi := 0, len(rs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case a < rs[m].lo:
			hi = m
		case a > rs[m].hi:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// resolve validates s (after ApplyDefaults) and converts it into the
// engine's units (its times are the spec's: ns).
func resolve(s *Spec) (*resolved, error) {
	r := &resolved{cfg: *s}
	r.ip = s.IP
	r.mac = s.MAC
	r.gateway = s.GatewayMAC
	if r.gateway == (wire.MAC{}) {
		r.gateway = wire.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	if err := checkNumbers(s); err != nil {
		return nil, err
	}
	r.linkBps = s.LinkGbps * 1e9
	r.mtu = s.MTUBytes
	r.baseRTT = s.BaseRTTNs
	r.ackEvery = uint32(s.AckEvery)
	r.nakIv = s.NakIntervalNs
	r.rto = s.RTONs
	r.burst = s.BurstBytes
	r.pfcPrio = s.PFCPriority
	r.tagPrio = s.TagPriority
	r.tagPCP = s.TagPCP
	r.prios = 1 << s.PFCPriority
	r.icrc = s.ICRC
	r.sampleNs = s.SampleNs
	r.seed = s.Seed
	r.maxSamples = s.MaxSamples
	switch s.Trust {
	case TrustAll:
		if len(s.TrustedCPs) > 0 {
			return nil, specErr("trusted_cps", "given with trust %q, which takes feedback from anyone: set trust = %q", TrustAll, TrustTopology)
		}
	case TrustTopology:
		r.trusted = true
	default:
		return nil, specErr("trust", "%q: want %q or %q", s.Trust, TrustAll, TrustTopology)
	}
	if len(s.TrustedCPs) > maxTrustedCPs {
		return nil, specErr("trusted_cps", "%d entries: at most %d (give prefixes or ranges)", len(s.TrustedCPs), maxTrustedCPs)
	}
	for i, a := range s.TrustedCPs {
		if a.Hi < a.Lo {
			return nil, specErr("trusted_cps", "entry %d: %q: the range ends before it starts", i, a)
		}
		r.cps = append(r.cps, addrRange{a.Lo, a.Hi})
	}
	r.cps = r.cps.merged()

	var err error
	if r.scheme, err = ccalgo.Lookup(s.Scheme); err != nil {
		return nil, specErr("scheme", "%v", err)
	}
	if r.scheme.NewRP == nil {
		return nil, specErr("scheme", "scheme %q has no reaction point", s.Scheme)
	}
	r.intStack = s.Scheme == "hpcc"
	r.env = s.Env()
	r.params = s.Params
	if r.params == nil {
		r.params = r.scheme.DefaultParams(r.env)
	}
	// Build one RP and, when the scheme has one, the NP now, so that bad
	// parameters are reported against the spec.
	if _, err := r.scheme.NewRP(r.params, r.env); err != nil {
		return nil, specErr("cc", "%v", err)
	}
	if r.scheme.NewNP != nil {
		if _, err := r.scheme.NewNP(r.params, r.env); err != nil {
			return nil, specErr("cc", "%v", err)
		}
	}

	r.peers = map[uint32]wire.MAC{}
	for _, p := range s.Peers {
		r.peers[p.IP] = p.MAC
	}
	for i, fl := range s.Flows {
		key := func(k string) string { return fmt.Sprintf("flows[%d].%s", i, k) }
		if err := firstBad(key, []check{
			{"size_bytes", bounds.Int(fl.SizeBytes, 0, MaxMessageBytes), "0: unlimited"},
			{"start_ns", timeNs(fl.StartNs, 0), ""},
			{"rate_gbps", bounds.Float(fl.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(fl.Priority),
		}); err != nil {
			return nil, err
		}
		r.flowDst = append(r.flowDst, fl.Dst)
	}
	r.flows = s.Flows
	// maxStarts bounds the static and incast starts: each is a pendingFlow
	// made when the engine is built.
	maxStarts := maxEntries(unsafe.Sizeof(pendingFlow{}), s.MemBytes)
	starts := int64(len(s.Flows))
	for i, g := range s.Incast {
		key := func(k string) string { return fmt.Sprintf("incast[%d].%s", i, k) }
		if err := firstBad(key, []check{
			{"flows", entries(int64(g.Flows), 1, unsafe.Sizeof(pendingFlow{}), s.MemBytes), ""},
			{"size_bytes", bounds.Int(g.SizeBytes, 1, MaxMessageBytes), ""},
			{"repeat", entries(int64(g.Repeat), 1, unsafe.Sizeof(pendingFlow{}), s.MemBytes), ""},
			{"start_ns", timeNs(g.StartNs, 0), ""},
			{"period_ns", timeNs(g.PeriodNs, 0), ""},
			{"rate_gbps", bounds.Float(g.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(g.Priority),
		}); err != nil {
			return nil, err
		}
		if g.Repeat > 1 && g.PeriodNs == 0 {
			return nil, specErr(key("period_ns"), "must be > 0 with repeat > 1")
		}
		// Round k starts at StartNs + k x PeriodNs (initFlows): the last
		// within the clocks' range, checked without overflow.
		if g.Repeat > 1 && int64(g.Repeat-1) > (bounds.MaxTimeNs-g.StartNs)/g.PeriodNs {
			return nil, specErr(key("repeat"), "the last repeat starts at %.4g ns: want at most %d ns (2^60 ns: the engines' int64-ns clocks stay far from overflow)",
				float64(g.StartNs)+float64(g.Repeat-1)*float64(g.PeriodNs), int64(bounds.MaxTimeNs))
		}
		// Every start of every group is a pendingFlow made up front.
		if int64(g.Repeat) > (maxStarts-starts)/int64(g.Flows) {
			return nil, specErr(key("flows"), "flows x repeat = %.4g starts, with %d before: more than %d (%s)",
				float64(g.Flows)*float64(g.Repeat), starts, maxStarts, entriesBound(unsafe.Sizeof(pendingFlow{}), s.MemBytes))
		}
		starts += int64(g.Flows) * int64(g.Repeat)
		r.incastDst = append(r.incastDst, g.Dst)
	}
	r.incast = s.Incast
	for i, w := range s.Workloads {
		key := func(k string) string { return fmt.Sprintf("workloads[%d].%s", i, k) }
		if w.CDF == nil {
			return nil, specErr(key("cdf"), "missing")
		}
		if len(w.Dsts) == 0 {
			return nil, specErr(key("dsts"), "needs at least one destination")
		}
		dsts := otherDsts(w.Dsts, r.ip)
		if len(dsts) == 0 {
			return nil, specErr(key("dsts"), "only this host's own address (%s): a host draws no flow to itself", wire.FormatIPv4(r.ip))
		}
		if err := firstBad(key, []check{
			{"load", bounds.Positive(w.Load, 1), ""},
			{"start_ns", timeNs(w.StartNs, 0), ""},
			{"stop_ns", timeNs(w.StopNs, 0), "0: no end"},
			{"max_flows", bounds.Int(int64(w.MaxFlows), 0, math.MaxInt64), "0: no limit"},
			{"rate_gbps", bounds.Float(w.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(w.Priority),
		}); err != nil {
			return nil, err
		}
		if w.StopNs > 0 && w.StopNs <= w.StartNs {
			return nil, specErr(key("stop_ns"), "need start_ns < stop_ns (or stop_ns 0: no end)")
		}
		r.workloads = append(r.workloads, workloadSpec{cfg: w, cdf: w.CDF, dsts: dsts})
	}
	return r, nil
}
