package pktgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/wire"
)

// Config is a pktgen run: the EAL, the lcores, the ports and what each port
// sends and receives. cmd/pktgen decodes it from TOML (config.Load) or builds it
// from flags; the testbed embeds PortConfig values in its own experiment files.
type Config struct {
	// EALArgs are the EAL arguments (cmd/pktgen only; an embedding process
	// has its own), eal_args as in switchd's and hostd's files.
	EALArgs []string `toml:"eal_args"`
	// EAL is the deprecated spelling of EALArgs: Validate moves it there (an
	// error when both are given) and DeprecatedEAL says it was used.
	EAL []string `toml:"eal"`
	// Lcores are the lcores that run poll loops; ports are spread over them round
	// robin, each loop polling the tx and rx side of its ports. Default: the first
	// worker lcore.
	Lcores []uint `toml:"lcores"`
	// DurationS stops generation after this many seconds (0: until SIGINT or the
	// ports' packet counts are reached).
	DurationS float64 `toml:"duration_s"`
	// StatsIntervalS is the period of the live stats lines (default 1 s; < 0: off).
	StatsIntervalS float64 `toml:"stats_interval_s"`
	// SummaryJSON is a path for the final summary as JSON ("" none, "-" stdout).
	SummaryJSON string `toml:"summary_json"`
	// LiveFlows is how many flows of each port the live stats lines show,
	// one compact line a flow under the port's (default 8; < 0: none; at
	// most the port's flow_stats).
	LiveFlows int `toml:"live_flows"`
	// PoolMbufs is the size of the mbuf pool shared by every port (default 16383).
	PoolMbufs uint32 `toml:"pool_mbufs"`
	// Ports, one entry a port.
	Ports []PortConfig `toml:"ports"`

	deprecatedEAL bool
	warnings      []string
}

// Warnings are what the last Validate found legal but likely unintended
// (flow rates that sum above the port's line rate), each naming the file,
// line and key as errors do: the caller prints them.
func (c *Config) Warnings() []string { return c.warnings }

// DeprecatedEAL reports whether Validate found the deprecated key eal (and
// moved it to EALArgs): the caller prints a one-line notice.
func (c *Config) DeprecatedEAL() bool { return c.deprecatedEAL }

// PortConfig is what one port sends (its stream) and whether it receives.
type PortConfig struct {
	// Name is the device: a PCI address or vdev name (cmd/pktgen opens it; the
	// Blaster takes an already-started port and ignores Name).
	Name string `toml:"name" required:"the device: a PCI address or vdev name"`
	// Tx enables the stream (default true); a receive-only port sets tx = false.
	Tx *bool `toml:"tx"`
	// Rx counts received pktgen packets: loss from sequence numbers, latency from
	// the embedded timestamps.
	Rx bool `toml:"rx"`

	// RateGbps caps the stream at this line rate in Gb/s of L1 bytes: each
	// frame's bytes plus its FCS, preamble and inter-frame gap (L1Overhead, 24
	// bytes), as a NIC's line rate counts. The reports give both L1 and L2
	// (frame bytes without FCS) rates.
	// RateMpps caps it in packets per second instead. Both 0: as fast as the
	// port takes packets (line rate on a NIC).
	RateGbps float64 `toml:"rate_gbps"`
	RateMpps float64 `toml:"rate_mpps"`
	// Shape modulates the rate over time ([ports.shape]: on/off bursts,
	// Poisson departures or a schedule of rate steps or ramps; ShapeConfig).
	Shape ShapeConfig `toml:"shape"`
	// BucketPackets is the token bucket depth in packets of the largest size
	// (default: one burst). It bounds how far the stream may run ahead after a stall.
	BucketPackets int `toml:"bucket_packets"`

	// Size is the frame length in bytes without FCS (what DPDK puts in the mbuf,
	// as dpdk-testpmd --txpkts does): 64 default, 60 minimum; for roce 82, the
	// default and minimum. Mix overrides it: "imix" (60:7, 590:4, 1514:1, the
	// simple IMIX 64/594/1518 with FCS; roce raises 60 to 82) or a list
	// "size:weight,size:weight".
	Size int    `toml:"size"`
	Mix  string `toml:"mix"`

	// Proto is "udp" (default: Ethernet / IPv4 / UDP / pktgen header) or "roce"
	// (RoCEv2 data packets of wire.BuildData: BTH SEND Only, PSN = sequence,
	// DataHeader = send timestamp, then the pktgen header).
	Proto string `toml:"proto"`
	// Flows is how many flows the stream cycles through, one packet each in
	// turn (default 1); Vary names the fields flow i adds i to: "src_port"
	// (default), "dst_port" (udp only), "src_ip", "dst_ip", "dest_qp" (roce).
	// Field gives varied fields a mode other than "inc" ([ports.field.NAME]
	// tables: range or random, FieldMode); a field with a table is varied.
	Flows int        `toml:"flows"`
	Vary  []string   `toml:"vary"`
	Field FieldModes `toml:"field"`
	// Flow gives the flows their own rates ([[ports.flow]] tables, one a
	// flow, in flow order; flows then defaults to their number and must
	// equal it when given). Each flow with a rate is paced by its own token
	// bucket, and the flows of a port are interleaved in one loop in the
	// order they become eligible; a flow without a rate takes what the
	// others and the port's cap leave. The port's rate_gbps or rate_mpps,
	// when set, is its line rate: it still caps the sum, a flow above it is
	// an error, a sum above it a warning (Config.Warnings).
	Flow []FlowConfig `toml:"flow"`

	SrcMAC  string `toml:"src_mac"`  // default 02:00:00:00:00:01
	DstMAC  string `toml:"dst_mac"`  // default 02:00:00:00:00:02
	SrcIP   string `toml:"src_ip"`   // default 10.0.0.1
	DstIP   string `toml:"dst_ip"`   // default 10.0.0.2
	SrcPort uint16 `toml:"src_port"` // default 1024
	DstPort uint16 `toml:"dst_port"` // default 9 (discard); roce: 4791
	DestQP  uint32 `toml:"dest_qp"`  // roce: BTH destination QP (default 1)
	DSCP    uint8  `toml:"dscp"`

	// FlowStats is how many flows the port's live per-flow stats track
	// (live lines, JSON summary, /metrics with a flow label): on the send
	// side its stream's flows 0..FlowStats-1, on the receive side the first
	// FlowStats (stream, flow) pairs it receives. Default 64 (0), < 0 none,
	// at most MaxFlowStats (1023: the flow ids the pktgen header carries).
	FlowStats int `toml:"flow_stats"`

	// Replay makes the port send a capture's frames instead of building its
	// stream ([ports.replay]: ReplayConfig); size, mix, proto and the flow
	// keys are then errors.
	Replay *ReplayConfig `toml:"replay"`

	// Count stops the stream after this many packets (0: no limit).
	Count uint64 `toml:"count"`
	// Burst is the tx and rx burst size (default 32, at most 512).
	Burst int `toml:"burst"`
}

// FlowConfig is one flow's rate: RateGbps in Gb/s of L1 bytes (as the port's
// rate_gbps) or RateMpps in packets per second; both 0: no cap of its own.
type FlowConfig struct {
	RateGbps float64 `toml:"rate_gbps"`
	RateMpps float64 `toml:"rate_mpps"`
}

// ParseFlowRates parses cmd/pktgen's -flow-rates: one entry a flow, comma
// separated, each a rate in Gb/s of L1 bytes ("2.5" or "2.5g"), in Mpps
// ("0.5mpps" or "0.5m"), or "0" or "-" for a flow with no cap of its own.
// Ranges are Validate's.
func ParseFlowRates(s string) ([]FlowConfig, error) {
	var out []FlowConfig
	for _, e := range strings.Split(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		var f FlowConfig
		num, mpps := e, false
		switch {
		case e == "-":
			num = "0"
		case strings.HasSuffix(e, "mpps"):
			num, mpps = strings.TrimSuffix(e, "mpps"), true
		case strings.HasSuffix(e, "m"):
			num, mpps = strings.TrimSuffix(e, "m"), true
		case strings.HasSuffix(e, "g"):
			num = strings.TrimSuffix(e, "g")
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || num == "" {
			return nil, fmt.Errorf("flow rate %q: want Gb/s (2.5 or 2.5g), Mpps (0.5mpps) or 0", e)
		}
		if mpps {
			f.RateMpps = v
		} else {
			f.RateGbps = v
		}
		out = append(out, f)
	}
	return out, nil
}

// Rated reports whether the flow has a rate of its own.
func (f *FlowConfig) Rated() bool { return f.RateGbps > 0 || f.RateMpps > 0 }

// NumFlows is the number of flows the stream cycles through or paces.
// When flows is not given it is the number of [[ports.flow]] tables, else
// the number of values of the longest field range, else 1.
func (p *PortConfig) NumFlows() int {
	if p.Flows == 0 && len(p.Flow) > 0 {
		return len(p.Flow)
	}
	if p.Flows == 0 {
		return max(p.longestRange(), 1)
	}
	return p.Flows
}

// Default flow_stats and live_flows.
const (
	DefaultFlowStats = 64
	DefaultLiveFlows = 8
)

// TrackedFlows is the number of flows the port's live per-flow stats
// track (flow_stats with its default).
func (p *PortConfig) TrackedFlows() int {
	return min(countOr(p.FlowStats, DefaultFlowStats), MaxFlowStats)
}

// ShownFlows is the number of flows a port's live lines show (live_flows
// with its default).
func (c *Config) ShownFlows() int { return countOr(c.LiveFlows, DefaultLiveFlows) }

// countOr is a count key's value: def when 0, none when negative.
func countOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// perFlowRates reports whether any flow has a rate of its own (the stream
// then runs its flow scheduler instead of taking the flows in turn).
func (p *PortConfig) perFlowRates() bool {
	for i := range p.Flow {
		if p.Flow[i].Rated() {
			return true
		}
	}
	return false
}

// Defaults of a PortConfig.
const (
	DefaultSize    = 64
	DefaultBurst   = 32
	MaxBurst       = 512
	DefaultSrcPort = 1024
	DefaultDstPort = 9
	// MinFrameLen is the smallest frame pktgen builds: Ethernet's minimum without FCS.
	MinFrameLen = wire.MinFrameLen
	// MaxFrameLen is the largest frame (a 9000-byte MTU jumbo frame).
	MaxFrameLen = 9014
	// L1Overhead is what each frame costs on the wire beyond its bytes: FCS 4,
	// preamble and SFD 8, inter-frame gap 12.
	L1Overhead = 24
)

// SizeWeight is one entry of a size mix.
type SizeWeight struct {
	Size, Weight int
}

// IMIX is the simple IMIX (64, 594, 1518 bytes with FCS in a 7:4:1 ratio), as
// frame lengths without FCS.
var IMIX = []SizeWeight{{60, 7}, {590, 4}, {1514, 1}}

// TxEnabled reports whether the port sends.
func (p *PortConfig) TxEnabled() bool { return p.Tx == nil || *p.Tx }

// SizeMix returns the sizes and weights the stream sends.
func (p *PortConfig) SizeMix() ([]SizeWeight, error) {
	roceMin := minFrame(true)
	if p.Mix == "" {
		s := p.Size
		if s == 0 {
			s = DefaultSize
			if p.Proto == "roce" {
				s = roceMin
			}
		}
		return []SizeWeight{{s, 1}}, nil
	}
	if strings.EqualFold(p.Mix, "imix") {
		out := append([]SizeWeight(nil), IMIX...)
		if p.Proto == "roce" {
			// A RoCE frame with the pktgen header cannot be 60 bytes: the
			// small IMIX size becomes the smallest RoCE frame.
			for i := range out {
				out[i].Size = max(out[i].Size, roceMin)
			}
		}
		return out, nil
	}
	var out []SizeWeight
	for _, f := range strings.Split(p.Mix, ",") {
		s, w, ok := strings.Cut(strings.TrimSpace(f), ":")
		if !ok {
			w = "1"
		}
		sz, err1 := strconv.Atoi(strings.TrimSpace(s))
		wt, err2 := strconv.Atoi(strings.TrimSpace(w))
		if err1 != nil || err2 != nil || wt <= 0 {
			return nil, fmt.Errorf("mix entry %q: want size:weight with a positive weight", f)
		}
		out = append(out, SizeWeight{sz, wt})
	}
	return out, nil
}

// endpoints resolves the addresses with their defaults.
func (p *PortConfig) endpoints() (wire.Endpoints, error) {
	var ep wire.Endpoints
	var err error
	if ep.SrcMAC, err = wire.ParseMAC(orDefault(p.SrcMAC, "02:00:00:00:00:01")); err != nil {
		return ep, fmt.Errorf("src_mac: %w", err)
	}
	if ep.DstMAC, err = wire.ParseMAC(orDefault(p.DstMAC, "02:00:00:00:00:02")); err != nil {
		return ep, fmt.Errorf("dst_mac: %w", err)
	}
	if ep.SrcIP, err = wire.ParseIPv4(orDefault(p.SrcIP, "10.0.0.1")); err != nil {
		return ep, fmt.Errorf("src_ip: %w", err)
	}
	if ep.DstIP, err = wire.ParseIPv4(orDefault(p.DstIP, "10.0.0.2")); err != nil {
		return ep, fmt.Errorf("dst_ip: %w", err)
	}
	ep.SrcPort = p.SrcPort
	if ep.SrcPort == 0 {
		ep.SrcPort = DefaultSrcPort
	}
	ep.DstPort = p.DstPort
	if p.Proto == "roce" {
		ep.DstPort = wire.RoCEv2Port
	} else if ep.DstPort == 0 {
		ep.DstPort = DefaultDstPort
	}
	ep.DSCP = p.DSCP
	return ep, nil
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Validate checks every port; errors name the key (and its line when f is the
// file the config came from; f may be nil).
func (c *Config) Validate(f *config.File) error {
	errf := func(key, format string, args ...any) error {
		if f != nil {
			return f.Errorf(key, format, args...)
		}
		return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
	c.warnings = nil
	warnf := func(key, format string, args ...any) {
		c.warnings = append(c.warnings, errf(key, format, args...).Error())
	}
	if len(c.EAL) > 0 {
		if len(c.EALArgs) > 0 {
			return errf("eal", "give eal_args alone: eal is its deprecated spelling")
		}
		c.EALArgs, c.EAL, c.deprecatedEAL = c.EAL, nil, true
	}
	if len(c.Ports) == 0 {
		return errf("ports", "no ports")
	}
	if err := config.Time(c.DurationS, "s"); err != nil {
		return errf("duration_s", "%v; 0: until SIGINT or the packet counts", err)
	}
	if c.StatsIntervalS >= 0 || math.IsNaN(c.StatsIntervalS) || math.IsInf(c.StatsIntervalS, 0) {
		if err := config.Time(c.StatsIntervalS, "s"); err != nil {
			return errf("stats_interval_s", "%v; 0: 1 s, < 0: off", err)
		}
	}
	for i, l := range c.Lcores {
		if l > MaxLcore {
			return errf("lcores", "lcore %d (entry %d): want 0..%d (DPDK's RTE_MAX_LCORE)", l, i, MaxLcore)
		}
	}
	if c.LiveFlows > MaxFlowStats {
		return errf("live_flows", "%d, at most %d (0: %d, < 0: none)", c.LiveFlows, MaxFlowStats, DefaultLiveFlows)
	}
	if len(c.Ports) > MaxStreams {
		return errf("ports", "%d ports, at most %d", len(c.Ports), MaxStreams)
	}
	jumbo := false
	for i := range c.Ports {
		if err := c.Ports[i].validate(); err != nil {
			key, msg, _ := strings.Cut(err.Error(), ": ")
			return errf(fmt.Sprintf("ports[%d].%s", i, key), "%s", msg)
		}
		if sum, line := c.Ports[i].flowRateSum(); sum > line*(1+1e-9) {
			warnf(fmt.Sprintf("ports[%d].flow", i),
				"the flows' rates sum to %.4g Gb/s L1, above the port's line rate %.4g Gb/s: the port's cap scales them down", sum, line)
		}
		mix, _ := c.Ports[i].SizeMix()
		for _, sw := range mix {
			jumbo = jumbo || sw.Size > 2048
		}
	}
	// The pool is made whole at start: its mbufs must fit in memory (jumbo
	// frames take mbufs of MaxFrameLen bytes of data room).
	per := uintptr(mbufBytes)
	if jumbo {
		per = jumboMbufBytes
	}
	if err := config.Entries(int64(c.PoolMbufs), 0, per); err != nil {
		return errf("pool_mbufs", "%v; 0: 16383", err)
	}
	return nil
}

// Bounds of numeric fields.
const (
	// MaxLcore is the largest lcore id: DPDK's default RTE_MAX_LCORE is 128.
	MaxLcore = 127
	// MaxRateGbps bounds rate_gbps: 1.6 Tb/s, the fastest Ethernet standardised.
	MaxRateGbps = 1600
	// MaxRateMpps bounds rate_mpps: MaxRateGbps in the smallest frames
	// (60 bytes and 24 on the wire beside them), about 2381 Mpps.
	MaxRateMpps = MaxRateGbps * 1e3 / ((MinFrameLen + L1Overhead) * 8)
	// MaxBucketPackets bounds bucket_packets: the token bucket counts bits x
	// 1e9 in an int64, and 2^16 frames of MaxFrameLen (7.2e13 each) stay
	// below 2^63.
	MaxBucketPackets = 1 << 16
	// MaxMixWeight bounds a weight of a size mix (the weights are summed in
	// an int).
	MaxMixWeight = 1 << 20
	// mbufBytes is the memory of one mbuf of the default 2176-byte data
	// room with its 128-byte rte_mbuf and the mempool's object header,
	// rounded up; jumboMbufBytes the same with room for MaxFrameLen.
	mbufBytes      = 2432
	jumboMbufBytes = MaxFrameLen + 128 + 128 + 256
)

// validate returns "key: message" errors.
func (p *PortConfig) validate() error {
	if p.Replay != nil {
		if err := p.Replay.validate(p); err != nil {
			return err
		}
	}
	switch p.Proto {
	case "", "udp", "roce":
	default:
		return fmt.Errorf("proto: %q, want udp or roce", p.Proto)
	}
	if err := config.Float(p.RateGbps, 0, MaxRateGbps); err != nil {
		return fmt.Errorf("rate_gbps: %v; 0: no cap", err)
	}
	if err := config.Float(p.RateMpps, 0, MaxRateMpps); err != nil {
		return fmt.Errorf("rate_mpps: %v; 0: no cap", err)
	}
	if p.RateGbps > 0 && p.RateMpps > 0 {
		return fmt.Errorf("rate_mpps: set rate_gbps or rate_mpps, not both")
	}
	if p.Burst < 0 || p.Burst > MaxBurst {
		return fmt.Errorf("burst: %d, want 1..%d", p.Burst, MaxBurst)
	}
	if p.Flows < 0 || p.Flows > MaxFlows {
		return fmt.Errorf("flows: %d, want 1..%d", p.Flows, MaxFlows)
	}
	line, unit := p.RateGbps, "rate_gbps"
	if p.RateMpps > 0 {
		line, unit = p.RateMpps, "rate_mpps"
	}
	if err := p.Shape.validate(line, unit); err != nil {
		return err
	}
	if p.FlowStats > MaxFlowStats {
		return fmt.Errorf("flow_stats: %d, at most %d (the flow ids the pktgen header carries; 0: %d, < 0: none)", p.FlowStats, MaxFlowStats, DefaultFlowStats)
	}
	if err := config.Int(int64(p.BucketPackets), 0, MaxBucketPackets); err != nil {
		return fmt.Errorf("bucket_packets: %v; 0: one burst", err)
	}
	if err := config.Int(int64(p.DSCP), 0, 63); err != nil {
		return fmt.Errorf("dscp: %v: a 6-bit field", err)
	}
	if err := config.Int(int64(p.DestQP), 0, 1<<24-1); err != nil {
		return fmt.Errorf("dest_qp: %v: BTH's 24-bit QP number (0: 1)", err)
	}
	mix, err := p.SizeMix()
	if err != nil {
		return fmt.Errorf("mix: %v", err)
	}
	if err := p.validateFlows(mix); err != nil {
		return err
	}
	min := minFrame(p.Proto == "roce")
	for _, sw := range mix {
		if sw.Weight > MaxMixWeight {
			return fmt.Errorf("mix: weight %d: want 1..%d", sw.Weight, MaxMixWeight)
		}
		if sw.Size < min || sw.Size > MaxFrameLen {
			key := "size"
			if p.Mix != "" {
				key = "mix"
			}
			return fmt.Errorf("%s: size %d out of range %d..%d", key, sw.Size, min, MaxFrameLen)
		}
	}
	if _, err := p.plan(); err != nil {
		return err
	}
	if _, err := p.endpoints(); err != nil {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		return fmt.Errorf("%s: %s", key, msg)
	}
	return nil
}

// meanL1Bits is the mean L1 size of the stream's frames in bits (frame, FCS,
// preamble and gap), weighted by the mix: what converts packet rates to line
// rates.
func meanL1Bits(mix []SizeWeight) float64 {
	var bits, w float64
	for _, sw := range mix {
		bits += float64(sw.Weight) * float64(sw.Size+L1Overhead) * 8
		w += float64(sw.Weight)
	}
	if w == 0 {
		return 0
	}
	return bits / w
}

// lineGbps is the port's line rate in Gb/s L1: its rate_gbps, or its rate_mpps
// in frames of the mix's mean size; 0 when it has no cap.
func (p *PortConfig) lineGbps(mix []SizeWeight) float64 {
	switch {
	case p.RateGbps > 0:
		return p.RateGbps
	case p.RateMpps > 0:
		return p.RateMpps * meanL1Bits(mix) / 1e3
	}
	return 0
}

// gbps is the flow's rate in Gb/s L1 (a packet rate in frames of the mix's
// mean size); 0 when it has none.
func (f *FlowConfig) gbps(mix []SizeWeight) float64 {
	if f.RateMpps > 0 {
		return f.RateMpps * meanL1Bits(mix) / 1e3
	}
	return f.RateGbps
}

// flowRateSum is the sum of the flows' rates and the port's line rate, both
// in Gb/s L1; the sum is 0 when a flow has no rate (it takes what is left,
// never too much) or the port has no cap.
func (p *PortConfig) flowRateSum() (sum, line float64) {
	mix, err := p.SizeMix()
	if err != nil || !p.perFlowRates() {
		return 0, 0
	}
	line = p.lineGbps(mix)
	if line == 0 {
		return 0, 0
	}
	for i := range p.Flow {
		if !p.Flow[i].Rated() {
			return 0, line
		}
		sum += p.Flow[i].gbps(mix)
	}
	return sum, line
}

// validateFlows checks the [[ports.flow]] tables: ranges, one rate each at
// most, their number against flows, and each rate against the port's line
// rate (rate_gbps or rate_mpps, when set).
func (p *PortConfig) validateFlows(mix []SizeWeight) error {
	if len(p.Flow) == 0 {
		return nil
	}
	if len(p.Flow) > MaxFlows {
		return fmt.Errorf("flow: %d flow tables, at most %d", len(p.Flow), MaxFlows)
	}
	if p.Flows != 0 && p.Flows != len(p.Flow) {
		return fmt.Errorf("flows: %d, but %d [[ports.flow]] tables: drop flows or make them agree", p.Flows, len(p.Flow))
	}
	line := p.lineGbps(mix)
	for j := range p.Flow {
		f := &p.Flow[j]
		if err := config.Float(f.RateGbps, 0, MaxRateGbps); err != nil {
			return fmt.Errorf("flow[%d].rate_gbps: %v; 0: no cap of its own", j, err)
		}
		if err := config.Float(f.RateMpps, 0, MaxRateMpps); err != nil {
			return fmt.Errorf("flow[%d].rate_mpps: %v; 0: no cap of its own", j, err)
		}
		if f.RateGbps > 0 && f.RateMpps > 0 {
			return fmt.Errorf("flow[%d].rate_mpps: set rate_gbps or rate_mpps, not both", j)
		}
		if g := f.gbps(mix); line > 0 && g > line*(1+1e-9) {
			key, val := "rate_gbps", fmt.Sprintf("%g Gb/s", f.RateGbps)
			if f.RateMpps > 0 {
				key, val = "rate_mpps", fmt.Sprintf("%g Mpps (%.4g Gb/s L1 in the stream's frames)", f.RateMpps, g)
			}
			return fmt.Errorf("flow[%d].%s: %s is above the port's line rate %.4g Gb/s L1 (its rate_gbps or rate_mpps)", j, key, val, line)
		}
	}
	return nil
}
