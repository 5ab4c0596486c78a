package fabric

import "fmt"

// Star is n hosts on one switch: host i on switch port i, every link at bps
// with delayNs each way.
func Star(n int, bps float64, delayNs int64) *Topology {
	t := &Topology{}
	for i := 0; i < n; i++ {
		t.AddHost("")
	}
	s := t.AddSwitch("")
	for i := 0; i < n; i++ {
		t.ConnectSym(i, s, bps, delayNs)
	}
	return t
}

// Chain is switches s0 - s1 - ... in a line, hostsPer[i] hosts on switch i
// (hosts numbered switch by switch), access links at hostBps and the links
// between switches at trunkBps, every link delayNs each way. On switch i the
// hosts take the first ports, then the link to s(i-1), then to s(i+1).
func Chain(hostsPer []int, hostBps, trunkBps float64, delayNs int64) *Topology {
	t := &Topology{}
	var owner []int
	for s, n := range hostsPer {
		for j := 0; j < n; j++ {
			t.AddHost("")
			owner = append(owner, s)
		}
	}
	sw := make([]int, len(hostsPer))
	for s := range hostsPer {
		sw[s] = t.AddSwitch("")
	}
	for h, s := range owner {
		t.ConnectSym(h, sw[s], hostBps, delayNs)
	}
	for s := 1; s < len(sw); s++ {
		t.ConnectSym(sw[s-1], sw[s], trunkBps, delayNs)
	}
	return t
}

// LeafSpine is a two-tier Clos: leaves leaf switches of hostsPerLeaf hosts
// each (host links at hostBps), each leaf linked to every one of spines spine
// switches (at upBps); every link delayNs each way. Switches are the leaves
// then the spines; on a leaf the hosts take the first ports, then the
// uplinks in spine order. The oversubscription at a leaf is
// hostsPerLeaf x hostBps : spines x upBps.
func LeafSpine(leaves, spines, hostsPerLeaf int, hostBps, upBps float64, delayNs int64) *Topology {
	t := &Topology{}
	for i := 0; i < leaves*hostsPerLeaf; i++ {
		t.AddHost("")
	}
	leaf := make([]int, leaves)
	for l := range leaf {
		leaf[l] = t.AddSwitch(fmt.Sprintf("leaf%d", l))
	}
	spine := make([]int, spines)
	for s := range spine {
		spine[s] = t.AddSwitch(fmt.Sprintf("spine%d", s))
	}
	for l := range leaf {
		for j := 0; j < hostsPerLeaf; j++ {
			t.ConnectSym(l*hostsPerLeaf+j, leaf[l], hostBps, delayNs)
		}
		for s := range spine {
			t.ConnectSym(leaf[l], spine[s], upBps, delayNs)
		}
	}
	return t
}

// FatTree is a k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2
// edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts, every
// link at bps and delayNs each way. k must be even. Switches are numbered
// edges (pod by pod), then aggregations, then cores; hosts edge by edge.
func FatTree(k int, bps float64, delayNs int64) (*Topology, error) {
	if k < 2 || k%2 != 0 || k > 64 {
		return nil, fmt.Errorf("fabric: fat-tree k = %d: want an even number in 2..64", k)
	}
	h := k / 2
	t := &Topology{}
	for i := 0; i < k*h*h; i++ {
		t.AddHost("")
	}
	edge := make([]int, k*h)
	for i := range edge {
		edge[i] = t.AddSwitch(fmt.Sprintf("edge%d_%d", i/h, i%h))
	}
	agg := make([]int, k*h)
	for i := range agg {
		agg[i] = t.AddSwitch(fmt.Sprintf("agg%d_%d", i/h, i%h))
	}
	core := make([]int, h*h)
	for i := range core {
		core[i] = t.AddSwitch(fmt.Sprintf("core%d", i))
	}
	for e := range edge {
		for j := 0; j < h; j++ {
			t.ConnectSym(e*h+j, edge[e], bps, delayNs)
		}
	}
	for pod := 0; pod < k; pod++ {
		for e := 0; e < h; e++ {
			for a := 0; a < h; a++ {
				t.ConnectSym(edge[pod*h+e], agg[pod*h+a], bps, delayNs)
			}
		}
		for a := 0; a < h; a++ {
			for c := 0; c < h; c++ {
				t.ConnectSym(agg[pod*h+a], core[a*h+c], bps, delayNs)
			}
		}
	}
	return t, nil
}
