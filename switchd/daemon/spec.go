package daemon

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// Validate checks every value (Spec does). f locates errors in the file;
// with a nil f (a Config built in Go) errors name the key only.
func (c *Config) Validate(f *config.File) error {
	_, err := c.Spec(f)
	return err
}

// Spec turns c into the spec the engine takes, checking every value on the
// way: what only a file can get wrong (text, port names, devices, lcores)
// here, the rest by switchd.Spec.CheckWith; the schemes' parameter tables are
// decoded over each port's defaults and their CPs built once to check them.
// f locates errors in the file; with a nil f errors name the key only. A
// port without a MAC keeps a zero one, which the caller fills from the
// device before switchd.New.
func (c *Config) Spec(f *config.File) (*switchd.Spec, error) {
	errf := func(key, format string, args ...any) error {
		if f != nil {
			return f.Errorf(key, format, args...)
		}
		return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
	if err := c.validateSwitch(errf); err != nil {
		return nil, err
	}
	names, err := c.validatePorts(errf)
	if err != nil {
		return nil, err
	}
	if err := c.validateRoutes(errf, names); err != nil {
		return nil, err
	}
	if err := c.validateFileCC(errf); err != nil {
		return nil, err
	}
	if t := c.Telemetry.SampleUs; !(t >= 0) || t > 1e6 {
		return nil, errf("telemetry.sample_us", "%v: want [0, 1e6]", t)
	}
	s := c.spec(names)
	if err := s.CheckWith(errf); err != nil {
		return nil, err
	}
	if err := c.decodeAllParams(s, f); err != nil {
		return nil, err
	}
	return s, nil
}

// spec converts c, checked by the validators, into a switchd.Spec (no parameters
// yet); names maps the ports' names to their indices.
func (c *Config) spec(names map[string]int) *switchd.Spec {
	w := &c.Switch
	ip, _ := wire.ParseIPv4(w.IP)
	s := &switchd.Spec{
		ID: w.ID, IP: ip, DecrementTTL: w.DecrementTTL, FrameOverheadBytes: w.FrameOverheadBytes,
		BurstBytes: w.BurstBytes, PriorityFromDSCP: w.PriorityFrom == "dscp", Trust: w.Trust,
		CC: switchd.CCSpec{Scheme: c.CC.Scheme, BaseRTTNs: config.UsToNs(c.CC.BaseRTTUs), MTU: c.CC.MTU,
			ExpectedFlows: c.CC.ExpectedFlows},
		PFC: c.PFC, Buffer: c.Buffer, Queues: c.Queues,
		SampleNs: config.UsToNs(c.Telemetry.SampleUs), SampleBuffer: c.Telemetry.SampleBuffer,
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		ps := switchd.PortSpec{Name: p.Name, LinkBps: p.LinkGbps * 1e9, DelayNs: config.UsToNs(p.DelayUs),
			BufferBytes: p.BufferBytes, HeadroomBytes: p.HeadroomBytes, Scheme: p.Scheme, CPID: p.CPID,
			Faces: p.Faces, IgnorePFC: p.IgnorePFC}
		if p.MAC != "" {
			ps.MAC, _ = wire.ParseMAC(p.MAC)
		}
		ps.PeerMAC, _ = wire.ParseMAC(p.PeerMAC)
		s.Ports = append(s.Ports, ps)
	}
	// An af_packet port's derived headroom holds its kernel ring too.
	for i := range c.Ports {
		if k := KernelRxFrames(c.Ports[i].Device); k > 0 && s.Ports[i].HeadroomBytes == 0 && s.Buffer.HeadroomBytes == 0 {
			s.Ports[i].HeadroomBytes = s.Headroom(i) + int64(k)*int64(s.FullFrame())
		}
	}
	for _, r := range c.Routes {
		addr, plen, _ := parsePrefix(r.Prefix)
		rt := switchd.Route{Addr: addr, Len: plen}
		for _, n := range r.portNames() {
			rt.Ports = append(rt.Ports, names[n])
		}
		s.Routes = append(s.Routes, rt)
	}
	return s
}

// decodeAllParams decodes each port's [cc.params.<scheme>] table over the
// scheme's defaults for the port into s.Ports[i].Params, and builds its CP
// to check them; a table of a scheme no port runs is decoded too.
func (c *Config) decodeAllParams(s *switchd.Spec, f *config.File) error {
	for i := range s.Ports {
		params, err := c.decodeParams(s.SchemeOf(i), s.Env(i), f)
		if err != nil {
			return err
		}
		s.Ports[i].Params = params
	}
	if err := s.CheckCPs(); err != nil {
		var se *switchd.SpecError
		if errors.As(err, &se) && f != nil {
			line := f.Line(se.Key)
			if k := strings.LastIndexByte(se.Key, '.'); line == 0 && k > 0 {
				// a default the table did not set, or several keys: point at the table
				line = f.Line(se.Key[:k])
			}
			return &config.Error{File: f.Path, Line: line, Key: se.Key, Msg: se.Msg}
		}
		return err
	}
	// A scheme whose parameters are given but that no port runs is still checked.
	for name := range c.CC.Params {
		if _, err := c.decodeParams(name, s.Env(0), f); err != nil {
			return err
		}
	}
	return nil
}

// decodeParams returns scheme's parameter struct for env: the paper
// defaults with the [cc.params.<scheme>] table decoded over them.
func (c *Config) decodeParams(scheme string, env ccalgo.Env, f *config.File) (any, error) {
	sch, err := ccalgo.Lookup(scheme)
	if err != nil {
		return nil, err
	}
	params := sch.DefaultParams(env)
	tbl, ok := c.CC.Params[scheme]
	if !ok || len(tbl) == 0 {
		return params, nil
	}
	// Unknown keys and wrong types are errors, mapped back to the file.
	base := "cc.params." + scheme
	if err := config.DecodeTable(tbl, params); err != nil {
		var ce *config.Error
		if !errors.As(err, &ce) {
			return nil, err
		}
		key := base
		if ce.Key != "" {
			key += "." + ce.Key
		}
		if f != nil {
			return nil, f.Errorf(key, "%s", ce.Msg)
		}
		return nil, fmt.Errorf("%s: %s", key, ce.Msg)
	}
	return params, nil
}

// parsePrefix parses an IPv4 prefix ("10.0.1.0/24") into its network
// address (host bits cleared, as net.ParseCIDR gives it) and length.
func parsePrefix(s string) (addr uint32, plen int, err error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return 0, 0, fmt.Errorf("%q is not an IPv4 prefix (10.0.1.0/24)", s)
	}
	return wire.IPv4FromAddr(p.Masked().Addr()), p.Bits(), nil
}

// SchemeOf returns the scheme name port i runs.
func (c *Config) SchemeOf(i int) string {
	if s := c.Ports[i].Scheme; s != "" {
		return s
	}
	return c.CC.Scheme
}

// SchemesInUse lists the distinct schemes the ports run, sorted.
func (c *Config) SchemesInUse() []string {
	m := map[string]bool{}
	for i := range c.Ports {
		m[c.SchemeOf(i)] = true
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ConfigOf is the file form of s, for a tool that writes a switchd file from
// a spec (testbed nodes): addresses and prefixes as text, ports by name
// (Name), times in microseconds, the daemon's settings at their defaults.
// It leaves CC.Params empty: a spec holds each port's parameters as a typed
// struct, and the writer gives the table it decoded them from.
func ConfigOf(s *switchd.Spec) Config {
	c := DefaultConfig()
	w := &c.Switch
	w.ID, w.IP, w.DecrementTTL = s.ID, wire.FormatIPv4(s.IP), s.DecrementTTL
	w.FrameOverheadBytes, w.BurstBytes, w.Trust = s.FrameOverheadBytes, s.BurstBytes, s.Trust
	w.PriorityFrom = "pcp"
	if s.PriorityFromDSCP {
		w.PriorityFrom = "dscp"
	}
	for _, p := range s.Ports {
		pc := PortConfig{Name: p.Name, PeerMAC: p.PeerMAC.String(), LinkGbps: p.LinkBps / 1e9,
			DelayUs: float64(p.DelayNs) / 1e3, BufferBytes: p.BufferBytes, HeadroomBytes: p.HeadroomBytes,
			Scheme: p.Scheme, CPID: p.CPID, Faces: p.Faces, IgnorePFC: p.IgnorePFC}
		if p.MAC != (wire.MAC{}) {
			pc.MAC = p.MAC.String()
		}
		c.Ports = append(c.Ports, pc)
	}
	for _, r := range s.Routes {
		rc := RouteConfig{Prefix: wire.FormatIPv4(r.Addr) + "/" + strconv.Itoa(r.Len)}
		for _, p := range r.Ports {
			rc.Ports = append(rc.Ports, s.Ports[p].Name)
		}
		if len(rc.Ports) == 1 {
			rc.Port, rc.Ports = rc.Ports[0], nil
		}
		c.Routes = append(c.Routes, rc)
	}
	c.CC = CCConfig{Scheme: s.CC.Scheme, BaseRTTUs: float64(s.CC.BaseRTTNs) / 1e3, MTU: s.CC.MTU,
		ExpectedFlows: s.CC.ExpectedFlows}
	c.PFC, c.Buffer, c.Queues = s.PFC, s.Buffer, s.Queues
	c.Telemetry.SampleUs, c.Telemetry.SampleBuffer = float64(s.SampleNs)/1e3, s.SampleBuffer
	return c
}
