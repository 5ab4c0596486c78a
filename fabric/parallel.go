package fabric

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/node"
	"github.com/ccbed/ccbed/switchd"
)

// Parallel is how Virtual.SetParallel runs a fabric: in partitions, each a
// logical process with its own agenda and frame store, run by Workers
// goroutines in conservative windows (docs/fabric.md). The results are the
// serial driver's, byte for byte, whatever the workers and partitions.
type Parallel struct {
	// Workers is the number of goroutines that run the partitions.
	Workers int
	// Partition is what the partitions are made of.
	Partition Partitioning
	// Groups, when above 0, deals the partitions into this many groups of
	// even load, each partition's load the line rate of its nodes' ports
	// (dealGroups).
	Groups int
}

// Partitioning says what a partition of the parallel driver holds.
type Partitioning int

const (
	// PartitionAuto is PartitionSwitch with two workers or more, and the
	// serial driver with one (unless Groups asks for partitions).
	PartitionAuto Partitioning = iota
	// PartitionSwitch is a switch with the hosts linked to it.
	PartitionSwitch
	// PartitionNode is every host and every switch alone.
	PartitionNode
)

// BoundWorkers are the worker counts ParallelStats bounds the speedup for.
var BoundWorkers = [...]int{2, 4, 8, 16, 32, 64}

// ParallelStats is what the parallel driver measured of its run: the
// parallelism the partitioning exposes, counted in events, and what the
// synchronisation between windows cost on this machine.
type ParallelStats struct {
	// Workers and Partitions are the run's; LookaheadNs its window length
	// (the smallest delay of a link between two partitions).
	Workers, Partitions int
	LookaheadNs         int64
	// Windows is the number of windows run.
	Windows int64
	// Work is every partition's events summed over the windows; MaxWork
	// the busiest partition's events in each window, summed.
	Work, MaxWork int64
	// Bound[i] is, summed over the windows, the events the busiest of
	// BoundWorkers[i] workers runs at best: the larger of the busiest
	// partition's and an even share of the window's.
	Bound [len(BoundWorkers)]float64
	// WallNs is the run's wall time; SyncNs the part of it no worker spent
	// running partitions: each window's wall time beyond its busiest
	// worker's, summed (the barrier, the work between windows, waking).
	WallNs, SyncNs int64
	// BusyNs is each worker's time running partitions.
	BusyNs []int64
}

// Parallelism is the speedup an unlimited number of cores could reach over
// one, synchronisation aside: Work / MaxWork.
func (s *ParallelStats) Parallelism() float64 {
	return float64(s.Work) / float64(max(s.MaxWork, 1))
}

// SpeedupBound is the speedup BoundWorkers[i] workers could reach over one,
// synchronisation aside.
func (s *ParallelStats) SpeedupBound(i int) float64 {
	return float64(s.Work) / max(s.Bound[i], 1)
}

// SyncPerWindow is the mean synchronisation cost of a window.
func (s *ParallelStats) SyncPerWindow() time.Duration {
	return time.Duration(s.SyncNs / max(s.Windows, 1))
}

// String is the statistics in a few words: workers and their busy share,
// partitions, the exposed parallelism and the synchronisation cost.
func (s *ParallelStats) String() string {
	b := fmt.Sprintf("%d workers (busy", s.Workers)
	for _, ns := range s.BusyNs {
		b += fmt.Sprintf(" %.0f%%", 100*float64(ns)/float64(max(s.WallNs, 1)))
	}
	return b + fmt.Sprintf("), %d partitions, lookahead %d ns, parallelism %.1fx (16 workers %.1fx, 64 workers %.1fx), sync %.2f us/window over %d windows",
		s.Partitions, s.LookaheadNs, s.Parallelism(), s.SpeedupBound(3), s.SpeedupBound(5), float64(s.SyncPerWindow())/1e3, s.Windows)
}

// clone is a copy of s that shares nothing with it.
func (s *ParallelStats) clone() *ParallelStats {
	c := *s
	c.BusyNs = append([]int64(nil), s.BusyNs...)
	return &c
}

// part is a partition: a logical process and the cut wires into it.
type part struct {
	lp
	in   []int32 // the cut wires into the partition
	next int64   // after a window: its earliest event or posted frame
	work int64   // events in the last window
}

// worker is a worker's busy time: in all, and in the last window.
type worker struct {
	busy, win int64
	_         [48]byte // one cache line each
}

// queue is a worker's own partitions (the i-th partition is worker i mod
// workers') and the next one not yet claimed in the window. A worker runs
// its own queue, then takes what is left of the others': a partition stays
// on one core while the load is even (its engines and frames stay in that
// core's caches: dealing the partitions afresh each window cost 35 % more
// CPU time per event on the 128-host leaf-spine), and moves when it is not.
type queue struct {
	parts []*part
	next  atomic.Int64
	_     [40]byte
}

// parallel is the parallel driver's state.
type parallel struct {
	parts   []*part
	workers []worker
	bar     barrier
	queues  []queue
	// The window every partition runs: its events before winEnd, posting
	// into side parity of the mailboxes. stop ends the run.
	winEnd int64
	parity int
	stop   bool
	stats  ParallelStats
	// The run's.
	v           *Virtual
	ctx         context.Context
	end         int64
	nextDrain   int64
	progress    func(Progress)
	pace        PaceMeter
	started     time.Time
	nextReport  time.Time
	windowStart time.Time
	err         error
	betweenFunc func()
	lookaheadNs int64
	wg          sync.WaitGroup
}

// SetParallel runs the fabric as c says from now on; call it before Run.
// With one worker, or a fabric of one partition, and neither Partition nor
// Groups set, the run is the serial driver's. Failures work with any
// partitioning; a capture needs the serial driver: a data frame's payload
// after its data header is whatever its buffer held before (hostd writes
// only the headers), so the captured bytes depend on which buffer a store
// hands out, and partitions have stores of their own.
func (v *Virtual) SetParallel(c Parallel) error {
	switch {
	case v.now != 0 || v.events != 0:
		return fmt.Errorf("fabric: SetParallel after Run")
	case c.Workers < 1:
		return fmt.Errorf("fabric: %d workers: want 1 or more", c.Workers)
	case c.Groups < 0:
		return fmt.Errorf("fabric: %d partition groups: want 0 or more", c.Groups)
	case c.Partition < PartitionAuto || c.Partition > PartitionNode:
		return fmt.Errorf("fabric: partitioning %d unknown", c.Partition)
	case v.par != nil:
		return fmt.Errorf("fabric: SetParallel twice")
	case v.capture != nil && !(c.Workers == 1 && c.Partition == PartitionAuto && c.Groups == 0):
		return fmt.Errorf("fabric: a capture needs the serial driver (one worker)")
	case v.trace != nil && !(c.Workers == 1 && c.Partition == PartitionAuto && c.Groups == 0):
		return fmt.Errorf("fabric: a trace needs the serial driver (one worker)")
	}
	if c.Workers == 1 && c.Partition == PartitionAuto && c.Groups == 0 {
		return nil
	}
	of := v.partitionOf(c)
	nparts := 0
	for _, p := range of {
		nparts = max(nparts, int(p)+1)
	}
	if nparts == 1 && c.Partition == PartitionAuto && c.Groups == 0 {
		return nil // one partition: nothing to run in parallel
	}
	r := &parallel{v: v, lookaheadNs: MaxTimeNs}
	local, glob := agendaIndex(v.plan.Topo, of, nparts)
	for i := range nparts {
		r.parts = append(r.parts, &part{lp: lp{nodes: v.nodes, wires: v.wires, faults: v.faults, portBase: v.portBase,
			frames: newFrameStoreChunks(v.frames.room, partitionChunkShift), agenda: newAgenda(len(glob[i])), glob: glob[i],
			out: make([]node.Tx, len(v.out))}})
	}
	nn := len(v.nodes)
	for wi := range v.wires {
		w := &v.wires[wi]
		w.ent, w.toEnt = local[nn+wi], local[w.to]
	}
	// Every node's buffers come from its partition's store from now on.
	for i, hn := range v.hostNodes {
		v.hostNodes[i] = hostd.NewNode(hn.Engine(), r.parts[of[i]].frames)
		v.nodes[i] = v.hostNodes[i]
	}
	for i, sn := range v.swNodes {
		n := len(v.hostNodes) + i
		v.swNodes[i] = switchd.NewNode(sn.Engine(), r.parts[of[n]].frames)
		v.nodes[n] = v.swNodes[i]
	}
	for n := range v.nodes {
		r.parts[of[n]].schedule(n, int(local[n]))
	}
	for n := range v.portBase {
		for wi := v.portBase[n]; wi < v.portBase[n]+v.plan.Topo.NumPorts(n); wi++ {
			w := &v.wires[wi]
			if of[n] != of[w.to] {
				w.mail = new([2]mailbox)
				to := r.parts[of[w.to]]
				to.in = append(to.in, int32(wi))
				r.lookaheadNs = min(r.lookaheadNs, int64(w.delayNs))
			}
		}
	}
	r.workers = make([]worker, c.Workers)
	r.queues = make([]queue, c.Workers)
	for i, p := range r.parts {
		q := &r.queues[i%c.Workers]
		q.parts = append(q.parts, p)
	}
	r.bar.init(c.Workers)
	r.betweenFunc = r.between
	r.stats = ParallelStats{Workers: c.Workers, Partitions: nparts, LookaheadNs: r.lookaheadNs,
		BusyNs: make([]int64, c.Workers)}
	v.par = r
	return nil
}

// agendaIndex numbers each partition's agenda entries, its nodes and the
// wires into them (of[n] is node n's partition), in the fabric's order
// (node n is entry n, wire w entry nodes + w, the wires numbered as
// NewVirtual does, by node then port): glob[i] is partition i's entries by
// their fabric numbers (the partition's lp.glob, which the run only
// reads), local[e] fabric entry e's number in its partition's agenda
// (SetParallel's alone: it gives the wires their ent and toEnt).
func agendaIndex(t *Topology, of []int32, nparts int) (local []int32, glob [][]int32) {
	n := t.NumNodes()
	var owner []int32 // each fabric entry's partition
	owner = append(owner, of...)
	for a := 0; a < n; a++ {
		for port := 0; port < t.NumPorts(a); port++ {
			b, _, _ := t.Peer(a, port)
			owner = append(owner, of[b])
		}
	}
	own := make([]int, nparts)
	for _, i := range owner {
		own[i]++
	}
	glob = make([][]int32, nparts)
	for i := range glob {
		glob[i] = make([]int32, 0, own[i])
	}
	local = make([]int32, len(owner))
	for e, i := range owner {
		local[e] = int32(len(glob[i]))
		glob[i] = append(glob[i], int32(e))
	}
	return local, glob
}

// partitionOf is each node's partition under c: units (a switch with its
// hosts, or a node), the two ends of every link without delay (no
// lookahead) in one, numbered in the order of their first node, then dealt
// into c.Groups (dealGroups).
func (v *Virtual) partitionOf(c Parallel) []int32 { return partitionOf(v.plan.Topo, c) }

// partitionOf is Virtual.partitionOf of a fabric of topology t.
func partitionOf(t *Topology, c Parallel) []int32 {
	n := t.NumNodes()
	unit := make([]int, n)
	for i := range unit {
		unit[i] = i
	}
	find := func(i int) int {
		for unit[i] != i {
			unit[i] = unit[unit[i]]
			i = unit[i]
		}
		return i
	}
	union := func(a, b int) {
		if a, b = find(a), find(b); a != b {
			unit[max(a, b)] = min(a, b)
		}
	}
	for a := 0; a < n; a++ {
		for port := 0; port < t.NumPorts(a); port++ {
			b, _, l := t.Peer(a, port)
			if l.DelayNs <= 0 || (c.Partition != PartitionNode && t.IsHost(a) && !t.IsHost(b)) {
				union(a, b)
			}
		}
	}
	// Number the units by their first node in switch order then host order
	// (a partition of a switch and its hosts is numbered as its switch).
	of := make([]int32, n)
	num := make(map[int]int32, n)
	order := make([]int, 0, n)
	for i := len(t.Hosts); i < n; i++ {
		order = append(order, i)
	}
	for i := 0; i < len(t.Hosts); i++ {
		order = append(order, i)
	}
	for _, i := range order {
		u := find(i)
		k, ok := num[u]
		if !ok {
			k = int32(len(num))
			num[u] = k
		}
		of[i] = k
	}
	if c.Groups > 0 {
		dealGroups(of, len(num), c.Groups, func(i int) float64 {
			var bps float64
			for port := 0; port < t.NumPorts(i); port++ {
				_, _, l := t.Peer(i, port)
				bps += l.Bps
			}
			return bps
		})
	}
	return of
}

// dealGroups deals units 0 .. units-1 (of[i] is node i's) into groups of
// even load, largest first, each to the group with the least so far (the
// lowest such group on a tie), and renumbers of by group. A unit's load is
// its nodes' weight: the line rate of their ports, what a node's events
// follow (every frame a node receives is an event, and its links bound
// what it receives), so that a leaf of 16 hosts is not dealt beside 8 more
// hosts as if it were one of them. The deal depends on the topology only,
// never on the run, and results do not depend on it at all.
func dealGroups(of []int32, units, groups int, weight func(node int) float64) {
	load := make([]float64, units)
	for i, u := range of {
		load[u] += weight(i)
	}
	order := make([]int, units)
	for u := range order {
		order[u] = u
	}
	sort.SliceStable(order, func(a, b int) bool { return load[order[a]] > load[order[b]] })
	group := make([]int32, units)
	sum := make([]float64, groups)
	for _, u := range order {
		g := 0
		for k := 1; k < groups; k++ {
			if sum[k] < sum[g] {
				g = k
			}
		}
		group[u] = int32(g)
		sum[g] += load[u]
	}
	for i, u := range of {
		of[i] = group[u]
	}
}

// runParallel is Run in partitions.
func (v *Virtual) runParallel(ctx context.Context, end int64, progress func(Progress)) error {
	r := v.par
	r.ctx, r.end, r.progress, r.err, r.stop = ctx, end, progress, nil, false
	r.started = time.Now()
	r.windowStart = r.started
	r.nextReport = r.started.Add(time.Second)
	r.nextDrain = v.now + 1_000_000
	r.takeAll()
	for _, p := range r.parts {
		p.posted = math.MaxInt64
		p.next = p.earliest()
	}
	r.plan()
	for w := 1; w < len(r.workers); w++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.work(w)
		}()
	}
	r.work(0)
	r.wg.Wait()
	r.stats.WallNs += time.Since(r.started).Nanoseconds()
	r.takeAll()
	v.events = 0
	for _, p := range r.parts {
		v.events += p.events
		v.now = max(v.now, p.now)
	}
	if r.err != nil {
		v.drainSamples()
		return r.err
	}
	v.now = max(v.now, end)
	v.drainSamples()
	return nil
}

// work is worker w's loop: claim partitions and run their window, then
// wait for the others, until the run stops.
func (r *parallel) work(w int) {
	ws := &r.workers[w]
	for !r.stop {
		t0 := time.Now()
		// Its own partitions first, then those of the others left unclaimed.
		for k := range r.queues {
			q := &r.queues[(w+k)%len(r.queues)]
			for {
				i := int(q.next.Add(1) - 1)
				if i >= len(q.parts) {
					break
				}
				q.parts[i].window(r.winEnd, r.parity)
			}
		}
		ws.win = time.Since(t0).Nanoseconds()
		ws.busy += ws.win
		r.bar.wait(r.betweenFunc)
	}
}

// window takes the frames posted to the partition in the last window, runs
// its events before end, and notes its earliest event after.
func (p *part) window(end int64, parity int) {
	p.take(p.in, parity^1)
	p.parity = parity
	before := p.events
	for p.agenda.len() > 0 {
		e, k := p.agenda.top()
		t := keyTime(k)
		if t >= end {
			break
		}
		p.now = t
		p.events++
		p.step(int(p.glob[e]), e)
	}
	p.work = p.events - before
	p.next = p.earliest()
}

// earliest is the time of the partition's next event or of the earliest
// frame it posted since the driver last reset posted.
func (p *part) earliest() int64 {
	t := p.posted
	if p.agenda.len() > 0 {
		_, k := p.agenda.top()
		t = min(t, keyTime(k))
	}
	return t
}

// takeAll moves every frame posted into flight (between windows).
func (r *parallel) takeAll() {
	for _, p := range r.parts {
		p.take(p.in, 0)
		p.take(p.in, 1)
	}
}

// between runs while every worker waits, after each window: it counts the
// window's work, then plans the next window.
func (r *parallel) between() {
	s := &r.stats
	var sum, most int64
	for _, p := range r.parts {
		sum += p.work
		most = max(most, p.work)
	}
	s.Windows++
	s.Work += sum
	s.MaxWork += most
	for i, w := range BoundWorkers {
		s.Bound[i] += max(float64(most), float64(sum)/float64(w))
	}
	var busiest int64
	for i := range r.workers {
		busiest = max(busiest, r.workers[i].win)
		s.BusyNs[i] = r.workers[i].busy
	}
	r.parity ^= 1
	r.plan()
	now := time.Now()
	s.SyncNs += max(now.Sub(r.windowStart).Nanoseconds()-busiest, 0)
	r.windowStart = now
}

// plan decides the next window from the partitions' earliest events, or
// stops the run: at its end, when ctx ends. At the first event after the
// next drain time it runs that one event alone and drains, as the serial
// driver does, so that the drains are the serial driver's.
func (r *parallel) plan() {
	v := r.v
	next := int64(math.MaxInt64)
	v.events = 0
	for _, p := range r.parts {
		next = min(next, p.next)
		p.posted = math.MaxInt64
		v.events += p.events
	}
	if next > r.end {
		r.stop = true
		return
	}
	if err := r.ctx.Err(); err != nil {
		r.stop, r.err = true, err
		return
	}
	if next >= r.nextDrain {
		r.drainAt()
	}
	r.winEnd = min(next+r.lookaheadNs, r.nextDrain, r.end+1)
	for i := range r.queues {
		r.queues[i].next.Store(0)
	}
	if r.progress != nil {
		if now := time.Now(); now.After(r.nextReport) {
			p := Progress{Clock: ClockVirtual, SimNs: next, EndNs: r.end, Events: v.events, Wall: now.Sub(r.started)}
			v.countFlows(&p)
			r.pace.Fill(&p)
			st := r.stats.clone()
			st.WallNs += p.Wall.Nanoseconds()
			p.Parallel = st
			r.progress(p)
			r.nextReport = now.Add(time.Second)
		}
	}
}

// drainAt runs the earliest event of the fabric alone, then drains at its
// time: what the serial driver does at the first event after a drain time.
func (r *parallel) drainAt() {
	r.takeAll()
	var first *part
	var firstKey uint64
	for _, p := range r.parts {
		if p.agenda.len() > 0 {
			e, k := p.agenda.top()
			if k = entryKey(keyTime(k), int(p.glob[e])); first == nil || k < firstKey { // by the fabric's numbers
				first, firstKey = p, k
			}
		}
	}
	e, _ := first.agenda.top()
	first.parity = r.parity
	first.now = keyTime(firstKey)
	first.events++
	first.step(int(keyID(firstKey)), e)
	first.next = first.earliest()
	v := r.v
	v.events++
	v.now = first.now
	v.drainSamples()
	r.nextDrain = v.now + 1_000_000
}

// frameBuffers is the frame buffers the run's stores hold.
func (v *Virtual) frameBuffers() int {
	if v.par == nil {
		return v.frames.Buffers()
	}
	n := 0
	for _, p := range v.par.parts {
		n += p.frames.Buffers()
	}
	return n
}

// ParallelStats is what the parallel driver measured (nil: the serial
// driver ran).
func (v *Virtual) ParallelStats() *ParallelStats {
	if v.par == nil {
		return nil
	}
	return v.par.stats.clone()
}

// barrier holds n goroutines until all have arrived; the last runs a
// function before letting them go. A waiter spins a while (a window is
// often a few microseconds of work), then sleeps.
type barrier struct {
	n       int32
	arrived atomic.Int32
	gen     atomic.Uint32
	mu      sync.Mutex
	cond    sync.Cond
}

func (b *barrier) init(n int) {
	b.n = int32(n)
	b.cond.L = &b.mu
}

// barrierSpin is how long a waiter spins before it sleeps: longer than
// the imbalance of a typical window (on the 128-host leaf-spine a window is
// ~1 ms of 2 workers' time; 10 us of spin left 12 % of it to waking up,
// 200 us 5 %).
const barrierSpin = 200 * time.Microsecond

// wait arrives at the barrier; the last to arrive runs last, then all go.
func (b *barrier) wait(last func()) {
	g := b.gen.Load()
	if b.arrived.Add(1) == b.n {
		b.arrived.Store(0)
		last()
		b.mu.Lock()
		b.gen.Add(1)
		b.cond.Broadcast()
		b.mu.Unlock()
		return
	}
	var since time.Time
	for i := 1; ; i++ {
		if b.gen.Load() != g {
			return
		}
		if i%64 == 0 {
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) > barrierSpin {
				break
			}
			runtime.Gosched()
		}
	}
	b.mu.Lock()
	for b.gen.Load() == g {
		b.cond.Wait()
	}
	b.mu.Unlock()
}
