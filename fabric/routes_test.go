package fabric

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/wire"
)

// perHostRoutes is the routes as every switch had them before routes by
// prefix: one breadth-first search per host, every port on a shortest path to
// it. The tests' reference.
func (t *Topology) perHostRoutes(s int) [][]int {
	out := make([][]int, len(t.Hosts))
	for h := range t.Hosts {
		dist := t.hopsTo(h)
		v := len(t.Hosts) + s
		if dist[v] < 0 {
			continue
		}
		for p := range t.ports[v] {
			u, _, _ := t.Peer(v, p)
			if dist[u] == dist[v]-1 && (u == h || !t.IsHost(u)) {
				out[h] = append(out[h], p)
			}
		}
	}
	return out
}

// perHostMaxBaseRTT is maxBaseRTT as it was, host pair by host pair: the
// tests' reference.
func (t *Topology) perHostMaxBaseRTT(mtu int) int64 {
	data := mtu + hostd.DataOverhead
	oneWay := func(d, b int) []float64 { return t.latencyTo(d, b, make([]float64, t.NumNodes())) }
	n := len(t.Hosts)
	dataTo := make([][]float64, n)
	ackTo := make([][]float64, n)
	for h := 0; h < n; h++ {
		dataTo[h] = oneWay(h, data)[:n]
		ackTo[h] = oneWay(h, ackFrameBytes)[:n]
	}
	best := 0.0
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s != d {
				best = math.Max(best, dataTo[d][s]+ackTo[s][d])
			}
		}
	}
	return int64(math.Ceil(best))
}

// routeTopologies are topologies of every generator and hand-built ones:
// uneven leaves, a ring (ECMP both ways round), hosts with links of several
// rates on one switch.
func routeTopologies(t *testing.T) []struct {
	name string
	topo *Topology
} {
	ft := func(k int) *Topology {
		f, err := FatTree(k, 100e9, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	ring := &Topology{}
	for i := 0; i < 6; i++ {
		ring.AddHost("")
	}
	var sw []int
	for i := 0; i < 4; i++ {
		sw = append(sw, ring.AddSwitch(""))
	}
	for i := 0; i < 6; i++ {
		ring.ConnectSym(i, sw[i%4], 25e9*float64(1+i%2), int64(500*(1+i%3)))
	}
	for i := range sw {
		ring.ConnectSym(sw[i], sw[(i+1)%4], 100e9, 1000)
	}
	return []struct {
		name string
		topo *Topology
	}{
		{"star", Star(5, 10e9, 1000)},
		{"chain", Chain([]int{2, 0, 3, 1}, 10e9, 40e9, 1000)},
		{"leaf-spine", LeafSpine(3, 2, 5, 100e9, 100e9, 1000)},
		{"leaf-spine 1 host a leaf", LeafSpine(4, 3, 1, 100e9, 400e9, 1000)},
		{"fat-tree k=4", ft(4)},
		{"fat-tree k=6", ft(6)},
		{"fat-tree k=8", ft(8)},
		{"ring", ring},
	}
}

// TestPrefixRoutesMatchPerHost: on every topology, a switch's table built
// from the plan's prefix routes gives every host's address the port, or the
// ECMP group's member for every hash, that the /32 route per host gave, and
// no port to addresses that are no host's; and has fewer routes than hosts
// where hosts share a leaf.
func TestPrefixRoutesMatchPerHost(t *testing.T) {
	for _, c := range routeTopologies(t) {
		t.Run(c.name, func(t *testing.T) {
			p, err := (&Spec{Topo: c.topo}).Plan()
			if err != nil {
				t.Fatal(err)
			}
			top := c.topo.Hosts[len(c.topo.Hosts)-1].IP
			for s := range c.topo.Switches {
				rt, err := p.Switches[s].RouteTable()
				if err != nil {
					t.Fatal(err)
				}
				want := c.topo.perHostRoutes(s)
				for h, ports := range want {
					for hash := uint32(0); hash < 12; hash++ {
						got := rt.LookupHash(c.topo.Hosts[h].IP, hash)
						if len(ports) == 0 && got != -1 || len(ports) > 0 && got != ports[hash%uint32(len(ports))] {
							t.Fatalf("switch %d, host %d, hash %d: port %d, want one of %v at %d", s, h, hash, got, ports, hash%uint32(len(ports)))
						}
					}
				}
				for _, a := range []uint32{HostIP(0) - 1, top + 1, top + 256, 10 << 24} {
					if got := rt.LookupHash(a, 0); got != -1 {
						t.Fatalf("switch %d: %s, no host's, leaves by port %d", s, wire.FormatIPv4(a), got)
					}
				}
				if got := c.topo.Routes(s); len(got) != len(want) {
					t.Fatalf("Routes(%d): %d hosts, want %d", s, len(got), len(want))
				}
			}
		})
	}
}

// TestMaxBaseRTTByClass: the largest base RTT from classes of hosts equals
// the one from every pair of hosts, to the nanosecond.
func TestMaxBaseRTTByClass(t *testing.T) {
	for _, c := range routeTopologies(t) {
		for _, mtu := range []int{1000, 4096} {
			if got, want := c.topo.maxBaseRTT(mtu), c.topo.perHostMaxBaseRTT(mtu); got != want {
				t.Errorf("%s, mtu %d: %d ns, want %d", c.name, mtu, got, want)
			}
		}
	}
}
