package testbed

import (
	"fmt"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
	switchdaemon "github.com/ccbed/ccbed/switchd/daemon"
)

// Topology kinds.
const (
	KindStar      = "star"
	KindChain     = "chain"
	KindLeafSpine = "leaf-spine"
	KindFatTree   = "fat-tree"
	KindExplicit  = "explicit"
	KindNS3       = "ns3"
)

// buildTopology builds e.topo from the [topology] table; errors name the key.
func (e *Experiment) buildTopology() error {
	t := &e.Topology
	bps := t.LinkGbps * 1e9
	delay := config.UsToNs(t.DelayUs)
	need := func(key string, v, lo, hi int) error {
		if v < lo || v > hi {
			return e.errorf("topology."+key, "must be %d..%d for a %s topology, got %d", lo, hi, t.Kind, v)
		}
		return nil
	}
	rate := func(key string, g float64) (float64, error) {
		if g == 0 {
			return bps, nil
		}
		if !(g > 0) || g > 1600 {
			return 0, e.errorf("topology."+key, "must be in (0, 1600], got %v", g)
		}
		return g * 1e9, nil
	}
	switch t.Kind {
	case KindStar, "":
		if err := need("hosts", t.Hosts, 2, switchd.MaxPorts); err != nil {
			return err
		}
		e.topo = fabric.Star(t.Hosts, bps, delay)
	case KindChain:
		if len(t.HostsPerSwitch) < 1 || len(t.HostsPerSwitch) > 256 {
			return e.errorf("topology.hosts_per_switch", "a chain needs 1..256 switches, got %d", len(t.HostsPerSwitch))
		}
		for _, n := range t.HostsPerSwitch {
			if n < 0 || n > switchd.MaxPorts-2 {
				return e.errorf("topology.hosts_per_switch", "%d hosts on a switch: want 0..%d", n, switchd.MaxPorts-2)
			}
		}
		trunk, err := rate("trunk_gbps", t.TrunkGbps)
		if err != nil {
			return err
		}
		e.topo = fabric.Chain(t.HostsPerSwitch, bps, trunk, delay)
	case KindLeafSpine:
		if err := need("leaves", t.Leaves, 1, switchd.MaxPorts); err != nil {
			return err
		}
		if err := need("spines", t.Spines, 1, switchd.MaxPorts); err != nil {
			return err
		}
		if err := need("hosts_per_leaf", t.HostsPerLeaf, 1, switchd.MaxPorts-t.Spines); err != nil {
			return err
		}
		up, err := rate("uplink_gbps", t.UplinkGbps)
		if err != nil {
			return err
		}
		e.topo = fabric.LeafSpine(t.Leaves, t.Spines, t.HostsPerLeaf, bps, up, delay)
	case KindFatTree:
		topo, err := fabric.FatTree(t.K, bps, delay)
		if err != nil {
			return e.errorf("topology.k", "%v", err)
		}
		e.topo = topo
	case KindExplicit:
		if err := e.explicitTopology(); err != nil {
			return err
		}
	case KindNS3:
		if err := e.ns3Topology(); err != nil {
			return err
		}
	default:
		return e.errorf("topology.kind", "%q: want star, chain, leaf-spine, fat-tree, explicit or ns3", t.Kind)
	}
	if t.Kind != KindStar && t.Kind != "" && t.Kind != KindExplicit && t.Hosts != 0 && t.Hosts != len(e.topo.Hosts) {
		return e.errorf("topology.hosts", "%d, but the %s has %d hosts (leave it out)", t.Hosts, t.Kind, len(e.topo.Hosts))
	}
	if n := len(e.topo.Hosts); n > MaxHosts {
		return e.errorf("topology", "%d hosts: at most %d", n, MaxHosts)
	}
	if err := e.topo.Validate(); err != nil {
		return e.errorf("topology", "%v", err)
	}
	return nil
}

// MaxHosts bounds an experiment's hosts. Nothing is quadratic in them any more
// (a switch holds a route per range of hosts, the base RTT is computed per
// leaf), and a host's tables grow with the flows it has; what bounds a run is
// memory: docs/perf.md (issue 22) gives a k = 32 fat-tree's (8192 hosts).
const MaxHosts = 16384

// explicitTopology builds an explicit topology: hosts h0..h(Hosts-1), the
// named switches, the links.
func (e *Experiment) explicitTopology() error {
	t := &e.Topology
	if t.Hosts < 2 {
		return e.errorf("topology.hosts", "an explicit topology needs at least 2 hosts, got %d", t.Hosts)
	}
	topo := &fabric.Topology{}
	names := map[string]int{}
	for i := 0; i < t.Hosts; i++ {
		names[fmt.Sprintf("h%d", i)] = topo.AddHost("")
	}
	if len(t.Switches) == 0 {
		return e.errorf("topology.switches", "an explicit topology needs switches")
	}
	for _, s := range t.Switches {
		if err := config.Name(s); err != nil {
			return e.errorf("topology.switches", "switch name %v", err)
		}
		if _, dup := names[s]; dup {
			return e.errorf("topology.switches", "%q: a switch name must be unique and not a host's (h0, h1, ...)", s)
		}
		names[s] = topo.AddSwitch(s)
	}
	for i, l := range t.Links {
		k := fmt.Sprintf("topology.links[%d]", i)
		a, okA := names[l.A]
		b, okB := names[l.B]
		switch {
		case !okA:
			return e.errorf(k+".a", "%q names no host or switch", l.A)
		case !okB:
			return e.errorf(k+".b", "%q names no host or switch", l.B)
		case !(l.Gbps > 0) || l.Gbps > 1600 || l.GbpsBA < 0 || l.GbpsBA > 1600:
			return e.errorf(k+".gbps", "must be in (0, 1600], got %v", l.Gbps)
		case l.DelayUs < 0 || l.DelayUsBA < 0:
			return e.errorf(k+".delay_us", "must be >= 0, got %v", l.DelayUs)
		}
		ab := fabric.Dir{Bps: l.Gbps * 1e9, DelayNs: config.UsToNs(l.DelayUs)}
		ba := ab
		if l.GbpsBA > 0 {
			ba.Bps = l.GbpsBA * 1e9
		}
		if l.DelayUsBA > 0 {
			ba.DelayNs = config.UsToNs(l.DelayUsBA)
		}
		if topo.NumPorts(a) >= switchd.MaxPorts || topo.NumPorts(b) >= switchd.MaxPorts {
			return e.errorf(k, "more than %d ports on a switch", switchd.MaxPorts)
		}
		topo.Connect(a, b, ab, ba)
	}
	e.topo = topo
	return nil
}

// ns3Topology reads the ns-3 simulators' topology file and, when given,
// their flow file and config.txt (ns3config.go): the flows start when the
// file says, less topology.ns3_start_s, and take ids 0, 1, ... in file order.
func (e *Experiment) ns3Topology() error { return e.readNS3Inputs() }

// Topo is the experiment's topology (built by Validate).
func (e *Experiment) Topo() *fabric.Topology { return e.topo }

// Spec is the experiment as a fabric.Spec: the topology, the scheme and its
// parameters, the traffic; exact shaping in virtual time.
func (e *Experiment) Spec() *fabric.Spec {
	t := &e.Topology
	s := &fabric.Spec{
		Topo: e.topo, Scheme: e.CC.Scheme, Params: e.CC.overrides, ExpectedFlows: e.CC.ExpectedFlows,
		MTU: t.MTUBytes, AckEvery: t.AckEvery, BaseRTTNs: config.UsToNs(t.BaseRTTUs), BufferBytes: t.BufferBytes,
		PFC: fabric.PFC{Enabled: e.PFC.Enabled, Priorities: e.PFC.Priorities,
			XOFFBytes: e.PFC.XOFFBytes, XONOffsetBytes: e.PFC.XONOffsetBytes},
		Buffer: e.Buffer, Queues: e.Queues, HostPriority: e.hostPriorities(),
		RTONs: config.UsToNs(t.RTOUs), NakIntervalNs: config.UsToNs(t.NakIntervalUs),
		SampleNs: config.UsToNs(e.Experiment.SampleUs), Seed: e.Experiment.Seed, PacingJitter: t.PacingJitter,
		Exact: e.Experiment.Clock == ClockVirtual, ICRC: e.Experiment.ICRC, TrustAll: e.Experiment.Trust == TrustAll,
		TagPCP: t.PriorityTag == TagPCP, MemBytes: config.MemTotal(),
	}
	s.Failures, _ = e.failures() // checked by Validate
	for _, f := range e.Flows {
		s.Flows = append(s.Flows, fabric.Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, SizeBytes: f.SizeBytes,
			StartNs: config.UsToNs(f.StartUs), RateBps: f.RateGbps * 1e9, Priority: f.Priority})
	}
	s.Flows = append(s.Flows, e.ns3Flows...)
	for _, in := range e.Incast {
		s.Incast = append(s.Incast, fabric.Incast{IDBase: in.IDBase, Senders: in.Senders, Dst: in.Dst,
			FlowsPerSender: in.FlowsPerSender, SizeBytes: in.SizeBytes, StartNs: config.UsToNs(in.StartUs),
			Repeat: in.Repeat, PeriodNs: config.UsToNs(in.PeriodUs), Priority: in.Priority})
	}
	for _, w := range e.Workloads {
		s.Workloads = append(s.Workloads, fabric.Workload{IDBase: w.IDBase, CDF: w.dist, Senders: w.Senders,
			Dsts: w.Dsts, Load: w.Load, StartNs: config.UsToNs(w.StartUs), StopNs: config.UsToNs(w.StopUs), MaxFlows: w.MaxFlows,
			Priority: w.Priority})
	}
	return s
}

// Plan is the experiment's fabric.Plan: every node's config.
func (e *Experiment) Plan() (*fabric.Plan, error) {
	p, err := e.Spec().Plan()
	if err != nil {
		return nil, e.errorf("topology", "%v", err)
	}
	// Every host's config passes the checks hostd runs before it allocates
	// (sizes bounded by memory), so that validate refuses what run would.
	for i := range p.Hosts {
		if err := hostd.CheckSpec(p.Hosts[i]); err != nil {
			return nil, e.errorf("topology", "host %s: %v", p.Hosts[i].Name, err)
		}
	}
	return p, nil
}

// SwitchConfig is the first switch of the experiment (the switch of a star):
// port i faces host i, with a /32 route to it, the experiment's link rate and
// buffer, and the scheme's CP on every port.
func (e *Experiment) SwitchConfig() switchdaemon.Config {
	p, err := e.Plan()
	if err != nil {
		return switchdaemon.DefaultConfig()
	}
	return e.switchConfig(p)
}

// switchConfig is the file form of p's first switch (a switchd TOML file's
// schema), with the parameter table the experiment gave its scheme.
func (e *Experiment) switchConfig(p *fabric.Plan) switchdaemon.Config {
	c := switchdaemon.ConfigOf(&p.Switches[0])
	if len(e.CC.Params) > 0 {
		c.CC.Params = map[string]map[string]any{e.CC.Scheme: e.CC.Params}
	}
	return c
}

// HostConfigs are the experiment's hosts: host i has HostIP(i), sends every
// frame to its switch port, and offers the flows, incasts and workloads whose
// sender it is.
func (e *Experiment) HostConfigs() []hostd.Spec {
	p, err := e.Plan()
	if err != nil {
		return nil
	}
	return p.Hosts
}
