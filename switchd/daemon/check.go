package daemon

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// The checks of what only a file can get wrong: text, names, devices and
// the daemon's lcores and rings. switchd.Spec.CheckWith checks the rest.

// validateSwitch checks [switch].
func (c *Config) validateSwitch(errf errorf) error {
	s := &c.Switch
	if _, err := wire.ParseIPv4(s.IP); err != nil {
		return errf("switch.ip", "%v", err)
	}
	if s.PriorityFrom != "pcp" && s.PriorityFrom != "dscp" {
		return errf("switch.priority_from", "%q: want \"pcp\" or \"dscp\"", s.PriorityFrom)
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
		if s.TxLcores > switchd.MaxPFCShards && c.PFC.Enabled {
			return errf("switch.tx_lcores", "%d with pfc.enabled: at most %d", s.TxLcores, switchd.MaxPFCShards)
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

// validatePorts checks [[ports]]' names, devices, addresses and delays,
// and returns the index of each port's name.
func (c *Config) validatePorts(errf errorf) (names map[string]int, err error) {
	if len(c.Ports) == 0 || len(c.Ports) > switchd.MaxPorts {
		return nil, errf("ports", "%d ports: want 1..%d", len(c.Ports), switchd.MaxPorts)
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
	if !(p.DelayUs >= 0) || p.DelayUs > 100_000 {
		return errf(key("delay_us"), "%v: want [0, 100000]", p.DelayUs)
	}
	return nil
}

// validateRoutes checks [[routes]]' prefixes and port names.
func (c *Config) validateRoutes(errf errorf, names map[string]int) error {
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
	return nil
}

// validateFileCC checks [cc]'s times and its parameter tables' schemes.
func (c *Config) validateFileCC(errf errorf) error {
	if !(c.CC.BaseRTTUs > 0) || c.CC.BaseRTTUs > 1e9 {
		return errf("cc.base_rtt_us", "%v: want > 0", c.CC.BaseRTTUs)
	}
	for name := range c.CC.Params {
		if _, err := ccalgo.Lookup(name); err != nil {
			return errf("cc.params."+name, "%v", err)
		}
	}
	return nil
}

// errorf builds the error of a config key (at its line in the file, when
// there is one).
type errorf = func(key, format string, args ...any) error
