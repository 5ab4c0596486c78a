package switchd

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// errorf builds the error of a spec's key (Check's a *SpecError;
// switchd/daemon's at the key's line in the file).
type errorf = func(key, format string, args ...any) error

// Check checks every value of the spec (CheckWith) and each port's scheme
// parameters (CheckCPs), each error a *SpecError naming the field by its
// file key: what a driver that builds specs (fabric.Plan) calls. switchd/daemon
// checks what only a file can get wrong (text, names, lcores) and then calls
// CheckWith and CheckCPs with errors at the file's lines.
func (s *Spec) Check() error {
	if err := s.CheckWith(specErr); err != nil {
		return err
	}
	return s.CheckCPs()
}

// CheckWith is Check with errf building the errors. The sections are checked
// in the order of the file's tables, each by its own checker; the first
// error found is returned.
func (s *Spec) CheckWith(errf errorf) error {
	if err := s.checkSwitch(errf); err != nil {
		return err
	}
	if err := s.checkPorts(errf); err != nil {
		return err
	}
	if err := s.checkRoutes(errf); err != nil {
		return err
	}
	if err := s.checkCC(errf); err != nil {
		return err
	}
	if err := s.validatePFC(errf); err != nil {
		return err
	}
	if err := s.CheckBuffer(errf); err != nil {
		return err
	}
	if s.SampleNs < 0 || s.SampleNs > 1e9 {
		return errf("telemetry.sample_us", "%v: want [0, 1e6]", float64(s.SampleNs)/1e3)
	}
	if s.SampleBuffer < 16 {
		return errf("telemetry.sample_buffer", "%d: want >= 16", s.SampleBuffer)
	}
	return nil
}

// checkSwitch checks the switch-wide settings.
func (s *Spec) checkSwitch(errf errorf) error {
	if s.ID > 0xfff {
		return errf("switch.id", "%d does not fit the 12-bit INT switch id", s.ID)
	}
	if s.Trust != TrustAll && s.Trust != TrustTopology {
		return errf("switch.trust", "%q: want %q or %q", s.Trust, TrustAll, TrustTopology)
	}
	if s.FrameOverheadBytes < 0 || s.FrameOverheadBytes > 64 {
		return errf("switch.frame_overhead_bytes", "%d: want 0..64", s.FrameOverheadBytes)
	}
	if s.BurstBytes != 0 && s.BurstBytes < 1518 {
		return errf("switch.burst_bytes", "%d: want 0 (exact) or at least one full frame (1518)", s.BurstBytes)
	}
	return nil
}

// checkPorts checks every port.
func (s *Spec) checkPorts(errf errorf) error {
	if len(s.Ports) == 0 || len(s.Ports) > MaxPorts {
		return errf("ports", "%d ports: want 1..%d", len(s.Ports), MaxPorts)
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		key := func(k string) string { return fmt.Sprintf("ports[%d].%s", i, k) }
		if !(p.LinkBps > 0) || p.LinkBps > 1600e9 {
			return errf(key("link_gbps"), "%v: want (0, 1600]", p.LinkBps/1e9)
		}
		if p.DelayNs < 0 || p.DelayNs > 100_000_000 {
			return errf(key("delay_us"), "%v: want [0, 100000]", float64(p.DelayNs)/1e3)
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
			if s.Trust == TrustTopology {
				return errf(key("faces"), "missing: with switch.trust %q every port says what it faces (%q, %q or %q)",
					TrustTopology, FacesHost, FacesSwitch, FacesAny)
			}
		default:
			return errf(key("faces"), "%q: want %q, %q or %q", p.Faces, FacesHost, FacesSwitch, FacesAny)
		}
	}
	return nil
}

// checkRoutes checks the routes' ports and builds their table.
func (s *Spec) checkRoutes(errf errorf) error {
	if len(s.Routes) == 0 {
		return errf("routes", "no routes: the switch would drop everything")
	}
	for i, r := range s.Routes {
		for _, p := range r.Ports {
			if p < 0 || p >= len(s.Ports) {
				return errf(fmt.Sprintf("routes[%d].ports", i), "port %d: want 0..%d", p, len(s.Ports)-1)
			}
		}
	}
	if _, err := s.RouteTable(); err != nil {
		return errf("routes", "%v", err)
	}
	return nil
}

// checkCC checks the network the schemes are told of and the ports' schemes.
func (s *Spec) checkCC(errf errorf) error {
	if s.CC.BaseRTTNs <= 0 {
		return errf("cc.base_rtt_us", "%v: want > 0", float64(s.CC.BaseRTTNs)/1e3)
	}
	if s.CC.MTU < 64 || s.CC.MTU > 9000 {
		return errf("cc.mtu", "%d: want 64..9000", s.CC.MTU)
	}
	if s.CC.ExpectedFlows < 1 {
		return errf("cc.expected_flows", "%d: want >= 1", s.CC.ExpectedFlows)
	}
	if _, err := ccalgo.Lookup(s.CC.Scheme); err != nil {
		return errf("cc.scheme", "%v", err)
	}
	for i := range s.Ports {
		if s.Ports[i].Scheme != "" {
			if _, err := ccalgo.Lookup(s.Ports[i].Scheme); err != nil {
				return errf(fmt.Sprintf("ports[%d].scheme", i), "%v", err)
			}
		}
	}
	return nil
}

// validatePFC checks [pfc]'s thresholds and priority (pfc.priorities with
// [buffer], in CheckBuffer).
func (s *Spec) validatePFC(errf errorf) error {
	p := &s.PFC
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

// CheckBuffer checks pfc.priorities, [buffer] and [queues] (testbed checks an
// experiment's tables of the same names with it). errf builds the error of a
// key. The buffer's room for headroom and reserves is checked when the config
// has ports.
func (s *Spec) CheckBuffer(errf func(key, format string, args ...any) error) error {
	if err := checkPriorities(s.PFC.Priorities); err != nil {
		return errf("pfc.priorities", "%v", err)
	}
	if err := s.validateBuffer(errf); err != nil {
		return err
	}
	q := &s.Queues
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
func (s *Spec) validateBuffer(errf errorf) error {
	b := &s.Buffer
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
	if !s.PFC.Enabled || len(s.Ports) == 0 {
		return nil
	}
	hdrm, rsrv := s.reserved()
	if free := b.SizeBytes - hdrm - rsrv; free < b.SizeBytes/8 {
		return errf("buffer.size_bytes", "%d B leaves %d B shared after %d B of headroom and %d B of reserve "+
			"(%d ports x %d lossless priorities): want at least an eighth of the buffer shared; "+
			"raise size_bytes or lower headroom_bytes / reserve_bytes", b.SizeBytes, free, hdrm, rsrv, len(s.Ports), len(s.PFC.Lossless()))
	}
	return nil
}
