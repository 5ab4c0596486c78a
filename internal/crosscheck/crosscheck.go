// Package crosscheck compares ccbed's flow completion times with those of the
// HPCC-lineage ns-3 RDMA simulator (HPCC's simulation/, inet-tub's
// ns3-datacenter) run on the same topology.txt, flow.txt and config.txt
// (scripts/crosscheck-ns3.sh runs both; cmd/crosscheck prints the table).
//
// Both tools' slowdowns are recomputed here from their raw FCTs with one
// formula, so that neither tool's own notion of the ideal FCT (ns-3's counts
// its headers, ccbed's its frames) enters the comparison:
//
//	ideal = base RTT of the pair + size / line rate
//
// where the base RTT is the round trip of propagation on the pair's path plus
// one MTU payload's serialisation per hop out (ns-3's pairRtt without the
// headers), and the line rate is the slowest link of the path. Flows are
// matched across the tools by (source, destination, size, start time), which
// flow.txt fixes for both.
package crosscheck

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/ns3"
)

// FCT is one completed flow: its endpoints as ns-3 node ids, its size, when
// it started and how long it took.
type FCT struct {
	Src, Dst  int
	SizeBytes int64
	StartNs   int64
	FCTNs     int64
}

// key is what identifies a flow in both tools' outputs: flow.txt fixes it.
type key struct {
	src, dst int
	size     int64
	startNs  int64
}

func (f FCT) key() key { return key{f.Src, f.Dst, f.SizeBytes, f.StartNs} }

// maxLine is the longest line the readers take.
const maxLine = 1 << 16

// ReadNS3FCT reads the simulator's FCT_OUTPUT_FILE: one line per completed
// flow, "sip dip sport dport size start_ns fct_ns standalone_fct_ns", the
// addresses in 8 hex digits as its qp_finish prints them
// (0x0b000001 + 0x10000 (id / 256) + 0x100 (id % 256): the node id is bits
// 8-23). Blank lines are skipped; anything else malformed is an error naming
// name and the line.
func ReadNS3FCT(r io.Reader, name string) ([]FCT, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []FCT
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if len(f) != 8 {
			return nil, errf("%d fields: want 8 (sip dip sport dport size start_ns fct_ns standalone_ns)", len(f))
		}
		var ip [2]uint64
		for i := range ip {
			v, err := strconv.ParseUint(f[i], 16, 32)
			if err != nil {
				return nil, errf("address %q: want 8 hex digits", f[i])
			}
			ip[i] = v
		}
		var n [6]int64
		for i := range n {
			v, err := strconv.ParseInt(f[i+2], 10, 64)
			if err != nil || v < 0 {
				return nil, errf("field %d %q: want an integer >= 0", i+3, f[i+2])
			}
			n[i] = v
		}
		if n[2] == 0 {
			return nil, errf("size 0: want > 0")
		}
		if n[3] > math.MaxInt64-n[4] {
			return nil, errf("start %d + fct %d overflows", n[3], n[4])
		}
		out = append(out, FCT{Src: int(ip[0] >> 8 & 0xffff), Dst: int(ip[1] >> 8 & 0xffff),
			SizeBytes: n[2], StartNs: n[3], FCTNs: n[4]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// ccbedColumns are the fct.csv columns ReadCcbedFCT needs (docs/results.md).
var ccbedColumns = []string{"src", "dst", "size_bytes", "start_us", "fct_us"}

// ReadCcbedFCT reads a ccbed run's fct.csv (docs/results.md) of an ns3
// topology, whose hosts are named "n" and their ns-3 id. Times are
// microseconds with ns digits; they are rounded to the ns.
func ReadCcbedFCT(r io.Reader, name string) ([]FCT, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col := make([]int, len(ccbedColumns))
	for i, c := range ccbedColumns {
		col[i] = slices.Index(head, c)
		if col[i] < 0 {
			return nil, fmt.Errorf("%s: header %q has no %q column", name, strings.Join(head, ","), c)
		}
	}
	var out []FCT
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		var ids [2]int
		for i := range ids {
			s := rec[col[i]]
			v, err := strconv.Atoi(strings.TrimPrefix(s, "n"))
			if !strings.HasPrefix(s, "n") || err != nil || v < 0 {
				return nil, errf("host %q: want n and an ns-3 node id (an ns3 topology's host)", s)
			}
			ids[i] = v
		}
		size, err := strconv.ParseInt(rec[col[2]], 10, 64)
		if err != nil || size <= 0 {
			return nil, errf("size_bytes %q: want an integer > 0", rec[col[2]])
		}
		var ns [2]int64
		for i := range ns {
			s := rec[col[3+i]]
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) || v > math.MaxInt64/2e3 {
				return nil, errf("%s %q: want microseconds >= 0", ccbedColumns[3+i], s)
			}
			ns[i] = int64(math.Round(v * 1e3))
		}
		out = append(out, FCT{Src: ids[0], Dst: ids[1], SizeBytes: size, StartNs: ns[0], FCTNs: ns[1]})
	}
}

// Ideal gives a flow's ideal FCT on a topology (the package doc's formula).
type Ideal struct {
	topo *ns3.Topology
	mtu  int
	// pair caches base RTT and line rate by (src, dst) host index.
	pair map[[2]int][2]float64
}

// NewIdeal returns the ideal FCTs on t with payloads of mtu bytes.
func NewIdeal(t *ns3.Topology, mtu int) *Ideal {
	return &Ideal{topo: t, mtu: mtu, pair: map[[2]int][2]float64{}}
}

// Ns is the ideal FCT in ns of a flow of size bytes between ns-3 nodes src
// and dst; an error when either is not a host or they are not connected.
func (d *Ideal) Ns(src, dst int, size int64) (float64, error) {
	s, ok1 := d.topo.HostIndex(src)
	t, ok2 := d.topo.HostIndex(dst)
	if !ok1 || !ok2 || s == t {
		return 0, fmt.Errorf("flow %d -> %d: want two distinct hosts of the topology", src, dst)
	}
	p, ok := d.pair[[2]int{s, t}]
	if !ok {
		out, back := d.topo.Topo.Path(s, t), d.topo.Topo.Path(t, s)
		if out == nil || back == nil {
			return 0, fmt.Errorf("flow %d -> %d: no path", src, dst)
		}
		line := math.Inf(1)
		for _, h := range out {
			p[0] += float64(d.mtu)*8e9/h.Bps + float64(h.DelayNs)
			line = min(line, h.Bps)
		}
		for _, h := range back {
			p[0] += float64(h.DelayNs)
		}
		p[1] = line
		d.pair[[2]int{s, t}] = p
	}
	return p[0] + float64(size)*8e9/p[1], nil
}

// Bucket is a range of flow sizes, [Lo, Hi).
type Bucket struct {
	Name   string
	Lo, Hi int64
}

// Buckets are the size ranges the table reports; the last is every flow.
var Buckets = []Bucket{
	{"< 100 KB", 0, 100_000},
	{"100 KB-1 MB", 100_000, 1_000_000},
	{">= 1 MB", 1_000_000, math.MaxInt64},
	{"all", 0, math.MaxInt64},
}

// Quantiles are the slowdown percentiles the table reports.
var Quantiles = []float64{0.50, 0.95, 0.99}

// Percentile is the nearest-rank p-quantile of sorted (NaN when empty).
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BucketStats are one bucket's completed flows and slowdown percentiles (at
// Quantiles).
type BucketStats struct {
	N int
	Q []float64
}

// Summary is one tool's run: completed flows and the slowdowns by bucket
// (one entry per Buckets).
type Summary struct {
	Completed int
	Buckets   []BucketStats
}

// Summarize computes the slowdowns of fcts against ideal.
func Summarize(fcts []FCT, ideal *Ideal) (Summary, error) {
	sd := make([][]float64, len(Buckets))
	for _, f := range fcts {
		id, err := ideal.Ns(f.Src, f.Dst, f.SizeBytes)
		if err != nil {
			return Summary{}, err
		}
		s := float64(f.FCTNs) / id
		for i, b := range Buckets {
			if f.SizeBytes >= b.Lo && f.SizeBytes < b.Hi {
				sd[i] = append(sd[i], s)
			}
		}
	}
	out := Summary{Completed: len(fcts), Buckets: make([]BucketStats, len(Buckets))}
	for i, v := range sd {
		slices.Sort(v)
		q := make([]float64, len(Quantiles))
		for j, p := range Quantiles {
			q[j] = Percentile(v, p)
		}
		out.Buckets[i] = BucketStats{N: len(v), Q: q}
	}
	return out, nil
}

// RatioQuantiles are the percentiles of the per-flow FCT ratio reported.
var RatioQuantiles = []float64{0.05, 0.25, 0.50, 0.75, 0.95}

// Ratios are the per-flow FCT ratios ccbed / ns-3 over the flows both
// completed: how many matched, and the ratio at RatioQuantiles.
type Ratios struct {
	Matched int
	Q       []float64
}

// MatchRatios pairs the flows of ccbed and ns3 by (source, destination, size,
// start) and returns the spread of ccbed's FCT over ns-3's. Flows with the
// same key pair up in order of FCT.
func MatchRatios(ccbed, ns3 []FCT) Ratios {
	byKey := map[key][]int64{}
	for _, f := range ns3 {
		byKey[f.key()] = append(byKey[f.key()], f.FCTNs)
	}
	for _, v := range byKey {
		slices.Sort(v)
	}
	sorted := slices.Clone(ccbed)
	slices.SortFunc(sorted, func(a, b FCT) int { return int(min(max(a.FCTNs-b.FCTNs, -1), 1)) })
	var r []float64
	for _, f := range sorted {
		k := f.key()
		v := byKey[k]
		if len(v) == 0 || v[0] <= 0 {
			continue
		}
		r = append(r, float64(f.FCTNs)/float64(v[0]))
		byKey[k] = v[1:]
	}
	slices.Sort(r)
	q := make([]float64, len(RatioQuantiles))
	for i, p := range RatioQuantiles {
		q[i] = Percentile(r, p)
	}
	return Ratios{Matched: len(r), Q: q}
}

// Times are a run's CPU (user + system) and wall seconds.
type Times struct {
	CPU, Wall float64
}

// ParseTimes reads bash's time report as TIMEFORMAT='%U %S %R' prints it:
// user, system and real seconds on the last non-blank line.
func ParseTimes(text string) (Times, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 3 {
		return Times{}, fmt.Errorf("time report %q: want user, system and real seconds", lines[len(lines)-1])
	}
	var v [3]float64
	for i, s := range f {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !(x >= 0) || math.IsInf(x, 0) {
			return Times{}, fmt.Errorf("time report %q: %q is not seconds", lines[len(lines)-1], s)
		}
		v[i] = x
	}
	return Times{CPU: v[0] + v[1], Wall: v[2]}, nil
}

// Case is one side-by-side: a scheme at a load, both tools run on the same
// flow.txt of Flows flows.
type Case struct {
	Name       string
	Flows      int
	NS3, Ccbed Summary
	Ratios     Ratios
	NS3Time    Times
	CcbedTime  Times
}

// Compare builds a case from both tools' FCTs and times.
func Compare(name string, flows int, ns3, ccbed []FCT, ideal *Ideal, ns3Time, ccbedTime Times) (Case, error) {
	c := Case{Name: name, Flows: flows, NS3Time: ns3Time, CcbedTime: ccbedTime}
	var err error
	if c.NS3, err = Summarize(ns3, ideal); err != nil {
		return c, fmt.Errorf("ns-3: %w", err)
	}
	if c.Ccbed, err = Summarize(ccbed, ideal); err != nil {
		return c, fmt.Errorf("ccbed: %w", err)
	}
	c.Ratios = MatchRatios(ccbed, ns3)
	return c, nil
}

// diff is b against a in per cent ("-" when either is missing).
func diff(a, b float64) string {
	if !(a > 0) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", (b/a-1)*100)
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// Write prints the case as a block of the side-by-side table.
func (c *Case) Write(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "== %s: %d flows in flow.txt\n", c.Name, c.Flows)
	fmt.Fprintf(b, "  completed       ns-3 %5d   ccbed %5d   (%s)\n", c.NS3.Completed, c.Ccbed.Completed,
		diff(float64(c.NS3.Completed), float64(c.Ccbed.Completed)))
	speed := "-"
	if c.CcbedTime.CPU > 0 {
		speed = fmt.Sprintf("%.1fx", c.NS3Time.CPU/c.CcbedTime.CPU)
	}
	fmt.Fprintf(b, "  cpu s (wall s)  ns-3 %.1f (%.1f)   ccbed %.1f (%.1f)   ns-3 / ccbed cpu %s\n",
		c.NS3Time.CPU, c.NS3Time.Wall, c.CcbedTime.CPU, c.CcbedTime.Wall, speed)
	fmt.Fprintf(b, "  %-12s %11s", "slowdown", "flows")
	for _, q := range Quantiles {
		fmt.Fprintf(b, "  %-22s", fmt.Sprintf("p%.0f ns-3 / ccbed", q*100))
	}
	b.WriteString("\n")
	for i, bk := range Buckets {
		n, m := c.NS3.Buckets[i], c.Ccbed.Buckets[i]
		fmt.Fprintf(b, "  %-12s %5d/%5d", bk.Name, n.N, m.N)
		for j := range Quantiles {
			fmt.Fprintf(b, "  %-22s", fmt.Sprintf("%s / %s %s", num(n.Q[j]), num(m.Q[j]), diff(n.Q[j], m.Q[j])))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "  per-flow FCT ccbed / ns-3 over %d flows both completed:", c.Ratios.Matched)
	for i, p := range RatioQuantiles {
		fmt.Fprintf(b, " p%.0f %s", p*100, num(c.Ratios.Q[i]))
	}
	b.WriteString("\n")
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}
