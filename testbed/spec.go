// Package testbed runs an experiment file: it decodes and checks it, turns it
// into a fabric.Spec (topology, scheme, traffic), runs it with one of the two
// drivers of the fabric (virtual time, exact and deterministic; or DPDK, real
// time on lcores, each link an ethdev cable), and writes the results contract
// (summary.json, CSVs, plots) through testbed/report. With real NICs the same
// experiment file drives switchd and hostd on separate nodes (NodeFiles).
package testbed

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	"github.com/ccbed/ccbed/switchd"
)

// Experiment is an experiment file (configs/experiments/*.toml).
type Experiment struct {
	Experiment ExperimentInfo `toml:"experiment"`
	Topology   Topology       `toml:"topology"`
	CC         CC             `toml:"cc"`
	PFC        PFC            `toml:"pfc"`
	// Buffer is every switch's packet buffer and Queues its ports'
	// scheduling (switchd's [buffer] and [queues] tables).
	Buffer       switchd.BufferConfig `toml:"buffer"`
	Queues       switchd.QueuesConfig `toml:"queues"`
	HostPriority []HostPriority       `toml:"host_priority"`
	Flows        []Flow               `toml:"flows"`
	Incast       []Incast             `toml:"incast"`
	Workloads    []Workload           `toml:"workloads"`
	Lcores       Lcores               `toml:"lcores"`
	// Capture writes pcap files of chosen ports (docs/capture.md).
	Capture Capture `toml:"capture"`
	// Trace writes a per-packet event trace of the switches (trace.bin,
	// docs/results.md).
	Trace Trace `toml:"trace"`
	// LinkFailures take links down during a run (virtual time only).
	LinkFailures []LinkFailure `toml:"link_failures"`

	file *config.File
	dir  string // directory of the file: relative paths start here
	// source is the file's text and the overrides applied (Snapshot).
	source *source
	// topo is the topology the [topology] table describes (Validate builds it).
	topo *fabric.Topology
	// ns3Flows are the flows of an ns3 topology's flow file.
	ns3Flows []fabric.Flow
	// ns3HostIDs are an ns3 topology's hosts' ns-3 node ids
	// (ns3.Topology.HostIDs).
	ns3HostIDs []int
	// ns3 is what the ns3 topology's config.txt set (ns3config.go).
	ns3 *ns3Inputs
}

// Where hosts tag their data's priority (Topology.PriorityTag).
const (
	// TagDSCP tags it in the IPv4 DSCP.
	TagDSCP = "dscp"
	// TagPCP tags it in an 802.1Q tag's PCP.
	TagPCP = "pcp"
)

// ExperimentInfo names the experiment and says how long it runs.
type ExperimentInfo struct {
	// Name is the experiment's name, required: one path element (letters,
	// digits, '.', '_', '-'; not "latest"), the directory its runs go in.
	Name string `toml:"name"`
	// Mirrors is the paper figure or claim the experiment reproduces.
	Mirrors string `toml:"mirrors"`
	// Scaling states any link-rate scaling against the paper (and the timers
	// scaled with it); it is copied into the summary.
	Scaling string `toml:"scaling"`
	// DurationMs is how long the run lasts, simulated or real (-duration
	// overrides it).
	DurationMs float64 `toml:"duration_ms"`
	// WarmupMs is excluded from the averages (the steady half is always the last
	// half of the run).
	WarmupMs float64 `toml:"warmup_ms"`
	// SampleUs is the period of the queue, fair-rate and flow-rate series.
	SampleUs float64 `toml:"sample_us"`
	// OutputDir is where results/<name>/<run id>/ goes (default
	// "results"). The file may name only a relative directory below the
	// working directory (filepath.IsLocal); the -results flag, which the
	// user types, may name any (RunWith takes it as it is), and -o names
	// the run's own directory in its place (docs/results.md).
	OutputDir string `toml:"output_dir"`
	// Clock is the driver: "virtual" (discrete events in virtual time, exact
	// and deterministic, every link at its true rate) or "dpdk" (real time,
	// the engines on lcores wired by ethdev cables; the default).
	Clock string `toml:"clock"`
	// Seed seeds the workload generators (default 1).
	Seed uint64 `toml:"seed"`
	// ICRC makes the hosts compute the RoCEv2 ICRC of every frame (off: the
	// trailer is zero), for captures Wireshark checks (docs/capture.md).
	ICRC bool `toml:"icrc"`
	// Trust says where switches and hosts take control frames (PFC, CNPs,
	// ACKs, NAKs, CP feedback) from: "topology" (the default), only from
	// where the topology says they can come, refusing and counting the
	// others; or "all", from anyone, for an experiment that forges them
	// (fabric.Spec.TrustAll; docs/switch.md, "Trust").
	Trust string `toml:"trust"`
}

// Trust settings (ExperimentInfo.Trust).
const (
	TrustTopology = "topology" // control frames only from where they can come
	TrustAll      = "all"      // control frames from anyone
)

// Clocks.
const (
	ClockVirtual = fabric.ClockVirtual
	ClockDPDK    = fabric.ClockDPDK
)

// Topology is the network: Kind picks its shape, the keys of that shape size
// it, and the rest applies to every kind.
//
//   - star (default): Hosts hosts on one switch, host i on port i.
//   - chain: switches in a line, HostsPerSwitch[i] hosts on switch i (hosts
//     numbered switch by switch), switch-to-switch links at TrunkGbps.
//   - leaf-spine: Leaves leaves of HostsPerLeaf hosts, each leaf linked to
//     every one of Spines spines at UplinkGbps; ECMP over the spines.
//   - fat-tree: a K-ary fat-tree of K^3/4 hosts; ECMP over the cores.
//   - explicit: Hosts hosts (h0, h1, ...), the Switches named, and Links
//     between any of them.
//   - ns3: the ns-3 RDMA simulators' topology.txt (NS3Topology), their
//     flow.txt (NS3Flows) as static flows, and their config.txt (NS3Config),
//     all unchanged; the experiment's own keys win over config.txt's.
type Topology struct {
	// Kind is the shape: star, chain, leaf-spine, fat-tree, explicit or ns3.
	Kind string `toml:"kind"`
	// Hosts is the number of hosts of a star or an explicit topology.
	Hosts       int     `toml:"hosts"`
	LinkGbps    float64 `toml:"link_gbps"`    // host links (and every link of fat-tree)
	DelayUs     float64 `toml:"delay_us"`     // one-way propagation delay of every link
	BufferBytes int64   `toml:"buffer_bytes"` // egress buffer per switch port
	MTUBytes    int     `toml:"mtu_bytes"`    // data payload per packet
	// BaseRTTUs is the base RTT the schemes and the ideal FCT assume; 0: the
	// topology's largest (a full data frame out and its ACK back, on idle links).
	BaseRTTUs float64 `toml:"base_rtt_us"`
	// AckEvery is how many data packets a receiver acknowledges at once.
	AckEvery int `toml:"ack_every"`
	// LossRate is the probability that a frame is lost on a link, in each
	// direction of every link, each frame independently, drawn from a
	// generator per link direction seeded by experiment.seed (virtual time
	// only; the ns-3 simulator's ERROR_RATE_PER_LINK).
	LossRate float64 `toml:"loss_rate"`
	// PacingJitter spreads each host QP's packet spacing over [1 - j, 1 + j]
	// of its paced gap (0: exact pacing; see hostd.Spec.PacingJitter).
	PacingJitter float64 `toml:"pacing_jitter"`
	// PriorityTag is where hosts tag their data's priority and switches read
	// it: "dscp" (the default: the IPv4 DSCP's class selector, priority <<
	// 3) or "pcp" (an 802.1Q priority tag, VLAN id 0, its PCP the priority;
	// frames 4 bytes longer). ACKs, NAKs and CNPs echo the data's tag.
	PriorityTag string `toml:"priority_tag"`

	HostsPerSwitch []int      `toml:"hosts_per_switch"` // chain
	TrunkGbps      float64    `toml:"trunk_gbps"`       // chain (default link_gbps)
	Leaves         int        `toml:"leaves"`           // leaf-spine
	Spines         int        `toml:"spines"`           // leaf-spine
	HostsPerLeaf   int        `toml:"hosts_per_leaf"`   // leaf-spine
	UplinkGbps     float64    `toml:"uplink_gbps"`      // leaf-spine (default link_gbps)
	K              int        `toml:"k"`                // fat-tree
	Switches       []string   `toml:"switches"`         // explicit: switch names
	Links          []LinkSpec `toml:"links"`            // explicit
	NS3Topology    string     `toml:"ns3_topology"`     // ns3: path, relative to the experiment file
	NS3Flows       string     `toml:"ns3_flows"`        // ns3: flow.txt, relative to the experiment file (optional)
	// NS3Config is the ns-3 simulators' config.txt, relative to the
	// experiment file (optional): its scheme, parameters and settings fill
	// in what the experiment file leaves out, its TOPOLOGY_FILE and
	// FLOW_FILE what ns3_topology and ns3_flows do, and what ccbed cannot
	// honour is named in a warning (docs/fabric.md, "ns-3's config.txt").
	NS3Config string `toml:"ns3_config"`
	// NS3StartS is the ns-3 time, in seconds, that the run's time 0 stands
	// for: flows start at their flow.txt time less this, and the run ends at
	// SIMULATOR_STOP_TIME less this (default 0: ns-3's own times; HPCC's
	// traffic generator starts flows at 2 s).
	NS3StartS float64 `toml:"ns3_start_s"`

	// RTOUs and NakIntervalUs are the hosts' retransmission timeout and NAK
	// repeat interval. 0 derives both from the worst round trip the topology
	// allows: 2 x (base RTT + time to drain a full buffer at the link rate) +
	// 100 us. A timeout shorter than a full queue's delay makes every flow
	// resend its window while the queue is full: congestion collapse.
	RTOUs float64 `toml:"rto_us"`
	// NakIntervalUs: see RTOUs.
	NakIntervalUs float64 `toml:"nak_interval_us"`
}

// LinkSpec is one link of an explicit topology, between two nodes named as in
// the file (h0, h1, ... for hosts; the switches' names), with its rate and
// delay from A to B, and from B to A when GbpsBA / DelayUsBA are given.
type LinkSpec struct {
	A         string  `toml:"a" required:"the node at one end (h0, h1, ... or a switch's name)"`
	B         string  `toml:"b" required:"the node at the other end"`
	Gbps      float64 `toml:"gbps" required:"the link's rate from a to b, Gb/s"`
	DelayUs   float64 `toml:"delay_us"`    // propagation delay from a to b
	GbpsBA    float64 `toml:"gbps_ba"`     // rate from b to a; 0: gbps
	DelayUsBA float64 `toml:"delay_us_ba"` // delay from b to a; 0: delay_us
}

// CC is the scheme of the whole experiment and its parameters
// ([cc.params] holds the keys of the scheme's parameter struct).
type CC struct {
	// Scheme is the congestion-control scheme (testbed schemes lists them).
	Scheme string `toml:"scheme"`
	// ExpectedFlows is the schemes' expected number of concurrent flows on a
	// link (HPCC's N in its W_AI rule).
	ExpectedFlows int `toml:"expected_flows"`
	// Params overrides the scheme's parameters, key by key.
	Params map[string]any `toml:"params"`
	// overrides is Params decoded (validateCC), as fabric.Spec.Params takes
	// it: the nodes lay it over their own defaults.
	overrides ccalgo.Overrides
}

// PFC turns priority flow control on in the switches: Priorities are the
// lossless ones (default [3]); XOFFBytes and XONOffsetBytes the thresholds of
// buffer.mode "static" (a shared buffer's are dynamic).
type PFC struct {
	// Enabled turns PFC on in every switch and host.
	Enabled bool `toml:"enabled"`
	// Priorities are the lossless priorities; empty: [3].
	Priorities []uint8 `toml:"priorities"`
	// XOFFBytes is an ingress port's count of a priority's queued bytes at
	// which it pauses its upstream (buffer.mode "static").
	XOFFBytes int64 `toml:"xoff_bytes"`
	// XONOffsetBytes is how far below XOFFBytes it resumes (buffer.mode
	// "static").
	XONOffsetBytes int64 `toml:"xon_offset_bytes"`
}

// Flow is a static flow between two hosts.
type Flow struct {
	ID        int     `toml:"id" required:"the flow's id (unique in the experiment)"`
	Src       int     `toml:"src" required:"the sending host's index"`
	Dst       int     `toml:"dst" required:"the receiving host's index"`
	SizeBytes int64   `toml:"size_bytes"` // 0: unlimited
	StartUs   float64 `toml:"start_us"`   // when it starts
	RateGbps  float64 `toml:"rate_gbps"`  // offered-rate cap; 0: none
	// Priority is the flow's traffic class (0-7): its data is tagged with it
	// in the DSCP (priority << 3, which its ACKs and NAKs echo), queued in
	// that priority's queue at every switch, lossless when [pfc] lists it,
	// and paused only by PFC frames of it. Absent: its sender's priority
	// ([[host_priority]], else 3).
	Priority *int `toml:"priority"`
}

// Incast is Senders hosts each sending FlowsPerSender flows of SizeBytes to Dst
// at StartUs, repeated Repeat times every PeriodUs.
type Incast struct {
	// IDBase is the first flow id: the k-th sender's flows are numbered from
	// id_base + k * flows_per_sender * repeat.
	IDBase         int     `toml:"id_base"`
	Senders        []int   `toml:"senders" required:"the sending hosts' indexes"`
	Dst            int     `toml:"dst" required:"the receiving host's index"`
	FlowsPerSender int     `toml:"flows_per_sender"` // flows from each sender each time; 0: 1
	SizeBytes      int64   `toml:"size_bytes" required:"each flow's size in bytes"`
	StartUs        float64 `toml:"start_us"`  // when the first round starts
	Repeat         int     `toml:"repeat"`    // rounds; 0: 1
	PeriodUs       float64 `toml:"period_us"` // between the rounds' starts
	// Priority is the traffic class (0-7) of the incast's flows, as a
	// [[flows]] entry's priority; absent: each sender's.
	Priority *int `toml:"priority"`
}

// Workload draws flow sizes from a CDF with Poisson arrivals at Load of each
// sender's line rate, to destinations drawn uniformly from Dsts less the
// sender itself (as the HPCC simulator's traffic generator does).
type Workload struct {
	// IDBase is the first flow id: sender k of the wi-th workload numbers
	// its flows from id_base + (wi * senders + k) * 1,000,000, in arrival
	// order.
	IDBase   int     `toml:"id_base"`
	CDF      string  `toml:"cdf" required:"a flow-size CDF file"` // relative to the experiment file
	Senders  []int   `toml:"senders" required:"the sending hosts' indexes"`
	Dsts     []int   `toml:"dsts" required:"the destination hosts' indexes (a sender draws from those other than itself)"`
	Load     float64 `toml:"load" required:"the offered load, a fraction of each sender's line rate"`
	StartUs  float64 `toml:"start_us"`  // when arrivals start
	StopUs   float64 `toml:"stop_us"`   // when arrivals stop; 0: never
	MaxFlows int     `toml:"max_flows"` // flows per sender at most; 0: no limit
	// Priority is the traffic class (0-7) of the workload's flows, as a
	// [[flows]] entry's priority; absent: each sender's.
	Priority *int `toml:"priority"`

	// dist is CDF's points, read once where the file is validated (the
	// plan takes them, not the file).
	dist *hostd.CDF
}

// Lcores places the loops. The default (when the file sets no hosts list):
// the switch (run-to-completion) on lcore 0, and the hosts spread over lcores
// 1 .. min(hosts, CPUs - 1), one lcore per CPU; on a 2-core machine every host
// shares lcore 1.
type Lcores struct {
	Switch uint   `toml:"switch"` // the switch's lcore
	Hosts  []uint `toml:"hosts"`  // host i runs on Hosts[i % len(Hosts)]
	// EALArgs replace the default EAL arguments (--no-huge -m 1024 --no-pci
	// --no-shconf); the lcore list is derived from Switch and Hosts.
	EALArgs []string `toml:"eal_args"`
}

// Default returns an experiment with every optional field at its default.
func Default() Experiment {
	return Experiment{
		Experiment: ExperimentInfo{DurationMs: 20, SampleUs: 100, OutputDir: "results", Clock: ClockDPDK, Seed: 1, Trust: TrustTopology},
		Topology:   Topology{Kind: KindStar, LinkGbps: 10, BufferBytes: 4 << 20, MTUBytes: 1024, AckEvery: 1, PriorityTag: TagDSCP},
		CC:         CC{Scheme: "none", ExpectedFlows: 16},
		PFC:        PFC{XOFFBytes: 500_000, XONOffsetBytes: 3_000},
		Buffer:     switchd.DefaultBuffer(),
		Queues:     switchd.DefaultSpec().Queues,
		Lcores:     Lcores{Switch: 0},
	}
}

// Load reads and validates an experiment file (LoadWith, no overrides).
func Load(path string) (*Experiment, error) { return LoadWith(path, nil) }

// Decode is Load on text already read; dir anchors relative paths.
func Decode(name, text, dir string) (*Experiment, error) { return decodeWith(name, text, dir, nil) }

func (e *Experiment) errorf(key, format string, args ...any) error {
	if e.file == nil {
		return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
	return e.file.Errorf(key, format, args...)
}

// Validate checks the experiment; errors name the file, line and key. It
// lists every error it finds (joined: errors.As finds the first), as far
// as one error leaves the next checks meaningful: a topology that cannot be
// built ends the checks, a flow naming a host out of range does not.
func (e *Experiment) Validate() error {
	x, t := &e.Experiment, &e.Topology
	var errs []error
	check := func(bad bool, key, format string, args ...any) {
		if bad {
			errs = append(errs, e.errorf(key, format, args...))
		}
	}
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case x.Name == "":
		check(true, "experiment.name", "missing: every experiment needs a name")
	case config.Name(x.Name) != nil:
		check(true, "experiment.name", "%v", config.Name(x.Name))
	case x.Name == LatestLink:
		check(true, "experiment.name", "%q is the link to the newest run: choose another name", x.Name)
	}
	check(x.OutputDir == "" || !filepath.IsLocal(x.OutputDir), "experiment.output_dir", "%q: an experiment file may only name a relative directory below the one testbed runs in (use -results for any other place)", x.OutputDir)
	check(config.PositiveTime(x.DurationMs, "ms") != nil, "experiment.duration_ms", "%v", config.PositiveTime(x.DurationMs, "ms"))
	check(config.Time(x.WarmupMs, "ms") != nil || x.WarmupMs >= x.DurationMs, "experiment.warmup_ms", "got %v: want [0, duration_ms)", x.WarmupMs)
	check(config.PositiveTime(x.SampleUs, "us") != nil, "experiment.sample_us", "%v", config.PositiveTime(x.SampleUs, "us"))
	check(x.Clock != ClockVirtual && x.Clock != ClockDPDK, "experiment.clock", "%q: want %q or %q", x.Clock, ClockVirtual, ClockDPDK)
	check(x.Trust != TrustTopology && x.Trust != TrustAll, "experiment.trust", "%q: want %q or %q", x.Trust, TrustTopology, TrustAll)
	experimentErrs := len(errs)
	check(config.Positive(t.LinkGbps, 400) != nil, "topology.link_gbps", "%v", config.Positive(t.LinkGbps, 400))
	check(config.Time(t.DelayUs, "us") != nil, "topology.delay_us", "%v", config.Time(t.DelayUs, "us"))
	check(t.BufferBytes <= 0, "topology.buffer_bytes", "must be > 0, got %d", t.BufferBytes)
	check(t.MTUBytes < 64 || t.MTUBytes > 9000, "topology.mtu_bytes", "must be 64..9000, got %d", t.MTUBytes)
	check(config.Time(t.BaseRTTUs, "us") != nil, "topology.base_rtt_us", "%v; 0: derived from the topology", config.Time(t.BaseRTTUs, "us"))
	check(t.AckEvery < 1, "topology.ack_every", "must be >= 1, got %d", t.AckEvery)
	check(config.Time(t.RTOUs, "us") != nil, "topology.rto_us", "%v; 0: derived", config.Time(t.RTOUs, "us"))
	check(!(t.PacingJitter >= 0 && t.PacingJitter < 1), "topology.pacing_jitter", "must be in [0, 1), got %v", t.PacingJitter)
	check(t.PriorityTag != "" && t.PriorityTag != TagDSCP && t.PriorityTag != TagPCP, "topology.priority_tag", "%q: want %q or %q", t.PriorityTag, TagDSCP, TagPCP)
	check(config.Time(t.NakIntervalUs, "us") != nil, "topology.nak_interval_us", "%v; 0: derived", config.Time(t.NakIntervalUs, "us"))
	if len(errs) > experimentErrs {
		return errors.Join(errs...) // the topology's checks need its keys right
	}
	if err := e.buildTopology(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if experimentErrs == 0 {
		add(e.checkSamples()) // needs duration_ms and sample_us right
	}
	nHosts := len(e.topo.Hosts)
	if len(e.Lcores.Hosts) == 0 {
		e.Lcores.Hosts = defaultHostLcores(e.Lcores.Switch, nHosts, runtime.NumCPU())
	}
	for i, l := range e.Lcores.Hosts {
		check(l >= 128, "lcores.hosts", "lcore %d (entry %d) out of range 0..127", l, i)
	}
	_, schemeErr := ccalgo.Lookup(e.CC.Scheme)
	check(schemeErr != nil, "cc.scheme", "%v", schemeErr)
	add(e.validateBuffer(nHosts))
	if _, err := e.failures(); err != nil {
		add(err)
	}
	if schemeErr == nil {
		add(e.validateCC())
	}
	hostOK := func(key string, h int) bool {
		check(h < 0 || h >= nHosts, key, "host %d out of range 0..%d", h, nHosts-1)
		return h >= 0 && h < nHosts
	}
	check(len(e.Flows)+len(e.Incast)+len(e.Workloads)+len(e.ns3Flows) == 0, "flows", "the experiment has no traffic: add [[flows]], [[incast]] or [[workloads]]")
	ids := map[int]string{}
	claim := func(key string, id int) {
		if prev, dup := ids[id]; dup {
			check(true, key, "flow id %d already used by %s", id, prev)
			return
		}
		ids[id] = key
	}
	for _, f := range e.ns3Flows {
		claim("topology.ns3_flows", f.ID)
	}
	flowErrs := len(errs)
	for i, f := range e.Flows {
		k := fmt.Sprintf("flows[%d]", i)
		hostOK(k+".src", f.Src)
		hostOK(k+".dst", f.Dst)
		check(f.Src == f.Dst, k+".dst", "a flow from host %d to itself", f.Src)
		check(f.SizeBytes < 0, k+".size_bytes", "must be >= 0 (0: unlimited), got %d", f.SizeBytes)
		check(config.Time(f.StartUs, "us") != nil, k+".start_us", "%v", config.Time(f.StartUs, "us"))
		check(config.Float(f.RateGbps, 0, hostd.MaxLinkGbps) != nil, k+".rate_gbps", "%v; 0: no cap", config.Float(f.RateGbps, 0, hostd.MaxLinkGbps))
		claim(k+".id", f.ID)
	}
	if len(errs) == flowErrs {
		add(e.validateFlowRates())
	}
	for i, in := range e.Incast {
		k := fmt.Sprintf("incast[%d]", i)
		check(len(in.Senders) == 0, k+".senders", "needs at least one sender")
		for _, s := range in.Senders {
			hostOK(k+".senders", s)
			check(s == in.Dst, k+".senders", "host %d is also the destination", s)
		}
		hostOK(k+".dst", in.Dst)
		check(in.SizeBytes <= 0, k+".size_bytes", "must be > 0, got %d", in.SizeBytes)
		check(in.FlowsPerSender < 0 || in.Repeat < 0, k, "flows_per_sender and repeat must be >= 0")
		check(config.Time(in.StartUs, "us") != nil, k+".start_us", "%v", config.Time(in.StartUs, "us"))
		check(config.Time(in.PeriodUs, "us") != nil, k+".period_us", "%v", config.Time(in.PeriodUs, "us"))
	}
	for i, w := range e.Workloads {
		k := fmt.Sprintf("workloads[%d]", i)
		e.Workloads[i].dist = nil
		if w.CDF == "" {
			check(true, k+".cdf", "missing: a flow-size CDF file")
		} else {
			cdf := w.CDF
			if !filepath.IsAbs(cdf) {
				cdf = filepath.Join(e.dir, cdf)
			}
			dist, err := hostdaemon.LoadCDF(cdf)
			check(err != nil, k+".cdf", "%v", err)
			e.Workloads[i].dist = dist
		}
		check(config.Positive(w.Load, 1) != nil, k+".load", "%v", config.Positive(w.Load, 1))
		check(config.Time(w.StartUs, "us") != nil, k+".start_us", "%v", config.Time(w.StartUs, "us"))
		check(config.Time(w.StopUs, "us") != nil, k+".stop_us", "%v; 0: no end", config.Time(w.StopUs, "us"))
		check(len(w.Senders) == 0 || len(w.Dsts) == 0, k, "needs senders and dsts")
		for _, h := range append(append([]int{}, w.Senders...), w.Dsts...) {
			hostOK(k, h)
		}
		for _, h := range w.Senders {
			others := slices.ContainsFunc(w.Dsts, func(d int) bool { return d != h })
			check(len(w.Dsts) > 0 && !others, k+".dsts", "sender %d's only destination is itself: a host draws no flow to itself", h)
		}
	}
	return errors.Join(errs...)
}

// sampleBytes is the memory of one sample of one switch port's queue and
// fair rate: the fabric's SwitchSample, and a time and a value in each of
// the recorder's queue and fair-rate series.
const sampleBytes = unsafe.Sizeof(fabric.SwitchSample{}) + 2*16

// checkSamples bounds duration_ms by what the machine can hold: every
// switch port is sampled every sample_us for the whole run, and the samples
// stay in memory until the results are written.
func (e *Experiment) checkSamples() error {
	ports := 0
	for i := range e.topo.Switches {
		ports += e.topo.NumPorts(len(e.topo.Hosts) + i)
	}
	x := &e.Experiment
	n := math.Ceil(x.DurationMs*1e3/x.SampleUs) * float64(max(ports, 1))
	if most := config.MaxEntries(sampleBytes); n > float64(most) {
		return e.errorf("experiment.duration_ms", "%g ms sampled every %g us on %d switch ports is %.3g samples: at most %d fit (%d B each, at most a quarter of this machine's %.1f GiB of memory); raise sample_us or shorten the run",
			x.DurationMs, x.SampleUs, ports, n, most, sampleBytes, float64(config.MemTotal())/(1<<30))
	}
	return nil
}

// HostIP is host i's IPv4 address, 10.0.0.(i+1) for the first 254, in host
// byte order (fabric.HostIP).
func HostIP(i int) uint32 { return fabric.HostIP(i) }

// HostMAC is host i's MAC address (fabric.HostMAC).
func HostMAC(i int) [6]byte { return fabric.HostMAC(i) }

// SwitchPortMAC is port i of the first switch's MAC address.
func SwitchPortMAC(i int) [6]byte { return fabric.SwitchPortMAC(0, i) }

// defaultHostLcores spreads hosts over the lcores after the switch's, one per
// CPU the machine has beyond the switch's, at least one.
func defaultHostLcores(sw uint, hosts, cpus int) []uint {
	n := max(1, min(hosts, cpus-1))
	out := make([]uint, 0, n)
	for l := uint(0); len(out) < n; l++ {
		if l != sw {
			out = append(out, l)
		}
	}
	return out
}
