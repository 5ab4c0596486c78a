package fabric

import (
	"cmp"
	"slices"

	"github.com/ccbed/ccbed/switchd"
)

// hopsTo returns every node's hop count to node dst over shortest paths, -1
// where unreachable. Hosts other than dst do not forward: a path crosses only
// switches.
func (t *Topology) hopsTo(dst int) []int {
	n := t.NumNodes()
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[dst] = 0
	queue := []int{dst}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v != dst && t.IsHost(v) {
			continue
		}
		for p := range t.ports[v] {
			u, _, _ := t.Peer(v, p)
			if dist[u] < 0 {
				dist[u] = dist[v] + 1
				queue = append(queue, u)
			}
		}
	}
	return dist
}

// Routes returns, for switch s (0-based among switches), the egress ports
// toward each host: routes[h] holds every port on a shortest path (hop count)
// to host h, in port order; more than one is an ECMP group. (A switch's
// table holds PrefixRoutes: the same, by ranges of hosts.)
func (t *Topology) Routes(s int) [][]int {
	r := t.routing()
	out := make([][]int, len(t.Hosts))
	for h := range t.Hosts {
		if g := r.group(t, s, h); g >= 0 {
			out[h] = r.groups[s][g]
		}
	}
	return out
}

// Route is a switch's route: the hosts whose addresses lie in Addr/Len leave
// by Ports (more than one: an ECMP group, in port order). It is the route
// switchd.Spec holds, so that a plan hands its routes to the engine as they are.
type Route = switchd.Route

// PrefixRoutes are switch s's routes: for every run of hosts with
// consecutive addresses whose routes (Routes) have the same ports, the fewest
// prefixes that hold exactly those addresses. A fabric whose hosts are
// numbered leaf by leaf and pod by pod (every generator's) gets a route per
// range of a leaf's or a pod's hosts, not one per host; routes with the same
// ports share one slice.
func (t *Topology) PrefixRoutes(s int) []Route {
	return t.routing().prefixRoutes(t, s, nil)
}

// routing is what a topology's routes are made of: a host's routes are its
// leaf's (the switch it hangs from) everywhere but on that leaf, so they are
// computed once per leaf, not per host, and per switch as a few distinct
// groups of ports.
type routing struct {
	leafOf  []int // host -> its switch (node number)
	portOn  []int // host -> its port on that switch
	leafIdx []int // node -> its index among the leaves, -1 for other nodes
	// groups[s] are switch s's distinct port lists; toward[s][l] is the
	// index of the one toward leaf l, -1 at the leaf itself or without a path.
	groups [][][]int
	toward [][]int32
	// order is the hosts by address.
	order []int
}

// routing computes the routes: one breadth-first search per leaf.
func (t *Topology) routing() *routing {
	nh, ns := len(t.Hosts), len(t.Switches)
	r := &routing{leafOf: make([]int, nh), portOn: make([]int, nh), leafIdx: make([]int, t.NumNodes()),
		groups: make([][][]int, ns), toward: make([][]int32, ns), order: make([]int, nh)}
	for v := range r.leafIdx {
		r.leafIdx[v] = -1
	}
	var leaves []int
	for h := range t.Hosts {
		r.leafOf[h], r.portOn[h], _ = t.Peer(h, 0)
		r.order[h] = h
		if l := r.leafOf[h]; r.leafIdx[l] < 0 {
			r.leafIdx[l] = len(leaves)
			leaves = append(leaves, l)
		}
	}
	slices.SortStableFunc(r.order, func(a, b int) int { return cmp.Compare(t.Hosts[a].IP, t.Hosts[b].IP) })
	for s := range r.toward {
		r.toward[s] = make([]int32, len(leaves))
	}
	var ports []int
	for li, l := range leaves {
		dist := t.hopsTo(l)
		for s := range t.Switches {
			v := nh + s
			r.toward[s][li] = -1
			if v == l || dist[v] < 0 {
				continue
			}
			ports = ports[:0]
			for p := range t.ports[v] {
				u, _, _ := t.Peer(v, p)
				if dist[u] == dist[v]-1 && !t.IsHost(u) {
					ports = append(ports, p)
				}
			}
			if len(ports) > 0 {
				r.toward[s][li] = r.intern(s, ports)
			}
		}
	}
	return r
}

// intern returns the index of ports among switch s's groups, adding a copy
// when new.
func (r *routing) intern(s int, ports []int) int32 {
	for i, g := range r.groups[s] {
		if slices.Equal(g, ports) {
			return int32(i)
		}
	}
	r.groups[s] = append(r.groups[s], slices.Clone(ports))
	return int32(len(r.groups[s]) - 1)
}

// group is the index of switch s's group toward host h, -1 without a path.
func (r *routing) group(t *Topology, s, h int) int32 {
	if l := r.leafOf[h]; l == len(t.Hosts)+s {
		return r.intern(s, []int{r.portOn[h]})
	}
	return r.toward[s][r.leafIdx[r.leafOf[h]]]
}

// prefixRoutes appends switch s's routes (PrefixRoutes) to out.
func (r *routing) prefixRoutes(t *Topology, s int, out []Route) []Route {
	run, lo, hi := int32(-1), uint32(0), uint32(0)
	flush := func() {
		if run < 0 {
			return
		}
		ports := r.groups[s][run]
		switchd.RangePrefixes(lo, hi, func(addr uint32, plen int) {
			out = append(out, Route{Addr: addr, Len: plen, Ports: ports})
		})
	}
	for _, h := range r.order {
		g, ip := r.group(t, s, h), t.Hosts[h].IP
		if g == run && g >= 0 && ip == hi+1 {
			hi = ip
			continue
		}
		flush()
		run, lo, hi = g, ip, ip
	}
	flush()
	return out
}

// Path is one shortest path from host src to host dst, as the links' out
// directions in order: the first one the routes' first choice at every hop
// (used for base round-trip times; ECMP paths of one group have equal hop
// counts, and the generators give them equal rates and delays).
func (t *Topology) Path(src, dst int) []Dir {
	dist := t.hopsTo(dst)
	var out []Dir
	v := src
	for v != dst {
		next := -1
		for p := range t.ports[v] {
			u, _, d := t.Peer(v, p)
			if dist[u] == dist[v]-1 && (u == dst || !t.IsHost(u)) {
				next = u
				out = append(out, d)
				break
			}
		}
		if next < 0 {
			return nil
		}
		v = next
	}
	return out
}

// BaseRTTNs is the round trip of a data frame of dataBytes from src to dst and
// its ACK of ackBytes back, on idle links: serialisation (store and forward,
// with overheadBytes of preamble and gap per frame) and propagation on each
// hop, both ways.
func (t *Topology) BaseRTTNs(src, dst, dataBytes, ackBytes, overheadBytes int) int64 {
	var ns float64
	for _, d := range t.Path(src, dst) {
		ns += float64(dataBytes+overheadBytes)*8e9/d.Bps + float64(d.DelayNs)
	}
	for _, d := range t.Path(dst, src) {
		ns += float64(ackBytes+overheadBytes)*8e9/d.Bps + float64(d.DelayNs)
	}
	return int64(ns + 0.5)
}
