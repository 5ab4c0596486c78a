package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Summary is the content of summary.json (docs/results.md). The JSON names
// of Summary, FlowSummary and PortSummary are the results contract's; fields
// tagged omitempty are optional extras. A value that does not exist (an
// unfinished flow's FCT, a fair rate where the scheme has none, a mean over
// no samples) is null, never 0 (OptFloat).
type Summary struct {
	// ResultsVersion is the contract's version (ResultsVersion).
	ResultsVersion int `json:"results_version"`
	// Experiment is Meta.Experiment.
	Experiment string `json:"experiment"`
	// Scheme is Meta.Scheme.
	Scheme string `json:"scheme"`
	// Clock is Meta.Clock: "virtual" or "dpdk".
	Clock string `json:"clock"`
	// Seed is Meta.Seed.
	Seed uint64 `json:"seed"`
	// StartedAt is Meta.StartedAt: when the run started, UTC, RFC 3339.
	StartedAt string `json:"started_at"`
	// DurationS is the run's length (Meta.DurationS, or up to the latest
	// sample).
	DurationS float64 `json:"duration_s"`
	// Interrupted is true when a signal (SIGINT, SIGTERM) or the caller
	// stopped the run before its duration: the results cover the run up to
	// that point.
	Interrupted bool `json:"interrupted"`
	// Degraded is true when something the run measures may be wrong: an
	// lcore stalled, samples or FCT records were dropped, a capture could not
	// keep up, frames were lost on links, clocks disagreed. DegradedReasons
	// says what, one reason per entry; never null.
	Degraded        bool     `json:"degraded"`
	DegradedReasons []string `json:"degraded_reasons"`
	// JainIndex is Jain's fairness index of the steady rates of the flows
	// that shared the whole steady half (with goodput samples before it and
	// in it, and not completed), where it means something (JainApplies):
	// every flow with goodput in the steady half shared all of it, and at
	// least two did. Null otherwise: flows that come and go (a Poisson
	// workload's, an incast's short flows) share no steady state, and
	// their measure is the FCT slowdown (FCTBuckets), not this.
	JainIndex OptFloat `json:"jain_index"`
	// JainFlows is the number of flows that shared the whole steady half,
	// those JainIndex is taken over when it applies.
	JainFlows int `json:"jain_flows"`
	// SteadyFlows is the number of flows with goodput in the steady half
	// (steady_gbps above 0); JainIndex applies when JainFlows equals it.
	SteadyFlows int `json:"steady_flows"`
	// Flows has one entry per flow given by SetFlow or having rate samples,
	// by id; never null.
	Flows []FlowSummary `json:"flows"`
	// Ports has one entry per port given counters or having queue or
	// fair-rate samples, by id; never null.
	Ports []PortSummary `json:"ports"`
	// Config is Meta.Config: the experiment file as run.
	Config *ConfigSnapshot `json:"config,omitempty"`
	// Build is Meta.Build: the ccbed build that wrote the results.
	Build BuildInfo `json:"build"`
	// Machine is Meta.Machine: where the run happened.
	Machine MachineInfo `json:"machine"`

	// SteadyFromS is where the steady half starts, duration_s / 2.
	SteadyFromS float64 `json:"steady_from_s,omitempty"`
	// WarmupS is Meta.WarmupS.
	WarmupS float64 `json:"warmup_s,omitempty"`
	// Scaling is Meta.Scaling.
	Scaling string `json:"scaling,omitempty"`
	// Notes is Meta.Notes.
	Notes string `json:"notes,omitempty"`
	// Topology is Meta.Topology.
	Topology string `json:"topology,omitempty"`
	// LinkGbps is Meta.LinkGbps.
	LinkGbps float64 `json:"link_gbps,omitempty"`
	// Lcores are Meta.Lcores: the lcores' loop statistics (DPDK clock).
	Lcores []LcoreSummary `json:"lcores,omitempty"`
	// SamplesRejected counts samples ignored because a time or value was NaN
	// or infinite (Recorder.Rejected); a non-zero count degrades the run.
	SamplesRejected int `json:"samples_rejected,omitempty"`
	// FCTBuckets is the FCT slowdown by flow size (FCTBuckets with
	// DefaultBucketsPerDecade), when there are FCT records.
	FCTBuckets []FCTBucket `json:"fct_buckets,omitempty"`
	// WorstFlows are the completed flows (messages) with the largest FCT
	// slowdown, worst first, at most MaxWorstFlows (fct.csv has every one).
	WorstFlows []WorstFlow `json:"worst_flows,omitempty"`
	// ClassFCTBuckets are FCTBuckets per traffic class (the flows'
	// priority), in increasing priority; absent unless the completed flows
	// are of more than one class.
	ClassFCTBuckets []ClassFCTBuckets `json:"class_fct_buckets,omitempty"`
	// Captures are the pcap files the run wrote (docs/capture.md), when it
	// captured.
	Captures []CaptureSummary `json:"captures,omitempty"`
	// Trace is the per-packet event trace the run wrote (testbed run
	// -trace, the file's [trace] table), when it wrote one.
	Trace *TraceSummary `json:"trace,omitempty"`
	// LinkLosses are the link directions that lost frames to the failures
	// the experiment injected (topology.loss_rate, [[link_failures]]), when
	// any did.
	LinkLosses []LinkLossSummary `json:"link_losses,omitempty"`
	// HottestPort is the port with the longest queue (HotPort) and its
	// priorities' queues, when it has per-priority samples.
	HottestPort *HotPortSummary `json:"hottest_port,omitempty"`
}

// LinkLossSummary is one entry of summary.json's "link_losses": what one
// direction of a link lost to injected failures.
type LinkLossSummary struct {
	// From is the sending port ("s0.p3", or a host's name), To the node at
	// the other end.
	From string `json:"from"`
	To   string `json:"to"`
	// Frames is every frame the sender put on the link; Lost those lost at
	// random (the loss rate), DownLost those lost while the link was down.
	Frames   uint64 `json:"frames"`
	Lost     uint64 `json:"lost"`
	DownLost uint64 `json:"down_lost"`
}

// CaptureSummary is one entry of summary.json's "captures": a pcap file of
// the frames a port sent and received.
type CaptureSummary struct {
	// Port names the captured port ("s0.p3", "h2"), Peer the port at the
	// other end of its link.
	Port string `json:"port"`
	Peer string `json:"peer"`
	// File is the pcap file, relative to the results directory when it lies
	// inside it.
	File string `json:"file"`
	// Frames is the number of frames in the file.
	Frames uint64 `json:"frames"`
	// Dropped is the frames the capture could not keep up with (DPDK clock).
	Dropped uint64 `json:"dropped,omitempty"`
	// Snaplen is the most bytes kept of a frame.
	Snaplen int `json:"snaplen"`
}

// TraceSummary is summary.json's "trace": the per-packet event trace file
// of a run and what it holds.
type TraceSummary struct {
	// File is the trace file, relative to the results directory.
	File string `json:"file"`
	// Records is the number of records in it, Bytes its size (header
	// included).
	Records uint64 `json:"records"`
	Bytes   int64  `json:"bytes"`
	// Nodes and Kinds are the switches and event kinds the trace kept, as
	// asked; absent: every switch, every kind.
	Nodes []string `json:"nodes,omitempty"`
	Kinds []string `json:"kinds,omitempty"`
}

// FlowSummary is one entry of summary.json's "flows".
type FlowSummary struct {
	// ID is the flow's id.
	ID int `json:"id"`
	// Src is FlowInfo.Src.
	Src string `json:"src"`
	// Dst is FlowInfo.Dst.
	Dst string `json:"dst"`
	// Bytes is FlowInfo.Bytes (payload bytes delivered).
	Bytes int64 `json:"bytes"`
	// AvgGbps is the mean of the flow's goodput samples over the whole run,
	// or Bytes*8/duration when the flow has no samples (null when the
	// duration is 0 too).
	AvgGbps OptFloat `json:"avg_gbps"`
	// SteadyGbps is the mean of the flow's goodput samples in the steady
	// half; null when it has none there.
	SteadyGbps OptFloat `json:"steady_gbps"`
	// SteadyRateGbps is the mean of the sender's rate (rate.csv's
	// rate_gbps) in the steady half; null when it has no samples there.
	SteadyRateGbps OptFloat `json:"steady_rate_gbps"`
	// FCTUs is the flow's completion time; null when it did not complete.
	FCTUs OptFloat `json:"fct_us"`
}

// ClassFCTBuckets are the FCT buckets of one traffic class.
type ClassFCTBuckets struct {
	// Priority is the class's priority (0-7).
	Priority int `json:"priority"`
	// Buckets are its flows' FCTBuckets, in increasing size.
	Buckets []FCTBucket `json:"buckets"`
}

// MaxWorstFlows is the most flows Summary.WorstFlows lists.
const MaxWorstFlows = 5

// WorstFlow is one of summary.json's "worst_flows": a completed flow
// (message) and its slowdown, as its fct.csv row has them.
type WorstFlow struct {
	ID        int      `json:"id"`
	Src       string   `json:"src"`
	Dst       string   `json:"dst"`
	SizeBytes int64    `json:"size_bytes"`
	StartUs   OptFloat `json:"start_us"`
	FCTUs     float64  `json:"fct_us"`
	Slowdown  float64  `json:"slowdown"`
}

// HotPortSummary is summary.json's "hottest_port".
type HotPortSummary struct {
	// ID and Name are the port's, as in ports[].
	ID   int    `json:"id"`
	Name string `json:"name,omitempty"`
	// Priorities are the port's priority queues that queue_prio.csv has
	// samples of, by priority.
	Priorities []PrioQueueSummary `json:"priorities"`
}

// PrioQueueSummary is one priority's queue statistics at a port, as
// PortSummary's are the port's.
type PrioQueueSummary struct {
	Priority         int      `json:"priority"`
	AvgQueueBytes    OptFloat `json:"avg_queue_bytes"`
	P99QueueBytes    OptFloat `json:"p99_queue_bytes"`
	SteadyQueueBytes OptFloat `json:"steady_queue_bytes"`
}

// PortSummary is one entry of summary.json's "ports".
type PortSummary struct {
	// ID is the switch port's index.
	ID int `json:"id"`
	// Name is PortCounters.Name.
	Name string `json:"name,omitempty"`
	// AvgQueueBytes is the mean of the port's queue samples over the run;
	// null when it has none (and so for the two below).
	AvgQueueBytes OptFloat `json:"avg_queue_bytes"`
	// P99QueueBytes is the 99th percentile (nearest rank) of the samples.
	P99QueueBytes OptFloat `json:"p99_queue_bytes"`
	// SteadyQueueBytes is the mean of the queue samples in the steady half.
	SteadyQueueBytes OptFloat `json:"steady_queue_bytes"`
	// FairRateGbps is the mean of the port's fair-rate samples in the steady
	// half; null when the scheme has no fair rate (no samples there).
	FairRateGbps OptFloat `json:"fair_rate_gbps"`
	// PFCPauses is PortCounters.PFCPauses.
	PFCPauses uint64 `json:"pfc_pauses"`
	// PFCActivations is PortCounters.PFCActivations.
	PFCActivations uint64 `json:"pfc_activations"`
	// PFCPausesByPriority and PFCActivationsByPriority are
	// PortCounters.PFCPausesByPrio and PFCActivationsByPrio: index i is
	// priority i; null when the run's source does not say.
	PFCPausesByPriority      *[8]uint64 `json:"pfc_pauses_by_priority"`
	PFCActivationsByPriority *[8]uint64 `json:"pfc_activations_by_priority"`
	// PFCPausesReceived is PortCounters.PFCPausesReceived.
	PFCPausesReceived uint64 `json:"pfc_pauses_received"`
	// PausedUs is PortCounters.PausedUs.
	PausedUs float64 `json:"paused_us"`
	// Drops is PortCounters.Drops.
	Drops uint64 `json:"drops"`
	// ECNMarked is PortCounters.ECNMarked.
	ECNMarked uint64 `json:"ecn_marked"`
	// CNPsSent is PortCounters.CNPsSent.
	CNPsSent uint64 `json:"cnps_sent"`
}

// FCTBucket is the FCT slowdown of the flows whose size lies in
// [LoBytes, HiBytes).
type FCTBucket struct {
	// LoBytes is the bucket's lower edge (inclusive).
	LoBytes int64 `json:"lo_bytes"`
	// HiBytes is the bucket's upper edge (exclusive).
	HiBytes int64 `json:"hi_bytes"`
	// Count is the number of FCT records in the bucket.
	Count int `json:"count"`
	// MedianSlowdown is the median (nearest rank) slowdown.
	MedianSlowdown float64 `json:"median_slowdown"`
	// P99Slowdown is the 99th percentile (nearest rank) slowdown.
	P99Slowdown float64 `json:"p99_slowdown"`
	// MedianFCTUs is the median FCT in microseconds.
	MedianFCTUs float64 `json:"median_fct_us"`
	// P99FCTUs is the 99th percentile FCT in microseconds.
	P99FCTUs float64 `json:"p99_fct_us"`
}

// DefaultBucketsPerDecade is the number of flow-size buckets per factor of
// ten that Summarize and the slowdown plot use (edges 1 KB, 3.16 KB, 10 KB, ...).
const DefaultBucketsPerDecade = 2

// MinJainFlows is the fewest flows JainIndex is taken over.
const MinJainFlows = 2

// JainApplies reports whether Jain's index of the steady rates means
// something for a run in which shared flows had goodput through the whole
// steady half and active flows had goodput in it (shared <= active): when
// every active flow is a shared one, and there are at least MinJainFlows.
// A flow that started, or completed, inside the steady half changed the
// set of flows that share the network there, so the steady rates of the
// others are not shares of one steady state.
func JainApplies(shared, active int) bool {
	return shared >= MinJainFlows && shared == active
}

// Jain returns Jain's fairness index (sum x)^2 / (n * sum x^2) of xs: 1 when
// all are equal, 1/n when one takes everything. It returns 0 for an empty
// slice or when every x is 0 (the index is undefined there).
func Jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if len(xs) == 0 || sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// Mean returns the arithmetic mean of xs, 0 for an empty slice.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Percentile returns the p-th percentile (0 <= p <= 100) of xs by the
// nearest-rank method: the smallest sample such that at least p % of the
// samples are <= it (p <= 0 gives the minimum, p >= 100 the maximum). It
// returns 0 for an empty slice and does not modify xs.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := make([]float64, len(xs))
	copy(s, xs)
	sort.Float64s(s)
	return PercentileSorted(s, p)
}

// PercentileSorted is Percentile for xs already sorted in increasing order.
func PercentileSorted(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	if !(p > 0) {
		return xs[0]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return xs[rank-1]
}

// bucketEdge is the lower edge, in bytes, of size bucket i with perDecade
// buckets per factor of ten: round(10^(i/perDecade)).
func bucketEdge(i, perDecade int) int64 {
	if i%perDecade == 0 {
		return int64(math.Pow10(i / perDecade))
	}
	return int64(math.Round(math.Pow(10, float64(i)/float64(perDecade))))
}

// bucketOf returns the bucket index of a flow of size bytes (size >= 1).
func bucketOf(size int64, perDecade int) int {
	i := int(math.Floor(math.Log10(float64(size)) * float64(perDecade)))
	for i > 0 && size < bucketEdge(i, perDecade) {
		i--
	}
	for size >= bucketEdge(i+1, perDecade) {
		i++
	}
	return i
}

// FCTBuckets groups recs by flow size into log-spaced buckets, perDecade
// per factor of ten (edges round(10^(i/perDecade)) bytes; sizes below 1
// byte go to [0, 1)), and returns the non-empty buckets in increasing size
// with the median and 99th percentile (nearest rank) of slowdown and FCT.
// perDecade < 1 means DefaultBucketsPerDecade.
func FCTBuckets(recs []FCTRecord, perDecade int) []FCTBucket {
	fs := fctStats{perDecade: perDecade}
	for i := range recs {
		fs.add(&recs[i])
	}
	return fs.summary()
}

// view is what a summary and the plots are made of: the series' and FCTs'
// statistics and the run's length.
type view struct {
	queue, rate, fair *seriesStats
	prio              *seriesStats // queue_prio.csv's, by port*8 + priority
	fct               *fctStats
	durUs             float64
}

// view returns the statistics of the rows written (a Recorder that
// streams), or of every row held, summarized now (one that does not). The
// caller holds r.mu.
func (r *Recorder) view() view {
	if r.dir != "" {
		return view{&r.queue.stats, &r.rate.stats, &r.fair.stats, &r.prioQueue.stats, &r.fct.stats, r.durUs}
	}
	durUs := r.durationUs()
	v := view{durUs: durUs, fct: &fctStats{}}
	var st [4]*seriesStats
	for k, tb := range r.tables() {
		st[k] = &seriesStats{halfUs: durUs / 2, counts: tb.stats.counts}
		for i, rs := 0, tb.sorted(); i < len(rs); i++ {
			st[k].add(&rs[i], true)
		}
	}
	v.queue, v.rate, v.fair, v.prio = st[0], st[1], st[2], st[3]
	for i, p := 0, r.fct.sortedPending(); i < len(p); i++ {
		v.fct.add(&p[i].rec)
	}
	return v
}

// durationUs is the run's length in microseconds: Meta.DurationS, or, when
// it is zero, the latest sample's time. The caller holds r.mu.
func (r *Recorder) durationUs() float64 {
	if r.meta.DurationS > 0 {
		return r.meta.DurationS * 1e6
	}
	var last float64
	for _, tb := range r.tables() {
		last = max(last, tb.stats.lastUs)
		for i := range tb.pending {
			last = max(last, tb.pending[i].t)
		}
	}
	return last
}

// Summarize computes the summary of everything recorded so far (of a
// Recorder that streams: of the rows written so far).
func (r *Recorder) Summarize() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.summary(r.view())
}

// summary is the summary of v and of r's run description and counters. The
// caller holds r.mu.
func (r *Recorder) summary(v view) Summary {
	durUs := v.durUs
	half := durUs / 2

	sum := Summary{
		ResultsVersion:  ResultsVersion,
		Experiment:      r.meta.Experiment,
		Scheme:          r.meta.Scheme,
		Clock:           r.meta.Clock,
		Seed:            r.meta.Seed,
		DurationS:       durUs / 1e6,
		Interrupted:     r.meta.Interrupted,
		DegradedReasons: append([]string{}, r.meta.Degraded...),
		Config:          r.meta.Config,
		Build:           r.meta.Build,
		Machine:         r.meta.Machine,
		SteadyFromS:     half / 1e6,
		WarmupS:         r.meta.WarmupS,
		Scaling:         r.meta.Scaling,
		Notes:           r.meta.Notes,
		Topology:        r.meta.Topology,
		LinkGbps:        r.meta.LinkGbps,
		Lcores:          r.meta.Lcores,
		LinkLosses:      r.meta.LinkLosses,
		SamplesRejected: r.nonFinite,
		Flows:           []FlowSummary{},
		Ports:           []PortSummary{},
		FCTBuckets:      v.fct.summary(),
		WorstFlows:      slices.Clone(v.fct.worst),
		ClassFCTBuckets: v.fct.classSummary(),
	}
	if !r.meta.StartedAt.IsZero() {
		sum.StartedAt = r.meta.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if r.nonFinite > 0 {
		sum.DegradedReasons = append(sum.DegradedReasons,
			fmt.Sprintf("%d samples rejected: a time or value was NaN or infinite", r.nonFinite))
	}
	sum.Degraded = len(sum.DegradedReasons) > 0

	// Flows: every flow given by SetFlow or having rate samples, by id.
	var throughout []float64 // steady rates of the flows that shared the whole steady half
	flowIDs := mergeIDs(r.flows.IDs(nil), v.rate.ids())
	sum.Flows = make([]FlowSummary, 0, len(flowIDs))
	for _, id := range flowIDs {
		info, ok := r.flows.Get(id)
		if !ok {
			info.ID = id
		}
		f := FlowSummary{ID: id, Src: info.Src, Dst: info.Dst, Bytes: info.Bytes}
		m, _ := v.fct.perFlow.Get(id)
		switch {
		case info.FCTUs > 0:
			f.FCTUs = Some(info.FCTUs)
		case m.n > 0:
			f.FCTUs = Some(m.sum / float64(m.n))
		}
		if s := v.rate.get(id); s != nil && s.n > 0 {
			f.AvgGbps = Some(s.sum / float64(s.n))
			f.SteadyGbps = optRatio(s.steadySum, s.steadyN)
			f.SteadyRateGbps = optRatio(s.rateSum, s.rateN)
			if s.steadyN > 0 && f.SteadyGbps.Or(0) > 0 {
				sum.SteadyFlows++
				if s.n > s.steadyN && !f.FCTUs.Valid() {
					throughout = append(throughout, f.SteadyGbps.Or(0))
				}
			}
		} else if durUs > 0 {
			f.AvgGbps = Some(float64(info.Bytes) * 8 / (durUs * 1e3))
		}
		sum.Flows = append(sum.Flows, f)
	}

	// Ports: every port given counters or having queue or fair-rate samples.
	ids := unionIDs(r.ports, v.queue.ids())
	ids = mergeIDs(ids, v.fair.ids())
	for _, id := range ids {
		c := r.ports[id]
		p := PortSummary{ID: id, Name: c.Name, PFCPauses: c.PFCPauses, PFCActivations: c.PFCActivations,
			PFCPausesByPriority: c.PFCPausesByPrio, PFCActivationsByPriority: c.PFCActivationsByPrio,
			PFCPausesReceived: c.PFCPausesReceived, PausedUs: c.PausedUs,
			Drops: c.Drops, ECNMarked: c.ECNMarked, CNPsSent: c.CNPsSent}
		if s := v.queue.get(id); s != nil && s.n > 0 {
			p.AvgQueueBytes = Some(s.sum / float64(s.n))
			p.SteadyQueueBytes = optRatio(s.steadySum, s.steadyN)
			p.P99QueueBytes = Some(percentileCounts(s.counts, s.n, 99))
		}
		if s := v.fair.get(id); s != nil {
			p.FairRateGbps = optRatio(s.steadySum, s.steadyN)
		}
		sum.Ports = append(sum.Ports, p)
	}

	sum.HottestPort = hottestPort(&sum, v.prio)

	if sum.JainFlows = len(throughout); JainApplies(sum.JainFlows, sum.SteadyFlows) {
		sum.JainIndex = Some(Jain(throughout))
	}
	return sum
}

// hottestPort is the hottest port of sum (HotPort) with its priorities'
// queue statistics (from queue_prio.csv's rows, prio), or nil when no port
// has queue samples or the hottest has no per-priority ones.
func hottestPort(sum *Summary, prio *seriesStats) *HotPortSummary {
	id, ok := HotPort(sum)
	if !ok {
		return nil
	}
	h := &HotPortSummary{ID: id, Priorities: []PrioQueueSummary{}}
	for i := range sum.Ports {
		if p := &sum.Ports[i]; p.ID == id {
			h.Name = p.Name
		}
	}
	for p := 0; p < 8; p++ {
		s := prio.get(id<<3 | p)
		if s == nil || s.n == 0 {
			continue
		}
		h.Priorities = append(h.Priorities, PrioQueueSummary{Priority: p, AvgQueueBytes: Some(s.sum / float64(s.n)),
			P99QueueBytes: Some(percentileCounts(s.counts, s.n, 99)), SteadyQueueBytes: optRatio(s.steadySum, s.steadyN)})
	}
	if len(h.Priorities) == 0 {
		return nil
	}
	return h
}

// optRatio is the mean sum/n of n values, missing when there are none.
func optRatio(sum float64, n int) OptFloat {
	if n == 0 {
		return None
	}
	return Some(sum / float64(n))
}

// meanPresent is the mean of the values of xs that are not NaN (NaN marks a
// missing value), missing when there are none.
func meanPresent(xs []float64) OptFloat {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return None
	}
	return Some(s / float64(n))
}

// unionIDs returns the sorted union of m's keys and the sorted ids.
func unionIDs[V any](m map[int]V, ids []int) []int {
	out := make([]int, 0, len(m)+len(ids))
	for id := range m {
		out = append(out, id)
	}
	sort.Ints(out)
	return mergeIDs(out, ids)
}

// mergeIDs returns the sorted union of the sorted ids and more.
func mergeIDs(ids, more []int) []int {
	out := make([]int, 0, len(ids)+len(more))
	i, j := 0, 0
	for i < len(ids) || j < len(more) {
		switch {
		case j == len(more) || (i < len(ids) && ids[i] < more[j]):
			out = append(out, ids[i])
			i++
		case i == len(ids) || more[j] < ids[i]:
			out = append(out, more[j])
			j++
		default:
			out = append(out, ids[i])
			i++
			j++
		}
	}
	return out
}

// WriteSummaryJSON writes s as indented JSON.
func WriteSummaryJSON(w io.Writer, s Summary) error {
	// The flows, one entry a flow (hundreds of thousands in a workload of
	// small flows), are written by appendFlowsJSON in the bytes
	// json.MarshalIndent would write, in a fraction of its time (it
	// reflects on every field and re-scans every OptFloat's output); the
	// rest of the summary by MarshalIndent, with an empty list where the
	// flows go.
	flows := s.Flows
	if flows != nil {
		s.Flows = []FlowSummary{}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encode summary: %w", err)
	}
	b = append(b, '\n')
	const at = "\n  \"flows\": []"
	i := bytes.Index(b, []byte(at))
	if i < 0 || len(flows) == 0 {
		if i < 0 && len(flows) > 0 {
			return fmt.Errorf("report: encode summary: no flows key")
		}
		_, err = w.Write(b)
		return err
	}
	i += len(at) - 1 // at the empty list's ']'
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(b[:i])
	names := map[string][]byte{}
	var e []byte
	for k := range flows {
		if e, err = appendFlowJSON(e[:0], &flows[k], names); err != nil {
			return fmt.Errorf("report: encode summary: flow %d: %w", flows[k].ID, err)
		}
		if k == 0 {
			bw.WriteString("\n    ")
		} else {
			bw.WriteString(",\n    ")
		}
		bw.Write(e)
	}
	bw.WriteString("\n  ")
	bw.Write(b[i:])
	return bw.Flush()
}

// appendFlowJSON appends f as json.MarshalIndent(summary, "", "  ") writes
// an entry of "flows" (its opening brace at the entry's indentation, which
// the caller writes). names caches the JSON of each host name.
func appendFlowJSON(b []byte, f *FlowSummary, names map[string][]byte) ([]byte, error) {
	name := func(s string) []byte {
		q, ok := names[s]
		if !ok {
			q, _ = json.Marshal(s) // a string always encodes
			names[s] = q
		}
		return q
	}
	b = append(b, "{\n      \"id\": "...)
	b = strconv.AppendInt(b, int64(f.ID), 10)
	b = append(b, ",\n      \"src\": "...)
	b = append(b, name(f.Src)...)
	b = append(b, ",\n      \"dst\": "...)
	b = append(b, name(f.Dst)...)
	b = append(b, ",\n      \"bytes\": "...)
	b = strconv.AppendInt(b, f.Bytes, 10)
	var err error
	for _, kv := range [...]struct {
		key string
		v   OptFloat
	}{{",\n      \"avg_gbps\": ", f.AvgGbps}, {",\n      \"steady_gbps\": ", f.SteadyGbps},
		{",\n      \"steady_rate_gbps\": ", f.SteadyRateGbps}, {",\n      \"fct_us\": ", f.FCTUs}} {
		b = append(b, kv.key...)
		if b, err = kv.v.appendJSON(b); err != nil {
			return b, err
		}
	}
	return append(b, "\n    }"...), nil
}

// LoadSummary reads a summary.json written by WriteSummaryJSON or WriteAll.
// Unknown fields are errors.
func LoadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("report: %s: %w", path, err)
	}
	return s, nil
}
