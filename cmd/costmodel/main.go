// Command costmodel puts switchd's measured per-packet costs together into
// the sharded mode's cost model (internal/costmodel) and prints its check
// and the lcores a switch node needs. scripts/bench-switchd.sh measures the
// inputs and runs it.
//
// Usage:
//
//	costmodel -rtc rtc.txt -stages stages.txt [-sharded sharded.txt]
//	    -nic-rx NS -nic-tx NS -line-nic-rx NS -line-nic-tx NS -cgo NS
//	    [-ref-rtc 58.95] [-contention -1] [-ports 4] [-line-run NS -line-ref NS] [-fit-ref]
//
// rtc.txt, stages.txt and sharded.txt are `go test -bench` outputs of
// BenchmarkForwardRTC (switchd/dataplane), BenchmarkEngineStages (switchd)
// and BenchmarkForwardSharded (switchd/dataplane), any number of rounds
// each: the rtc and stage costs are the least of their runs; the 1 + 1
// runs come from the round in which no CC's figures were least (schemes
// are compared within one round; a scheme that ran another number of
// times gives the least of its runs). The model takes no CC's hand-off for
// every scheme; each scheme's own is printed beside it. -nic-rx and -nic-tx are
// the PMD's ns per packet on the devices the benchmarks used (net_ring,
// from dpdk-testpmd io), -line-nic-* those the lcore table assumes (a real
// NIC; net_null's alloc and free stand in for it here), -cgo the price of a
// call into C (dpdk's BenchmarkCgoCall). -line-run and -line-ref are the
// time one cache line takes between two CPUs (costmodel's
// BenchmarkLineTransfer) when sharded.txt ran and on a quiet machine: the
// hand-off fitted on sharded.txt is mostly lines crossing between the
// lcores' cores, and is rescaled by their ratio for the reference machine
// and the lcore table. -fit-ref instead fits it on the reference's own
// 1 + 1 no-CC point (both sides by one factor); -contention -1 fits the
// contention on its 6 + 8 no-CC point. Fitted points are marked "(fit)".
//
// It prints, per scheme, each side's cost per packet; the 1 rx + 1 tx point
// measured here against the model (sharded.txt; the hand-off cost is fitted
// on the no-CC run, the other schemes are the check); the sharded
// table of the reference machine (an Intel Xeon VM, 8 looping net_ring
// ports) against the model scaled by ref-rtc / this machine's rtc cost
// per packet; and the lcores for 4 x 25, 40 and 100 GbE at 1500 B and 1 KB.
package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/internal/costmodel"
)

func main() { os.Exit(cli.Exit("costmodel", run(os.Args[1:], os.Stdout))) }

// burst is the sharded mode's burst per port (switchd/dataplane's default).
const burst = 32

// scheme is one column of the model: a CP, with PFC on or off.
type scheme struct {
	name, cc string
	pfc      bool
}

var schemes = []scheme{
	{"none", "none", false}, {"dcqcn", "dcqcn", false}, {"hpcc", "hpcc", false}, {"rocc", "rocc", false},
	{"none+pfc", "none", true}, {"dcqcn+pfc", "dcqcn", true}, {"hpcc+pfc", "hpcc", true}, {"rocc+pfc", "rocc", true},
}

// refTable is issue 25's sharded table, measured on the reference machine
// (a quiet 16-core Intel Xeon VM, 2.1 GHz TSC, R rx + T tx+CC lcores each on
// its own CPU, 8 looping net_ring ports, wall-clock Mpps, 64 B unless the
// column says 1500 B); 0 where it has no figure.
var refTable = []struct {
	l                                           costmodel.Lcores
	none, dcqcn, hpcc, rocc, dcqcnPFC, none1500 float64
}{
	{costmodel.Lcores{Rx: 1, Tx: 1}, 14.0, 11.9, 9.6, 5.8, 0, 0},
	{costmodel.Lcores{Rx: 2, Tx: 2}, 27.0, 23.8, 23.3, 9.6, 12.0, 22.0},
	{costmodel.Lcores{Rx: 4, Tx: 4}, 40.7, 33.1, 32.6, 23.9, 22.9, 32.7},
	{costmodel.Lcores{Rx: 6, Tx: 8}, 61.1, 54.6, 52.2, 43.8, 0, 0},
}

// refPorts is the reference runs' looping ports.
const refPorts = 8

type inputs struct {
	rtc, stages, sharded                           costmodel.Bench
	nicRx, nicTx, lineRx, lineTx, cgo, refRTC, con float64
	lineRun, lineRef                               float64
	// shRound is the round of the 1 + 1 runs the figures come from (-1:
	// least of each), of shRuns.
	shRound, shRuns int
	fitRef          bool
	ports           int
}

func run(args []string, out io.Writer) error {
	c := cli.New("costmodel", "-rtc FILE -stages FILE -nic-rx NS -nic-tx NS -line-nic-rx NS -line-nic-tx NS -cgo NS [flags]",
		"The sharded switch's cost model (internal/costmodel) fed with the benchmarks' outputs: its inputs, its checks and the lcores a switch node needs.")
	c.Stdout = out
	fs := c.Flags
	rtcF := fs.String("rtc", "", "BenchmarkForwardRTC output")
	stF := fs.String("stages", "", "BenchmarkEngineStages output")
	shF := fs.String("sharded", "", "BenchmarkForwardSharded output (optional)")
	var in inputs
	fs.Float64Var(&in.nicRx, "nic-rx", -1, "PMD rx ns per packet on the benchmarks' devices")
	fs.Float64Var(&in.nicTx, "nic-tx", -1, "PMD tx ns per packet on the benchmarks' devices")
	fs.Float64Var(&in.lineRx, "line-nic-rx", -1, "PMD rx ns per packet of the line-rate NIC (lcore table)")
	fs.Float64Var(&in.lineTx, "line-nic-tx", -1, "PMD tx ns per packet of the line-rate NIC (lcore table)")
	fs.Float64Var(&in.cgo, "cgo", -1, "ns per call into C")
	fs.Float64Var(&in.refRTC, "ref-rtc", 58.95, "the reference machine's rtc no-CC CPU ns per packet (issue 25: 56.6-61.3)")
	fs.Float64Var(&in.con, "contention", -1, "cost rise per lcore beyond 2 (-1: fit on the reference's 6 + 8 no-CC point)")
	fs.IntVar(&in.ports, "ports", 4, "ports of the switch node in the lcore table")
	fs.BoolVar(&in.fitRef, "fit-ref", false, "fit the hand-off on the reference's 1 + 1 no-CC point (both sides by one factor) instead of carrying this machine's over")
	fs.Float64Var(&in.lineRun, "line-run", 0, "ns a cache line took between the CPUs when -sharded ran (BenchmarkLineTransfer; 0: no rescaling)")
	fs.Float64Var(&in.lineRef, "line-ref", 0, "ns a cache line takes between the CPUs of a quiet machine: the fitted hand-off is scaled by line-ref / line-run beyond the 1 + 1 check")
	if _, err := c.Parse(args); err != nil {
		return err
	}
	if *rtcF == "" || *stF == "" {
		return c.Errorf("want -rtc and -stages")
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"-nic-rx", in.nicRx}, {"-nic-tx", in.nicTx}, {"-line-nic-rx", in.lineRx}, {"-line-nic-tx", in.lineTx}, {"-cgo", in.cgo}, {"-ref-rtc", in.refRTC}} {
		if v.x < 0 || math.IsNaN(v.x) {
			return c.Errorf("%s %v: want a measured cost >= 0", v.name, v.x)
		}
	}
	if in.lineRun < 0 || in.lineRef < 0 || (in.lineRun == 0) != (in.lineRef == 0) {
		return c.Errorf("-line-run %v, -line-ref %v: want both > 0, or neither", in.lineRun, in.lineRef)
	}
	if in.ports < 1 || in.ports > 64 {
		return c.Errorf("-ports %d: want 1..64", in.ports)
	}
	var err error
	if in.rtc, err = readBench(*rtcF); err != nil {
		return err
	}
	if in.stages, err = readBench(*stF); err != nil {
		return err
	}
	if *shF != "" {
		if in.sharded, err = readBench(*shF); err != nil {
			return err
		}
	}
	in.quietest()
	return report(&in, out)
}

func readBench(path string) (costmodel.Bench, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := costmodel.ParseBench(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// stage is the least CPU ns per op of BenchmarkEngineStages/<name>/<stage>.
func (in *inputs) stage(name, stage string) (float64, error) {
	v, ok := in.stages.Least("BenchmarkEngineStages/"+name+"/"+stage, "cpu-ns/op")
	if !ok {
		return 0, fmt.Errorf("no BenchmarkEngineStages/%s/%s cpu-ns/op in -stages", name, stage)
	}
	return v, nil
}

// engine is scheme s's engine cost per packet on each side, large frames
// (1 KB and up: queue1500) or small. A CP with PFC that the stages do not
// measure gets the CP's cost plus what PFC adds with no CP.
func (in *inputs) engine(s scheme, large bool) (rx, tx float64, err error) {
	q := "queue"
	if large {
		q = "queue1500"
	}
	get := func(name string) (float64, float64, error) {
		r, err := in.stage(name, "classify")
		if err != nil {
			return 0, 0, err
		}
		t, err := in.stage(name, q)
		return r, t, err
	}
	if !s.pfc || s.cc == "none" || s.cc == "dcqcn" {
		return get(s.name)
	}
	rx, tx, err = get(s.cc)
	if err != nil {
		return 0, 0, err
	}
	r0, t0, err := get("none")
	if err != nil {
		return 0, 0, err
	}
	r1, t1, err := get("none+pfc")
	if err != nil {
		return 0, 0, err
	}
	return rx + r1 - r0, tx + t1 - t0, nil
}

// side is the least busy time per packet of a side ("rx", "tx") of the
// sharded run name: its thread CPU time (BenchmarkForwardSharded
// -sharded-cpu), else its TSC time, which holds whatever preempted it.
func (in *inputs) side(name, which string) (float64, bool) {
	for _, u := range []string{which + "-cpu-ns/pkt", which + "-busy-ns/pkt"} {
		if in.shRound >= 0 && in.sharded.Runs(name, u) == in.shRuns {
			return in.sharded.At(name, u, in.shRound)
		}
		if v, ok := in.sharded.Least(name, u); ok {
			return v, true
		}
	}
	return 0, false
}

// quietest picks the round the 1 + 1 figures come from: the one in which
// no CC's were least, so that schemes are compared within one round (least
// of the rounds for a scheme that ran another number of times).
func (in *inputs) quietest() {
	in.shRound = -1
	if in.sharded != nil {
		name := "BenchmarkForwardSharded/none/64B/1rx"
		for _, u := range []string{"cpu-ns/pkt", "busy-ns/pkt"} {
			if in.shRound = in.sharded.Quietest(name, "rx-"+u, "tx-"+u); in.shRound >= 0 {
				in.shRuns = in.sharded.Runs(name, "rx-"+u)
				break
			}
		}
	}
}

// measured is scheme s's inputs with the given NIC costs and hand-off.
func (in *inputs) measured(s scheme, large bool, nicRx, nicTx float64, h costmodel.Measured) (costmodel.Measured, error) {
	rx, tx, err := in.engine(s, large)
	if err != nil {
		return costmodel.Measured{}, err
	}
	return costmodel.Measured{
		RxEngine: rx, TxEngine: tx, NICRx: nicRx, NICTx: nicTx,
		HandoffRx: h.HandoffRx, HandoffTx: h.HandoffTx,
		// An rx lcore's poll: one rx burst call for its ports and one ring
		// enqueue; a tx+CC lcore's: one tx burst call, and a dequeue call
		// per ring (PerRing).
		RxPoll: 2 * in.cgo, TxPoll: in.cgo, PerRing: in.cgo,
	}, nil
}

// roundOf says which round of n a figure comes from.
func roundOf(i, n int) string {
	if i < 0 {
		return "least of each"
	}
	return fmt.Sprintf("%d of %d, the least no-CC figures", i+1, n)
}

// scaleHand multiplies every hand-off in hand by f.
func scaleHand(hand map[string]costmodel.Measured, f float64) {
	for k, h := range hand {
		h.HandoffRx, h.HandoffTx = h.HandoffRx*f, h.HandoffTx*f
		hand[k] = h
	}
}

// fig is x with prec decimals, "-" for 0 (no figure).
func fig(x float64, prec int) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

func pct(pred, meas float64) string {
	if meas == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f %%", (pred-meas)/meas*100)
}

func report(in *inputs, out io.Writer) error {
	rtc, ok := in.rtc.Least("BenchmarkForwardRTC/none/64B", "cpu-ns/pkt")
	if !ok || rtc <= 0 {
		return fmt.Errorf("no BenchmarkForwardRTC/none/64B cpu-ns/pkt in -rtc")
	}
	fmt.Fprintf(out, "inputs, this machine (CPU ns per packet; rtc and stages: least of the runs; 1 + 1 runs: round %s)\n", roundOf(in.shRound, in.shRuns))
	fmt.Fprintf(out, "  rtc no CC 64 B %.1f; PMD rx %.2f tx %.2f (benchmarks' devices), %.2f / %.2f (line NIC); cgo call %.1f\n",
		rtc, in.nicRx, in.nicTx, in.lineRx, in.lineTx, in.cgo)
	fmt.Fprintf(out, "  %-10s %9s %9s %11s\n", "scheme", "rx engine", "tx engine", "tx 1500 B")
	for _, s := range schemes {
		rx, tx, err := in.engine(s, false)
		if err != nil {
			return err
		}
		_, tx15, err := in.engine(s, true)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-10s %9.1f %9.1f %11.1f\n", s.name, rx, tx, tx15)
	}

	// The hand-off, fitted on each scheme's 1 + 1 run here (hand). The
	// model takes no CC's for every scheme (handOf): the others' are shown,
	// and the check below is how far the stages alone carry a CP; on this
	// machine a scheme's own differs from no CC's by as much as the noise
	// between rounds.
	hand := map[string]costmodel.Measured{}
	handOf := func(scheme) costmodel.Measured { return hand["none"] }
	if in.sharded != nil {
		fmt.Fprintf(out, "\nhand-off per packet, fitted on each 1 rx + 1 tx run here (CPU time of the busy polls where the run has it, else TSC time)\n")
		fmt.Fprintf(out, "  %-10s %8s %8s %11s %11s\n", "scheme", "rx busy", "tx busy", "rx hand-off", "tx hand-off")
		for _, s := range schemes {
			name := "BenchmarkForwardSharded/" + s.name + "/64B/1rx"
			rb, ok1 := in.side(name, "rx")
			tb, ok2 := in.side(name, "tx")
			if !ok1 || !ok2 {
				continue
			}
			m0, err := in.measured(s, false, in.nicRx, in.nicTx, costmodel.Measured{})
			if err != nil {
				return err
			}
			full := float64(4 * burst) // 4 ports, full bursts
			if err := m0.Calibrate(costmodel.Sharded{BusyPerPacket: rb, PacketsPerPoll: full}, costmodel.Sharded{BusyPerPacket: tb, PacketsPerPoll: full}); err != nil {
				return err
			}
			hand[s.name] = m0
			fmt.Fprintf(out, "  %-10s %8.1f %8.1f %11.1f %11.1f\n", s.name, rb, tb, m0.HandoffRx, m0.HandoffTx)
		}
		if _, ok := hand["none"]; !ok {
			return fmt.Errorf("no BenchmarkForwardSharded/none/64B/1rx rx and tx busy time per packet in -sharded")
		}
		// The check here: the model (the scheme's stages, no CC's
		// hand-off) against each run: its tx+CC side's CPU time a packet,
		// and its wall-clock rate.
		fmt.Fprintf(out, "1 rx + 1 tx here, 4 looping net_ring ports, 64 B\n")
		fmt.Fprintf(out, "  %-10s %14s %11s %6s   %11s %11s %6s\n", "scheme", "tx ns (none's", "measured tx", "error", "model", "measured", "error")
		fmt.Fprintf(out, "  %-10s %14s %11s %6s   %11s %11s %6s\n", "", "hand-off)", "", "", "Mpps", "wall Mpps", "")
		for _, s := range schemes {
			if _, ok := hand[s.name]; !ok {
				continue
			}
			ms, err := in.measured(s, false, in.nicRx, in.nicTx, hand["none"])
			if err != nil {
				return err
			}
			m := ms.Model(burst)
			n := "BenchmarkForwardSharded/" + s.name + "/64B/1rx"
			tb, _ := in.side(n, "tx")
			txPred := m.Tx.PerPacket + (m.Tx.PerPoll+m.PerRing)/(4*burst)
			rate, err := m.Saturated(4, costmodel.Lcores{Rx: 1, Tx: 1})
			if err != nil {
				return err
			}
			meas, _ := in.sharded.Most(n, "Mpps")
			if in.shRound >= 0 && in.sharded.Runs(n, "Mpps") == in.shRuns {
				meas, _ = in.sharded.At(n, "Mpps", in.shRound)
			}
			fmt.Fprintf(out, "  %-10s %14.1f %11.1f %6s   %11.2f %11s %6s\n", s.name, txPred, tb, pct(txPred, tb), rate, fig(meas, 2), pct(rate, meas))
		}
	}

	// Beyond the runs here, the hand-off's cross-core part moves with the
	// time a cache line takes between cores: rescaled to a quiet machine's.
	if in.lineRun > 0 {
		r := in.lineRef / in.lineRun
		scaleHand(hand, r)
		fmt.Fprintf(out, "\nhand-off rescaled by a cache line's transfer, %.1f / %.1f ns: no CC rx %.1f, tx %.1f ns a packet\n", in.lineRef, in.lineRun, hand["none"].HandoffRx, hand["none"].HandoffTx)
	}
	// The reference machine: every cost scaled by the single-lcore ratio.
	scale := in.refRTC / rtc
	base := func(s scheme, large bool) (costmodel.Model, error) {
		ms, err := in.measured(s, large, in.nicRx, in.nicTx, handOf(s))
		if err != nil {
			return costmodel.Model{}, err
		}
		m := ms.Model(burst)
		m.Scale, m.BaseLcores = scale, 2
		return m, nil
	}
	if in.fitRef {
		if in.sharded == nil {
			return fmt.Errorf("-fit-ref needs -sharded (the hand-off's split between the sides)")
		}
		ms, err := in.measured(schemes[0], false, in.nicRx, in.nicTx, hand["none"])
		if err != nil {
			return err
		}
		first := refTable[0]
		f, err := costmodel.FitHandoff(ms, costmodel.Model{Burst: burst, Scale: scale, BaseLcores: 2}, refPorts, first.l, first.none)
		if err != nil {
			return err
		}
		scaleHand(hand, f)
		fmt.Fprintf(out, "\nhand-off fitted on the reference's %v no-CC point (%.1f Mpps): every scheme's x %.3f; no CC rx %.1f, tx %.1f ns a packet before scaling\n", first.l, first.none, f, hand["none"].HandoffRx, hand["none"].HandoffTx)
	}
	con, conFit := in.con, false
	if con < 0 {
		m, err := base(schemes[0], false)
		if err != nil {
			return err
		}
		last := refTable[len(refTable)-1]
		if con, err = costmodel.FitContention(m, refPorts, last.l, last.none); err != nil {
			fmt.Fprintf(out, "\ncontention not fitted (%v): 0\n", err)
			con = 0
		} else {
			conFit = true
			fmt.Fprintf(out, "\ncontention fitted on the reference's %v no-CC point (%.1f Mpps): %.4f a lcore beyond 2\n", last.l, last.none, con)
		}
	}
	fmt.Fprintf(out, "\nreference machine (issue 25's sharded table, %d looping ports), costs x %.3f (%.2f / %.2f ns), contention %.4f\n", refPorts, scale, in.refRTC, rtc, con)
	fmt.Fprintf(out, "  %-7s %-10s %9s %9s %7s\n", "lcores", "scheme", "model", "measured", "error")
	for _, row := range refTable {
		for _, c := range []struct {
			s     scheme
			large bool
			meas  float64
		}{
			{schemes[0], false, row.none}, {schemes[1], false, row.dcqcn}, {schemes[2], false, row.hpcc},
			{schemes[3], false, row.rocc}, {schemes[5], false, row.dcqcnPFC}, {schemes[0], true, row.none1500},
		} {
			if c.meas == 0 {
				continue
			}
			m, err := base(c.s, c.large)
			if err != nil {
				return err
			}
			m.Contention = con
			pred, err := m.Saturated(refPorts, row.l)
			if err != nil {
				return err
			}
			name := c.s.name
			if c.large {
				name += " 1500 B"
			}
			if c.s.name == "none" && !c.large && ((in.fitRef && row.l == refTable[0].l) || (conFit && row.l == refTable[len(refTable)-1].l)) {
				name += " (fit)"
			}
			fmt.Fprintf(out, "  %-7s %-10s %9.1f %9.1f %7s\n", fmt.Sprintf("%d+%d", row.l.Rx, row.l.Tx), name, pred, c.meas, pct(pred, c.meas))
		}
	}

	// Lcores at line rate on the reference machine, with the line NIC.
	fmt.Fprintf(out, "\nlcores (rx + tx+CC) for %d ports at line rate, reference machine's costs, PMD %.1f rx + %.1f tx ns (x %.3f); busiest lcore's load in brackets\n",
		in.ports, in.lineRx, in.lineTx, scale)
	fmt.Fprintf(out, "  %-10s %-6s", "scheme", "frame")
	speeds := []float64{25, 40, 100}
	for _, g := range speeds {
		fmt.Fprintf(out, " %-20s", fmt.Sprintf("%d x %g GbE", in.ports, g))
	}
	fmt.Fprintln(out)
	for _, s := range schemes {
		for _, frame := range []int{1500, 1024} {
			ms, err := in.measured(s, true, in.lineRx, in.lineTx, handOf(s))
			if err != nil {
				return err
			}
			m := ms.Model(burst)
			m.Scale, m.BaseLcores, m.Contention = scale, 2, con
			fmt.Fprintf(out, "  %-10s %-6s", s.name, fmt.Sprintf("%d B", frame))
			for _, g := range speeds {
				l, u, err := m.Need(costmodel.Load{Ports: in.ports, Gbps: g, FrameBytes: frame})
				cell := fmt.Sprintf("%v (%.2f)", l, u)
				if err != nil {
					cell = "more than 1 per port"
				}
				fmt.Fprintf(out, " %-20s", cell)
			}
			fmt.Fprintln(out)
		}
	}
	return nil
}
