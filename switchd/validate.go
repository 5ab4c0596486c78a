package switchd

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/wire"
)

// errorf builds the error of a config key (Validate's, from the file's
// positions when it has them).
type errorf = func(key, format string, args ...any) error

// Validate checks every value. f locates errors in the file; with a nil f
// (a Config built in Go) errors name the key only. The sections are checked
// in the order of the file's tables, each by its own validator; the first
// error found is returned.
func (c *Config) Validate(f *config.File) error {
	errf := func(key, format string, args ...any) error {
		if f != nil {
			return f.Errorf(key, format, args...)
		}
		return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
	if err := c.validateSwitch(errf); err != nil {
		return err
	}
	names, err := c.validatePorts(errf)
	if err != nil {
		return err
	}
	if err := c.validateRoutes(errf, names); err != nil {
		return err
	}
	if err := c.validateCC(f, errf); err != nil {
		return err
	}
	if err := c.validatePFC(errf); err != nil {
		return err
	}
	if err := c.CheckBuffer(errf); err != nil {
		return err
	}
	return c.validateTelemetry(errf)
}

// validateSwitch checks [switch].
func (c *Config) validateSwitch(errf errorf) error {
	s := &c.Switch
	if s.ID > 0xfff {
		return errf("switch.id", "%d does not fit the 12-bit INT switch id", s.ID)
	}
	if _, err := wire.ParseIPv4(s.IP); err != nil {
		return errf("switch.ip", "%v", err)
	}
	if s.PriorityFrom != "pcp" && s.PriorityFrom != "dscp" {
		return errf("switch.priority_from", "%q: want \"pcp\" or \"dscp\"", s.PriorityFrom)
	}
	if s.Trust != TrustAll && s.Trust != TrustTopology {
		return errf("switch.trust", "%q: want %q or %q", s.Trust, TrustAll, TrustTopology)
	}
	if err := c.validateLcores(errf); err != nil {
		return err
	}
	if s.Mbufs < 1023 {
		return errf("switch.mbufs", "%d: want at least 1023", s.Mbufs)
	}
	if s.RingSize < 64 || s.RingSize&(s.RingSize-1) != 0 {
		return errf("switch.ring_size", "%d: want a power of two >= 64", s.RingSize)
	}
	if s.Burst < 1 || s.Burst > 512 {
		return errf("switch.burst", "%d: want 1..512", s.Burst)
	}
	if s.FrameOverheadBytes < 0 || s.FrameOverheadBytes > 64 {
		return errf("switch.frame_overhead_bytes", "%d: want 0..64", s.FrameOverheadBytes)
	}
	if s.BurstBytes != 0 && s.BurstBytes < 1518 {
		return errf("switch.burst_bytes", "%d: want 0 (exact) or at least one full frame (1518)", s.BurstBytes)
	}
	return nil
}

// validateLcores checks switch.mode, switch.lcores and switch.tx_lcores.
func (c *Config) validateLcores(errf errorf) error {
	s := &c.Switch
	switch s.Mode {
	case ModeRTC:
		if len(s.Lcores) > 1 {
			return errf("switch.lcores", "rtc mode runs on 1 lcore, got %d", len(s.Lcores))
		}
	case ModePipeline:
		if len(s.Lcores) != 0 && len(s.Lcores) != 3 {
			return errf("switch.lcores", "pipeline mode needs 3 lcores (rx, switching, tx), got %d", len(s.Lcores))
		}
	case ModeSharded:
		if s.TxLcores < 1 || s.TxLcores > len(c.Ports) {
			return errf("switch.tx_lcores", "%d: want 1 to the number of ports (%d)", s.TxLcores, len(c.Ports))
		}
		if s.TxLcores > MaxPFCShards && c.PFC.Enabled {
			return errf("switch.tx_lcores", "%d with pfc.enabled: at most %d", s.TxLcores, MaxPFCShards)
		}
		if len(s.Lcores) != 0 && len(s.Lcores) <= s.TxLcores {
			return errf("switch.lcores", "sharded mode needs the rx lcores, then %d tx+CC lcore(s): got %d lcores", s.TxLcores, len(s.Lcores))
		}
		if r := len(s.Lcores) - s.TxLcores; r > len(c.Ports) {
			return errf("switch.lcores", "sharded mode: %d rx lcores for %d ports; each rx lcore needs a port", r, len(c.Ports))
		}
	default:
		return errf("switch.mode", "%q: want %q, %q or %q", s.Mode, ModeRTC, ModePipeline, ModeSharded)
	}
	if s.TxLcores != 1 && s.Mode != ModeSharded {
		return errf("switch.tx_lcores", "%d in %s mode: only the sharded mode has several tx+CC lcores", s.TxLcores, s.Mode)
	}
	seen := map[uint]bool{}
	for _, l := range s.Lcores {
		if seen[l] {
			return errf("switch.lcores", "lcore %d listed twice", l)
		}
		seen[l] = true
	}
	return nil
}

// validatePorts checks [[ports]] and returns the index of each port's name.
// A static buffer's port without buffer_bytes gets 1 MiB.
func (c *Config) validatePorts(errf errorf) (names map[string]int, err error) {
	if len(c.Ports) == 0 || len(c.Ports) > MaxPorts {
		return nil, errf("ports", "%d ports: want 1..%d", len(c.Ports), MaxPorts)
	}
	names = map[string]int{}
	devs := map[string]int{}
	for i := range c.Ports {
		if err := c.validatePort(errf, i, names, devs); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// validatePort checks ports[i]; names and devs map the names and device
// names of the ports before it to their indices, and get its own.
func (c *Config) validatePort(errf errorf, i int, names, devs map[string]int) error {
	p := &c.Ports[i]
	key := func(k string) string { return fmt.Sprintf("ports[%d].%s", i, k) }
	if !nameRe.MatchString(p.Name) {
		return errf(key("name"), "%q: want a letter then letters, digits, _ or -", p.Name)
	}
	if j, dup := names[p.Name]; dup {
		return errf(key("name"), "%q already names ports[%d]", p.Name, j)
	}
	names[p.Name] = i
	if p.Device != "" {
		if !IsPCIAddress(p.Device) && !vdevRe.MatchString(p.Device) {
			return errf(key("device"), "%q is neither a PCI address (0000:03:00.0) nor a vdev (net_ring0, net_af_packet0,iface=veth0)", p.Device)
		}
		dn := DeviceName(p.Device)
		if j, dup := devs[dn]; dup {
			return errf(key("device"), "%q already used by ports[%d]", dn, j)
		}
		devs[dn] = i
	}
	if p.MAC != "" {
		if _, err := wire.ParseMAC(p.MAC); err != nil {
			return errf(key("mac"), "%v", err)
		}
	} else if p.Device == "" {
		return errf(key("mac"), "needed when the port has no device")
	}
	if _, err := wire.ParseMAC(p.PeerMAC); err != nil {
		return errf(key("peer_mac"), "%v", err)
	}
	if !(p.LinkGbps > 0) || p.LinkGbps > 1600 {
		return errf(key("link_gbps"), "%v: want (0, 1600]", p.LinkGbps)
	}
	if !(p.DelayUs >= 0) || p.DelayUs > 100_000 {
		return errf(key("delay_us"), "%v: want [0, 100000]", p.DelayUs)
	}
	if p.BufferBytes == 0 && c.Buffer.Mode == BufferStatic {
		p.BufferBytes = 1 << 20
	}
	if p.BufferBytes != 0 && (p.BufferBytes < 1518 || p.BufferBytes > 1<<30) {
		return errf(key("buffer_bytes"), "%d: want [1518, 2^30]", p.BufferBytes)
	}
	if p.HeadroomBytes < 0 || p.HeadroomBytes > 1<<30 {
		return errf(key("headroom_bytes"), "%d: want [0, 2^30]", p.HeadroomBytes)
	}
	switch p.Faces {
	case FacesHost, FacesSwitch, FacesAny:
	case "":
		if c.Switch.Trust == TrustTopology {
			return errf(key("faces"), "missing: with switch.trust %q every port says what it faces (%q, %q or %q)",
				TrustTopology, FacesHost, FacesSwitch, FacesAny)
		}
	default:
		return errf(key("faces"), "%q: want %q, %q or %q", p.Faces, FacesHost, FacesSwitch, FacesAny)
	}
	return nil
}

// validateRoutes checks [[routes]] against the ports' names.
func (c *Config) validateRoutes(errf errorf, names map[string]int) error {
	if len(c.Routes) == 0 {
		return errf("routes", "no routes: the switch would drop everything")
	}
	for i, r := range c.Routes {
		key := func(k string) string { return fmt.Sprintf("routes[%d].%s", i, k) }
		if _, _, err := parsePrefix(r.Prefix); err != nil {
			return errf(key("prefix"), "%v", err)
		}
		if r.Port != "" && len(r.Ports) > 0 {
			return errf(key("ports"), "give port or ports (ECMP), not both")
		}
		if r.Port == "" && len(r.Ports) == 0 {
			return errf(key("port"), "missing: the route needs a port (or ports, for ECMP)")
		}
		k := "port"
		if len(r.Ports) > 0 {
			k = "ports"
		}
		for _, n := range r.portNames() {
			if _, ok := names[n]; !ok {
				return errf(key(k), "%q is not a port name", n)
			}
		}
	}
	if _, err := c.RouteTable(); err != nil {
		return errf("routes", "%v", err)
	}
	return nil
}

// validateCC checks [cc], the ports' schemes and every scheme's parameters
// (f locates the parameters' errors in the file).
func (c *Config) validateCC(f *config.File, errf errorf) error {
	if !(c.CC.BaseRTTUs > 0) {
		return errf("cc.base_rtt_us", "%v: want > 0", c.CC.BaseRTTUs)
	}
	if c.CC.MTU < 64 || c.CC.MTU > 9000 {
		return errf("cc.mtu", "%d: want 64..9000", c.CC.MTU)
	}
	if c.CC.ExpectedFlows < 1 {
		return errf("cc.expected_flows", "%d: want >= 1", c.CC.ExpectedFlows)
	}
	for name := range c.CC.Params {
		if _, err := ccalgo.Lookup(name); err != nil {
			return errf("cc.params."+name, "%v", err)
		}
	}
	if _, err := ccalgo.Lookup(c.CC.Scheme); err != nil {
		return errf("cc.scheme", "%v", err)
	}
	for i := range c.Ports {
		if c.Ports[i].Scheme != "" {
			if _, err := ccalgo.Lookup(c.Ports[i].Scheme); err != nil {
				return errf(fmt.Sprintf("ports[%d].scheme", i), "%v", err)
			}
		}
		if _, err := c.newCP(i, f); err != nil {
			return err
		}
	}
	// A scheme whose parameters are given but that no port runs is still checked.
	for name := range c.CC.Params {
		if _, err := c.decodeParams(name, c.env(0), f); err != nil {
			return err
		}
	}
	return nil
}

// validatePFC checks [pfc]'s thresholds and priority (pfc.priorities with
// [buffer], in CheckBuffer).
func (c *Config) validatePFC(errf errorf) error {
	p := &c.PFC
	if p.Enabled {
		if p.XOFFBytes <= 0 {
			return errf("pfc.xoff_bytes", "%d: want > 0", p.XOFFBytes)
		}
		if p.XONOffsetBytes < 0 || p.XONOffsetBytes >= p.XOFFBytes {
			return errf("pfc.xon_offset_bytes", "%d: want [0, xoff_bytes)", p.XONOffsetBytes)
		}
		if p.PauseQuanta == 0 {
			return errf("pfc.pause_quanta", "0 would pause nothing")
		}
	}
	if p.Priority > 7 {
		return errf("pfc.priority", "%d: want 0..7", p.Priority)
	}
	return nil
}

// validateTelemetry checks [telemetry].
func (c *Config) validateTelemetry(errf errorf) error {
	t := &c.Telemetry
	if !(t.SampleUs >= 0) || t.SampleUs > 1e6 {
		return errf("telemetry.sample_us", "%v: want [0, 1e6]", t.SampleUs)
	}
	if t.SampleBuffer < 16 {
		return errf("telemetry.sample_buffer", "%d: want >= 16", t.SampleBuffer)
	}
	return nil
}

// CheckBuffer checks pfc.priorities, [buffer] and [queues] (testbed checks an
// experiment's tables of the same names with it). errf builds the error of a
// key. The buffer's room for headroom and reserves is checked when the config
// has ports.
func (c *Config) CheckBuffer(errf func(key, format string, args ...any) error) error {
	if err := checkPriorities(c.PFC.Priorities); err != nil {
		return errf("pfc.priorities", "%v", err)
	}
	if err := c.validateBuffer(errf); err != nil {
		return err
	}
	q := &c.Queues
	if err := checkPriorities(q.Strict); err != nil {
		return errf("queues.strict", "%v", err)
	}
	if len(q.Weights) != 0 && len(q.Weights) != wire.PFCPriorities {
		return errf("queues.weights", "%d weights: want one per priority (8)", len(q.Weights))
	}
	for i, w := range q.Weights {
		if w < 1 || w > 1000 {
			return errf("queues.weights", "priority %d: weight %d: want 1..1000", i, w)
		}
	}
	if q.QuantumBytes < 64 || q.QuantumBytes > 1<<20 {
		return errf("queues.quantum_bytes", "%d: want 64..2^20", q.QuantumBytes)
	}
	return nil
}

// checkPriorities checks a list of distinct priorities 0-7.
func checkPriorities(ps []uint8) error {
	var seen uint8
	for _, p := range ps {
		if p > 7 {
			return fmt.Errorf("priority %d: want 0..7", p)
		}
		if seen&(1<<p) != 0 {
			return fmt.Errorf("priority %d listed twice", p)
		}
		seen |= 1 << p
	}
	return nil
}

// validateBuffer checks [buffer]; in shared mode with PFC on, the buffer must
// hold every lossless priority's headroom and reserve on every port and leave
// a shared pool.
func (c *Config) validateBuffer(errf errorf) error {
	b := &c.Buffer
	switch b.Mode {
	case BufferStatic:
		return nil
	case BufferShared:
	default:
		return errf("buffer.mode", "%q: want %q or %q", b.Mode, BufferShared, BufferStatic)
	}
	if b.SizeBytes < 16<<10 || b.SizeBytes > 1<<34 {
		return errf("buffer.size_bytes", "%d: want [16 KiB, 16 GiB]", b.SizeBytes)
	}
	if !(b.Alpha > 0) || b.Alpha > 64 {
		return errf("buffer.alpha", "%v: want (0, 64]", b.Alpha)
	}
	if b.ReserveBytes < 0 || b.ReserveBytes > 1<<24 {
		return errf("buffer.reserve_bytes", "%d: want [0, 16 MiB]", b.ReserveBytes)
	}
	if b.ResumeOffsetBytes < 0 || b.ResumeOffsetBytes > 1<<24 {
		return errf("buffer.resume_offset_bytes", "%d: want [0, 16 MiB]", b.ResumeOffsetBytes)
	}
	if b.HeadroomBytes < 0 || b.HeadroomBytes > 1<<30 {
		return errf("buffer.headroom_bytes", "%d: want [0, 2^30]", b.HeadroomBytes)
	}
	if !c.PFC.Enabled || len(c.Ports) == 0 {
		return nil
	}
	hdrm, rsrv := c.reserved()
	if free := b.SizeBytes - hdrm - rsrv; free < b.SizeBytes/8 {
		return errf("buffer.size_bytes", "%d B leaves %d B shared after %d B of headroom and %d B of reserve "+
			"(%d ports x %d lossless priorities): want at least an eighth of the buffer shared; "+
			"raise size_bytes or lower headroom_bytes / reserve_bytes", b.SizeBytes, free, hdrm, rsrv, len(c.Ports), len(c.Lossless()))
	}
	return nil
}
