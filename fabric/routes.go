package fabric

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
// to host h, in port order; more than one is an ECMP group.
func (t *Topology) Routes(s int) [][]int {
	return t.routes()[s]
}

// routes computes every switch's routes to every host: one breadth-first
// search per host.
func (t *Topology) routes() [][][]int {
	out := make([][][]int, len(t.Switches))
	for s := range out {
		out[s] = make([][]int, len(t.Hosts))
	}
	for h := range t.Hosts {
		dist := t.hopsTo(h)
		for s := range t.Switches {
			v := len(t.Hosts) + s
			if dist[v] < 0 {
				continue
			}
			for p := range t.ports[v] {
				u, _, _ := t.Peer(v, p)
				if dist[u] == dist[v]-1 && (u == h || !t.IsHost(u)) {
					out[s][h] = append(out[s][h], p)
				}
			}
		}
	}
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
