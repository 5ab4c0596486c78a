// Package lcore runs Go polling loops on DPDK lcores ("lcore-pinned
// goroutines"): a loop on a worker lcore runs on that lcore's own EAL
// thread (rte_eal_remote_launch of a C trampoline into Go), a loop on the main
// lcore on the main lcore's locked thread. A Group starts loops, stops them all on
// a context, a signal or Stop, and reports per loop its iterations, busy and idle
// polls and the worst stall between two polls.
//
// The control plane reaches a running loop only through the stop flag (checked
// every iteration, a plain load on x86) and rings; counters are written by their
// loop alone and published every 1024 iterations and at exit.
package lcore

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ccbed/ccbed/dpdk"
)

// Poll is one iteration of a loop: it polls its inputs once, does the work, and
// returns how many items (packets) it handled; 0 counts as an idle poll. It must
// not block, allocate or log.
type Poll func() int

// Stats describe one loop.
type Stats struct {
	Name       string
	Lcore      uint
	Iterations uint64 // calls of the Poll
	BusyPolls  uint64 // calls that returned > 0
	IdlePolls  uint64 // calls that returned 0
	Work       uint64 // sum of what the calls returned
	// MaxStallNs is the longest time between the starts of two consecutive
	// polls, the loop's launch (or the group's origin, when the loop
	// launched after it: Group.SetOrigin) counting as the start of a poll
	// before its first, and the group's stop as the start of one after its
	// last: a loop whose thread got no CPU from its launch to the stop
	// stalled for all that time, though it never polled.
	MaxStallNs int64
	Panic      string // the panic that ended the loop (and stopped the group), if any
}

type loop struct {
	name  string
	lcore uint
	poll  Poll
	done  chan struct{}
	// from is the TSC reading its stalls count from: its launch, or the
	// group's origin when that came first.
	from uint64

	iterations, busy, work, maxStallTicks atomic.Uint64
	panicked                              atomic.Pointer[string]
}

// Group is a set of loops started and stopped together.
type Group struct {
	mu    sync.Mutex
	loops []*loop
	used  map[uint]bool
	stop  atomic.Bool
	clock *TSCClock
	// origin is the TSC reading of the loops' common start (SetOrigin; 0:
	// none), stopTick the reading when Stop was first called (0: not yet).
	origin, stopTick atomic.Uint64

	stopOnce sync.Once
	stopped  chan struct{} // closed by Stop
}

// NewGroup makes an empty group. The EAL must be initialised.
func NewGroup() *Group {
	return &Group{used: map[uint]bool{}, clock: NewTSCClock(dpdk.TSCHz()), stopped: make(chan struct{})}
}

// Launch starts poll in a loop on lcore id: a worker lcore, or the main lcore.
// One loop per lcore per group.
func (g *Group) Launch(id uint, name string, poll Poll) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop.Load() {
		return fmt.Errorf("lcore: Launch %s: group already stopped", name)
	}
	if g.used[id] {
		return fmt.Errorf("lcore: Launch %s: lcore %d already runs a loop", name, id)
	}
	enabled := false
	for _, l := range dpdk.Lcores(true) {
		enabled = enabled || l == id
	}
	if !enabled {
		return fmt.Errorf("lcore: Launch %s: lcore %d is not enabled (EAL -l/--lcores)", name, id)
	}
	l := &loop{name: name, lcore: id, poll: poll, done: make(chan struct{}), from: rdtsc()}
	if o := g.origin.Load(); o != 0 && o < l.from {
		l.from = o
	}
	body := func() int {
		defer close(l.done)
		defer running.Add(-1)
		defer func() {
			// A panic must not take the process down without results: record
			// it, stop the group, and let the control plane report it.
			if r := recover(); r != nil {
				msg := fmt.Sprint(r)
				l.panicked.Store(&msg)
				g.Stop()
			}
		}()
		l.run(&g.stop, &g.stopTick)
		return 0
	}
	if id == dpdk.MainLcore() {
		go dpdk.RunOnMainLcore(func() { body() })
	} else {
		if err := dpdk.LaunchOnLcore(id, body); err != nil {
			return fmt.Errorf("lcore: Launch %s on lcore %d: %w", name, id, err)
		}
	}
	g.used[id] = true
	g.loops = append(g.loops, l)
	reserveProcs()
	return nil
}

// running counts the loops of every group in the process.
var running atomic.Int32

// reserveProcs keeps GOMAXPROCS at least two above the number of running
// loops: every busy-polling loop holds one of the runtime's Ps for as long as
// it runs, so without spare Ps the garbage collector, timers, signal handling
// and the control plane would starve. (Loops are also kept free of allocation,
// so that the collector, whose stop-the-world phases pause every lcore, rarely
// runs.) It only ever raises GOMAXPROCS.
func reserveProcs() {
	if n := int(running.Add(1)) + 2; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
}

func (l *loop) run(stop *atomic.Bool, stopTick *atomic.Uint64) {
	var it, busy, work, maxStall uint64
	prev := l.from
	for !stop.Load() {
		n := l.poll()
		now := rdtsc()
		if d := now - prev; d > maxStall {
			maxStall = d
		}
		prev = now
		it++
		if n > 0 {
			busy++
			work += uint64(n)
		}
		if it&1023 == 0 {
			l.publish(it, busy, work, maxStall)
		}
	}
	// The stop is the start of the poll that never came: the time from the
	// last poll's start to it (not to now: a loop off its CPU past the stop
	// lost nothing more) is a stall too.
	if end := min(rdtsc(), stopTick.Load()); end > prev && end-prev > maxStall {
		maxStall = end - prev
	}
	l.publish(it, busy, work, maxStall)
}

func (l *loop) publish(it, busy, work, maxStall uint64) {
	l.iterations.Store(it)
	l.busy.Store(busy)
	l.work.Store(work)
	l.maxStallTicks.Store(maxStall)
}

// Stop asks every loop to return after its current iteration; it does not wait.
func (g *Group) Stop() {
	g.stopTick.CompareAndSwap(0, rdtsc())
	g.stop.Store(true)
	g.stopOnce.Do(func() { close(g.stopped) })
}

// SetOrigin sets the loops' common start, a TSC reading (TSCClock.TSCAt):
// a loop launched after it counts the time from it to its first poll as a
// stall (Stats.MaxStallNs), as a loop that ran from it would have polled
// throughout. A driver whose engines start at a time 0 set before the loops
// launch sets it to time 0: a set-up that overran time 0 delayed every
// loop's first poll past it. Call it before Launch.
func (g *Group) SetOrigin(tsc uint64) { g.origin.Store(tsc) }

// Stopped reports whether Stop was called.
func (g *Group) Stopped() bool { return g.stop.Load() }

// Wait blocks until every loop has returned, then collects the workers (so their
// lcores can be launched again) and returns the final stats.
func (g *Group) Wait() []Stats {
	g.mu.Lock()
	loops := append([]*loop(nil), g.loops...)
	g.mu.Unlock()
	for _, l := range loops {
		<-l.done
		if l.lcore != dpdk.MainLcore() {
			dpdk.WaitLcore(l.lcore)
		}
	}
	return g.Stats()
}

// Stats is a snapshot of every loop's counters (as of its last publication).
func (g *Group) Stats() []Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Stats, len(g.loops))
	for i, l := range g.loops {
		it, busy := l.iterations.Load(), l.busy.Load()
		out[i] = Stats{
			Name: l.name, Lcore: l.lcore,
			Iterations: it, BusyPolls: busy, IdlePolls: it - busy,
			Work: l.work.Load(), MaxStallNs: g.clock.ticksToNs(l.maxStallTicks.Load()),
		}
		if p := l.panicked.Load(); p != nil {
			out[i].Panic = *p
		}
	}
	return out
}

// Run waits until ctx is done, the process gets SIGINT or SIGTERM, or Stop is
// called (by a loop's owner or after a panic), then stops every loop, waits for
// them and returns their stats. The signal is consumed (the process does not
// die), so the caller can still write its results. Run sees only the signals
// that come once it is called: a daemon that says it is running before it
// calls Run passes a ctx from SignalContext, made before it says so.
func (g *Group) Run(ctx context.Context) []Stats {
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-g.stopped:
	}
	g.Stop()
	return g.Wait()
}

// SignalContext returns a context that SIGINT or SIGTERM cancels from now on,
// and that is canceled at once when early, the buffered channel the caller
// gave signal.Notify for them before (to learn later which signal stopped
// it), already holds one: a signal that came while the daemon started up
// still stops it. The signal stays in early for the caller to read; early
// may be nil.
func SignalContext(parent context.Context, early chan os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	select {
	case sig := <-early:
		early <- sig
		cancel()
	default:
	}
	return ctx, cancel
}
