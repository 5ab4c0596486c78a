package switchd

import (
	"strconv"
	"sync/atomic"

	"github.com/ccbed/ccbed/internal/ring"
	"github.com/ccbed/ccbed/wire"
)

// Sample is one telemetry point of one port.
type Sample struct {
	TNs         int64   // engine time, ns
	Port        int     // port index
	QueueBytes  int64   // egress data queue
	FairRateBps float64 // RoCC fair rate; negative when the port's CP has none
	// PrioBytes are the bytes in each priority's data queue (they sum to
	// QueueBytes).
	PrioBytes [wire.PFCPriorities]int64
}

// PFCEvent is one change of a lossless priority of an ingress port: XOFF
// (the switch paused the port's peer for it) or XON (resumed it). Pause
// refreshes are not events.
type PFCEvent struct {
	TNs  int64 // engine time, ns
	Port int32 // the ingress port whose peer is paused or resumed
	Prio uint8 // the priority
	XOFF bool  // true: XOFF; false: XON
	// IngressBytes are the priority's bytes from the port held in the
	// switch at the change (with several tx shards, those on the shard of
	// the port's egress), headroom included.
	IngressBytes int64
}

// Ring is a single-producer (tx+CC lcore), single-consumer (the results
// writer) ring of records: telemetry samples (SampleRing), PFC events. A
// full ring drops the new record and counts it.
type Ring[T any] struct {
	r       *ring.SPSC[T]
	dropped atomic.Uint64
}

// SampleRing is the ring of a shard's telemetry samples.
type SampleRing = Ring[Sample]

// NewSampleRing makes a ring of at least n samples.
func NewSampleRing(n int) *SampleRing { return NewRing[Sample](n) }

// NewRing makes a ring of at least n records.
func NewRing[T any](n int) *Ring[T] { return &Ring[T]{r: ring.New[T](max(n, 2))} }

func (r *Ring[T]) push(s *T) {
	p := r.r.Slot()
	if p == nil {
		r.dropped.Add(1)
		return
	}
	*p = *s
	r.r.Commit()
}

// Drain calls fn on every record written so far, oldest first, and returns how
// many. One reader at a time.
func (r *Ring[T]) Drain(fn func(*T)) int { return r.r.Drain(fn) }

// Dropped is the number of records lost to a full ring.
func (r *Ring[T]) Dropped() uint64 { return r.dropped.Load() }

// Snapshot is the switch's counters at one time.
type Snapshot struct {
	Ports          []PortCounters `json:"ports"`
	SamplesDropped uint64         `json:"samples_dropped"`
	// PFCEventsDropped counts PFC events (PFCEvents) lost to a full ring.
	PFCEventsDropped uint64 `json:"pfc_events_dropped,omitempty"`
}

// Results is the JSON the switch writes: at start (to check that it can), every
// few seconds while it runs (a checkpoint: Final false, so that a SIGKILL
// loses only the last seconds), and on exit (Final true).
type Results struct {
	DurationS float64        `json:"duration_s"`
	Mode      string         `json:"mode"`
	Counters  Snapshot       `json:"counters"`
	Lcores    []LcoreResults `json:"lcores,omitempty"`
	// Final is true only in the file written at a clean exit; a file with
	// Final false is a checkpoint of a run that is still going or was killed.
	Final bool `json:"final"`
	// Interrupted is true when SIGINT or SIGTERM ended the run (Signal names
	// it), false when it ran its -duration or, in a checkpoint, still runs.
	Interrupted bool   `json:"interrupted"`
	Signal      string `json:"signal,omitempty"`
	// CSVRows is the number of rows in the telemetry CSV; CSVDecimatedFromUs,
	// when not nil, the engine time from which it holds one row per port per
	// window (switchd/daemon's CSVWriter.SetDecimation) instead of every
	// sample.
	CSVRows            uint64   `json:"csv_rows,omitempty"`
	CSVDecimatedFromUs *float64 `json:"csv_decimated_from_us,omitempty"`
	// PFCRows is the number of rows in the PFC event log (pfc.csv): the
	// XOFF and XON events written, those lost to a full ring aside
	// (Counters.PFCEventsDropped).
	PFCRows uint64 `json:"pfc_rows,omitempty"`
	// ClockOriginUnixNs is the wall-clock time (Unix ns) of the engine's
	// time 0, read as its clock started: the CSV's t_us counts from it, so a
	// run's series can be put on another node's time base (testbed collect).
	// 0: not recorded.
	ClockOriginUnixNs int64 `json:"clock_origin_unix_ns,omitempty"`
}

// LcoreResults is one loop's statistics (from lcore.Stats).
type LcoreResults struct {
	Name       string `json:"name"`
	Lcore      uint   `json:"lcore"`
	Iterations uint64 `json:"iterations"`
	BusyPolls  uint64 `json:"busy_polls"`
	Work       uint64 `json:"packets"`
	MaxStallNs int64  `json:"max_stall_ns"`
	Panic      string `json:"panic,omitempty"`
}

// SummaryLine is the one-line console summary of the interval from prev to cur
// (dtS seconds): rates per port, queue, drops, marks, feedback and pauses.
func SummaryLine(tS, dtS float64, prev, cur *Snapshot) string {
	return string(AppendSummaryLine(nil, tS, dtS, prev, cur))
}

// AppendSummaryLine appends SummaryLine's text to b (no newline) and returns
// it; with a reused b it allocates nothing, so that a long-running switch's
// console leaves no garbage behind.
func AppendSummaryLine(b []byte, tS, dtS float64, prev, cur *Snapshot) []byte {
	b = append(b, "t="...)
	b = appendPadded(b, tS, 1, 6)
	b = append(b, 's')
	var zero PortCounters
	for i := range cur.Ports {
		c := &cur.Ports[i]
		p := &zero
		if prev != nil && i < len(prev.Ports) {
			p = &prev.Ports[i]
		}
		mpps := float64(c.TxPackets-p.TxPackets) / dtS / 1e6
		gbps := float64(c.TxBytes-p.TxBytes) * 8 / dtS / 1e9
		b = append(b, " | "...)
		b = append(b, c.Name...)
		b = append(b, " tx "...)
		b = strconv.AppendFloat(b, mpps, 'f', 3, 64)
		b = append(b, "Mpps "...)
		b = strconv.AppendFloat(b, gbps, 'f', 2, 64)
		b = append(b, "Gb/s q "...)
		b = strconv.AppendUint(b, c.QueueBytes, 10)
		b = append(b, "B drop "...)
		b = strconv.AppendUint(b, c.DropsTotal-p.DropsTotal, 10)
		b = append(b, " mark "...)
		b = strconv.AppendUint(b, c.ECNMarkedTotal-p.ECNMarkedTotal, 10)
		b = append(b, " fb "...)
		b = strconv.AppendUint(b, c.FeedbackSent-p.FeedbackSent, 10)
		b = append(b, " pfc "...)
		b = strconv.AppendUint(b, c.PausesSent-p.PausesSent, 10)
		b = append(b, '/')
		b = strconv.AppendUint(b, c.PausesRecv-p.PausesRecv, 10)
		if c.FairRateGbps > 0 {
			b = append(b, " F "...)
			b = strconv.AppendFloat(b, c.FairRateGbps, 'f', 2, 64)
			b = append(b, "Gb/s"...)
		}
	}
	return b
}

// appendPadded appends v with prec decimals, right-aligned in width (%*.*f).
func appendPadded(b []byte, v float64, prec, width int) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	if pad := width - (len(b) - n); pad > 0 {
		for i := 0; i < pad; i++ {
			b = append(b, ' ')
		}
		copy(b[n+pad:], b[n:len(b)-pad])
		for i := 0; i < pad; i++ {
			b[n+i] = ' '
		}
	}
	return b
}

// SnapshotInto is Snapshot into s, reusing s.Ports: a control plane that
// polls the counters every second allocates nothing after the first call.
func (e *Engine) SnapshotInto(s *Snapshot) {
	if cap(s.Ports) < e.n {
		s.Ports = make([]PortCounters, e.n)
	}
	s.Ports = s.Ports[:e.n]
	s.SamplesDropped = e.samplesDropped()
	s.PFCEventsDropped = e.pfcEventsDropped()
	for i := range s.Ports {
		pc := &s.Ports[i]
		*pc = PortCounters{}
		pc.Port, pc.Name, pc.Scheme = i, e.eg[i].name, e.eg[i].scheme
		pc.fill(&e.ing[i].pub, &e.eg[i].pub)
	}
}

// DrainSamples calls fn on every telemetry sample the tx shards wrote since
// the last drain, each shard's oldest first, and returns how many: the
// control plane's read of the sample rings (one reader at a time). It
// allocates nothing.
func (e *Engine) DrainSamples(fn func(*Sample)) int {
	n := 0
	for k := range e.tx {
		n += e.tx[k].samples.Drain(fn)
	}
	return n
}

// DrainPFCEvents calls fn on every XOFF and XON event the tx shards wrote
// since the last drain, each shard's in time order, and returns how many
// (one reader at a time). A ring nobody drains fills and counts the rest
// as dropped (Snapshot.PFCEventsDropped). It allocates nothing.
func (e *Engine) DrainPFCEvents(fn func(*PFCEvent)) int {
	n := 0
	for k := range e.tx {
		n += e.tx[k].pfcEvents.Drain(fn)
	}
	return n
}
