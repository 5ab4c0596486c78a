package daemon

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/wire"
)

// Config is one host as a file gives it: the [host] table of a hostd TOML
// file (see configs/host-*.toml), which testbed nodes writes for each host
// it starts. Its fields are hostd.Spec's with addresses as text, times in
// microseconds, the scheme's parameters as a table and workloads' CDFs as
// file names; Config.Spec turns it into the spec. Zero values of optional
// fields take the defaults named in their comments
// (hostd.Spec.ApplyDefaults).
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
	Seed       uint64  `toml:"seed"`     // workload generator seed (default 1)

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
	// TxCounters.Refused; Engine.Refused sums them): hostd.Spec.Trust.
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
	IDBase   int      `toml:"id_base"`
	CDF      string   `toml:"cdf" required:"a flow-size CDF file"` // path, relative to the config file's directory
	Dsts     []string `toml:"dsts" required:"the destinations' IPv4 addresses"`
	Load     float64  `toml:"load" required:"the offered load, a fraction of the line rate"`
	StartUs  float64  `toml:"start_us"`
	StopUs   float64  `toml:"stop_us"`
	MaxFlows int      `toml:"max_flows"`
	RateGbps float64  `toml:"rate_gbps"`
	// Priority is the generated flows' priority (0-7), as
	// FlowConfig.Priority; nil: PFCPriority.
	Priority *int `toml:"priority"`
}

// fileError puts err, when it is a *hostd.SpecError, at its key under the
// table prefix in cf ("host.flows[2].size_bytes" at its line); other errors
// and a nil cf leave it as it is.
func fileError(cf *config.File, prefix string, err error) error {
	var se *hostd.SpecError
	if cf == nil || !errors.As(err, &se) {
		return err
	}
	return cf.Errorf(prefix+"."+se.Key, "%s", se.Msg)
}

// keyError is an error at key of the table prefix: in cf at its line, or,
// with no file, a *hostd.SpecError.
func keyError(cf *config.File, prefix, key, format string, args ...any) error {
	return fileError(cf, prefix, &hostd.SpecError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Spec turns c into the spec the engine takes: addresses parsed, times
// range-checked in microseconds and converted to ns (config.UsToNs), defaults
// applied, the scheme's [cc] table decoded over its defaults, the
// workloads' CDF files read (relative paths from baseDir), MemBytes this
// machine's memory (config.MemTotal). Errors name c's keys under the table
// prefix ("host"), at their lines in cf when it is not nil. The spec is
// not checked further: hostd.CheckSpec and NewEngine do that.
func (c Config) Spec(cf *config.File, prefix, baseDir string) (hostd.Spec, error) {
	bad := func(key string, err error) error { return keyError(cf, prefix, key, "%v", err) }
	s := hostd.Spec{
		Name: c.Name, LinkGbps: c.LinkGbps, MTUBytes: c.MTUBytes, Scheme: c.Scheme,
		ExpectedFlows: c.ExpectedFlows, AckEvery: c.AckEvery,
		MaxQPs: c.MaxQPs, MaxRxFlows: c.MaxRxFlows, MaxPending: c.MaxPending, EventRing: c.EventRing,
		BurstBytes: c.BurstBytes, NICBurstFrames: c.NICBurstFrames, PacingJitter: c.PacingJitter,
		PFCPriority: c.PFCPriority, TagPriority: c.TagPriority, TagPCP: c.TagPCP, ICRC: c.ICRC,
		MaxSamples: c.MaxSamples, MaxFCTs: c.MaxFCTs, Seed: c.Seed,
		MemBytes: config.MemTotal(), Trust: c.Trust,
	}
	var err error
	for _, t := range []struct {
		key string
		us  float64
		ns  *int64
	}{
		{"base_rtt_us", c.BaseRTTUs, &s.BaseRTTNs}, {"nak_interval_us", c.NakIntervalUs, &s.NakIntervalNs},
		{"rto_us", c.RTOUs, &s.RTONs}, {"sample_us", c.SampleUs, &s.SampleNs},
	} {
		if *t.ns, err = usTime(t.key, t.us, "the default"); err != nil {
			return s, fileError(cf, prefix, err)
		}
	}
	if s.IP, err = wire.ParseIPv4(c.IP); err != nil {
		return s, bad("ip", err)
	}
	if c.MAC != "" {
		if s.MAC, err = wire.ParseMAC(c.MAC); err != nil {
			return s, bad("mac", err)
		}
	}
	if c.GatewayMAC != "" {
		if s.GatewayMAC, err = wire.ParseMAC(c.GatewayMAC); err != nil {
			return s, bad("gateway_mac", err)
		}
	}
	if len(c.TrustedCPs) > maxTrustedCPs {
		return s, keyError(cf, prefix, "trusted_cps", "%d entries: at most %d (give prefixes or ranges)", len(c.TrustedCPs), maxTrustedCPs)
	}
	for i, a := range c.TrustedCPs {
		lo, hi, err := parseAddrRange(a)
		if err != nil {
			return s, keyError(cf, prefix, "trusted_cps", "entry %d: %v", i, err)
		}
		s.TrustedCPs = append(s.TrustedCPs, hostd.AddrRange{Lo: lo, Hi: hi})
	}
	s.ApplyDefaults()
	if err := fileError(cf, prefix, hostd.CheckSpec(hostd.Spec{IP: s.IP, LinkGbps: s.LinkGbps, MTUBytes: s.MTUBytes,
		BaseRTTNs: s.BaseRTTNs, ExpectedFlows: s.ExpectedFlows, MaxRxFlows: s.MaxRxFlows})); err != nil {
		// The fields the scheme's defaults derive from (Env), before the
		// [cc] table is decoded over them.
		return s, err
	}
	sc, err := ccalgo.Lookup(s.Scheme)
	if err != nil {
		return s, bad("scheme", err)
	}
	s.Params = sc.DefaultParams(s.Env())
	if err := config.DecodeTable(c.CC, s.Params); err != nil {
		var ce *config.Error
		if !errors.As(err, &ce) {
			return s, bad("cc", err)
		}
		key := "cc"
		if ce.Key != "" {
			key += "." + ce.Key
		}
		return s, keyError(cf, prefix, key, "scheme %s: %s", s.Scheme, ce.Msg)
	}
	for i, p := range c.Peers {
		var hp hostd.Peer
		if hp.IP, err = wire.ParseIPv4(p.IP); err != nil {
			return s, bad(fmt.Sprintf("peers[%d].ip", i), err)
		}
		if hp.MAC, err = wire.ParseMAC(p.MAC); err != nil {
			return s, bad(fmt.Sprintf("peers[%d].mac", i), err)
		}
		s.Peers = append(s.Peers, hp)
	}
	for i, fl := range c.Flows {
		dst, err := wire.ParseIPv4(fl.Dst)
		if err != nil {
			return s, bad(fmt.Sprintf("flows[%d].dst", i), err)
		}
		start, err := usTime(fmt.Sprintf("flows[%d].start_us", i), fl.StartUs, "")
		if err != nil {
			return s, fileError(cf, prefix, err)
		}
		s.Flows = append(s.Flows, hostd.Flow{ID: fl.ID, Dst: dst, SizeBytes: fl.SizeBytes, StartNs: start,
			RateGbps: fl.RateGbps, Priority: fl.Priority})
	}
	for i, g := range c.Incast {
		dst, err := wire.ParseIPv4(g.Dst)
		if err != nil {
			return s, bad(fmt.Sprintf("incast[%d].dst", i), err)
		}
		hg, err := g.incast(fmt.Sprintf("incast[%d].", i))
		if err != nil {
			return s, fileError(cf, prefix, err)
		}
		hg.Dst = dst
		s.Incast = append(s.Incast, hg)
	}
	for i, w := range c.Workloads {
		key := func(k string) string { return fmt.Sprintf("workloads[%d].%s", i, k) }
		hw := hostd.Workload{IDBase: w.IDBase, Load: w.Load, MaxFlows: w.MaxFlows, RateGbps: w.RateGbps,
			Priority: w.Priority}
		if hw.StartNs, err = usTime(key("start_us"), w.StartUs, ""); err != nil {
			return s, fileError(cf, prefix, err)
		}
		if hw.StopNs, err = usTime(key("stop_us"), w.StopUs, "no end"); err != nil {
			return s, fileError(cf, prefix, err)
		}
		if hw.StopNs > 0 && hw.StopNs <= hw.StartNs {
			return s, keyError(cf, prefix, key("stop_us"), "need start_us < stop_us (or stop_us 0: no end)")
		}
		path := w.CDF
		if path == "" {
			return s, keyError(cf, prefix, key("cdf"), "missing")
		}
		if !filepath.IsAbs(path) && baseDir != "" {
			path = filepath.Join(baseDir, path)
		}
		if hw.CDF, err = LoadCDF(path); err != nil {
			return s, bad(key("cdf"), err)
		}
		for _, d := range w.Dsts {
			ip, err := wire.ParseIPv4(d)
			if err != nil {
				return s, bad(key("dsts"), err)
			}
			hw.Dsts = append(hw.Dsts, ip)
		}
		s.Workloads = append(s.Workloads, hw)
	}
	return s, nil
}

// ConfigOf is the [host] table of s, for a tool that writes a hostd file
// from a spec (testbed nodes): addresses as text, times in microseconds
// (config.NsToUs, which Spec inverts), each workload's CDF by the name it
// was read from (CDF.Name). It leaves CC empty: a spec holds its scheme's
// parameters as a typed struct, and the writer gives the table it decoded
// them from.
func ConfigOf(s hostd.Spec) Config {
	c := Config{
		Name: s.Name, IP: wire.FormatIPv4(s.IP), LinkGbps: s.LinkGbps, MTUBytes: s.MTUBytes,
		BaseRTTUs: config.NsToUs(s.BaseRTTNs), Scheme: s.Scheme, ExpectedFlows: s.ExpectedFlows,
		AckEvery: s.AckEvery, NakIntervalUs: config.NsToUs(s.NakIntervalNs), RTOUs: config.NsToUs(s.RTONs),
		MaxQPs: s.MaxQPs, MaxRxFlows: s.MaxRxFlows, MaxPending: s.MaxPending, EventRing: s.EventRing,
		BurstBytes: s.BurstBytes, NICBurstFrames: s.NICBurstFrames, PacingJitter: s.PacingJitter,
		PFCPriority: s.PFCPriority, TagPriority: s.TagPriority, TagPCP: s.TagPCP, ICRC: s.ICRC,
		SampleUs: config.NsToUs(s.SampleNs), MaxSamples: s.MaxSamples, MaxFCTs: s.MaxFCTs, Seed: s.Seed, Trust: s.Trust,
	}
	if s.MAC != (wire.MAC{}) {
		c.MAC = s.MAC.String()
	}
	if s.GatewayMAC != (wire.MAC{}) {
		c.GatewayMAC = s.GatewayMAC.String()
	}
	for _, r := range s.TrustedCPs {
		c.TrustedCPs = append(c.TrustedCPs, r.String())
	}
	for _, p := range s.Peers {
		c.Peers = append(c.Peers, Peer{IP: wire.FormatIPv4(p.IP), MAC: p.MAC.String()})
	}
	for _, f := range s.Flows {
		c.Flows = append(c.Flows, FlowConfig{ID: f.ID, Dst: wire.FormatIPv4(f.Dst), SizeBytes: f.SizeBytes,
			StartUs: config.NsToUs(f.StartNs), RateGbps: f.RateGbps, Priority: f.Priority})
	}
	for _, g := range s.Incast {
		c.Incast = append(c.Incast, IncastConfig{IDBase: g.IDBase, Dst: wire.FormatIPv4(g.Dst), Flows: g.Flows,
			SizeBytes: g.SizeBytes, StartUs: config.NsToUs(g.StartNs), Repeat: g.Repeat,
			PeriodUs: config.NsToUs(g.PeriodNs), RateGbps: g.RateGbps, Priority: g.Priority})
	}
	for _, w := range s.Workloads {
		wc := WorkloadConfig{IDBase: w.IDBase, Load: w.Load, StartUs: config.NsToUs(w.StartNs), StopUs: config.NsToUs(w.StopNs),
			MaxFlows: w.MaxFlows, RateGbps: w.RateGbps, Priority: w.Priority}
		if w.CDF != nil {
			wc.CDF = w.CDF.Name
		}
		for _, d := range w.Dsts {
			wc.Dsts = append(wc.Dsts, wire.FormatIPv4(d))
		}
		c.Workloads = append(c.Workloads, wc)
	}
	return c
}

// usTime is us, the time a file gives at key in microseconds, in ns
// (config.UsToNs), or a *hostd.SpecError at key when it is not finite, is
// negative or is beyond 2^60 ns. zero, when not empty, is what 0 means
// ("the default"): a time above 0 that rounds to 0 ns would mean it too,
// and is an error.
func usTime(key string, us float64, zero string) (int64, error) {
	if err := config.Time(us, "us"); err != nil {
		if zero != "" {
			return 0, &hostd.SpecError{Key: key, Msg: fmt.Sprintf("%v; 0: %s", err, zero)}
		}
		return 0, &hostd.SpecError{Key: key, Msg: err.Error()}
	}
	ns := config.UsToNs(us)
	if ns == 0 && us > 0 && zero != "" {
		return 0, &hostd.SpecError{Key: key, Msg: fmt.Sprintf("got %v: below half a nanosecond, the engine's unit (0: %s)", us, zero)}
	}
	return ns, nil
}

// incast is the group g (its key prefix "incast[2].") without its
// destination: its times in ns, checked as the engine checks them, so
// that a file's error names the file's keys. The engine's other checks
// (flows, repeat, sizes) are left to it.
func (g IncastConfig) incast(key string) (hostd.Incast, error) {
	hg := hostd.Incast{IDBase: g.IDBase, Flows: g.Flows, SizeBytes: g.SizeBytes, Repeat: g.Repeat,
		RateGbps: g.RateGbps, Priority: g.Priority}
	var err error
	if hg.StartNs, err = usTime(key+"start_us", g.StartUs, ""); err != nil {
		return hg, err
	}
	if hg.PeriodNs, err = usTime(key+"period_us", g.PeriodUs, ""); err != nil {
		return hg, err
	}
	if g.Repeat <= 1 {
		return hg, nil
	}
	if hg.PeriodNs == 0 {
		return hg, &hostd.SpecError{Key: key + "period_us", Msg: "must be > 0 with repeat > 1 (at least half a nanosecond)"}
	}
	if int64(g.Repeat-1) > (config.MaxTimeNs-hg.StartNs)/hg.PeriodNs {
		return hg, &hostd.SpecError{Key: key + "repeat", Msg: fmt.Sprintf(
			"the last repeat starts at %.4g us: want at most %.4g us (2^60 ns: the engines' int64-ns clocks stay far from overflow)",
			g.StartUs+float64(g.Repeat-1)*g.PeriodUs, config.MaxTime("us"))}
	}
	return hg, nil
}

// LoadCDF reads a CDF file: a regular file of at most config.MaxCDFBytes
// (not a device or a pipe, which could block or never end; config.ReadFile).
func LoadCDF(path string) (*hostd.CDF, error) {
	b, err := config.ReadFile(path, config.MaxCDFBytes)
	if err != nil {
		return nil, err
	}
	return hostd.ParseCDF(path, string(b))
}

// maxTrustedCPs bounds trusted_cps: a fabric's hosts get one range for all
// its switches, and a hand-written list names a few switches.
const maxTrustedCPs = 1 << 16

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
				return cf.Errorf(k.key, "lcore %d (entry %d): want 0..%d (DPDK's RTE_MAX_LCORE)", l, i, maxLcore)
			}
		}
	}
	if err := config.Entries(int64(f.Mbufs), 1023, mbufBytes); err != nil {
		return cf.Errorf("mbufs", "%v", err)
	}
	if err := config.Time(f.DurationS, "s"); err != nil {
		return cf.Errorf("duration_s", "%v; 0: until SIGINT or SIGTERM", err)
	}
	return nil
}
