package fabric

import (
	"fmt"
	"math"
	"runtime/metrics"
	"syscall"
	"time"
)

// Progress is what a run reports while it goes.
type Progress struct {
	// Clock is the driver: ClockVirtual ("" too) or ClockDPDK.
	Clock string
	// SimNs is the run's time since its time 0 (simulated time in virtual
	// time), EndNs its end.
	SimNs, EndNs int64
	// Events is the events run so far (virtual time only).
	Events int64
	// Wall is the wall time since the run started.
	Wall time.Duration
	// FlowsDone and FlowsStarted count the hosts' flows (messages) completed
	// and started so far.
	FlowsDone, FlowsStarted uint64
	// SimPerWall and EventsPerS are the run's recent pace: simulated ns per
	// wall ns and events per wall second, each an exponentially weighted
	// mean over about PaceWindow of wall time (0: not measured). A run's
	// pace changes as its load does (a workload that ends early leaves an
	// idle network that runs hundreds of times faster), so the ETA follows
	// the recent pace, not the mean since the start.
	SimPerWall, EventsPerS float64
	// HeapBytes is the Go heap the process holds (live and not yet swept
	// objects); PeakRSSBytes the most memory the process has had resident
	// so far (0: unknown). Together they show whether a run's memory follows
	// the network it simulates or grows with its length.
	HeapBytes, PeakRSSBytes uint64
	// Parallel is what the parallel driver measured so far (nil: the
	// serial driver runs).
	Parallel *ParallelStats
}

// PaceWindow is the wall time over which Progress's recent pace is averaged.
const PaceWindow = 10 * time.Second

// PaceMeter turns a run's successive progress reports into its recent pace
// and memory figures. The zero value is ready; a driver keeps one per run and
// passes each report through Fill before handing it on.
type PaceMeter struct {
	last       Progress
	started    bool
	sim, evs   float64 // smoothed paces
	memSamples []metrics.Sample
}

// Fill sets p's recent pace from the reports before it, and its memory
// figures from the process.
func (m *PaceMeter) Fill(p *Progress) {
	if m.started {
		if dt := p.Wall - m.last.Wall; dt > 0 {
			sim := float64(p.SimNs-m.last.SimNs) / float64(dt.Nanoseconds())
			evs := float64(p.Events-m.last.Events) / dt.Seconds()
			a := 1 - math.Exp(-dt.Seconds()/PaceWindow.Seconds())
			if m.sim == 0 && m.evs == 0 {
				a = 1 // the first interval is the whole estimate
			}
			m.sim += a * (sim - m.sim)
			m.evs += a * (evs - m.evs)
		}
	} else if p.Wall > 0 {
		// The first report: the pace since the start.
		m.sim = float64(p.SimNs) / float64(p.Wall.Nanoseconds())
		m.evs = float64(p.Events) / p.Wall.Seconds()
	}
	m.started, m.last = true, *p
	p.SimPerWall, p.EventsPerS = m.sim, m.evs
	p.HeapBytes, p.PeakRSSBytes = m.memory()
}

// memory is the Go heap the process holds and its peak resident set.
func (m *PaceMeter) memory() (heap, peakRSS uint64) {
	if m.memSamples == nil {
		m.memSamples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	}
	metrics.Read(m.memSamples)
	if v := m.memSamples[0].Value; v.Kind() == metrics.KindUint64 {
		heap = v.Uint64()
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil && ru.Maxrss > 0 {
		peakRSS = uint64(ru.Maxrss) * 1024 // Linux reports KiB
	}
	return heap, peakRSS
}

// Done is the share of the run done, in [0, 1].
func (p Progress) Done() float64 {
	return min(max(float64(p.SimNs)/float64(max(p.EndNs, 1)), 0), 1)
}

// ETA is the wall time left (-1: not known yet): at the recent pace when it
// is known, else at the mean pace since the start.
func (p Progress) ETA() time.Duration {
	if p.SimPerWall > 0 {
		left := float64(max(p.EndNs-p.SimNs, 0)) / p.SimPerWall
		return time.Duration(min(left, float64(math.MaxInt64/2))).Round(time.Second)
	}
	done := p.Done()
	if done <= 0 {
		return -1
	}
	return time.Duration(float64(p.Wall) * (1 - done) / done).Round(time.Second)
}

// String is a one-line progress report: the run's time, share done, flows
// done, in virtual time events per second of wall time and simulated seconds
// per wall second (recent, when measured, else since the start), memory when
// known, and the time left at the recent pace.
func (p Progress) String() string {
	eta := "?"
	if d := p.ETA(); d >= 0 {
		eta = d.String()
	}
	clock := p.Clock
	if clock == "" {
		clock = ClockVirtual
	}
	s := fmt.Sprintf("%s %.3f ms of %.3f ms (%.0f%%), flows %d of %d done", clock,
		float64(p.SimNs)/1e6, float64(p.EndNs)/1e6, 100*p.Done(), p.FlowsDone, p.FlowsStarted)
	if clock == ClockVirtual {
		evs, sim := p.EventsPerS, p.SimPerWall
		if sim <= 0 {
			wall := max(p.Wall.Seconds(), 1e-9)
			evs, sim = float64(p.Events)/wall, float64(p.SimNs)/1e9/wall
		}
		s += fmt.Sprintf(", %.2f M events/s, %.2e sim s / wall s", evs/1e6, sim)
	}
	if p.HeapBytes > 0 {
		s += fmt.Sprintf(", heap %.0f MiB", float64(p.HeapBytes)/(1<<20))
	}
	if p.PeakRSSBytes > 0 {
		s += fmt.Sprintf(", peak RSS %.0f MiB", float64(p.PeakRSSBytes)/(1<<20))
	}
	if p.Parallel != nil {
		s += ", " + p.Parallel.String()
	}
	return s + ", ETA " + eta
}
