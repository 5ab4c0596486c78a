package costmodel

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Measured are one scheme's measured costs on one machine, ns: the model's
// inputs before they are put together into Sides.
type Measured struct {
	// RxEngine is Classify per packet, TxEngine Enqueue, the CP, shaping and
	// Transmit per packet (BenchmarkEngineStages classify and queue, or
	// queue1500 for large frames).
	RxEngine, TxEngine float64
	// NICRx and NICTx are the PMD's rx and tx per packet (dpdk-testpmd).
	NICRx, NICTx float64
	// HandoffRx and HandoffTx are what crossing from an rx lcore to a tx+CC
	// lcore adds per packet on each side (the Meta put in the tailroom and
	// read back, the rte_ring's slots, the cache lines of the frame moving
	// between the cores); Calibrate finds them.
	HandoffRx, HandoffTx float64
	// RxPoll and TxPoll are an lcore's fixed cost per poll; PerRing what a
	// tx+CC lcore pays per poll for each ring it dequeues from.
	RxPoll, TxPoll, PerRing float64
}

// Model is m's sharded-mode model with bursts of burst frames.
func (m Measured) Model(burst int) Model {
	return Model{
		Rx:      Side{PerPacket: m.NICRx + m.RxEngine + m.HandoffRx, PerPoll: m.RxPoll},
		Tx:      Side{PerPacket: m.NICTx + m.TxEngine + m.HandoffTx, PerPoll: m.TxPoll},
		PerRing: m.PerRing,
		Burst:   burst,
	}
}

// Sharded is what a run of the sharded mode measured on one lcore (a side):
// its busy time per packet forwarded (TSC time of its polls that found
// work) and the packets its busy polls carried on average.
type Sharded struct {
	BusyPerPacket  float64
	PacketsPerPoll float64
}

// Calibrate sets m's hand-off costs from a sharded run of the same scheme
// (one rx and one tx+CC lcore): what each side's busy time per packet holds
// beyond its engine stage, its NIC and its share of a poll's fixed cost. A
// side whose measured busy time is below those (noise) gets 0.
func (m *Measured) Calibrate(rx, tx Sharded) error {
	if rx.PacketsPerPoll <= 0 || tx.PacketsPerPoll <= 0 || rx.BusyPerPacket <= 0 || tx.BusyPerPacket <= 0 {
		return fmt.Errorf("costmodel: a sharded run with no packets (rx %+v, tx %+v)", rx, tx)
	}
	m.HandoffRx = max(0, rx.BusyPerPacket-m.RxEngine-m.NICRx-m.RxPoll/rx.PacketsPerPoll)
	m.HandoffTx = max(0, tx.BusyPerPacket-m.TxEngine-m.NICTx-(m.TxPoll+m.PerRing)/tx.PacketsPerPoll)
	return nil
}

// Bench is a `go test -bench` output's figures: for each benchmark (its name
// without the -GOMAXPROCS suffix) and unit, every value reported, in order.
type Bench map[string]map[string][]float64

// ParseBench reads `go test -bench` output, keeping the result lines (a
// name starting "Benchmark", an iteration count, then value-unit pairs) and
// skipping every other line. A result line whose pairs do not parse is an
// error naming its line.
func ParseBench(r io.Reader) (Bench, error) {
	b := Bench{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
			continue // the name alone, printed before a verbose run's logs
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("costmodel: bench line %d: a value without its unit: %q", line, sc.Text())
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("costmodel: bench line %d: value %q of %s is not a number", line, f[i], f[i+1])
			}
			if b[name] == nil {
				b[name] = map[string][]float64{}
			}
			b[name][f[i+1]] = append(b[name][f[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("costmodel: reading bench output: %w", err)
	}
	return b, nil
}

// Least is the least value of name's unit (the run least disturbed, for a
// cost), and whether there is one.
func (b Bench) Least(name, unit string) (float64, bool) { return b.pick(name, unit, -1) }

// Most is the greatest value of name's unit (the run least disturbed, for
// a rate), and whether there is one.
func (b Bench) Most(name, unit string) (float64, bool) { return b.pick(name, unit, 1) }

// pick is the extreme value of name's unit: the greatest for sign 1, the
// least for -1.
func (b Bench) pick(name, unit string, sign float64) (float64, bool) {
	vs := b[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	x := vs[0]
	for _, v := range vs[1:] {
		if sign*v > sign*x {
			x = v
		}
	}
	return x, true
}

// Runs is how many values name's unit has (one a round when a round runs
// each benchmark once).
func (b Bench) Runs(name, unit string) int { return len(b[name][unit]) }

// At is the value of name's unit in run i (0 first), and whether there is
// one.
func (b Bench) At(name, unit string, i int) (float64, bool) {
	vs := b[name][unit]
	if i < 0 || i >= len(vs) {
		return 0, false
	}
	return vs[i], true
}

// Quietest is the run whose values of name's units sum least (the round
// least disturbed, by one benchmark's figures), or -1 when a unit has no
// value or the units have different counts of runs.
func (b Bench) Quietest(name string, units ...string) int {
	n := -1
	for _, u := range units {
		if k := b.Runs(name, u); k == 0 || (n >= 0 && k != n) {
			return -1
		} else {
			n = k
		}
	}
	best, bestSum := -1, 0.0
	for i := 0; i < n; i++ {
		sum := 0.0
		for _, u := range units {
			sum += b[name][u][i]
		}
		if best < 0 || sum < bestSum {
			best, bestSum = i, sum
		}
	}
	return best
}
