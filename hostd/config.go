package hostd

import (
	"errors"
	"fmt"
	"math"

	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/wire"
)

// Config is one host: its addresses, NIC line rate, congestion-control scheme and
// the traffic it offers. It is the [host] table of a hostd TOML file (see
// configs/host-*.toml) and what a testbed builds for each host it starts. Zero
// values of optional fields take the defaults named in their comments
// (ApplyDefaults).
type Config struct {
	Name string `toml:"name"`
	IP   string `toml:"ip"`  // IPv4 address of the host's NIC
	MAC  string `toml:"mac"` // NIC MAC; "" = the port's own (the adapter's caller fills it)
	// GatewayMAC is the destination MAC of every frame to a peer not listed in
	// Peers: the switch port's MAC, or a peer's in a back-to-back setup.
	// Default ff:ff:ff:ff:ff:ff.
	GatewayMAC string  `toml:"gateway_mac"`
	LinkGbps   float64 `toml:"link_gbps"` // NIC line rate: the pacing ceiling (default 10)
	// MTUBytes is the application payload of a full data packet (default 1024;
	// the frame adds 58 bytes of headers, 100 with HPCC's INT stack).
	MTUBytes  int     `toml:"mtu_bytes"`
	BaseRTTUs float64 `toml:"base_rtt_us"` // expected base RTT: Env.BaseRTT and the ideal FCT (default 10)
	Scheme    string  `toml:"scheme"`      // ccalgo scheme name (default "none")
	// CC holds the scheme's parameters ([host.cc] table, the keys of the scheme's
	// Params struct); keys not given keep the paper's defaults.
	CC map[string]any `toml:"cc"`
	// Typed lets a Go caller pass the scheme's parameter struct directly (the
	// pointer DefaultParams returns, modified); it wins over CC. Every RP and
	// the NP read it when they are built, and none writes it.
	Typed any `toml:"-"`
	// ExpectedFlows is Env.ExpectedFlows (HPCC's N); default 100.
	ExpectedFlows int `toml:"expected_flows"`

	AckEvery      int     `toml:"ack_every"`       // receiver ACKs every k-th in-order packet and every last one (default 1)
	NakIntervalUs float64 `toml:"nak_interval_us"` // repeat a NAK for the same gap after this (default 4 x base RTT, at least 100)
	RTOUs         float64 `toml:"rto_us"`          // go back to snd_una after this long without progress (default 1000)
	MaxQPs        int     `toml:"max_qps"`         // concurrent sender QPs (default 1024)
	MaxRxFlows    int     `toml:"max_rx_flows"`    // receiver flow table size (default 65536)
	MaxPending    int     `toml:"max_pending"`     // flows waiting for a free QP (default 65536)
	// EventRing is the size of the ring of events (ACKs, CNPs, feedback,
	// pauses) from the receive side to the send side (default 8192: a burst
	// of controls while the tx lcore is busy). A driver that serves both
	// sides after every frame (the virtual-time fabric) needs a few.
	EventRing int `toml:"event_ring"`
	// BurstBytes is each QP's token-bucket burst: the lateness of the tx loop it
	// absorbs (default 16 full frames).
	BurstBytes int64 `toml:"burst_bytes"`
	// NICBurstFrames is the depth of the NIC's line-rate bucket in full frames:
	// how many frames leave back to back after an idle spell, to absorb a late
	// tx poll (default 32, one tx burst). The virtual-time fabric, which never
	// polls late, uses 1.
	NICBurstFrames int `toml:"nic_burst_frames"`
	// PacingJitter spreads the packet spacing of each QP paced below the line
	// rate uniformly over [1 - j, 1 + j] times its paced gap (mean 1: the rate
	// is unchanged), as real NICs' rate limiters do; 0 (the default) paces
	// exactly. Senders paced exactly and alike release in lock step, a
	// synchrony no testbed has. Seeded by Seed.
	PacingJitter float64 `toml:"pacing_jitter"`
	// PFCPriority is the priority of the data of flows that set none
	// (default 3): PFC frames pausing it stop them. A flow, incast or
	// workload with its own priority is paused by its own priority's pauses
	// only, as a NIC's per-priority transmit queues are.
	PFCPriority int `toml:"pfc_priority"`
	// TagPriority writes each flow's priority (its own, or pfc_priority)
	// into its data frames' IPv4 DSCP as the class selector (DSCP =
	// priority << 3; ACKs, NAKs and CNPs echo the data's DSCP, so a flow's
	// control frames carry its class), for switches that take priorities
	// from the DSCP.
	TagPriority bool `toml:"tag_priority"`
	// TagPCP puts an 802.1Q priority tag (VLAN id 0, PCP the flow's
	// priority) in front of each data frame's IPv4 header, for switches that
	// take priorities from the PCP; ACKs, NAKs and CNPs echo the data's tag.
	// Frames grow by 4 bytes.
	TagPCP bool `toml:"tag_pcp"`
	// ICRC computes the RoCEv2 invariant CRC of every frame the host builds
	// (a CRC-32 over the frame, about 0.1 ns a byte) instead of leaving the
	// trailer zero: what a real RoCE NIC receiving them checks, and what
	// Wireshark verifies in a capture. Off by default: ccbed's own hosts and
	// switches do not check it.
	ICRC bool `toml:"icrc"`
	// SampleUs is the period of the per-flow rate time series (default 100);
	// MaxSamples bounds it (default 1,000,000 rows, further samples are counted;
	// rows taken by Engine.TakeResults no longer count).
	SampleUs   float64 `toml:"sample_us"`
	MaxSamples int     `toml:"max_samples"`
	MaxFCTs    int     `toml:"max_fcts"` // FCT records kept (default 1,000,000; until TakeResults)
	// GrowResults starts the rate-sample and FCT slices small (16 rows),
	// for a Go caller running hundreds of hosts in one process (the
	// virtual-time fabric). Off, the engine reserves room for the first 65536
	// samples and 16384 FCTs, so that an lcore rarely allocates for results
	// (beyond, the slices double, up to MaxSamples and MaxFCTs).
	GrowResults bool   `toml:"-"`
	Seed        uint64 `toml:"seed"` // workload generator seed (default 1)

	// Trust says where the host takes control frames from: "all" (the
	// default) from anywhere, as a lab that trusts every station does; or
	// "topology", only from where they can come:
	//
	//   - PFC frames only from gateway_mac (the switch port the link leads
	//     to; none when gateway_mac is not set);
	//   - CNPs, ACKs and NAKs only from the destination of the flow whose QP
	//     they name, and ACKs and NAKs only for packets sent and not yet
	//     acknowledged: an ACK's PSN + 1 within [snd_una, snd_max], a NAK's
	//     PSN within [snd_una, snd_max) (snd_max is RFC 793's SND.NXT, the
	//     next new packet; the engine's snd_nxt goes back after a NAK or a
	//     timeout);
	//   - at most one go-back per PSN and base RTT (BaseRTTUs): a second
	//     NAK for the PSN a QP went back to less than a base RTT before is
	//     refused (Refusals.NakRepeat);
	//   - RoCC rate messages and P4QCN / QCN feedback only when their source
	//     address and the CP id they carry both lie in TrustedCPs.
	//
	// The host counts each refusal by kind (RxCounters.Refused,
	// TxCounters.Refused; Engine.Refused sums them).
	Trust string `toml:"trust"`
	// TrustedCPs are the congestion points whose feedback the host takes
	// with trust "topology": addresses ("10.254.0.254"), prefixes
	// ("10.254.0.0/16") or ranges ("10.254.0.254-10.254.1.5"). They hold
	// the switches' addresses (the source of their feedback) and their CP
	// ids (a switch port's is the switch's address + the port's index,
	// unless the switch's config sets cp_id).
	TrustedCPs []string `toml:"trusted_cps"`

	Peers     []Peer           `toml:"peers"`
	Flows     []FlowConfig     `toml:"flows"`
	Incast    []IncastConfig   `toml:"incast"`
	Workloads []WorkloadConfig `toml:"workloads"`
}

// Peer gives the MAC frames to one IPv4 address go to.
type Peer struct {
	IP  string `toml:"ip" required:"the peer's IPv4 address"`
	MAC string `toml:"mac" required:"the MAC frames to the peer go to"`
}

// FlowConfig is one static flow: a single message of SizeBytes (0: unlimited,
// a long-lived flow) to Dst, starting at StartUs, paced at most at RateGbps
// (the application's offered rate; 0: no cap besides the RP and the line rate).
type FlowConfig struct {
	ID        int     `toml:"id" required:"the flow's id (unique in the experiment)"` // flow id in results
	Dst       string  `toml:"dst" required:"the destination's IPv4 address"`
	SizeBytes int64   `toml:"size_bytes"`
	StartUs   float64 `toml:"start_us"`
	RateGbps  float64 `toml:"rate_gbps"`
	// Priority is the flow's priority (0-7): the class it is tagged with
	// (TagPriority) and whose PFC pauses stop it; nil: PFCPriority.
	Priority *int `toml:"priority"`
}

// IncastConfig is an incast group: Flows flows of SizeBytes each to Dst,
// starting together at StartUs, the whole group repeated Repeat times (default
// 1) every PeriodUs. Flow ids are IDBase, IDBase+1, ... in start order. Several
// hosts with groups of the same start time and destination make an N-to-1 incast.
type IncastConfig struct {
	IDBase    int     `toml:"id_base"`
	Dst       string  `toml:"dst" required:"the destination's IPv4 address"`
	Flows     int     `toml:"flows"`
	SizeBytes int64   `toml:"size_bytes"`
	StartUs   float64 `toml:"start_us"`
	Repeat    int     `toml:"repeat"`
	PeriodUs  float64 `toml:"period_us"`
	RateGbps  float64 `toml:"rate_gbps"`
	// Priority is the group's flows' priority (0-7), as FlowConfig.Priority;
	// nil: PFCPriority.
	Priority *int `toml:"priority"`
}

// WorkloadConfig generates flows with sizes drawn from a flow-size CDF file
// (one point a line, "<size in bytes> <cumulative probability>", sizes
// increasing, the last probability 1, as in configs/workloads/) and Poisson
// arrivals whose mean offered load is Load x the host's line rate, from StartUs
// to StopUs (0: no end), each to a destination drawn uniformly from Dsts. Flow
// ids are IDBase, IDBase+1, ... in arrival order; MaxFlows (0: no limit) bounds
// their number.
type WorkloadConfig struct {
	IDBase int      `toml:"id_base"`
	CDF    string   `toml:"cdf" required:"a flow-size CDF file"` // path, relative to the config file's directory
	Dsts   []string `toml:"dsts" required:"the destinations' IPv4 addresses"`
	// DstIPs are Dsts as addresses (host byte order), for a Go caller that has
	// them: when set, Dsts is not parsed, and the engine keeps this slice (it
	// never writes it), so that the hosts of a fabric share one.
	DstIPs   []uint32 `toml:"-"`
	Load     float64  `toml:"load" required:"the offered load, a fraction of the line rate"`
	StartUs  float64  `toml:"start_us"`
	StopUs   float64  `toml:"stop_us"`
	MaxFlows int      `toml:"max_flows"`
	RateGbps float64  `toml:"rate_gbps"`
	// Priority is the generated flows' priority (0-7), as
	// FlowConfig.Priority; nil: PFCPriority.
	Priority *int `toml:"priority"`
}

// ApplyDefaults fills the zero optional fields with their defaults.
func (c *Config) ApplyDefaults() {
	if c.LinkGbps == 0 {
		c.LinkGbps = 10
	}
	if c.MTUBytes == 0 {
		c.MTUBytes = 1024
	}
	if c.BaseRTTUs == 0 {
		c.BaseRTTUs = 10
	}
	if c.Scheme == "" {
		c.Scheme = "none"
	}
	if c.ExpectedFlows == 0 {
		c.ExpectedFlows = 100
	}
	if c.AckEvery == 0 {
		c.AckEvery = 1
	}
	if c.NakIntervalUs == 0 {
		c.NakIntervalUs = max(4*c.BaseRTTUs, 100)
	}
	if c.RTOUs == 0 {
		c.RTOUs = 1000
	}
	if c.MaxQPs == 0 {
		c.MaxQPs = 1024
	}
	if c.MaxRxFlows == 0 {
		c.MaxRxFlows = 65536
	}
	if c.MaxPending == 0 {
		c.MaxPending = 65536
	}
	if c.EventRing == 0 {
		c.EventRing = 8192
	}
	if c.BurstBytes == 0 {
		c.BurstBytes = 16 * int64(c.MTUBytes+dataOverhead+wire.INTLen)
	}
	if c.NICBurstFrames == 0 {
		c.NICBurstFrames = 32
	}
	if c.PFCPriority == 0 {
		c.PFCPriority = 3
	}
	if c.SampleUs == 0 {
		c.SampleUs = 100
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = 1_000_000
	}
	if c.MaxFCTs == 0 {
		c.MaxFCTs = 1_000_000
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Trust == "" {
		c.Trust = TrustAll
	}
	for i := range c.Incast {
		if c.Incast[i].Repeat == 0 {
			c.Incast[i].Repeat = 1
		}
	}
}

// Trust settings (Config.Trust).
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
// tags (Config.TagPCP).
func vlanLen(tagPCP bool) int {
	if tagPCP {
		return wire.VLANTagLen
	}
	return 0
}

// configError names a key of the config; with a *config.File it carries the
// key's line.
func configError(f *config.File, key, format string, args ...any) error {
	if f != nil {
		return f.Errorf(key, format, args...)
	}
	return fmt.Errorf("hostd: %s: %s", key, fmt.Sprintf(format, args...))
}

// Upper bounds of Config fields that no table size derives.
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

// check is one numeric field's range check: err is a config range helper's
// result, note a remark the error ends with ("0: unlimited").
type check struct {
	key  string
	err  error
	note string
}

// firstBad returns the first failed check as an error at key(check.key).
func firstBad(f *config.File, key func(string) string, checks []check) error {
	for _, c := range checks {
		if c.err == nil {
			continue
		}
		if c.note != "" {
			return configError(f, key(c.key), "%v; %s", c.err, c.note)
		}
		return configError(f, key(c.key), "%v", c.err)
	}
	return nil
}

// checkNumbers range-checks every numeric field of c's top level (the
// flows, incasts and workloads are checked where resolve reads them). The
// bounds of tables the engine allocates whole derive from the entry size
// and this machine's memory (config.Entries).
func checkNumbers(c *Config, key func(string) string, f *config.File) error {
	if err := firstBad(f, key, []check{
		{"link_gbps", config.Positive(c.LinkGbps, MaxLinkGbps), ""},
		{"mtu_bytes", config.Int(int64(c.MTUBytes), 64, 9216-dataOverhead-wire.INTLen), "a full frame is at most 9216 bytes"},
		{"base_rtt_us", config.PositiveTime(c.BaseRTTUs, "us"), ""},
		{"expected_flows", config.Int(int64(c.ExpectedFlows), 1, 1<<22), ""},
		{"ack_every", config.Int(int64(c.AckEvery), 1, math.MaxUint32), ""},
		{"nak_interval_us", config.PositiveTime(c.NakIntervalUs, "us"), ""},
		{"rto_us", config.PositiveTime(c.RTOUs, "us"), ""},
		{"max_qps", config.Int(int64(c.MaxQPs), 1, 1<<16), ""},
		{"max_rx_flows", config.Int(int64(c.MaxRxFlows), 1, 1<<22), ""},
		{"max_pending", config.Entries(int64(c.MaxPending), 1, unsafe.Sizeof(pendingFlow{})), ""},
		{"event_ring", config.Int(int64(c.EventRing), 16, 1<<20), ""},
		{"burst_bytes", config.Int(c.BurstBytes, 0, maxBurstBytes), ""},
		{"nic_burst_frames", config.Int(int64(c.NICBurstFrames), 1, maxNICBurstFrames), ""},
		{"pfc_priority", config.Int(int64(c.PFCPriority), 0, 7), ""},
		{"sample_us", config.PositiveTime(c.SampleUs, "us"), ""},
		{"max_samples", config.Entries(int64(c.MaxSamples), 1, unsafe.Sizeof(RateSample{})), ""},
		{"max_fcts", config.Entries(int64(c.MaxFCTs), 1, unsafe.Sizeof(FCT{})), ""},
	}); err != nil {
		return err
	}
	if !(c.PacingJitter >= 0 && c.PacingJitter < 1) {
		return configError(f, key("pacing_jitter"), "got %v: want a number in [0, 1)", c.PacingJitter)
	}
	return nil
}

// mbufBytes is the memory of one mbuf of the pool cmd/hostd makes: the
// default 2176-byte data room, the 128-byte rte_mbuf and the mempool's
// object header, rounded up.
const mbufBytes = 2432

// maxLcore bounds an lcore id: DPDK's default RTE_MAX_LCORE is 128.
const maxLcore = 127

// checkNumbers range-checks the numeric fields of a hostd file outside its
// [host] table.
func (f *File) checkNumbers(cf *config.File) error {
	for _, k := range []struct {
		key    string
		lcores []uint
	}{{"lcores", f.Lcores}, {"tx_lcores", f.TxLcores}, {"rx_lcores", f.RxLcores}} {
		for i, l := range k.lcores {
			if l > maxLcore {
				return configError(cf, k.key, "lcore %d (entry %d): want 0..%d (DPDK's RTE_MAX_LCORE)", l, i, maxLcore)
			}
		}
	}
	return firstBad(cf, func(k string) string { return k }, []check{
		{"mbufs", config.Entries(int64(f.Mbufs), 1023, mbufBytes), ""},
		{"duration_s", config.Time(f.DurationS, "s"), "0: until SIGINT or SIGTERM"},
	})
}

// priorityCheck range-checks a flow's priority and adds it to r.prios.
func (r *resolved) priorityCheck(p *int) check {
	if p == nil {
		return check{}
	}
	err := config.Int(int64(*p), 0, 7)
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

// resolved is a validated Config turned into the engine's units.
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
	flows      []FlowConfig
	incast     []IncastConfig
	workloads  []workloadSpec
	cfg        Config
	flowDst    []uint32
	incastDst  []uint32
	seed       uint64
	maxSamples int
	// trusted: Trust is "topology"; cps the TrustedCPs.
	trusted bool
	cps     addrRanges
}

type workloadSpec struct {
	cfg  WorkloadConfig
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

// parseAddrRange parses "a.b.c.d", "a.b.c.d/n" or "a.b.c.d-e.f.g.h" into the
// addresses it names.
func parseAddrRange(s string) (lo, hi uint32, err error) {
	if i := strings.IndexByte(s, '-'); i >= 0 {
		if lo, err = wire.ParseIPv4(s[:i]); err == nil {
			hi, err = wire.ParseIPv4(s[i+1:])
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%q: want an address, a prefix (a.b.c.d/n) or a range (a.b.c.d-e.f.g.h)", s)
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("%q: the range ends before it starts", s)
		}
		return lo, hi, nil
	}
	if strings.IndexByte(s, '/') >= 0 {
		p, err := netip.ParsePrefix(s)
		if err != nil || !p.Addr().Is4() {
			return 0, 0, fmt.Errorf("%q: want an address, a prefix (a.b.c.d/n) or a range (a.b.c.d-e.f.g.h)", s)
		}
		a := p.Masked().Addr().As4()
		lo = uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
		return lo, lo | uint32(uint64(1)<<(32-p.Bits())-1), nil
	}
	if lo, err = wire.ParseIPv4(s); err != nil {
		return 0, 0, fmt.Errorf("%q: want an address, a prefix (a.b.c.d/n) or a range (a.b.c.d-e.f.g.h)", s)
	}
	return lo, lo, nil
}

// CheckConfig checks c as NewEngine does (defaults applied, every field's
// range, the CDF files read) without building the engine, which allocates
// the tables the config sizes: a validator (testbed validate, -check) can
// run exactly the checks a run would.
func CheckConfig(c Config) error {
	c.ApplyDefaults()
	_, err := resolve(&c, nil, "", "")
	return err
}

// resolve validates c (after ApplyDefaults) and converts it. f, when not nil,
// locates errors in the file; keyPrefix is the table c was decoded from
// ("host"); baseDir resolves relative CDF paths.
func resolve(c *Config, f *config.File, keyPrefix, baseDir string) (*resolved, error) {
	k := func(s string) string {
		if keyPrefix == "" {
			return s
		}
		return keyPrefix + "." + s
	}
	r := &resolved{cfg: *c}
	var err error
	if r.ip, err = wire.ParseIPv4(c.IP); err != nil {
		return nil, configError(f, k("ip"), "%v", err)
	}
	if c.MAC != "" {
		if r.mac, err = wire.ParseMAC(c.MAC); err != nil {
			return nil, configError(f, k("mac"), "%v", err)
		}
	}
	r.gateway = wire.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if c.GatewayMAC != "" {
		if r.gateway, err = wire.ParseMAC(c.GatewayMAC); err != nil {
			return nil, configError(f, k("gateway_mac"), "%v", err)
		}
	}
	if err := checkNumbers(c, k, f); err != nil {
		return nil, err
	}
	r.linkBps = c.LinkGbps * 1e9
	r.mtu = c.MTUBytes
	r.baseRTT = int64(c.BaseRTTUs * 1000)
	r.ackEvery = uint32(c.AckEvery)
	r.nakIv = int64(c.NakIntervalUs * 1000)
	r.rto = int64(c.RTOUs * 1000)
	r.burst = c.BurstBytes
	r.pfcPrio = c.PFCPriority
	r.tagPrio = c.TagPriority
	r.tagPCP = c.TagPCP
	r.prios = 1 << c.PFCPriority
	r.icrc = c.ICRC
	r.sampleNs = max(int64(c.SampleUs*1000), 1)
	r.seed = c.Seed
	r.maxSamples = c.MaxSamples
	switch c.Trust {
	case TrustAll:
		if len(c.TrustedCPs) > 0 {
			return nil, configError(f, k("trusted_cps"), "given with trust %q, which takes feedback from anyone: set trust = %q", TrustAll, TrustTopology)
		}
	case TrustTopology:
		r.trusted = true
	default:
		return nil, configError(f, k("trust"), "%q: want %q or %q", c.Trust, TrustAll, TrustTopology)
	}
	if len(c.TrustedCPs) > maxTrustedCPs {
		return nil, configError(f, k("trusted_cps"), "%d entries: at most %d (give prefixes or ranges)", len(c.TrustedCPs), maxTrustedCPs)
	}
	for i, a := range c.TrustedCPs {
		lo, hi, err := parseAddrRange(a)
		if err != nil {
			return nil, configError(f, k("trusted_cps"), "entry %d: %v", i, err)
		}
		r.cps = append(r.cps, addrRange{lo, hi})
	}
	r.cps = r.cps.merged()

	if r.scheme, err = ccalgo.Lookup(c.Scheme); err != nil {
		return nil, configError(f, k("scheme"), "%v", err)
	}
	if r.scheme.NewRP == nil {
		return nil, configError(f, k("scheme"), "scheme %q has no reaction point", c.Scheme)
	}
	r.intStack = c.Scheme == "hpcc"
	r.env = ccalgo.Env{
		LinkBps:       r.linkBps,
		BaseRTT:       r.baseRTT,
		MTU:           r.mtu,
		MaxFlows:      c.MaxRxFlows,
		ExpectedFlows: c.ExpectedFlows,
		ID:            r.ip,
	}
	r.params = r.scheme.DefaultParams(r.env)
	if c.Typed != nil {
		r.params = c.Typed
	} else if err := config.DecodeTable(c.CC, r.params); err != nil {
		var ce *config.Error
		if !errors.As(err, &ce) {
			return nil, configError(f, k("cc"), "%v", err)
		}
		key := k("cc")
		if ce.Key != "" {
			key += "." + ce.Key
		}
		return nil, configError(f, key, "scheme %s: %s", c.Scheme, ce.Msg)
	}
	// Build one RP and, when the scheme has one, the NP now, so that bad
	// parameters are reported against the config.
	if _, err := r.scheme.NewRP(r.params, r.env); err != nil {
		return nil, configError(f, k("cc"), "%v", err)
	}
	if r.scheme.NewNP != nil {
		if _, err := r.scheme.NewNP(r.params, r.env); err != nil {
			return nil, configError(f, k("cc"), "%v", err)
		}
	}

	r.peers = map[uint32]wire.MAC{}
	for i, p := range c.Peers {
		ip, err := wire.ParseIPv4(p.IP)
		if err != nil {
			return nil, configError(f, fmt.Sprintf("%s[%d].ip", k("peers"), i), "%v", err)
		}
		m, err := wire.ParseMAC(p.MAC)
		if err != nil {
			return nil, configError(f, fmt.Sprintf("%s[%d].mac", k("peers"), i), "%v", err)
		}
		r.peers[ip] = m
	}
	for i, fl := range c.Flows {
		key := func(s string) string { return fmt.Sprintf("%s[%d].%s", k("flows"), i, s) }
		ip, err := wire.ParseIPv4(fl.Dst)
		if err != nil {
			return nil, configError(f, key("dst"), "%v", err)
		}
		if err := firstBad(f, key, []check{
			{"size_bytes", config.Int(fl.SizeBytes, 0, MaxMessageBytes), "0: unlimited"},
			{"start_us", config.Time(fl.StartUs, "us"), ""},
			{"rate_gbps", config.Float(fl.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(fl.Priority),
		}); err != nil {
			return nil, err
		}
		r.flowDst = append(r.flowDst, ip)
	}
	r.flows = c.Flows
	// maxStarts bounds the static and incast starts: each is a pendingFlow
	// made when the engine is built.
	maxStarts := config.MaxEntries(unsafe.Sizeof(pendingFlow{}))
	starts := int64(len(c.Flows))
	for i, g := range c.Incast {
		key := func(s string) string { return fmt.Sprintf("%s[%d].%s", k("incast"), i, s) }
		ip, err := wire.ParseIPv4(g.Dst)
		if err != nil {
			return nil, configError(f, key("dst"), "%v", err)
		}
		if err := firstBad(f, key, []check{
			{"flows", config.Entries(int64(g.Flows), 1, unsafe.Sizeof(pendingFlow{})), ""},
			{"size_bytes", config.Int(g.SizeBytes, 1, MaxMessageBytes), ""},
			{"repeat", config.Entries(int64(g.Repeat), 1, unsafe.Sizeof(pendingFlow{})), ""},
			{"start_us", config.Time(g.StartUs, "us"), ""},
			{"period_us", config.Time(g.PeriodUs, "us"), ""},
			{"rate_gbps", config.Float(g.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(g.Priority),
		}); err != nil {
			return nil, err
		}
		if g.Repeat > 1 && !(g.PeriodUs > 0) {
			return nil, configError(f, key("period_us"), "must be > 0 with repeat > 1")
		}
		if last := g.StartUs + float64(g.Repeat-1)*g.PeriodUs; last > config.MaxTime("us") {
			return nil, configError(f, key("repeat"), "the last repeat starts at %.4g us: %v", last, config.Time(last, "us"))
		}
		// Every start of every group is a pendingFlow made up front.
		if int64(g.Repeat) > (maxStarts-starts)/int64(g.Flows) {
			return nil, configError(f, key("flows"), "flows x repeat = %.4g starts, with %d before: more than %d (%d B each, at most a quarter of this machine's %.1f GiB of memory)",
				float64(g.Flows)*float64(g.Repeat), starts, maxStarts, unsafe.Sizeof(pendingFlow{}), float64(config.MemTotal())/(1<<30))
		}
		starts += int64(g.Flows) * int64(g.Repeat)
		r.incastDst = append(r.incastDst, ip)
	}
	r.incast = c.Incast
	for i, w := range c.Workloads {
		key := func(s string) string { return fmt.Sprintf("%s[%d].%s", k("workloads"), i, s) }
		ws := workloadSpec{cfg: w}
		path := w.CDF
		if path == "" {
			return nil, configError(f, key("cdf"), "missing")
		}
		if !filepath.IsAbs(path) && baseDir != "" {
			path = filepath.Join(baseDir, path)
		}
		if ws.cdf, err = LoadCDF(path); err != nil {
			return nil, configError(f, key("cdf"), "%v", err)
		}
		if len(w.Dsts) == 0 && len(w.DstIPs) == 0 {
			return nil, configError(f, key("dsts"), "needs at least one destination")
		}
		ws.dsts = w.DstIPs
		if ws.dsts == nil {
			for _, d := range w.Dsts {
				ip, err := wire.ParseIPv4(d)
				if err != nil {
					return nil, configError(f, key("dsts"), "%v", err)
				}
				ws.dsts = append(ws.dsts, ip)
			}
		}
		if ws.dsts = otherDsts(ws.dsts, r.ip); len(ws.dsts) == 0 {
			return nil, configError(f, key("dsts"), "only this host's own address (%s): a host draws no flow to itself", c.IP)
		}
		if err := firstBad(f, key, []check{
			{"load", config.Positive(w.Load, 1), ""},
			{"start_us", config.Time(w.StartUs, "us"), ""},
			{"stop_us", config.Time(w.StopUs, "us"), "0: no end"},
			{"max_flows", config.Int(int64(w.MaxFlows), 0, math.MaxInt64), "0: no limit"},
			{"rate_gbps", config.Float(w.RateGbps, 0, MaxLinkGbps), "0: no cap"},
			r.priorityCheck(w.Priority),
		}); err != nil {
			return nil, err
		}
		if w.StopUs > 0 && w.StopUs <= w.StartUs {
			return nil, configError(f, key("stop_us"), "need start_us < stop_us (or stop_us 0: no end)")
		}
		r.workloads = append(r.workloads, ws)
	}
	return r, nil
}
