package testbed

import (
	"strconv"
	"strings"
	"testing"
)

// fatTreeExperiment is a k-ary fat-tree under web search at 30 % from every
// host to every host.
func fatTreeExperiment(k int) string {
	var hosts strings.Builder
	for i := 0; i < k*k*k/4; i++ {
		if i > 0 {
			hosts.WriteString(", ")
		}
		hosts.WriteString(strconv.Itoa(i))
	}
	return `[experiment]
name = "fattree"
duration_ms = 1
clock = "virtual"

[topology]
kind = "fat-tree"
k = ` + strconv.Itoa(k) + `
link_gbps = 100
delay_us = 1

[cc]
scheme = "dcqcn"

[[workloads]]
id_base = 1_000_000
cdf = "../workloads/websearch.cdf"
senders = [` + hosts.String() + `]
dsts = [` + hosts.String() + `]
load = 0.3
`
}

// TestFatTreeTablesAtScale: a k = 16 fat-tree (1024 hosts, 320 switches)
// plans with every switch holding a route per range of hosts, not per host:
// an edge switch its 8 hosts and the prefixes of the two ranges around them,
// an aggregation switch its pod's 8 ranges and the two around the pod, a core
// the 16 pods' ranges; and a fat-tree beyond MaxHosts is refused.
func TestFatTreeTablesAtScale(t *testing.T) {
	const k = 16
	e, err := Decode("fattree.toml", fatTreeExperiment(k), "../configs/experiments")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hosts) != 1024 || len(p.Switches) != 320 {
		t.Fatalf("%d hosts, %d switches", len(p.Hosts), len(p.Switches))
	}
	// A range of consecutive addresses is at most 2 x 10 prefixes here
	// (1024 hosts from 10.0.0.1: 11 bits).
	const perRange = 2 * 10
	for s, sw := range p.Switches {
		rt, err := sw.RouteTable()
		if err != nil {
			t.Fatal(err)
		}
		name := p.Topo.Switches[s].Name
		var most int
		switch {
		case strings.HasPrefix(name, "edge"):
			most = k/2 + 2*perRange
		case strings.HasPrefix(name, "agg"):
			most = k/2*perRange + 2*perRange
		default:
			most = k * perRange
		}
		if rt.Len() > most || rt.Len() != len(sw.Routes) {
			t.Fatalf("switch %s: %d routes (%d configured), want at most %d", name, rt.Len(), len(sw.Routes), most)
		}
	}
	if _, err := Decode("big.toml", "[experiment]\nname = \"big\"\n[topology]\nkind = \"fat-tree\"\nk = 48\n", "."); err == nil ||
		!strings.Contains(err.Error(), "27648 hosts: at most 16384") {
		t.Fatalf("k = 48 fat-tree (27648 hosts): %v, want refused", err)
	}
}
