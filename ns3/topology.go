// Package ns3 reads the input files of the HPCC ns-3 simulator
// (github.com/alibaba-edu/High-Precision-Congestion-Control, simulation/mix)
// and its descendants (inet-tub/ns3-datacenter on ns-3.39) into fabric
// values, so that their topology.txt and flow.txt run here unchanged (their
// config.txt: config.go), and writes a flow list back as flow.txt. It is
// the file side of the virtual clock: fabric takes the values it returns
// and opens no file of its own for them.
//
// The formats are those that HPCC's
// simulation/scratch/third.cc and ns3-datacenter's
// examples/PowerTCP/powertcp-evaluation-*.cc read:
//
//	topology.txt
//	  node_num switch_num link_num             (HPCC)
//	  node_num switch_num tor_num link_num     (ns3-datacenter; tor_num is
//	                                            checked, 0..switch_num, and
//	                                            not used, as there)
//	  sid sid ...                              (switch_num switch node ids)
//	  src dst rate delay error_rate            (link_num lines)
//
//	flow.txt
//	  flow_num
//	  src dst pg dport size start_time         (flow_num lines)
//
// Rates are ns-3 DataRate strings ("100Gbps"), delays ns-3 Time strings
// ("1000ns", "0.001ms"), sizes bytes and start times seconds. third.cc reads
// both files with operator>>, record after record, and stops after the counts
// the first lines give: whatever follows is never read (the repository's own
// flow.txt ends in a paragraph of prose). We read the same way, one record a
// line so that errors can say where.
//
// Deviations: a non-zero error_rate is refused (we model no random link loss),
// as are multi-homed hosts (ccbed hosts have one NIC port) and two links
// between the same pair of nodes (third.cc routes over one of them only).
// Rates round to the nearest bit/s where ns-3's DataRate truncates a double,
// and times to the nearest ns (ns-3's Time converts a double too); the two
// can differ by one unit where the file's decimal is not exact in binary
// (0.0007ms is 700 ns here).
package ns3

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
)

// MaxNodes is the most nodes (hosts and switches) ReadTopology accepts.
const MaxNodes = 1 << 16

// maxNS3Line is the longest line the readers take (a switch list of
// MaxNodes ids fits).
const maxNS3Line = 1 << 20

// Topology is a topology read from an HPCC ns-3 topology.txt: the
// Topology and the map between ns-3's node ids, in which hosts and switches
// share one space in any order, and Topo's node numbers, hosts first.
type Topology struct {
	Topo *fabric.Topology
	// Node[id] is the Topo node number of ns-3 node id: hosts are numbered
	// 0.. in increasing id order, then switches in increasing id order. Host
	// and switch names are "n" and the ns-3 id ("n320").
	Node []int
	// HostIDs[h] is the ns-3 id of host h.
	HostIDs []int
	// SwitchIDs[s] is the ns-3 id of switch s (Topo node len(HostIDs)+s).
	SwitchIDs []int
}

// HostIndex returns the host index of ns-3 node id, and false when id is
// not a host of the topology.
func (t *Topology) HostIndex(id int) (int, bool) {
	if id < 0 || id >= len(t.Node) || t.Node[id] >= len(t.HostIDs) {
		return 0, false
	}
	return t.Node[id], true
}

// SwitchIndex returns the switch index (into Topo.Switches) of ns-3 node id,
// and false when id is not a switch of the topology.
func (t *Topology) SwitchIndex(id int) (int, bool) {
	if id < 0 || id >= len(t.Node) || t.Node[id] < len(t.HostIDs) {
		return 0, false
	}
	return t.Node[id] - len(t.HostIDs), true
}

// ns3Lines hands out the fields of a file's non-blank lines and names the
// file and line in errors.
type ns3Lines struct {
	sc   *bufio.Scanner
	name string
	line int
}

func newNS3Lines(r io.Reader, name string) *ns3Lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxNS3Line)
	return &ns3Lines{sc: sc, name: name}
}

// next returns the fields of the next non-blank line, or nil at the end of
// the file. what names the record expected, for the errors.
func (l *ns3Lines) next(what string) ([]string, error) {
	for l.sc.Scan() {
		l.line++
		if f := strings.Fields(l.sc.Text()); len(f) > 0 {
			return f, nil
		}
	}
	// Both errors are about the line after the last one read.
	if err := l.sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", l.name, l.line+1, err)
	}
	return nil, fmt.Errorf("%s:%d: end of file: want %s", l.name, l.line+1, what)
}

func (l *ns3Lines) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.name, l.line, fmt.Sprintf(format, args...))
}

// ReadTopology reads an ns-3 topology.txt from r, with the HPCC
// simulator's 3-field header or ns3-datacenter's 4-field one; name names the
// file in errors ("topology.txt:5: ..."). Hosts are the nodes not on the switch
// line; the Topology gets them in increasing ns-3 id order, then the switches
// in increasing id order, then the links in file order, each with its rate
// and delay both ways as ns-3 sets them (a switch's ports are numbered in the
// order of its links in the file). Rates take ns-3's DataRate units (bps,
// Kbps, Mbps, Gbps, kb/s, Gb/s, Mib/s, ...; a capital B is bytes: "1GBps" is
// 8 Gb/s; a bare number is bits/s); delays ns-3's Time units (s, ms, us, ns,
// ps, fs; a bare number is seconds). The error rate must be 0. Lines after
// the link_num links are not read, as in ns-3. The result passes
// Topology.Validate.
func ReadTopology(r io.Reader, name string) (*Topology, error) {
	l := newNS3Lines(r, name)
	f, err := l.next(`the header "node_num switch_num link_num"`)
	if err != nil {
		return nil, err
	}
	if len(f) != 3 && len(f) != 4 {
		return nil, l.errorf(`header has %d fields: want 3, "node_num switch_num link_num", or 4, "node_num switch_num tor_num link_num"`, len(f))
	}
	nodes, err := ns3Count(f[0], MaxNodes)
	if err != nil {
		return nil, l.errorf("node_num: %v", err)
	}
	nsw, err := ns3Count(f[1], nodes)
	if err != nil {
		return nil, l.errorf("switch_num: %v (node_num is %d)", err, nodes)
	}
	if len(f) == 4 {
		if _, err := ns3Count(f[2], nsw); err != nil {
			return nil, l.errorf("tor_num: %v (switch_num is %d)", err, nsw)
		}
	}
	nlinks, err := ns3Count(f[len(f)-1], math.MaxInt32)
	if err != nil {
		return nil, l.errorf("link_num: %v", err)
	}
	isSwitch := make([]bool, nodes)
	if nsw > 0 {
		f, err := l.next(fmt.Sprintf("the line of %d switch ids", nsw))
		if err != nil {
			return nil, err
		}
		if len(f) != nsw {
			return nil, l.errorf("%d switch ids: the header says %d", len(f), nsw)
		}
		for _, s := range f {
			id, err := ns3Node(s, nodes)
			if err != nil {
				return nil, l.errorf("switch id: %v", err)
			}
			if isSwitch[id] {
				return nil, l.errorf("switch id %d listed twice", id)
			}
			isSwitch[id] = true
		}
	}

	nt := &Topology{Topo: &fabric.Topology{}, Node: make([]int, nodes)}
	for id := 0; id < nodes; id++ {
		if !isSwitch[id] {
			nt.Node[id] = nt.Topo.AddHost(fmt.Sprintf("n%d", id))
			nt.HostIDs = append(nt.HostIDs, id)
		}
	}
	for id := 0; id < nodes; id++ {
		if isSwitch[id] {
			nt.Node[id] = nt.Topo.AddSwitch(fmt.Sprintf("n%d", id))
			nt.SwitchIDs = append(nt.SwitchIDs, id)
		}
	}

	kind := func(id int) string {
		if isSwitch[id] {
			return "switch"
		}
		return "host"
	}
	// firstLine[id] is the line of node id's first link; pairs the line of
	// each linked pair (smaller id first).
	firstLine := make([]int, nodes)
	pairs := make(map[[2]int]int)
	for i := 0; i < nlinks; i++ {
		f, err := l.next(fmt.Sprintf(`link %d of %d ("src dst rate delay error_rate")`, i+1, nlinks))
		if err != nil {
			return nil, err
		}
		if len(f) != 5 {
			return nil, l.errorf(`link has %d fields: want 5, "src dst rate delay error_rate"`, len(f))
		}
		var ends [2]int
		for k, s := range f[:2] {
			if ends[k], err = ns3Node(s, nodes); err != nil {
				return nil, l.errorf("link %s: %v", [2]string{"src", "dst"}[k], err)
			}
		}
		a, b := ends[0], ends[1]
		switch {
		case a == b:
			return nil, l.errorf("link joins node %d to itself", a)
		case !isSwitch[a] && !isSwitch[b]:
			return nil, l.errorf("link joins two hosts (nodes %d and %d): put a switch between them", a, b)
		}
		key := [2]int{min(a, b), max(a, b)}
		if at, ok := pairs[key]; ok {
			return nil, l.errorf("nodes %d and %d are already linked on line %d: ns-3 routes over one link per pair of nodes", a, b, at)
		}
		pairs[key] = l.line
		for _, id := range ends {
			n := nt.Node[id]
			if !isSwitch[id] && firstLine[id] > 0 {
				return nil, l.errorf("host node %d already has its link on line %d: ccbed hosts have one NIC port", id, firstLine[id])
			}
			if isSwitch[id] && nt.Topo.NumPorts(n) >= 64 {
				return nil, l.errorf("switch node %d would have more than 64 ports", id)
			}
			if firstLine[id] == 0 {
				firstLine[id] = l.line
			}
		}
		bps, err := ns3Rate(f[2])
		if err != nil {
			return nil, l.errorf("rate: %v", err)
		}
		delay, err := ns3Delay(f[3])
		if err != nil {
			return nil, l.errorf("delay: %v", err)
		}
		loss, err := ns3Float(f[4])
		if err != nil || loss < 0 || loss > 1 {
			return nil, l.errorf("error_rate %q: want a number in 0..1", f[4])
		}
		if loss != 0 {
			return nil, l.errorf("error_rate %s: ccbed models no random link loss; set it to 0", f[4])
		}
		nt.Topo.ConnectSym(nt.Node[a], nt.Node[b], bps, delay)
	}
	for id := 0; id < nodes; id++ {
		if firstLine[id] == 0 {
			return nil, fmt.Errorf("%s: %s node %d has no link", name, kind(id), id)
		}
	}
	if err := nt.Topo.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return nt, nil
}

// ReadTopologyFile is ReadTopology on the file at path, which must be
// a regular file of at most config.MaxNS3Bytes (config.Open: not a device or
// a FIFO, which could never end or block); name names it in errors.
func ReadTopologyFile(path, name string) (*Topology, error) {
	r, err := config.Open(path, config.MaxNS3Bytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadTopology(r, name)
}

// ReadFlowsFile is ReadFlows on the file at path, which must be a
// regular file of at most config.MaxNS3Bytes (config.Open); name names it in
// errors.
func ReadFlowsFile(path, name string, t *Topology) ([]fabric.Flow, error) {
	r, err := config.Open(path, config.MaxNS3Bytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadFlows(r, name, t)
}

// ReadFlows reads an HPCC ns-3 flow.txt from r against the topology t;
// name names the file in errors ("flow.txt:7: ..."). Flow i of the file
// (counting from 0) gets ID i, Src and Dst the host indices of its ns-3 node
// ids, SizeBytes its size (bytes, > 0) and StartNs its start time (seconds,
// rounded to the ns), no rate cap, and Priority its priority group (pg: the
// queue ns-3's switches put it in, 0-7). The destination port is checked but
// not used. Start times must not decrease, as ns-3 requires.
// Start times are kept as written: HPCC's traffic generator starts traffic at
// 2 s, so subtract the first flow's StartNs to start at once. Lines after
// the flow_num flows are not read, as in ns-3.
func ReadFlows(r io.Reader, name string, t *Topology) ([]fabric.Flow, error) {
	if t == nil || t.Topo == nil {
		return nil, fmt.Errorf("%s: no topology", name)
	}
	l := newNS3Lines(r, name)
	f, err := l.next("the number of flows")
	if err != nil {
		return nil, err
	}
	if len(f) != 1 {
		return nil, l.errorf("header has %d fields: want 1, the number of flows", len(f))
	}
	n, err := ns3Count(f[0], math.MaxInt32)
	if err != nil {
		return nil, l.errorf("flow_num: %v", err)
	}
	host := func(what, s string) (int, error) {
		id, err := ns3Node(s, len(t.Node))
		if err != nil {
			return 0, l.errorf("%s: %v", what, err)
		}
		h, ok := t.HostIndex(id)
		if !ok {
			return 0, l.errorf("%s: node %d is a switch: flows run between hosts", what, id)
		}
		return h, nil
	}
	flows := make([]fabric.Flow, 0, min(n, 1<<16))
	for i := 0; i < n; i++ {
		f, err := l.next(fmt.Sprintf(`flow %d of %d ("src dst pg dport size start_time")`, i+1, n))
		if err != nil {
			return nil, err
		}
		if len(f) != 6 {
			return nil, l.errorf(`flow has %d fields: want 6, "src dst pg dport size start_time"`, len(f))
		}
		src, err := host("src", f[0])
		if err != nil {
			return nil, err
		}
		dst, err := host("dst", f[1])
		if err != nil {
			return nil, err
		}
		if src == dst {
			return nil, l.errorf("flow from node %d to itself", t.HostIDs[src])
		}
		pg, err := ns3Count(f[2], math.MaxUint32)
		if err != nil {
			return nil, l.errorf("pg: %v", err)
		}
		if pg > 7 {
			return nil, l.errorf("pg %d: want 0..7, the priority (ns-3's switches have 8 queues)", pg)
		}
		if _, err := ns3Count(f[3], math.MaxUint16); err != nil {
			return nil, l.errorf("dport: %v", err)
		}
		size, err := ns3Count(f[4], math.MaxInt64)
		if err != nil {
			return nil, l.errorf("size: %v", err)
		}
		if size == 0 {
			return nil, l.errorf("size 0: want at least 1 byte")
		}
		start, err := ns3Seconds(f[5])
		if err != nil {
			return nil, l.errorf("start_time: %v", err)
		}
		if k := len(flows); k > 0 && start < flows[k-1].StartNs {
			return nil, l.errorf("start_time %s is before the previous flow's: ns-3 wants flows in ascending start time", f[5])
		}
		flows = append(flows, fabric.Flow{ID: i, Src: src, Dst: dst, SizeBytes: int64(size), StartNs: start, Priority: &pg})
	}
	return flows, nil
}

// FlowDport is the destination port WriteFlows writes: HPCC's traffic
// generator's.
const FlowDport = 100

// WriteFlows writes flows as an HPCC ns-3 flow.txt, the inverse of
// ReadFlows: the number of flows, then one "src dst pg dport size
// start_time" line per flow in the order given (ns-3 wants start times that
// do not decrease: sort the flows first). src and dst are the ns-3 node ids
// nodeOf gives for the host indexes, pg the flow's priority
// (DefaultPriority when it has none), dport FlowDport, start_time the
// flow's StartNs plus originNs, in seconds to the ns. A flow of unlimited
// size (0) has no flow.txt form: an error. IDs and rate caps are not
// written (ns-3 numbers its flows by line and caps none).
func WriteFlows(w io.Writer, flows []fabric.Flow, nodeOf func(host int) int, originNs int64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d\n", len(flows))
	for i := range flows {
		f := &flows[i]
		if f.SizeBytes <= 0 {
			return fmt.Errorf("flow %d: size %d: ns-3's flow.txt has no unlimited flows", f.ID, f.SizeBytes)
		}
		t := f.StartNs + originNs
		if t < 0 {
			return fmt.Errorf("flow %d: starts at %d ns, before ns-3's time 0", f.ID, t)
		}
		pg := fabric.DefaultPriority
		if f.Priority != nil {
			pg = *f.Priority
		}
		fmt.Fprintf(bw, "%d %d %d %d %d %d.%09d\n", nodeOf(f.Src), nodeOf(f.Dst), pg, FlowDport, f.SizeBytes, t/1e9, t%1e9)
	}
	return bw.Flush()
}

// ns3Count parses a non-negative decimal integer no larger than most.
func ns3Count(s string, most int) (int, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	if v > uint64(most) {
		return 0, fmt.Errorf("%d is more than %d", v, most)
	}
	return int(v), nil
}

// ns3Node parses a node id of a topology of n nodes.
func ns3Node(s string, n int) (int, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("node id %q is not a non-negative integer", s)
	}
	if v >= uint64(n) {
		return 0, fmt.Errorf("node %d out of range 0..%d", v, n-1)
	}
	return int(v), nil
}

// ns3Float parses a C++ stream's double: digits, point, sign and exponent
// (no "inf", "nan", hex or underscores, which Go would take).
func ns3Float(s string) (float64, error) {
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// ns3RateUnits are the units of ns-3's DataRate (src/network/utils/
// data-rate.cc of HPCC's ns-3), in bits/s.
var ns3RateUnits = map[string]float64{
	"bps": 1, "b/s": 1, "Bps": 8, "B/s": 8,
	"kbps": 1e3, "kb/s": 1e3, "Kbps": 1e3, "Kb/s": 1e3,
	"kBps": 8e3, "kB/s": 8e3, "KBps": 8e3, "KB/s": 8e3,
	"Kib/s": 1 << 10, "KiB/s": 8 << 10,
	"Mbps": 1e6, "Mb/s": 1e6, "MBps": 8e6, "MB/s": 8e6,
	"Mib/s": 1 << 20, "MiB/s": 8 << 20,
	"Gbps": 1e9, "Gb/s": 1e9, "GBps": 8e9, "GB/s": 8e9,
	"Gib/s": 1 << 30, "GiB/s": 8 << 30,
}

// maxNS3Bps is the fastest link the readers take: 1.6 Tb/s, the fastest
// Ethernet standardised (and the testbed's bound on a link's rate).
const maxNS3Bps = 1.6e12

// ns3Rate parses an ns-3 DataRate string to bits/s, rounded to the bit/s.
func ns3Rate(s string) (float64, error) {
	bps, err := ns3Quantity(s, "0123456789.", ns3RateUnits, 1,
		"want one of ns-3's (bps, Kbps, Mbps, Gbps, Gb/s, Gib/s, ...; GBps is bytes/s)", "100Gbps")
	if err != nil {
		return 0, err
	}
	if !(bps > 0) || bps > maxNS3Bps {
		return 0, fmt.Errorf("%q: want a rate > 0 and at most %gGbps", s, maxNS3Bps/1e9)
	}
	return bps, nil
}

// ns3Quantity parses the number (of the characters digits) and the unit
// (a key of units; none: the factor bare) of an ns-3 attribute string and
// returns their product, rounded to the unit of the result. wantUnits and
// example complete its errors.
func ns3Quantity(s, digits string, units map[string]float64, bare float64, wantUnits, example string) (float64, error) {
	i := len(s) - len(strings.TrimLeft(s, digits))
	num, unit := s[:i], s[i:]
	mult := bare
	if unit != "" {
		var ok bool
		if mult, ok = units[unit]; !ok {
			return 0, fmt.Errorf("%q: unknown unit %q: %s", s, unit, wantUnits)
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil {
		return 0, fmt.Errorf("%q: want a number and a unit, as in %s", s, example)
	}
	return math.Round(v * mult), nil
}

// ns3TimeUnits are the units of ns-3's Time strings (src/core/model/time.cc
// of HPCC's ns-3), in ns.
var ns3TimeUnits = map[string]float64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1, "ps": 1e-3, "fs": 1e-6}

// maxNS3Ns is the largest time the readers take, ns: config.MaxTimeNs
// (2^60 ns, about 36.5 years), so that start times and delays added to the
// clocks stay within int64.
const maxNS3Ns = config.MaxTimeNs

// ns3Delay parses an ns-3 Time string to ns, rounded to the ns.
func ns3Delay(s string) (int64, error) {
	ns, err := ns3Quantity(s, "+-0123456789.", ns3TimeUnits, 1e9, "want s, ms, us, ns, ps or fs", "1000ns")
	if err != nil {
		return 0, err
	}
	if !(ns >= 0) || ns > maxNS3Ns {
		return 0, fmt.Errorf("%q: want a delay of 0 to %.4g s (2^60 ns)", s, maxNS3Ns/1e9)
	}
	return int64(ns), nil
}

// ns3Seconds parses a start time in seconds to ns, rounded to the ns.
func ns3Seconds(s string) (int64, error) {
	v, err := ns3Float(s)
	if err != nil {
		return 0, err
	}
	ns := math.Round(v * 1e9)
	if !(ns >= 0) || ns > maxNS3Ns {
		return 0, fmt.Errorf("%q: want 0 to %.4g seconds (2^60 ns)", s, maxNS3Ns/1e9)
	}
	return int64(ns), nil
}
