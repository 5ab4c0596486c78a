package ns3_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/ns3"
)

// ns3LeafSpine is a leaf-spine in HPCC ns-3's topology.txt format, with
// hosts and switches mixed in the id space and every rate and delay unit
// spelled differently:
//
//	     5            spine
//	   /   \          400 Gb/s
//	  0     3         leaves
//	 / \   / \        100, 40, 100, 100 Gb/s
//	1   2 4   6       hosts
const ns3LeafSpine = `7 3 6
5 0 3
1 0 100Gbps 1000ns 0
2 0 40000Mbps 0.001ms 0.000000
4 3 12.5GBps 1us 0
6 3 100Gb/s 0.000001 0
0 5 400Gbps 500ns 0
3 5 400Gbps 2000ns 0
`

func readNS3LeafSpine(tb testing.TB) *ns3.Topology {
	tb.Helper()
	nt, err := ns3.ReadTopology(strings.NewReader(ns3LeafSpine), "topology.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return nt
}

func TestNS3TopologyLeafSpine(t *testing.T) {
	nt := readNS3LeafSpine(t)
	topo := nt.Topo
	if len(topo.Hosts) != 4 || len(topo.Switches) != 3 {
		t.Fatalf("%d hosts, %d switches: want 4, 3", len(topo.Hosts), len(topo.Switches))
	}
	// Hosts first in id order, then switches in id order.
	if want := []int{4, 0, 1, 5, 2, 6, 3}; !reflect.DeepEqual(nt.Node, want) {
		t.Errorf("Node %v, want %v", nt.Node, want)
	}
	if want := []int{1, 2, 4, 6}; !reflect.DeepEqual(nt.HostIDs, want) {
		t.Errorf("HostIDs %v, want %v", nt.HostIDs, want)
	}
	if want := []int{0, 3, 5}; !reflect.DeepEqual(nt.SwitchIDs, want) {
		t.Errorf("SwitchIDs %v, want %v", nt.SwitchIDs, want)
	}
	if topo.Hosts[3].Name != "n6" || topo.Switches[2].Name != "n5" {
		t.Errorf("names %q, %q: want n6, n5", topo.Hosts[3].Name, topo.Switches[2].Name)
	}
	for id, want := range map[int]int{1: 0, 6: 3} {
		if h, ok := nt.HostIndex(id); !ok || h != want {
			t.Errorf("HostIndex(%d) = %d, %v: want %d", id, h, ok, want)
		}
	}
	for id, want := range map[int]int{0: 0, 5: 2} {
		if s, ok := nt.SwitchIndex(id); !ok || s != want {
			t.Errorf("SwitchIndex(%d) = %d, %v: want %d", id, s, ok, want)
		}
	}
	for _, id := range []int{0, 5, -1, 7} {
		if _, ok := nt.HostIndex(id); ok {
			t.Errorf("HostIndex(%d) ok", id)
		}
	}
	for _, id := range []int{1, 6, -1, 7} {
		if _, ok := nt.SwitchIndex(id); ok {
			t.Errorf("SwitchIndex(%d) ok", id)
		}
	}
	// Links in file order, the same rate and delay both ways.
	want := []struct {
		a, b  int
		bps   float64
		delay int64
	}{
		{0, 4, 100e9, 1000}, {1, 4, 40e9, 1000}, {2, 5, 100e9, 1000},
		{3, 5, 100e9, 1000}, {4, 6, 400e9, 500}, {5, 6, 400e9, 2000},
	}
	if len(topo.Links) != len(want) {
		t.Fatalf("%d links, want %d", len(topo.Links), len(want))
	}
	for i, w := range want {
		l := topo.Links[i]
		d := fabric.Dir{Bps: w.bps, DelayNs: w.delay}
		if l.A != w.a || l.B != w.b || l.AB != d || l.BA != d {
			t.Errorf("link %d: %+v, want %d-%d %+v both ways", i, l, w.a, w.b, d)
		}
	}
	// Leaf n0 (switch 4): its hosts on ports 0 and 1 in file order, the spine on 2.
	for port, peer := range []int{0, 1, 6} {
		if got, _, _ := topo.Peer(4, port); got != peer {
			t.Errorf("leaf n0 port %d: peer %d, want %d", port, got, peer)
		}
	}
}

// TestNS3Units: every rate and delay unit of ns-3's DataRate and Time.
func TestNS3Units(t *testing.T) {
	for _, tc := range []struct {
		rate, delay string
		bps         float64
		ns          int64
	}{
		{"100Gbps", "1000ns", 100e9, 1000},
		{"100Gb/s", "1us", 100e9, 1000},
		{"25000Mbps", "0.001ms", 25e9, 1000},
		{"25000Mb/s", "0.000001s", 25e9, 1000},
		{"10000000Kbps", "0.000001", 10e9, 1000}, // a bare time is seconds
		{"10000000kbps", "+1us", 10e9, 1000},
		{"1000Kb/s", "1us", 1e6, 1000},
		{"1000kb/s", "1us", 1e6, 1000},
		{"12.5GBps", "1000000ps", 100e9, 1000}, // B is bytes
		{"12.5GB/s", "1000000000fs", 100e9, 1000},
		{"1MBps", "0.0007ms", 8e6, 700}, // 699.99999... ns in binary
		{"1MB/s", "0.4ns", 8e6, 0},
		{"1kBps", "0.5ns", 8e3, 1},
		{"1kB/s", "1ns", 8e3, 1},
		{"1KBps", "1ns", 8e3, 1},
		{"1KB/s", "1ns", 8e3, 1},
		{"1Bps", "1ns", 8, 1},
		{"1B/s", "1ns", 8, 1},
		{"1Kib/s", "1ns", 1024, 1},
		{"1KiB/s", "1ns", 8192, 1},
		{"1Mib/s", "1ns", 1 << 20, 1},
		{"1MiB/s", "1ns", 8 << 20, 1},
		{"1Gib/s", "1ns", 1 << 30, 1},
		{"1GiB/s", "1ns", 8 << 30, 1},
		{"8000000bps", "0ns", 8e6, 0},
		{"8000000b/s", "0", 8e6, 0},
		{"1000000000", "2.5us", 1e9, 2500}, // a bare rate is bits/s
		{"1.5bps", "1ns", 2, 1},
	} {
		in := fmt.Sprintf("3 1 2\n0\n1 0 %s %s 0\n2 0 1Gbps 0ns 0\n", tc.rate, tc.delay)
		nt, err := ns3.ReadTopology(strings.NewReader(in), "units.txt")
		if err != nil {
			t.Errorf("%s %s: %v", tc.rate, tc.delay, err)
			continue
		}
		if d := nt.Topo.Links[0].AB; d.Bps != tc.bps || d.DelayNs != tc.ns {
			t.Errorf("%s %s: %g bit/s %d ns, want %g bit/s %d ns", tc.rate, tc.delay, d.Bps, d.DelayNs, tc.bps, tc.ns)
		}
	}
}

// TestNS3Tolerant: blank lines, CRLF, a trailing space after the count (as
// HPCC's traffic_gen.py writes it) and text after the counted records, which
// ns-3 never reads either, are all fine.
func TestNS3Tolerant(t *testing.T) {
	topo := "\r\n3 1 2 \r\n\r\n0\r\n1 0 10Gbps 1us 0\r\n\r\n2\t0 10Gbps 1us 0\r\n1 2 oops\r\nFirst line: ...\r\n"
	nt, err := ns3.ReadTopology(strings.NewReader(topo), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(nt.Topo.Links) != 2 {
		t.Fatalf("%d links, want 2", len(nt.Topo.Links))
	}
	// The repository's own flow.txt counts 2 flows, lists more and ends in prose.
	flows := "2 \n1 2 3 100 200000000 2\n2 1 3 100 200000000 2\n1 2 3 100 150000000 2\n\nFirst line: # of flows\nsrc0 dst0 3 dst_port0 size0 start_time0\n"
	fl, err := ns3.ReadFlows(strings.NewReader(flows), "f.txt", nt)
	if err != nil {
		t.Fatal(err)
	}
	want := []fabric.Flow{
		{ID: 0, Src: 0, Dst: 1, SizeBytes: 200000000, StartNs: 2e9, Priority: prio(3)},
		{ID: 1, Src: 1, Dst: 0, SizeBytes: 200000000, StartNs: 2e9, Priority: prio(3)},
	}
	if !reflect.DeepEqual(fl, want) {
		t.Fatalf("flows %+v, want %+v", fl, want)
	}
}

func TestNS3TopologyErrors(t *testing.T) {
	// star: switch 0 with hosts 1 and 2; each case changes a piece of it.
	const star = "3 1 2\n0\n1 0 100Gbps 1000ns 0\n2 0 100Gbps 1000ns 0\n"
	big := "66 1 65\n0\n"
	for h := 1; h <= 65; h++ {
		big += fmt.Sprintf("%d 0 1Gbps 1ns 0\n", h)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", `t.txt:1: end of file: want the header "node_num switch_num link_num"`},
		{"blank", "\n \n", `t.txt:3: end of file: want the header`},
		{"header short", "3 1\n", "t.txt:1: header has 2 fields: want 3"},
		{"header long", "3 1 1 2 4\n", "t.txt:1: header has 5 fields: want 3"},
		{"tor_num", "3 1 2 2\n", "t.txt:1: tor_num: 2 is more than 1 (switch_num is 1)"},
		{"tor_num bad", "3 1 x 2\n", `t.txt:1: tor_num: "x" is not a non-negative integer`},
		{"4-field link_num", "3 1 1 x\n", `t.txt:1: link_num: "x" is not a non-negative integer`},
		{"node_num", "x 1 2\n", `t.txt:1: node_num: "x" is not a non-negative integer`},
		{"negative", "-3 1 2\n", `t.txt:1: node_num: "-3" is not a non-negative integer`},
		{"too many nodes", "70000 1 2\n", "t.txt:1: node_num: 70000 is more than 65536"},
		{"switch_num", "3 4 2\n", "t.txt:1: switch_num: 4 is more than 3 (node_num is 3)"},
		{"link_num", "3 1 2.5\n", `t.txt:1: link_num: "2.5" is not a non-negative integer`},
		{"no switch line", "3 1 2\n", "t.txt:2: end of file: want the line of 1 switch ids"},
		{"switch count", "3 2 2\n0\n", "t.txt:2: 1 switch ids: the header says 2"},
		{"switch id range", "3 1 2\n7\n", "t.txt:2: switch id: node 7 out of range 0..2"},
		{"switch id bad", "3 1 2\nzero\n", `t.txt:2: switch id: node id "zero" is not a non-negative integer`},
		{"switch twice", "3 2 2\n0 0\n", "t.txt:2: switch id 0 listed twice"},
		{"links short", "3 1 2\n0\n1 0 100Gbps 1000ns 0\n\n", `t.txt:5: end of file: want link 2 of 2 ("src dst rate delay error_rate")`},
		{"link fields", "3 1 2\n0\n1 0 100Gbps 1000ns\n", "t.txt:3: link has 4 fields: want 5"},
		{"link out of range", "3 1 2\n0\n1 9 100Gbps 1000ns 0\n", "t.txt:3: link dst: node 9 out of range 0..2"},
		{"link bad id", "3 1 2\n0\n-1 0 100Gbps 1000ns 0\n", `t.txt:3: link src: node id "-1" is not a non-negative integer`},
		{"rate unit", "3 1 2\n0\n1 0 100Gbit 1000ns 0\n", `t.txt:3: rate: "100Gbit": unknown unit "Gbit"`},
		{"rate Tbps", "3 1 2\n0\n1 0 1Tbps 1000ns 0\n", `unknown unit "Tbps"`},
		{"rate zero", "3 1 2\n0\n1 0 0Gbps 1000ns 0\n", `t.txt:3: rate: "0Gbps": want a rate > 0`},
		{"rate over 1.6 Tb/s", "3 1 2\n0\n1 0 1601Gbps 1000ns 0\n", `t.txt:3: rate: "1601Gbps": want a rate > 0 and at most 1600Gbps`},
		{"rate no number", "3 1 2\n0\n1 0 Gbps 1000ns 0\n", `t.txt:3: rate: "Gbps": want a number and a unit`},
		{"rate two points", "3 1 2\n0\n1 0 1.2.3Gbps 1000ns 0\n", `t.txt:3: rate: "1.2.3Gbps": want a number and a unit`},
		{"delay unit", "3 1 2\n0\n1 0 100Gbps 1000nsec 0\n", `t.txt:3: delay: "1000nsec": unknown unit "nsec"`},
		{"delay exponent", "3 1 2\n0\n1 0 100Gbps 1e3ns 0\n", `t.txt:3: delay: "1e3ns": unknown unit "e3ns"`},
		{"delay negative", "3 1 2\n0\n1 0 100Gbps -5ns 0\n", `t.txt:3: delay: "-5ns": want a delay of 0 to 1.153e+09 s (2^60 ns)`},
		{"delay no number", "3 1 2\n0\n1 0 100Gbps us 0\n", `t.txt:3: delay: "us": want a number and a unit`},
		{"delay huge", "3 1 2\n0\n1 0 100Gbps 1e99 0\n", `t.txt:3: delay: "1e99": unknown unit`},
		{"error rate", "3 1 2\n0\n1 0 100Gbps 1000ns 0.001\n", "t.txt:3: error_rate 0.001: ccbed models no random link loss; set it to 0"},
		{"error rate bad", "3 1 2\n0\n1 0 100Gbps 1000ns none\n", `t.txt:3: error_rate "none": want a number in 0..1`},
		{"error rate inf", "3 1 2\n0\n1 0 100Gbps 1000ns inf\n", `t.txt:3: error_rate "inf": want a number in 0..1`},
		{"self link", "3 1 2\n0\n0 0 100Gbps 1000ns 0\n", "t.txt:3: link joins node 0 to itself"},
		{"host to host", "3 1 2\n0\n1 2 100Gbps 1000ns 0\n", "t.txt:3: link joins two hosts (nodes 1 and 2)"},
		// ali_32host_10rack.txt of the HPCC repository dual-homes its hosts.
		{"dual-homed", "4 2 4\n0 3\n1 0 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n", "t.txt:4: host node 1 already has its link on line 3: ccbed hosts have one NIC port"},
		{"parallel links", "4 2 4\n0 3\n1 0 100Gbps 1000ns 0\n0 3 100Gbps 1000ns 0\n3 0 100Gbps 1000ns 0\n", "t.txt:5: nodes 3 and 0 are already linked on line 4"},
		{"65 ports", big, "t.txt:67: switch node 0 would have more than 64 ports"},
		{"host without link", "3 1 1\n0\n1 0 100Gbps 1000ns 0\n", "t.txt: host node 2 has no link"},
		{"switch without link", "4 2 2\n0 3\n1 0 100Gbps 1000ns 0\n2 0 100Gbps 1000ns 0\n", "t.txt: switch node 3 has no link"},
		{"islands", "4 2 2\n0 1\n2 0 100Gbps 1000ns 0\n3 1 100Gbps 1000ns 0\n", "t.txt: fabric: host n3 cannot reach host n2"},
		{"one host", "2 1 1\n0\n1 0 100Gbps 1000ns 0\n", "t.txt: fabric: 1 hosts: want at least 2"},
		{"long line", "3 1 2\n" + strings.Repeat("0 ", 1<<20) + "\n", "t.txt:2: bufio.Scanner: token too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ns3.ReadTopology(strings.NewReader(tc.in), "t.txt")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error with %q", err, tc.want)
			}
		})
	}
	if _, err := ns3.ReadTopology(strings.NewReader(star), "t.txt"); err != nil {
		t.Fatalf("the unchanged star: %v", err)
	}
}

// TestNS3TopologyFourFields: ns3-datacenter's header "node_num switch_num
// tor_num link_num" reads to the same topology as HPCC's three fields.
func TestNS3TopologyFourFields(t *testing.T) {
	three := readNS3LeafSpine(t)
	in := strings.Replace(ns3LeafSpine, "7 3 6\n", "7 3 2 6\n", 1)
	four, err := ns3.ReadTopology(strings.NewReader(in), "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(three, four) {
		t.Fatalf("4-field header: %+v\nwant the 3-field one's %+v", four, three)
	}
}

// prio is a flow's priority, for a fabric.Flow literal.
func prio(p int) *int { return &p }

func TestNS3Flows(t *testing.T) {
	nt := readNS3LeafSpine(t)
	in := `4
1 6 3 100 1000 2
6 1 0 0 1 2.000000001
2 4 3 65535 4294967296 2.0000000024
4 2 3 100 20 2.5e0
`
	flows, err := ns3.ReadFlows(strings.NewReader(in), "flow.txt", nt)
	if err != nil {
		t.Fatal(err)
	}
	want := []fabric.Flow{
		{ID: 0, Src: 0, Dst: 3, SizeBytes: 1000, StartNs: 2_000_000_000, Priority: prio(3)},
		{ID: 1, Src: 3, Dst: 0, SizeBytes: 1, StartNs: 2_000_000_001, Priority: prio(0)},
		{ID: 2, Src: 1, Dst: 2, SizeBytes: 1 << 32, StartNs: 2_000_000_002, Priority: prio(3)},
		{ID: 3, Src: 2, Dst: 1, SizeBytes: 20, StartNs: 2_500_000_000, Priority: prio(3)},
	}
	if !reflect.DeepEqual(flows, want) {
		t.Fatalf("flows\n%+v\nwant\n%+v", flows, want)
	}
	empty, err := ns3.ReadFlows(strings.NewReader("0\n"), "flow.txt", nt)
	if err != nil || len(empty) != 0 {
		t.Fatalf("no flows: %v, %v", empty, err)
	}
}

func TestNS3FlowsErrors(t *testing.T) {
	nt := readNS3LeafSpine(t)
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "f.txt:1: end of file: want the number of flows"},
		{"header fields", "2 1\n", "f.txt:1: header has 2 fields: want 1, the number of flows"},
		{"header bad", "two\n", `f.txt:1: flow_num: "two" is not a non-negative integer`},
		{"short", "2\n1 6 3 100 1000 2\n", `f.txt:3: end of file: want flow 2 of 2 ("src dst pg dport size start_time")`},
		{"fields", "1\n1 6 3 100 1000\n", "f.txt:2: flow has 5 fields: want 6"},
		{"unknown node", "1\n1 99 3 100 1000 2\n", "f.txt:2: dst: node 99 out of range 0..6"},
		{"bad node", "1\nh1 6 3 100 1000 2\n", `f.txt:2: src: node id "h1" is not a non-negative integer`},
		{"switch src", "1\n0 6 3 100 1000 2\n", "f.txt:2: src: node 0 is a switch: flows run between hosts"},
		{"switch dst", "1\n1 5 3 100 1000 2\n", "f.txt:2: dst: node 5 is a switch"},
		{"to itself", "1\n6 6 3 100 1000 2\n", "f.txt:2: flow from node 6 to itself"},
		{"pg", "1\n1 6 x 100 1000 2\n", `f.txt:2: pg: "x" is not a non-negative integer`},
		{"pg past 7", "1\n1 6 8 100 1000 2\n", `f.txt:2: pg 8: want 0..7, the priority (ns-3's switches have 8 queues)`},
		{"dport", "1\n1 6 3 70000 1000 2\n", "f.txt:2: dport: 70000 is more than 65535"},
		{"size zero", "1\n1 6 3 100 0 2\n", "f.txt:2: size 0: want at least 1 byte"},
		{"size float", "1\n1 6 3 100 1e6 2\n", `f.txt:2: size: "1e6" is not a non-negative integer`},
		{"start unit", "1\n1 6 3 100 1000 2s\n", `f.txt:2: start_time: "2s" is not a number`},
		{"start inf", "1\n1 6 3 100 1000 inf\n", `f.txt:2: start_time: "inf" is not a number`},
		{"start negative", "1\n1 6 3 100 1000 -1\n", `f.txt:2: start_time: "-1": want 0 to 1.153e+09 seconds (2^60 ns)`},
		{"start huge", "1\n1 6 3 100 1000 1e10\n", `f.txt:2: start_time: "1e10": want 0 to 1.153e+09 seconds (2^60 ns)`},
		{"start order", "2\n1 6 3 100 1000 2.5\n\n6 1 3 100 1000 2.4\n", "f.txt:4: start_time 2.4 is before the previous flow's: ns-3 wants flows in ascending start time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ns3.ReadFlows(strings.NewReader(tc.in), "f.txt", nt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error with %q", err, tc.want)
			}
		})
	}
	if _, err := ns3.ReadFlows(strings.NewReader("0\n"), "f.txt", nil); err == nil || err.Error() != "f.txt: no topology" {
		t.Fatalf("nil topology: %v", err)
	}
}

func readNS3Testdata(tb testing.TB) (*ns3.Topology, []fabric.Flow) {
	tb.Helper()
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { f.Close() })
		return f
	}
	nt, err := ns3.ReadTopology(open("topology.txt"), "topology.txt")
	if err != nil {
		tb.Fatal(err)
	}
	flows, err := ns3.ReadFlows(open("flow.txt"), "flow.txt", nt)
	if err != nil {
		tb.Fatal(err)
	}
	return nt, flows
}

// TestNS3Simulate runs testdata/ns3 (a leaf-spine and three flows in HPCC's
// formats) in virtual time: every flow completes, no faster than its ideal.
func TestNS3Simulate(t *testing.T) {
	nt, flows := readNS3Testdata(t)
	if len(nt.Topo.Hosts) != 4 || len(nt.Topo.Switches) != 4 || len(flows) != 3 {
		t.Fatalf("%d hosts, %d switches, %d flows: want 4, 4, 3", len(nt.Topo.Hosts), len(nt.Topo.Switches), len(flows))
	}
	// HPCC's flows start at 2 s; start the first at once.
	t0 := flows[0].StartNs
	for i := range flows {
		flows[i].StartNs -= t0
	}
	spec := &fabric.Spec{Topo: nt.Topo, Scheme: "none", Flows: flows}
	r, err := fabric.Simulate(spec, 2_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		fct, ok := r.FCTOf(int64(f.ID))
		if !ok {
			t.Errorf("flow %d (%d bytes, host %d to %d) did not complete", f.ID, f.SizeBytes, f.Src, f.Dst)
			continue
		}
		t.Logf("flow %d: %d bytes in %d ns (ideal %d ns)", f.ID, fct.SizeBytes, fct.FCTNs, fct.IdealNs)
		if fct.SizeBytes != f.SizeBytes || fct.FCTNs <= 0 || fct.FCTNs < fct.IdealNs*9/10 {
			t.Errorf("flow %d: %+v", f.ID, fct)
		}
	}
}

// TestReadFiles: the file readers take regular files only, at once (a
// device never ends, a FIFO would block), and read the repository's.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join("testdata", "topology.txt")
	nt, err := ns3.ReadTopologyFile(topo, "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns3.ReadFlowsFile(filepath.Join("testdata", "flow.txt"), "flow.txt", nt); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{"/dev/zero": "a character device", "/dev/urandom": "a character device", fifo: "a FIFO", dir: "a directory"} {
		want := path + ": not a regular file (" + kind + ")"
		if _, err := ns3.ReadTopologyFile(path, "t.txt"); err == nil || err.Error() != want {
			t.Errorf("topology %s: got %v, want %s", path, err, want)
		}
		if _, err := ns3.ReadFlowsFile(path, "f.txt", nt); err == nil || err.Error() != want {
			t.Errorf("flows %s: got %v, want %s", path, err, want)
		}
	}
}

func FuzzReadTopology(f *testing.F) {
	f.Add(ns3LeafSpine)
	for _, name := range []string{"topology.txt", "flow.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("3 1 2\n0\n1 0 100Gbps 1000ns 0\n2 0 12.5GBps 0.001ms 0\n")
	f.Add("4 2 4\n0 3\n1 0 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n")
	f.Add("4 2 3\n0 1\n2 0 1Gbps 1us 0\n3 1 1Gbps 1us 0\n0 1 1Gbps 1us 0.5\n")
	f.Fuzz(func(t *testing.T, in string) {
		nt, err := ns3.ReadTopology(strings.NewReader(in), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := nt.Topo.Validate(); err != nil {
			t.Fatalf("accepted an invalid topology: %v", err)
		}
		if len(nt.Node) != len(nt.HostIDs)+len(nt.SwitchIDs) || len(nt.HostIDs) != len(nt.Topo.Hosts) || len(nt.SwitchIDs) != len(nt.Topo.Switches) {
			t.Fatalf("maps of %d nodes, %d hosts, %d switches for %d hosts, %d switches",
				len(nt.Node), len(nt.HostIDs), len(nt.SwitchIDs), len(nt.Topo.Hosts), len(nt.Topo.Switches))
		}
		for h, id := range nt.HostIDs {
			if got, ok := nt.HostIndex(id); !ok || got != h {
				t.Fatalf("host %d (ns-3 %d): HostIndex %d, %v", h, id, got, ok)
			}
		}
		for s, id := range nt.SwitchIDs {
			if got, ok := nt.SwitchIndex(id); !ok || got != s {
				t.Fatalf("switch %d (ns-3 %d): SwitchIndex %d, %v", s, id, got, ok)
			}
		}
	})
}

func FuzzReadFlows(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "flow.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("4\n1 6 3 100 1000 2\n6 1 0 0 1 2.000000001\n2 4 3 65535 4294967296 2.0000000024\n4 2 3 100 20 2.5e0\n")
	f.Add("2 \n1 2 3 100 200000000 2\n2 1 3 100 200000000 2\n\nFirst line: # of flows\n")
	f.Add("2\n1 6 3 100 1000 2.5\n6 1 3 100 1000 2.4\n")
	f.Add("1\n0 6 3 100 1000 2\n")
	nt := readNS3LeafSpine(f)
	f.Fuzz(func(t *testing.T, in string) {
		flows, err := ns3.ReadFlows(strings.NewReader(in), "fuzz.txt", nt)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		hosts := len(nt.Topo.Hosts)
		for i, fl := range flows {
			if fl.ID != i || fl.Src < 0 || fl.Src >= hosts || fl.Dst < 0 || fl.Dst >= hosts || fl.Src == fl.Dst ||
				fl.SizeBytes <= 0 || fl.StartNs < 0 || (i > 0 && fl.StartNs < flows[i-1].StartNs) {
				t.Fatalf("flow %d: %+v", i, fl)
			}
		}
	})
}

// TestNS3HPCCFatTree imports a topology laid out as HPCC's simulation/mix/
// fat.txt (320 hosts on 20 ToRs at 100 Gb/s, 20 aggregation and 16 core
// switches at 400 Gb/s; hosts are ns-3 nodes 0..319, switches 320..375),
// generated here line for line in that file's order and spelling.
func TestNS3HPCCFatTree(t *testing.T) {
	var b strings.Builder
	b.WriteString("376 56 480\n")
	for s := 320; s < 376; s++ {
		fmt.Fprintf(&b, "%d ", s)
	}
	b.WriteString("\n")
	link := func(a, c int, rate string) { fmt.Fprintf(&b, "%d %d %s 1000ns 0.000000\n", a, c, rate) }
	for h := 0; h < 320; h++ {
		link(h, 320+h/16, "100Gbps")
	}
	for tor := 320; tor < 340; tor++ {
		for j := 0; j < 4; j++ {
			link(tor, 340+(tor-320)/4*4+j, "400Gbps")
		}
	}
	for agg := 340; agg < 360; agg++ {
		for j := 0; j < 4; j++ {
			link(agg, 360+(agg-340)%4*4+j, "400Gbps")
		}
	}
	b.WriteString("\n")
	nt, err := ns3.ReadTopology(strings.NewReader(b.String()), "fat.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(nt.Topo.Hosts) != 320 || len(nt.Topo.Switches) != 56 || len(nt.Topo.Links) != 480 {
		t.Fatalf("%d hosts, %d switches, %d links", len(nt.Topo.Hosts), len(nt.Topo.Switches), len(nt.Topo.Links))
	}
	if h, ok := nt.HostIndex(319); !ok || h != 319 {
		t.Fatalf("HostIndex(319) = %d, %v", h, ok)
	}
	if s, ok := nt.SwitchIndex(375); !ok || s != 55 {
		t.Fatalf("SwitchIndex(375) = %d, %v", s, ok)
	}
	// The head of the repository's flow.txt: a count of 2, more flows, prose.
	flows, err := ns3.ReadFlows(strings.NewReader("2\n2 1 3 100 200000000 2\n3 1 3 100 200000000 2\n4 1 3 100 150000000 2\n\nFirst line: # of flows\n"), "flow.txt", nt)
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 || flows[1].Src != 3 || flows[1].Dst != 1 || flows[1].SizeBytes != 200000000 || flows[1].StartNs != 2e9 {
		t.Fatalf("flows %+v", flows)
	}
	if _, err := (&fabric.Spec{Topo: nt.Topo, Flows: flows}).Plan(); err != nil {
		t.Fatal(err)
	}
}

// TestNS3FlowsRoundTrip: WriteFlows writes what ReadFlows reads back
// (hosts through the topology's ns-3 ids, sizes, start times to the ns,
// priorities; ids become line numbers), and refuses what flow.txt cannot
// say.
func TestNS3FlowsRoundTrip(t *testing.T) {
	nt := readNS3LeafSpine(t)
	flows := []fabric.Flow{
		{ID: 7, Src: 0, Dst: 3, SizeBytes: 1000, StartNs: 0},
		{ID: 9, Src: 3, Dst: 1, SizeBytes: 1, StartNs: 1, Priority: prio(1)},
		{ID: 4, Src: 1, Dst: 2, SizeBytes: 1 << 40, StartNs: 123_456_789_012, Priority: prio(0)},
		{ID: 5, Src: 2, Dst: 0, SizeBytes: 77, StartNs: 123_456_789_012, Priority: prio(7)},
	}
	for _, origin := range []int64{0, 2_000_000_000} {
		var b strings.Builder
		if err := ns3.WriteFlows(&b, flows, func(h int) int { return nt.HostIDs[h] }, origin); err != nil {
			t.Fatal(err)
		}
		got, err := ns3.ReadFlows(strings.NewReader(b.String()), "flow.txt", nt)
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		want := make([]fabric.Flow, len(flows))
		for i, f := range flows {
			f.ID, f.StartNs = i, f.StartNs+origin
			if f.Priority == nil {
				f.Priority = prio(fabric.DefaultPriority)
			}
			want[i] = f
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("origin %d ns: read back\n%+v\nwant\n%+v\nfrom\n%s", origin, got, want, b.String())
		}
	}
	for _, bad := range []struct {
		name string
		f    fabric.Flow
		want string
	}{
		{"unlimited", fabric.Flow{ID: 3, Src: 0, Dst: 1}, "flow 3: size 0: ns-3's flow.txt has no unlimited flows"},
		{"before 0", fabric.Flow{ID: 3, Src: 0, Dst: 1, SizeBytes: 1, StartNs: -1}, "flow 3: starts at -1 ns, before ns-3's time 0"},
	} {
		err := ns3.WriteFlows(io.Discard, []fabric.Flow{bad.f}, func(h int) int { return h }, 0)
		if err == nil || err.Error() != bad.want {
			t.Errorf("%s: got %v, want %s", bad.name, err, bad.want)
		}
	}
}
