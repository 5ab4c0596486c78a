package testbed

// The ns3 topology kind's inputs: topology.txt, flow.txt, and config.txt
// (topology.ns3_config), the ns-3 RDMA simulators' files read unchanged.
//
// Precedence: the experiment file wins. A key the experiment file (or a -set
// override, or a flag such as -duration) sets is never changed by
// config.txt; a [cc.params] key the experiment sets likewise. config.txt
// fills in only what the experiment leaves out, and a key that maps to a
// scheme parameter maps to the parameter of the scheme the run uses (the
// experiment's cc.scheme, else CC_MODE's).
//
// What config.txt sets (ns-3's units, read from HPCC's third.cc,
// ns3-datacenter's powertcp-evaluation-*.cc, rdma-hw.cc and switch-mmu.cc):
//
//	CC_MODE 1, 3, 7, 8          cc.scheme dcqcn, hpcc, timely, dctcp
//	TOPOLOGY_FILE, FLOW_FILE    topology.ns3_topology, ns3_flows (below)
//	SIMULATOR_STOP_TIME (s)     experiment.duration_ms = (stop - ns3_start_s) * 1000
//	PACKET_PAYLOAD_SIZE (B)     topology.mtu_bytes
//	L2_ACK_INTERVAL (B) >= 1    topology.ack_every = 1: ns-3's receiver resets
//	                            its ACK milestone on every packet, so after the
//	                            first it acknowledges every packet
//	BUFFER_SIZE (MB)            buffer.size_bytes = MB * 2^20 (every switch's
//	                            shared buffer, as ns-3's MMU pool)
//	(always)                    pfc.enabled = true: ns-3's qbb devices always
//	                            run PFC
//	DCQCN (CC_MODE 1):
//	  ALPHA_RESUME_INTERVAL (us)   alpha_timer_us, and alpha_update = "timer"
//	  RATE_DECREASE_INTERVAL (us)  decrease_interval_us
//	  RP_TIMER (us)                increase_timer_us
//	  EWMA_GAIN                    g
//	  FAST_RECOVERY_TIMES n        f = n + 1
//	  RATE_AI, RATE_HAI, MIN_RATE  rai_mbps, rhai_mbps, min_rate_mbps
//	  CLAMP_TARGET_RATE            clamp_target_rate
//	  HAS_WIN                      window
//	  KMIN_MAP, KMAX_MAP (KB),     ecn_by_link, one entry per rate (KB = 1000 B);
//	  PMAX_MAP                     every switch port's rate must have one, as
//	                               ns-3 asserts
//	  (the model)                  byte_counter_bytes = 0, timer_hyper_increase =
//	                               true, cnp_interval_us = 0 (a CNP per marked
//	                               packet, ns-3's flag on every ACK of one)
//	HPCC (CC_MODE 3):  U_TARGET eta; MI_THRESH max_stage; RATE_AI rate_ai_mbps
//	TIMELY (CC_MODE 7): RATE_AI delta_bps; RATE_HAI hai_factor = RATE_HAI /
//	                   RATE_AI; MIN_RATE min_rate_bps; and ns-3's attribute
//	                   defaults, which no key sets: t_low_ns = 50000,
//	                   min_rtt_ns = 20000
//	DCTCP (CC_MODE 8): EWMA_GAIN g; mark_at = "dequeue" (ns-3's switch marks
//	                   at dequeue); KMIN_MAP = KMAX_MAP with PMAX_MAP 1 and one K
//	                   for every switch port: k_bytes
//
// Keys with no effect on what ns-3 simulates (its output files and traces:
// TRACE_FILE, TRACE_OUTPUT_FILE, FCT_OUTPUT_FILE, PFC_OUTPUT_FILE,
// QLEN_MON_*, ENABLE_TRACE; DATA_RATE and LINK_DELAY, which topology.txt
// overrides; keys of other schemes than the run's) are read and left.
// ERROR_RATE_PER_LINK becomes topology.loss_rate (virtual time). Every other
// setting ccbed cannot honour (a link-down event, which ns-3 follows by
// recomputing its routes, ACKs queued with data, HPCC's per-hop rates, ...)
// is named with its line
// in one warning (Experiment.Warnings), which validate and run print; the
// run goes on without it.
//
// A relative TOPOLOGY_FILE or FLOW_FILE is looked up from config.txt's
// directory, then from each directory above it: ns-3 resolves them from its
// working directory, the ns-3 root, which holds the config some levels down
// (ns3-datacenter's config names examples/PowerTCP/topology.txt).
//
// Times are ns-3's: flows start when flow.txt says, and the run lasts until
// SIMULATOR_STOP_TIME. topology.ns3_start_s moves the origin (HPCC's
// generator starts traffic at 2 s: ns3_start_s = 2 skips the idle start).

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/ns3"
	"github.com/ccbed/ccbed/switchd"
)

// ns3Inputs is what an experiment took from its config.txt.
type ns3Inputs struct {
	conf *ns3.Config
	// topology and flows are TOPOLOGY_FILE and FLOW_FILE resolved ("": not set).
	topology, flows string
	// applied: the settings went into the experiment (once: a second
	// Validate, after -duration say, must not undo the flag).
	applied bool
	warning string
}

// ns3Schemes are ccbed's schemes by ns-3's CC_MODE.
var ns3Schemes = map[uint64]string{1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}

// ns-3's TIMELY attributes TimelyTLow and TimelyMinRtt (rdma-hw.cc), which
// config.txt cannot set: an imported TIMELY run takes them as ns-3 runs them.
const (
	ns3TimelyTLowNs   = 50_000
	ns3TimelyMinRTTNs = 20_000
)

// Warnings are what the experiment's inputs asked for and the run cannot
// honour (an ns3_config's settings): validate and run print them.
func (e *Experiment) Warnings() []string {
	if e.ns3 == nil || e.ns3.warning == "" {
		return nil
	}
	return []string{e.ns3.warning}
}

// ns3Path is p relative to the experiment file's directory.
func (e *Experiment) ns3Path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

// readNS3Inputs reads the ns3 kind's files: topology.txt, flow.txt and
// config.txt, the experiment's keys before config.txt's (package doc above).
func (e *Experiment) readNS3Inputs() error {
	t := &e.Topology
	if t.NS3Config != "" && e.ns3 == nil {
		in, err := e.readNS3Config(e.ns3Path(t.NS3Config))
		if err != nil {
			return err
		}
		e.ns3 = in
	}
	if !(t.NS3StartS >= 0) || t.NS3StartS*1e9 > float64(config.MaxTimeNs) {
		return e.errorf("topology.ns3_start_s", "%v: want seconds, >= 0", t.NS3StartS)
	}
	topoPath, topoName, topoKey := e.ns3Path(t.NS3Topology), t.NS3Topology, "topology.ns3_topology"
	if t.NS3Topology == "" && e.ns3 != nil && e.ns3.topology != "" {
		topoPath, topoName, topoKey = e.ns3.topology, e.ns3.topology, "topology.ns3_config"
	}
	if topoName == "" {
		return e.errorf("topology.ns3_topology", "missing: the ns-3 topology.txt (or an ns3_config whose TOPOLOGY_FILE names it)")
	}
	nt, err := ns3.ReadTopologyFile(topoPath, topoName)
	if err != nil {
		return e.errorf(topoKey, "%v", err)
	}
	e.topo = nt.Topo
	flowPath, flowName, flowKey := e.ns3Path(t.NS3Flows), t.NS3Flows, "topology.ns3_flows"
	if t.NS3Flows == "" && e.ns3 != nil && e.ns3.flows != "" {
		flowPath, flowName, flowKey = e.ns3.flows, e.ns3.flows, "topology.ns3_config"
	}
	var flows []fabric.Flow
	if flowName != "" {
		if flows, err = ns3.ReadFlowsFile(flowPath, flowName, nt); err != nil {
			return e.errorf(flowKey, "%v", err)
		}
	}
	if e.ns3 != nil && !e.ns3.applied {
		if err := e.applyNS3Config(nt); err != nil {
			return err
		}
		e.ns3.applied = true
	}
	origin := int64(math.Round(t.NS3StartS * 1e9))
	for i := range flows {
		if flows[i].StartNs < origin {
			return e.errorf("topology.ns3_start_s", "%v s: flow %d of %s starts at %v s, before it", t.NS3StartS, i, flowName, float64(flows[i].StartNs)/1e9)
		}
		flows[i].StartNs -= origin
	}
	e.ns3Flows, e.ns3HostIDs = flows, nt.HostIDs
	return nil
}

// readNS3Config reads config.txt at path and resolves its TOPOLOGY_FILE and
// FLOW_FILE.
func (e *Experiment) readNS3Config(path string) (*ns3Inputs, error) {
	name := e.Topology.NS3Config
	conf, err := ns3.ReadConfigFile(path, name)
	if err != nil {
		return nil, e.errorf("topology.ns3_config", "%v", err)
	}
	in := &ns3Inputs{conf: conf}
	for _, f := range []struct {
		key string
		dst *string
		own string
	}{{"TOPOLOGY_FILE", &in.topology, e.Topology.NS3Topology}, {"FLOW_FILE", &in.flows, e.Topology.NS3Flows}} {
		w, ok := conf.Word(f.key)
		if !ok || f.own != "" {
			continue // the experiment names its own file
		}
		p, err := ns3Find(filepath.Dir(path), w)
		if err != nil {
			return nil, e.errorf("topology.ns3_config", "%s: %s %s: %v", conf.Where(f.key), f.key, w, err)
		}
		*f.dst = p
	}
	return in, nil
}

// ns3Find finds a file config.txt names: an absolute path as it is, a
// relative one from dir, then from each directory above dir.
func ns3Find(dir, name string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if up := filepath.Dir(d); up == d || d == "." {
			break
		}
	}
	return "", fmt.Errorf("not found in %s or a directory above it", dir)
}

// userSet reports whether the experiment file or an override sets key (a
// dotted path).
func (e *Experiment) userSet(key string) bool {
	if e.file != nil && e.file.IsDefined(strings.Split(key, ".")...) {
		return true
	}
	if e.source != nil {
		for _, o := range e.source.overrides {
			k, _, _ := strings.Cut(o, "=")
			k = strings.TrimSpace(k)
			if k == key || strings.HasPrefix(key, k+".") {
				return true
			}
		}
	}
	return false
}

// applyNS3Config maps config.txt's settings over the experiment's defaults
// (package doc above) and builds the warning of what it cannot honour.
func (e *Experiment) applyNS3Config(nt *ns3.Topology) error {
	c := e.ns3.conf
	x, t := &e.Experiment, &e.Topology
	fail := func(key, format string, args ...any) error {
		return e.errorf("topology.ns3_config", "%s: %s: %s", c.Where(key), key, fmt.Sprintf(format, args...))
	}
	var cannot []string
	refuse := func(key, why string) {
		s, _ := c.Setting(key)
		cannot = append(cannot, fmt.Sprintf("%s %s (line %d): %s", key, strings.Join(s.Values, " "), s.Line, why))
	}
	flag := func(key string) (on, set bool) {
		v, ok := c.Uint(key)
		return v != 0, ok
	}

	if mode, ok := c.Uint("CC_MODE"); ok && !e.userSet("cc.scheme") {
		s, known := ns3Schemes[mode]
		if !known {
			return fail("CC_MODE", "%d: ccbed runs CC_MODE 1 (DCQCN), 3 (HPCC), 7 (TIMELY) and 8 (DCTCP); set cc.scheme for another", mode)
		}
		e.CC.Scheme = s
	}
	if v, ok := c.Uint("PACKET_PAYLOAD_SIZE"); ok && !e.userSet("topology.mtu_bytes") {
		if v < 64 || v > 9000 {
			return fail("PACKET_PAYLOAD_SIZE", "%d: ccbed takes 64..9000", v)
		}
		t.MTUBytes = int(v)
	}
	if v, ok := c.Float("SIMULATOR_STOP_TIME"); ok && !e.userSet("experiment.duration_ms") {
		ms := (v - t.NS3StartS) * 1e3
		if err := config.PositiveTime(ms, "ms"); err != nil {
			return fail("SIMULATOR_STOP_TIME", "%v s less ns3_start_s %v s: %v", v, t.NS3StartS, err)
		}
		if x.WarmupMs >= ms {
			return fail("SIMULATOR_STOP_TIME", "a run of %v ms is not longer than experiment.warmup_ms %v", ms, x.WarmupMs)
		}
		x.DurationMs = ms
	}
	if v, ok := c.Uint("L2_ACK_INTERVAL"); ok {
		if v == 0 {
			refuse("L2_ACK_INTERVAL", "no ACKs: ccbed's receivers always acknowledge")
		} else if !e.userSet("topology.ack_every") {
			t.AckEvery = 1
		}
	}
	if on, _ := flag("L2_BACK_TO_ZERO"); on {
		refuse("L2_BACK_TO_ZERO", "ccbed resends go-back-N from the NAK's sequence, not from the chunk's start")
	}
	if v, ok := c.Uint("BUFFER_SIZE"); ok && !e.userSet("buffer.size_bytes") {
		if e.Buffer.Mode == switchd.BufferShared || e.Buffer.Mode == "" {
			e.Buffer.SizeBytes = int64(v) << 20
		} else {
			refuse("BUFFER_SIZE", "buffer.mode is "+e.Buffer.Mode+": ns-3's MMU pool is a shared buffer")
		}
	}
	if on, ok := flag("USE_DYNAMIC_PFC_THRESHOLD"); ok && !on {
		refuse("USE_DYNAMIC_PFC_THRESHOLD", "ccbed's static thresholds are not ns-3's; the shared buffer's are dynamic")
	}
	if !e.userSet("pfc.enabled") {
		e.PFC.Enabled = true
	}
	if v, ok := c.Float("ERROR_RATE_PER_LINK"); ok && v != 0 && !e.userSet("topology.loss_rate") {
		// ns-3 drops each packet a device receives with this probability:
		// per link direction, as topology.loss_rate (virtual time only).
		if e.Experiment.Clock == ClockVirtual {
			e.Topology.LossRate = v
		} else {
			refuse("ERROR_RATE_PER_LINK", "link loss is injected in virtual time only (topology.loss_rate)")
		}
	}
	if at, _, _, ok := c.LinkDown(); ok && at != 0 {
		refuse("LINK_DOWN", "ns-3 takes the link down and recomputes its routes at once (HPCC's third.cc, at 2 s + the time); ccbed's [[link_failures]] takes a link down without rerouting: add one by hand if that is what you want")
	}
	if _, ok := c.Setting("PAUSE_TIME"); ok {
		refuse("PAUSE_TIME", "ccbed's PFC pauses until XON, with no pause time")
	}
	if on, ok := flag("ACK_HIGH_PRIO"); ok && !on {
		refuse("ACK_HIGH_PRIO", "ccbed's switches queue ACKs and NAKs with data as ns-3 does with ACK_HIGH_PRIO 0, but send CNPs (ns-3: a flag on a queued ACK) ahead of the data queues, never paused")
	}
	if err := e.applyNS3Scheme(nt, fail, refuse, flag); err != nil {
		return err
	}
	for _, s := range c.Settings {
		if !s.Known {
			refuse(s.Key, "not a key of the ns-3 simulators' readers (ignored there too)")
		}
	}
	if len(cannot) > 0 {
		e.ns3.warning = fmt.Sprintf("%s: ccbed cannot honour %d setting(s) and runs without them: %s",
			c.Name, len(cannot), strings.Join(cannot, "; "))
	}
	return nil
}

// applyNS3Scheme maps config.txt's keys of the run's scheme to its
// [cc.params], where the experiment sets no value.
func (e *Experiment) applyNS3Scheme(nt *ns3.Topology, fail func(key, format string, args ...any) error,
	refuse func(key, why string), flag func(key string) (on, set bool)) error {
	c := e.ns3.conf
	param := func(key string, v any) {
		if e.CC.Params == nil {
			e.CC.Params = map[string]any{}
		}
		if _, set := e.CC.Params[key]; !set {
			e.CC.Params[key] = v
		}
	}
	float := func(ns3Key, key string, scale float64) {
		if v, ok := c.Float(ns3Key); ok {
			param(key, v*scale)
		}
	}
	rate := func(ns3Key, key string, scale float64) {
		if v, ok := c.RateBps(ns3Key); ok {
			param(key, v*scale)
		}
	}
	switch e.CC.Scheme {
	case "dcqcn":
		float("ALPHA_RESUME_INTERVAL", "alpha_timer_us", 1)
		param("alpha_update", "timer")
		float("RATE_DECREASE_INTERVAL", "decrease_interval_us", 1)
		float("RP_TIMER", "increase_timer_us", 1)
		float("EWMA_GAIN", "g", 1)
		if v, ok := c.Uint("FAST_RECOVERY_TIMES"); ok {
			param("f", int64(v)+1)
		}
		rate("RATE_AI", "rai_mbps", 1e-6)
		rate("RATE_HAI", "rhai_mbps", 1e-6)
		rate("MIN_RATE", "min_rate_mbps", 1e-6)
		if on, ok := flag("CLAMP_TARGET_RATE"); ok {
			param("clamp_target_rate", on)
		}
		if on, ok := flag("HAS_WIN"); ok {
			param("window", on)
		}
		param("byte_counter_bytes", int64(0))
		param("timer_hyper_increase", true)
		param("cnp_interval_us", 0.0)
		ecn, err := e.ns3ECN(nt, fail)
		if err != nil {
			return err
		}
		if ecn != nil {
			param("ecn_by_link", ecn)
		}
		if on, ok := flag("ENABLE_QCN"); ok && !on {
			refuse("ENABLE_QCN", "ccbed's DCQCN switches always mark")
		}
	case "hpcc":
		float("U_TARGET", "eta", 1)
		if v, ok := c.Uint("MI_THRESH"); ok {
			param("max_stage", int64(v))
		}
		rate("RATE_AI", "rate_ai_mbps", 1e-6)
		for _, k := range []struct {
			key  string
			want bool
			why  string
		}{
			{"HAS_WIN", true, "ccbed's HPCC is window-based (HPCC's Algorithm 1)"},
			{"VAR_WIN", true, "ccbed's HPCC window follows its rate"},
			{"FAST_REACT", true, "ccbed's HPCC reacts on every ACK"},
			{"GLOBAL_T", true, "ccbed's HPCC has one T, the largest base RTT"},
			{"RATE_BOUND", true, "ccbed paces every QP at its rate"},
			{"MULTI_RATE", false, "ccbed's HPCC keeps one rate, from the most loaded hop"},
			{"SAMPLE_FEEDBACK", false, "ccbed's HPCC uses every ACK's INT"},
		} {
			if on, ok := flag(k.key); ok && on != k.want {
				refuse(k.key, k.why)
			}
		}
	case "timely":
		rai, okAI := c.RateBps("RATE_AI")
		if okAI {
			param("delta_bps", rai)
		}
		if hai, ok := c.RateBps("RATE_HAI"); ok && okAI {
			param("hai_factor", hai/rai)
		}
		rate("MIN_RATE", "min_rate_bps", 1)
		// ns-3's TIMELY attributes, which no config.txt key sets and its
		// programs leave at their defaults (rdma-hw.cc): T_low 50 us, and
		// the gradient normalised by a fixed 20 us, not the base RTT.
		param("t_low_ns", int64(ns3TimelyTLowNs))
		param("min_rtt_ns", int64(ns3TimelyMinRTTNs))
		if on, _ := flag("HAS_WIN"); on {
			refuse("HAS_WIN", "ccbed's TIMELY is rate-based, with no window")
		}
	case "dctcp":
		float("EWMA_GAIN", "g", 1)
		param("mark_at", "dequeue")
		if _, ok := c.Setting("DCTCP_RATE_AI"); ok {
			refuse("DCTCP_RATE_AI", "ccbed's DCTCP is window-based: it adds one MTU per window (cc.params.ai_bytes)")
		}
		if _, ok := c.Setting("MIN_RATE"); ok {
			refuse("MIN_RATE", "ccbed's DCTCP floors its window at one MTU, not a rate")
		}
		if on, ok := flag("HAS_WIN"); ok && !on {
			refuse("HAS_WIN", "ccbed's DCTCP is window-based")
		}
		ecn, err := e.ns3ECN(nt, fail)
		if err != nil || ecn == nil {
			return err
		}
		k := ecn[0]["kmin_bytes"]
		for _, en := range ecn {
			if en["kmin_bytes"] != k || en["kmax_bytes"] != k || en["pmax"] != 1.0 {
				refuse("KMIN_MAP", "ccbed's DCTCP marks above one threshold K at every port (KMIN_MAP = KMAX_MAP, PMAX_MAP 1)")
				return nil
			}
		}
		param("k_bytes", k)
	}
	return nil
}

// ns3ECN is the DCQCN ecn_by_link table of config.txt's KMIN_MAP, KMAX_MAP
// and PMAX_MAP (KB of 1000 bytes), entries in increasing rate, for the rates
// of the topology's switch ports; nil when config.txt has none of the maps.
// A switch port's rate that a map lacks is an error, as in ns-3.
func (e *Experiment) ns3ECN(nt *ns3.Topology, fail func(key, format string, args ...any) error) ([]map[string]any, error) {
	c := e.ns3.conf
	keys := []string{"KMIN_MAP", "KMAX_MAP", "PMAX_MAP"}
	var maps [3]map[float64]float64
	found := false
	for i, k := range keys {
		m, ok := c.RateMap(k)
		found = found || ok
		maps[i] = map[float64]float64{}
		for _, rv := range m {
			maps[i][rv.Bps] = rv.Value
		}
	}
	if !found {
		return nil, nil
	}
	topo := nt.Topo
	var rates []float64
	seen := map[float64]bool{}
	for s := range topo.Switches {
		v := len(topo.Hosts) + s
		for p := 0; p < topo.NumPorts(v); p++ {
			if _, _, out := topo.Peer(v, p); !seen[out.Bps] {
				seen[out.Bps] = true
				rates = append(rates, out.Bps)
			}
		}
	}
	slices.Sort(rates)
	out := make([]map[string]any, 0, len(rates))
	for _, r := range rates {
		var v [3]float64
		for i, k := range keys {
			x, ok := maps[i][r]
			if !ok {
				return nil, fail(k, "no entry for %v bits/s, a switch port's rate: ns-3 needs KMIN_MAP, KMAX_MAP and PMAX_MAP for every one", r)
			}
			v[i] = x
		}
		out = append(out, map[string]any{"gbps": r / 1e9, "kmin_bytes": int64(v[0]) * 1000,
			"kmax_bytes": int64(v[1]) * 1000, "pmax": v[2]})
	}
	return out, nil
}
