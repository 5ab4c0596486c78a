package fabric

import (
	"fmt"
	"math"
)

// Dir is one direction of a link: its rate and propagation delay.
type Dir struct {
	Bps     float64
	DelayNs int64
}

// Link joins port APort of node A to port BPort of node B. Nodes are numbered
// hosts first (0 .. len(Hosts)-1), then switches. AB is the direction from A
// to B, BA the other.
type Link struct {
	A, B         int
	APort, BPort int
	AB, BA       Dir
}

// Host is a station with one NIC port.
type Host struct {
	Name string
	IP   uint32
	MAC  [6]byte
}

// Switch is a switch of the fabric; its ports are numbered in the order its
// links were added.
type Switch struct {
	Name string
	ID   uint16 // the INT switch id and ECMP hash seed (12 bits)
	IP   uint32 // source of its CP feedback
	// PortMACs are the MACs of its ports.
	PortMACs [][6]byte
}

// Topology is a network: hosts, switches and the links between them. Build it
// with the generators (Star, Chain, LeafSpine, FatTree) or with AddHost,
// AddSwitch and Connect.
type Topology struct {
	Hosts    []Host
	Switches []Switch
	Links    []Link
	// ports[n][p] is the link on port p of node n.
	ports [][]int
}

// HostIP is host i's IPv4 address: 10.0.0.1 + i (host byte order).
func HostIP(i int) uint32 { return 10<<24 + uint32(i) + 1 }

// HostMAC is host i's MAC address.
func HostMAC(i int) [6]byte {
	return [6]byte{0x02, 0xcc, 0xbe, 0xd0 | byte(i>>16&0x0f), byte(i >> 8), byte(i)}
}

// SwitchIP is switch s's IPv4 address, 10.255.s.254 region: 10.254.0.0 + 256 s + 254.
func SwitchIP(s int) uint32 { return 10<<24 | 254<<16 + uint32(s)<<8 + 254 }

// SwitchPortMAC is the MAC of port p of switch s.
func SwitchPortMAC(s, p int) [6]byte {
	return [6]byte{0x02, 0xcc, 0xbf, byte(s >> 8), byte(s), byte(p)}
}

// AddHost adds a host named name (h<i> when empty) and returns its node number.
func (t *Topology) AddHost(name string) int {
	i := len(t.Hosts)
	if name == "" {
		name = fmt.Sprintf("h%d", i)
	}
	if len(t.Switches) > 0 {
		panic("fabric: add every host before the first switch")
	}
	t.Hosts = append(t.Hosts, Host{Name: name, IP: HostIP(i), MAC: HostMAC(i)})
	t.ports = append(t.ports, nil)
	return i
}

// AddSwitch adds a switch named name (s<i> when empty) and returns its node
// number.
func (t *Topology) AddSwitch(name string) int {
	s := len(t.Switches)
	if name == "" {
		name = fmt.Sprintf("s%d", s)
	}
	t.Switches = append(t.Switches, Switch{Name: name, ID: uint16(s + 1), IP: SwitchIP(s)})
	t.ports = append(t.ports, nil)
	return len(t.Hosts) + s
}

// Connect joins nodes a and b with a link of ab one way and ba the other, on
// the next free port of each; it returns the link's index.
func (t *Topology) Connect(a, b int, ab, ba Dir) int {
	l := Link{A: a, B: b, APort: len(t.ports[a]), BPort: len(t.ports[b]), AB: ab, BA: ba}
	t.Links = append(t.Links, l)
	i := len(t.Links) - 1
	t.ports[a] = append(t.ports[a], i)
	t.ports[b] = append(t.ports[b], i)
	for _, n := range []int{a, b} {
		if s := n - len(t.Hosts); s >= 0 {
			sw := &t.Switches[s]
			sw.PortMACs = append(sw.PortMACs, SwitchPortMAC(s, len(sw.PortMACs)))
		}
	}
	return i
}

// ConnectSym is Connect with the same rate and delay both ways.
func (t *Topology) ConnectSym(a, b int, bps float64, delayNs int64) int {
	d := Dir{Bps: bps, DelayNs: delayNs}
	return t.Connect(a, b, d, d)
}

// NumNodes is the number of hosts and switches.
func (t *Topology) NumNodes() int { return len(t.Hosts) + len(t.Switches) }

// IsHost reports whether node n is a host.
func (t *Topology) IsHost(n int) bool { return n < len(t.Hosts) }

// NodeName names node n.
func (t *Topology) NodeName(n int) string {
	if t.IsHost(n) {
		return t.Hosts[n].Name
	}
	return t.Switches[n-len(t.Hosts)].Name
}

// NumPorts is node n's number of ports.
func (t *Topology) NumPorts(n int) int { return len(t.ports[n]) }

// PortLink returns the link on port p of node n.
func (t *Topology) PortLink(n, p int) *Link { return &t.Links[t.ports[n][p]] }

// Peer returns the node and port at the other end of port p of node n, and
// the direction of the link that leaves n there.
func (t *Topology) Peer(n, p int) (peer, peerPort int, out Dir) {
	l := t.PortLink(n, p)
	if l.A == n && l.APort == p {
		return l.B, l.BPort, l.AB
	}
	return l.A, l.APort, l.BA
}

// Validate checks that every host has exactly one link, every switch has at
// least one and at most 64 ports, links join distinct nodes at positive rates,
// and every host can reach every other.
func (t *Topology) Validate() error {
	if len(t.Hosts) < 2 {
		return fmt.Errorf("fabric: %d hosts: want at least 2", len(t.Hosts))
	}
	for i := range t.Hosts {
		if n := len(t.ports[i]); n != 1 {
			return fmt.Errorf("fabric: host %s has %d links: want 1", t.Hosts[i].Name, n)
		}
	}
	for s := range t.Switches {
		n := len(t.ports[len(t.Hosts)+s])
		if n == 0 || n > 64 {
			return fmt.Errorf("fabric: switch %s has %d ports: want 1..64", t.Switches[s].Name, n)
		}
	}
	for i, l := range t.Links {
		if l.A == l.B {
			return fmt.Errorf("fabric: link %d joins %s to itself", i, t.NodeName(l.A))
		}
		if t.IsHost(l.A) && t.IsHost(l.B) {
			return fmt.Errorf("fabric: link %d joins two hosts (%s, %s): put a switch between them", i, t.NodeName(l.A), t.NodeName(l.B))
		}
		for _, d := range []Dir{l.AB, l.BA} {
			if !(d.Bps > 0) || math.IsInf(d.Bps, 0) || d.DelayNs < 0 {
				return fmt.Errorf("fabric: link %d (%s-%s): rate must be > 0 and delay >= 0", i, t.NodeName(l.A), t.NodeName(l.B))
			}
		}
	}
	dist := t.hopsTo(0)
	for h := range t.Hosts {
		if dist[h] < 0 {
			return fmt.Errorf("fabric: host %s cannot reach host %s", t.Hosts[h].Name, t.Hosts[0].Name)
		}
	}
	return nil
}
