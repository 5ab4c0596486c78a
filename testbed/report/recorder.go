// Package report turns the series a testbed run records into ccbed's results
// contract, the files every run writes into results/<experiment>/
// (docs/results.md: every file and column, null semantics, how a directory is
// staged and renamed into place): summary.json (summary.go), queue.csv, rate.csv,
// fairrate.csv, fct.csv (their headers in files.go), PNG plots of the same and
// a short human summary table.
//
// It sits at the very end of the pipeline, on the control plane: the runner
// samples switch and host counters on a fixed period (never per packet) and
// feeds a Recorder while the experiment runs or afterwards. The package is
// pure Go; it knows nothing about DPDK or the engines.
//
// Conventions, used by every file the package writes:
//   - time is t_us, microseconds since the start of the measured run
//     (t = 0 is the first sample the runner takes);
//   - the run lasts Meta.DurationS seconds, or, when that is zero, up to the
//     latest sample recorded;
//   - the steady half is t_us >= duration/2 ("steady_*" = last half of the run);
//   - samples of one series are assumed evenly spaced (one sampling period),
//     so the mean of the samples is the time average.
package report

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ccbed/ccbed/internal/idmap"
)

// Meta describes the run a Recorder records.
type Meta struct {
	// Experiment is the experiment's name (results/<experiment>/).
	Experiment string
	// Scheme is the CC scheme's registry name (ccalgo.Lookup).
	Scheme string
	// DurationS is the length of the measured run in seconds; zero means
	// "up to the latest sample recorded".
	DurationS float64
	// WarmupS is how long traffic ran before t = 0 (before recording started);
	// informational, written as "warmup_s" when non-zero.
	WarmupS float64
	// Scaling states a link-rate scaling applied to the experiment (for
	// example "links 1 Gb/s instead of 10 Gb/s, times scaled x10"); written
	// as "scaling" when non-empty.
	Scaling string
	// Notes is free text written as "notes" when non-empty.
	Notes string
	// Clock is the driver that ran the experiment: "virtual" (discrete events
	// in virtual time) or "dpdk" (real time on lcores).
	Clock string
	// Seed is the run's random seed (workload generators).
	Seed uint64
	// Topology describes the network ("star of 4 hosts", ...).
	Topology string
	// LinkGbps is the hosts' line rate (the fastest host link), the C that
	// rates are normalised to when runs are compared.
	LinkGbps float64
	// StartedAt is when the run started (written in UTC).
	StartedAt time.Time
	// Config is the experiment file as run; nil when there is none.
	Config *ConfigSnapshot
	// Build and Machine say what ran it (ThisBuild, ThisMachine).
	Build   BuildInfo
	Machine MachineInfo
	// Lcores are the lcores' loop statistics (DPDK clock).
	Lcores []LcoreSummary
	// LinkLosses are the frames the links lost to injected failures
	// (virtual time: a loss rate, links taken down).
	LinkLosses []LinkLossSummary
	// Interrupted is true when the run stopped before its duration
	// (SetInterrupted).
	Interrupted bool
	// Degraded are the reasons the results may be wrong (MarkDegraded).
	Degraded []string
}

// FlowInfo is what the runner knows about one flow besides its rate samples.
type FlowInfo struct {
	// ID is the flow's id, the "flow" column of rate.csv and fct.csv.
	ID int
	// Src and Dst name the flow's endpoints (host names or addresses).
	Src, Dst string
	// Bytes is the number of payload bytes delivered to the receiver.
	Bytes int64
	// FCTUs is the flow's completion time in microseconds; zero when the flow
	// did not complete (long-lived flow), in which case the mean of the FCT
	// records added for this flow id, if any, is used.
	FCTUs float64
}

// PortCounters are one switch port's event counters at the end of the run.
type PortCounters struct {
	// ID is the switch port's index, the "port" column of queue.csv.
	ID int
	// Name names the port in the topology ("s0.p3": switch s0's port 3); empty
	// for a one-switch experiment, whose ids are the port numbers.
	Name string
	// PFCPauses counts PFC pause frames the port sent (refreshes included).
	PFCPauses uint64
	// PFCActivations counts the times a priority of the port's ingress went
	// into XOFF (a pause episode, however long).
	PFCActivations uint64
	// PFCPausesByPrio and PFCActivationsByPrio split PFCPauses and
	// PFCActivations by the priority paused; nil when the source does not
	// say (a real node's switchd JSON).
	PFCPausesByPrio, PFCActivationsByPrio *[8]uint64
	// PFCPausesReceived counts PFC pause frames the port received.
	PFCPausesReceived uint64
	// PausedUs is the time the port's egress held data because a received
	// pause stopped its priority.
	PausedUs float64
	// Drops counts packets the port's egress queue dropped.
	Drops uint64
	// ECNMarked counts packets the port's CP marked (ECN CE or TCD marks).
	ECNMarked uint64
	// CNPsSent counts congestion notifications the port's CP generated
	// (RoCC CNPs, P4QCN/QCN feedback packets).
	CNPsSent uint64
}

// FCTRecord is one completed flow: its size, completion time and slowdown.
type FCTRecord struct {
	// Flow is the flow's id.
	Flow int
	// Src and Dst name the flow's endpoints ("" when unknown).
	Src, Dst string
	// StartUs is when the flow (message) was posted, on the run's time base;
	// NaN when unknown.
	StartUs float64
	// SizeBytes is the flow's size.
	SizeBytes int64
	// FCTUs is its completion time in microseconds.
	FCTUs float64
	// Slowdown is FCTUs over the flow's ideal FCT (see Slowdown).
	Slowdown float64
	// Priority is the flow's traffic class (0-7) when HasPriority; the
	// summary's per-class FCT buckets count it there.
	Priority    int
	HasPriority bool
}

// Recorder collects the series and counters of one run and writes the
// results contract. Its methods are safe for concurrent use, and are meant
// for the control plane: adding a sample appends it to a bounded buffer and
// allocates nothing once the buffer has grown.
//
// A runner that knows where its files go calls Stream at the start: the
// rows are then written to queue.csv, rate.csv, fairrate.csv and fct.csv as
// Advance passes their time, and summarized as they are written, so the
// Recorder holds the network's state (a few numbers a series, a count per
// distinct queue length, 16 bytes an FCT record, a plot's bounded copy),
// never the run's history. Without Stream, the rows wait until WriteFiles
// (or WriteAll), which streams them then.
type Recorder struct {
	mu                sync.Mutex
	meta              Meta
	queue, rate, fair *table   // rows of queue.csv, rate.csv, fairrate.csv
	prioQueue, pfc    *table   // rows of queue_prio.csv, pfc.csv
	all               []*table // every table: those with statistics (tables), then pfc
	fct               fctTable
	flows             idmap.Map[int, FlowInfo]
	ports             map[int]PortCounters
	nonFinite         int
	refs              map[string][]RefLine // plot file -> reference lines
	// dir is where the files stream ("" until Stream or WriteFiles); durUs
	// the run's length the written rows' steady halves assume; done is set
	// once the files are complete.
	dir   string
	durUs float64
	done  bool
}

// NewRecorder returns an empty Recorder for the run described by meta.
func NewRecorder(meta Meta) *Recorder {
	r := &Recorder{
		meta:      meta,
		queue:     newTable(QueueCSVFile, QueueCSVHeader, appendQueueValues, true),
		rate:      newTable(RateCSVFile, RateCSVHeader, appendRateValues, false),
		fair:      newTable(FairRateCSVFile, FairRateCSVHeader, appendFairValues, false),
		prioQueue: newTable(PrioQueueCSVFile, PrioQueueCSVHeader, appendQueueValues, true),
		pfc:       newTable(PFCCSVFile, PFCCSVHeader, appendPFCValues, false),
		ports:     make(map[int]PortCounters),
	}
	r.prioQueue.byPrio, r.pfc.byPrio = true, true
	r.all = []*table{r.queue, r.rate, r.fair, r.prioQueue, r.pfc}
	return r
}

// AddReference draws a horizontal reference line on the plot named plot
// (QueuePlotFile: y in bytes; RatePlotFile, FairPlotFile: y in Gb/s), e.g. a
// scheme's target queue or a fair share. Non-finite or negative values are
// ignored.
func (r *Recorder) AddReference(plot string, ref RefLine) {
	if math.IsNaN(ref.Y) || math.IsInf(ref.Y, 0) || ref.Y < 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs == nil {
		r.refs = make(map[string][]RefLine)
	}
	r.refs[plot] = append(r.refs[plot], ref)
}

// Meta returns the run's description.
func (r *Recorder) Meta() Meta {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.meta
}

// SetDuration sets the run's length in seconds (for a runner that learns it
// only at the end).
func (r *Recorder) SetDuration(seconds float64) {
	r.mu.Lock()
	r.meta.DurationS = seconds
	r.mu.Unlock()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// AddQueueSample records port's egress queue length, in bytes, at tUs.
func (r *Recorder) AddQueueSample(tUs float64, port int, bytes int64) {
	r.mu.Lock()
	if finite(tUs) {
		r.queue.add(row{t: tUs, id: port, v: float64(bytes), rp: math.NaN(), win: math.NaN()})
	} else {
		r.nonFinite++
	}
	r.mu.Unlock()
}

// AddPrioQueueSample records the bytes in priority prio's (0-7) queue of
// port's egress at tUs.
func (r *Recorder) AddPrioQueueSample(tUs float64, port, prio int, bytes int64) {
	r.mu.Lock()
	if finite(tUs) && prio >= 0 && prio <= 7 && port >= 0 {
		r.prioQueue.add(row{t: tUs, id: port<<3 | prio, v: float64(bytes), rp: math.NaN(), win: math.NaN()})
	} else {
		r.nonFinite++
	}
	r.mu.Unlock()
}

// AddPFCEvent records an XOFF (xoff true) or XON of priority prio (0-7) of
// ingress port at tUs, with the priority's bytes from the port the switch
// held then.
func (r *Recorder) AddPFCEvent(tUs float64, port, prio int, xoff bool, ingressBytes int64) {
	r.mu.Lock()
	if finite(tUs) && prio >= 0 && prio <= 7 && port >= 0 {
		ev := 0.0
		if xoff {
			ev = 1
		}
		r.pfc.add(row{t: tUs, id: port<<3 | prio, v: float64(ingressBytes), rp: ev, win: math.NaN()})
	} else {
		r.nonFinite++
	}
	r.mu.Unlock()
}

// AddRateSample records flow's goodput, in Gb/s, over the sampling period
// ending at tUs, with no sender rate or window (AddRate).
func (r *Recorder) AddRateSample(tUs float64, flow int, gbps float64) {
	r.AddRate(RateSample{TUs: tUs, Flow: flow, GoodputGbps: gbps, RateGbps: math.NaN(), WindowBytes: -1})
}

// RateSample is one row of rate.csv: a flow's goodput over the sampling
// period ending at TUs, and its sender's rate and window at TUs.
type RateSample struct {
	TUs  float64
	Flow int
	// GoodputGbps is the bytes acknowledged in the period over its length.
	GoodputGbps float64
	// RateGbps is the rate the flow's reaction point set (its pacer's
	// rate); NaN when unknown.
	RateGbps float64
	// WindowBytes is the RP's window; negative when it has none.
	WindowBytes int64
}

// AddRate records s. A NaN or infinite time or goodput rejects the sample
// (Rejected); a NaN or infinite sender rate records it as unknown.
func (r *Recorder) AddRate(s RateSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !finite(s.TUs) || !finite(s.GoodputGbps) {
		r.nonFinite++
		return
	}
	rp, win := s.RateGbps, math.NaN()
	if !finite(rp) {
		rp = math.NaN()
	}
	if s.WindowBytes >= 0 {
		win = float64(s.WindowBytes)
	}
	r.rate.add(row{t: s.TUs, id: s.Flow, v: s.GoodputGbps, rp: rp, win: win})
}

// AddFairRate records the fair rate, in Gb/s, that port's CP computed at tUs
// (RoCC's F; other schemes have none).
func (r *Recorder) AddFairRate(tUs float64, port int, gbps float64) {
	r.mu.Lock()
	if finite(tUs) && finite(gbps) {
		r.fair.add(row{t: tUs, id: port, v: gbps, rp: math.NaN(), win: math.NaN()})
	} else {
		r.nonFinite++
	}
	r.mu.Unlock()
}

// AddFCT records one completed flow of size bytes, its completion time in
// microseconds and its slowdown (see Slowdown), with no endpoints or start
// time (AddFCTRecord).
func (r *Recorder) AddFCT(flow int, size int64, fctUs, slowdown float64) {
	r.AddFCTRecord(FCTRecord{Flow: flow, SizeBytes: size, StartUs: math.NaN(), FCTUs: fctUs, Slowdown: slowdown})
}

// AddFCTRecord records one completed flow, from source 0
// (AddFCTRecordFrom).
func (r *Recorder) AddFCTRecord(rec FCTRecord) { r.AddFCTRecordFrom(0, rec) }

// AddFCTRecordFrom records one completed flow that source (the host that
// completed it, from 0) reported. fct.csv lists the records by source in
// increasing order, each source's in the order added. A NaN or infinite
// FCT or slowdown rejects it (Rejected); a NaN or infinite start records it
// as unknown.
func (r *Recorder) AddFCTRecordFrom(source int, rec FCTRecord) {
	r.mu.Lock()
	if finite(rec.FCTUs) && finite(rec.Slowdown) && source >= 0 {
		if !finite(rec.StartUs) {
			rec.StartUs = math.NaN()
		}
		r.fct.pending = append(r.fct.pending, sourcedFCT{source, rec})
	} else {
		r.nonFinite++
	}
	r.mu.Unlock()
}

// MarkDegraded records a reason the results may be wrong (summary.json's
// degraded_reasons); any reason makes the run degraded.
func (r *Recorder) MarkDegraded(format string, args ...any) {
	r.mu.Lock()
	r.meta.Degraded = append(r.meta.Degraded, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// SetInterrupted records whether the run stopped before its duration.
func (r *Recorder) SetInterrupted(interrupted bool) {
	r.mu.Lock()
	r.meta.Interrupted = interrupted
	r.mu.Unlock()
}

// SetLcores records the lcores' loop statistics (DPDK clock).
func (r *Recorder) SetLcores(ls []LcoreSummary) {
	r.mu.Lock()
	r.meta.Lcores = ls
	r.mu.Unlock()
}

// SetFlow records (or replaces) what is known about flow f.ID.
func (r *Recorder) SetFlow(f FlowInfo) {
	r.mu.Lock()
	r.flows.Set(f.ID, f)
	r.mu.Unlock()
}

// SetPortCounters records (or replaces) switch port c.ID's counters.
func (r *Recorder) SetPortCounters(c PortCounters) {
	r.mu.Lock()
	r.ports[c.ID] = c
	r.mu.Unlock()
}

// Rejected returns how many samples were ignored because a time or value was
// NaN or infinite (JSON cannot carry them and they would poison the means).
func (r *Recorder) Rejected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nonFinite
}

// Samples returns the number of queue, rate and fair-rate samples and FCT
// records recorded (written or not yet).
func (r *Recorder) Samples() (queue, rate, fair, fct int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queue.rows(), r.rate.rows(), r.fair.rows(), r.fct.written + len(r.fct.pending)
}

// IdealFCTUs is the completion time, in microseconds, of a flow of sizeBytes
// alone on an empty path: one base RTT plus the serialisation time at
// linkGbps.
func IdealFCTUs(sizeBytes int64, linkGbps, baseRTTUs float64) float64 {
	return baseRTTUs + float64(sizeBytes)*8/(linkGbps*1e3)
}

// Slowdown is fctUs over IdealFCTUs(sizeBytes, linkGbps, baseRTTUs); it is
// not clipped at 1. It returns 0 when the ideal FCT is not positive.
func Slowdown(fctUs float64, sizeBytes int64, linkGbps, baseRTTUs float64) float64 {
	ideal := IdealFCTUs(sizeBytes, linkGbps, baseRTTUs)
	if !(ideal > 0) || math.IsInf(ideal, 0) {
		return 0
	}
	return fctUs / ideal
}

// SetMeta replaces the run's description (for a runner that learns what
// produced the run, or what degraded it, after recording).
func (r *Recorder) SetMeta(m Meta) {
	r.mu.Lock()
	r.meta = m
	r.mu.Unlock()
}
