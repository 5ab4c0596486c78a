package testbed

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all" // every scheme, chosen by name
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/dpdkrun"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/internal/idmap"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/testbed/report"
	"github.com/ccbed/ccbed/wire"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Result is what Run produced.
type Result struct {
	Dir     string // the run's own directory: results/<experiment>/<run id> (report.RunID)
	Summary report.Summary
	// Clock is the driver that ran it.
	Clock string
	// Fabric is the driver's result: the engines as they ended, the switches'
	// telemetry.
	Fabric *fabric.Result
	// Loops are the lcores' statistics (DPDK clock).
	Loops []lcore.Stats
	// Switch is the first switch's counters (every switch: Switches).
	Switch   switchd.Snapshot
	Switches []switchd.Snapshot
	Hosts    []hostd.Report
	// MbufsLeaked is the pool's in-use count after shutdown (0 when every mbuf
	// came back; DPDK clock).
	MbufsLeaked int
	// Interrupted is true when SIGINT/SIGTERM ended the run early.
	Interrupted bool
	// Captures are the pcap files the run wrote (RunOptions.Capture, the
	// file's [capture] table).
	Captures []fabric.CaptureFile
}

// EALArgs are the EAL arguments Run uses for e: the experiment's own, or the
// default no-hugepage, no-PCI set, with an --lcores map of every lcore the
// experiment uses onto the machine's CPUs.
func (e *Experiment) EALArgs() []string {
	args := e.Lcores.EALArgs
	if len(args) == 0 {
		args = []string{"--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "--no-telemetry",
			"--log-level=lib.eal:error", "--log-level=pmd.net.ring:error"}
	}
	ids := map[uint]bool{e.Lcores.Switch: true}
	for _, l := range e.Lcores.Hosts {
		ids[l] = true
	}
	var sorted []int
	for l := range ids {
		sorted = append(sorted, int(l))
	}
	sort.Ints(sorted)
	ncpu := runtime.NumCPU()
	var m []string
	for _, l := range sorted {
		m = append(m, strconv.Itoa(l)+"@"+strconv.Itoa(l%ncpu))
	}
	return append(append([]string(nil), args...), "--lcores="+strings.Join(m, ","))
}

// Progress, when not nil, receives the run's progress about every second of
// wall time (fabric.Progress: its String is a one-line report). In virtual
// time it is called between events, on the run's goroutine (with
// RunOptions.Parallel, on one of its workers while the others wait); on DPDK
// from a goroutine of its own. It must return quickly.
type Progress func(fabric.Progress)

// Run runs the experiment with its clock: in virtual time (fabric.Virtual), or
// on DPDK virtual devices in this process (fabric/dpdkrun: the EAL initialises
// once per process), for the experiment's duration or until ctx ends or SIGINT,
// then writes a run directory of its own, results/<name>/<run id>/, and a
// summary table to out.
func Run(ctx context.Context, e *Experiment, out io.Writer) (*Result, error) {
	return RunProgress(ctx, e, out, nil)
}

// RunProgress is Run with a progress callback.
func RunProgress(ctx context.Context, e *Experiment, out io.Writer, progress Progress) (*Result, error) {
	return RunWith(ctx, e, out, RunOptions{Progress: progress})
}

// RunOptions are what a run adds to its experiment file.
type RunOptions struct {
	// Progress, when not nil, receives the run's progress about every second.
	Progress Progress
	// Log receives the run's status messages (nil: none). It is never
	// called from a loop or an engine.
	Log *zap.Logger
	// Capture, when not nil, captures frames to pcap files in place of the
	// file's [capture] table (CaptureFromFlags).
	Capture *Capture
	// Trace, when not nil, writes the per-packet trace (TraceFile) in place
	// of the file's [trace] table (TraceFromFlags). Virtual time, serial
	// driver only.
	Trace *Trace
	// Dir, when not empty, is the results directory in place of a new run
	// directory in experiment.output_dir/experiment.name (a sweep's point;
	// the latest links are then left as they are).
	Dir string
	// Parallel runs a virtual-time run in partitions on several workers
	// (fabric.Virtual.SetParallel; the zero value and one worker: the
	// serial driver). The results are the same.
	Parallel fabric.Parallel
	// Metrics, when its address is set, serves every switch's and host's
	// counters in the Prometheus text format while a DPDK-clock run goes
	// (labelled by node; docs/metrics.md). Virtual time serves none.
	Metrics *metrics.Flags
	// Table chooses what the terminal summary prints (AllFlows: every
	// flow; testbed run -flows).
	Table report.TableOptions
}

// RunWith is Run with options. Each run gets a directory of its own,
// output_dir/<name>/<run id>/ (report.RunID: its start and seed), never
// shared with another run, in sequence or at once, and never replacing
// anything. It is made first, as a staging directory in its experiment's
// (report.StageRun), so an unwritable path fails before the run; the
// results are written into it and renamed to the run id only when complete
// (never left looking complete by a crash). SIGINT and SIGTERM, or ctx
// ending, stop the run early; the results are still written, marked
// interrupted. Unless o.Dir names the directory, the symbolic links
// LatestLink in the experiment's directory and in output_dir are then
// pointed at it (LinkLatest; a failure is a warning on o.Log).
func RunWith(ctx context.Context, e *Experiment, out io.Writer, o RunOptions) (*Result, error) {
	progress := o.Progress
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	started := time.Now()
	// SIGINT / SIGTERM from here on end the run early but still write results
	// (a signal during set-up ends the run as soon as it starts). After the
	// first, the default action is back: a second signal kills the process.
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() {
		<-ctx.Done()
		stopSignals()
	}()
	plan, err := e.Plan()
	if err != nil {
		return nil, err
	}
	if err := e.CheckClock(plan); err != nil {
		return nil, err
	}
	// A name becomes a directory only once it is known to be a name: one
	// path element below the output directory (Validate checks it at its
	// line; this holds for an experiment built any other way too).
	if err := config.Name(e.Experiment.Name); err != nil {
		return nil, fmt.Errorf("testbed: experiment.name %v", err)
	} else if e.Experiment.Name == LatestLink {
		return nil, fmt.Errorf("testbed: experiment.name %q is the link to the newest run", LatestLink)
	}
	var stage *report.Staged
	expDir := filepath.Join(e.Experiment.OutputDir, e.Experiment.Name)
	if o.Dir != "" {
		stage, err = report.StageDir(o.Dir)
	} else {
		stage, err = report.StageRun(expDir, report.RunID(started, e.Experiment.Seed))
	}
	if err != nil {
		return nil, fmt.Errorf("testbed: results: %w", err)
	}
	log.Debug("results staged", zap.String("dir", stage.Target()), zap.String("stage", stage.Path()))
	committed := false
	defer func() {
		if !committed {
			stage.Abort()
		}
	}()
	c := o.Capture
	if c == nil {
		c = e.fileCapture()
	}
	capture, err := e.capture(c, stage.Path())
	if err != nil {
		return nil, err
	}
	tr, traceFilter, err := e.runTrace(o)
	if err != nil {
		return nil, err
	}
	durNs := config.UsToNs(e.Experiment.DurationMs * 1e3)
	res := &Result{Clock: e.Experiment.Clock}
	log.Debug("run starting", zap.String("experiment", e.Experiment.Name), zap.String("clock", e.Experiment.Clock),
		zap.Float64("duration_ms", e.Experiment.DurationMs), zap.Int("hosts", len(plan.Topo.Hosts)),
		zap.Int("switches", len(plan.Topo.Switches)), zap.Int("links", len(plan.Topo.Links)))
	var fr *fabric.Result
	var rec *report.Recorder
	var finishTrace func() (fabric.TraceStats, error) // closes the trace file (virtual time with a trace)
	var traceDone *report.TraceSummary                // what the trace wrote, for summary.json
	switch e.Experiment.Clock {
	case ClockVirtual:
		v, err := fabric.NewVirtual(plan)
		if err != nil {
			return nil, fmt.Errorf("testbed: %w", err)
		}
		if o.Parallel.Workers > 0 {
			if err := v.SetParallel(o.Parallel); err != nil {
				return nil, fmt.Errorf("testbed: %w", err)
			}
		}
		if capture != nil {
			if err := v.Capture(capture); err != nil {
				return nil, fmt.Errorf("testbed: %w", err)
			}
		}
		if tr != nil {
			closeTrace, err := startTrace(v, filepath.Join(stage.Path(), TraceFile), traceFilter)
			if err != nil {
				return nil, err
			}
			defer closeTrace()
			finishTrace = closeTrace
		}
		// The results stream into the staging directory as the run goes
		// (docs/results.md): memory holds a drain's samples, not the run's.
		f := e.newFeed(ClockVirtual, 0)
		rec = f.rec
		rec.SetDuration(float64(durNs) / 1e9)
		e.provenanceStart(rec, started)
		if err := rec.Stream(stage.Path()); err != nil {
			return nil, fmt.Errorf("testbed: results: %w", err)
		}
		var streamErr error
		v.StreamResults(func(d *fabric.Drain) {
			if err := f.drain(d); err != nil && streamErr == nil {
				streamErr = err
			}
		})
		start := time.Now()
		runErr := v.Run(ctx, durNs, progress)
		files, capErr := v.CloseCapture()
		if finishTrace != nil {
			st, err := finishTrace()
			if err != nil && capErr == nil {
				capErr = err
			}
			traceDone = traceSummary(tr, st)
		}
		if runErr != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("testbed: %w", runErr)
		}
		if capErr != nil {
			return nil, fmt.Errorf("testbed: %w", capErr)
		}
		if streamErr != nil {
			return nil, fmt.Errorf("testbed: results: %w", streamErr)
		}
		res.Captures = files
		fr = v.Result()
		fr.WallNs = time.Since(start).Nanoseconds()
		fr.Interrupt = ctx.Err() != nil
		f.finish(fr)
	case ClockDPDK:
		o, err := dpdkrun.Run(ctx, plan, dpdkrun.Options{EALArgs: e.EALArgs(), SwitchLcore: e.Lcores.Switch,
			HostLcores: e.Lcores.Hosts, DurationNs: durNs, Capture: capture, Progress: progress, Serve: serveMetrics(o.Metrics)})
		if err != nil {
			return nil, fmt.Errorf("testbed: %w", err)
		}
		fr = o.Result
		res.Loops, res.MbufsLeaked, res.Captures = o.Loops, o.MbufsLeaked, o.Captures
		for i, h := range fr.Hosts {
			pc := o.HostPorts[i]
			res.Hosts = append(res.Hosts, h.Report(&pc))
		}
	}
	res.Fabric = fr
	res.Interrupted = fr.Interrupt
	if res.Hosts == nil {
		for _, h := range fr.Hosts {
			res.Hosts = append(res.Hosts, h.Report(&hostd.PortCounter{}))
		}
	}
	for _, s := range fr.Switches {
		res.Switches = append(res.Switches, s.Snapshot())
	}
	res.Switch = res.Switches[0]

	if rec == nil {
		rec = e.record(fr)
	}
	e.provenance(rec, res, started)
	sum, err := rec.WriteFiles(stage.Path())
	if err != nil {
		return nil, fmt.Errorf("testbed: results: %w", err)
	}
	if len(res.Captures) > 0 || traceDone != nil {
		if len(res.Captures) > 0 {
			sum.Captures = captureSummaries(res.Captures, stage.Path(), capture.Snaplen)
		}
		sum.Trace = traceDone
		if err := report.WriteSummaryFile(stage.Path(), sum); err != nil {
			return nil, fmt.Errorf("testbed: results: %w", err)
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, fmt.Errorf("testbed: results: %w", err)
	}
	committed = true
	resDir := stage.Target()
	res.Dir = resDir
	log.Debug("results written", zap.String("dir", resDir), zap.Bool("interrupted", res.Interrupted))
	if o.Dir == "" {
		id := filepath.Base(resDir)
		for _, l := range [][2]string{{expDir, id}, {e.Experiment.OutputDir, filepath.Join(e.Experiment.Name, id)}} {
			if err := LinkLatest(l[0], l[1]); err != nil {
				log.Warn("results written, but the latest link not updated", zap.String("dir", resDir), zap.Error(err))
			}
		}
	}
	for i := range res.Captures {
		if rel, err := filepath.Rel(stage.Path(), res.Captures[i].Path); err == nil && filepath.IsLocal(rel) {
			res.Captures[i].Path = filepath.Join(resDir, rel)
		}
	}
	res.Summary = sum
	if out != nil {
		report.PrintTableWith(out, sum, o.Table) // the summary just written: summarizing again costs as much (a run of a million flows: 2.4 s)
		fmt.Fprintf(out, "results in %s\n", res.Dir)
	}
	return res, nil
}

// provenance records in rec what produced the run and what may have spoilt
// it: the experiment as run, the build, the machine, the start, the
// interruption, and the reasons the results are degraded (lcore stalls above
// the experiment's StallBound, flows, frames, samples and FCT records the
// engines lost or could not keep: hostDegraded, switchDegraded; frames a
// capture could not keep up with).
func (e *Experiment) provenance(rec *report.Recorder, res *Result, started time.Time) {
	e.provenanceStart(rec, started)
	m := rec.Meta()
	m.Interrupted = res.Interrupted
	var lcores []report.LcoreSummary
	baseRTT := e.baseRTTNs(res)
	if res.Fabric != nil {
		m.LinkLosses = e.linkLosses(res.Fabric.LinkLosses)
	}
	if m.Config != nil {
		m.Config.SchemeParams = e.SchemeParams(baseRTT)
	}
	bound := e.StallBound(baseRTT)
	for _, l := range res.Loops {
		lcores = append(lcores, report.LcoreSummary{Lcore: l.Lcore, Name: l.Name, Iterations: l.Iterations,
			BusyFraction: float64(l.BusyPolls) / float64(max(l.Iterations, 1)), MaxStallMs: float64(l.MaxStallNs) / 1e6})
		if r := stallReason(l.Lcore, l.Name, l.MaxStallNs, bound); r != "" {
			m.Degraded = append(m.Degraded, r)
		}
	}
	m.Lcores = lcores
	for i := range res.Switches {
		m.Degraded = append(m.Degraded, switchDegraded(e.topo.Switches[i].Name, &res.Switches[i])...)
	}
	for i := range res.Hosts {
		m.Degraded = append(m.Degraded, hostDegraded(e.topo.Hosts[i].Name, &res.Hosts[i])...)
	}
	for _, c := range res.Captures {
		if c.Dropped > 0 {
			m.Degraded = append(m.Degraded, fmt.Sprintf("capture of %s could not keep up: %d frames not in %s",
				c.Port, c.Dropped, filepath.Base(c.Path)))
		}
	}
	rec.SetMeta(m)
}

// provenanceStart records in rec what is known of the run before it
// starts: the experiment as run, the build, the machine, the start.
func (e *Experiment) provenanceStart(rec *report.Recorder, started time.Time) {
	m := rec.Meta()
	m.StartedAt, m.Config, m.Build, m.Machine = started, e.Snapshot(), report.ThisBuild(), report.ThisMachine()
	rec.SetMeta(m)
}

// captureSummaries describes the capture files for summary.json, their paths
// relative to the results directory when they lie inside it.
func captureSummaries(files []fabric.CaptureFile, dir string, snaplen int) []report.CaptureSummary {
	if snaplen == 0 {
		snaplen = pcapw.DefaultSnaplen
	}
	var out []report.CaptureSummary
	for _, f := range files {
		path := f.Path
		if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
			path = rel
		} else if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		out = append(out, report.CaptureSummary{Port: f.Port, Peer: f.Peer, File: path, Frames: f.Frames,
			Dropped: f.Dropped, Snaplen: snaplen})
	}
	return out
}

// CheckClock reports why the experiment cannot run with its clock (the DPDK
// clock in one process has a limited number of ethdev ports), with the file
// and line of experiment.clock.
func (e *Experiment) CheckClock(plan *fabric.Plan) error {
	if e.Experiment.Clock != ClockDPDK {
		return nil
	}
	if err := dpdkrun.Check(plan); err != nil {
		return e.errorf("experiment.clock", "%v", err)
	}
	return nil
}

// feed turns a driver's samples, FCTs and counters into the results
// contract's series and counters in a Recorder: while the run goes (the
// virtual clock's drains, StreamResults) or from its result at the end.
// Switch ports are numbered across switches in switch order (a star's ids
// are its port numbers) and named s<i>.p<port> when there are several
// switches. What it keeps is per flow: the bytes delivered and the last
// FCT of each flow id, by host.
type feed struct {
	e         *Experiment
	rec       *report.Recorder
	t0Ns      int64
	base      []int // switch i's first port id; made from the engines
	prios     uint8 // the priorities of queue_prio.csv's rows (prioRows)
	warmUs    float64
	byIP      map[uint32]int
	delivered []idmap.Map[int64, delivery] // by host, then flow id
}

// delivery is what a host's flow delivered: its bytes, and its last FCT (0
// while it runs).
type delivery struct {
	bytes int64
	fctUs float64
}

// newFeed returns a feed into a new Recorder for a run of clock whose time
// 0 is t0Ns.
func (e *Experiment) newFeed(clock string, t0Ns int64) *feed {
	t := e.topo
	rec := report.NewRecorder(report.Meta{
		Experiment: e.Experiment.Name, Scheme: e.CC.Scheme, Scaling: e.Experiment.Scaling,
		Notes: e.Experiment.Mirrors, Clock: clock, Seed: e.Experiment.Seed, Topology: e.topologyString(),
		LinkGbps: hostLinkGbps(t),
	})
	e.addReferences(rec)
	f := &feed{e: e, rec: rec, t0Ns: t0Ns, prios: prioRows(e.Spec().Priorities()), warmUs: e.Experiment.WarmupMs * 1e3, byIP: make(map[uint32]int, len(t.Hosts)),
		delivered: make([]idmap.Map[int64, delivery], len(t.Hosts))}
	for i, h := range t.Hosts {
		f.byIP[h.IP] = i
	}
	return f
}

// prioRows are the priorities queue_prio.csv has rows of, given those the
// traffic uses: all of them when there are two or more, none when there is
// one (queue.csv is then that priority's queue: a copy would double the
// largest file of a long run for nothing).
func prioRows(used uint8) uint8 {
	if bits.OnesCount8(used) < 2 {
		return 0
	}
	return used
}

// us is engine time ns on the results' time base.
func (f *feed) us(ns int64) float64 { return float64(ns-f.t0Ns) / 1e3 }

// switchSamples adds the switches' telemetry samples.
func (f *feed) switchSamples(switches []*switchd.Engine, samples []fabric.SwitchSample) {
	if f.base == nil {
		f.base = make([]int, len(switches)+1)
		for i, s := range switches {
			f.base[i+1] = f.base[i] + s.NumPorts()
		}
	}
	for i := range samples {
		s := &samples[i]
		tu := f.us(s.TNs)
		if tu < 0 {
			continue
		}
		id := f.base[s.Switch] + s.Port
		f.rec.AddQueueSample(tu, id, s.QueueBytes)
		for m := f.prios; m != 0; m &= m - 1 {
			p := bits.TrailingZeros8(m)
			f.rec.AddPrioQueueSample(tu, id, p, s.PrioBytes[p])
		}
		if s.FairRateBps >= 0 {
			f.rec.AddFairRate(tu, id, s.FairRateBps/1e9)
		}
	}
}

// pfcEvents adds the switches' XOFF and XON events.
func (f *feed) pfcEvents(events []fabric.SwitchPFCEvent) {
	for i := range events {
		ev := &events[i]
		if tu := f.us(ev.TNs); tu >= 0 {
			f.rec.AddPFCEvent(tu, f.base[ev.Switch]+int(ev.Port), int(ev.Prio), ev.XOFF, ev.IngressBytes)
		}
	}
}

// host adds host i's rate samples (those after the warm-up) and FCTs.
func (f *feed) host(i int, samples []hostd.RateSample, fcts []hostd.FCT) {
	t := f.e.topo
	for _, s := range samples {
		if tu := f.us(s.T); tu >= f.warmUs {
			win := s.Window
			if win == ccalgo.NoWindow {
				win = -1
			}
			f.rec.AddRate(report.RateSample{TUs: tu, Flow: int(s.Flow), GoodputGbps: s.Gbps, RateGbps: s.RateGbps, WindowBytes: win})
		}
	}
	for _, fc := range fcts {
		var dst string
		if d, ok := f.byIP[fc.Dst]; ok {
			dst = t.Hosts[d].Name
		} else {
			dst = wire.FormatIPv4(fc.Dst)
		}
		f.rec.AddFCTRecordFrom(i, report.FCTRecord{Flow: int(fc.Flow), Src: t.Hosts[i].Name, Dst: dst, StartUs: f.us(fc.StartNs),
			SizeBytes: fc.SizeBytes, FCTUs: float64(fc.FCTNs) / 1e3, Slowdown: float64(fc.FCTNs) / float64(fc.IdealNs),
			Priority: int(fc.Priority), HasPriority: true})
		d := f.delivered[i].Slot(fc.Flow)
		d.bytes += fc.SizeBytes
		d.fctUs = float64(fc.FCTNs) / 1e3
	}
}

// drain adds what a virtual run's drain hands over, and writes the rows
// sampled before it (report.Recorder.Advance).
func (f *feed) drain(d *fabric.Drain) error {
	f.switchSamples(d.Switches, d.Samples)
	f.pfcEvents(d.PFCEvents)
	for i, h := range d.Hosts {
		h.TakeResults(func(samples []hostd.RateSample, fcts []hostd.FCT) { f.host(i, samples, fcts) })
	}
	return f.rec.Advance(f.us(d.NowNs))
}

// finish adds what the run's end tells: its length, the flows' delivered
// bytes (their acknowledged bytes for flows still active) and the ports'
// counters.
func (f *feed) finish(fr *fabric.Result) {
	t := f.e.topo
	f.switchSamples(fr.Switches, nil) // the port ids, when no sample came
	f.rec.SetDuration(float64(fr.EndNs-fr.T0Ns) / 1e9)
	spec := fr.Plan.Spec
	for i, he := range fr.Hosts {
		delivered := &f.delivered[i]
		for _, a := range he.ActiveFlows() {
			delivered.Slot(a.Flow).bytes += a.AckedBytes
		}
		for id, d := range delivered.All() {
			dst := "workload"
			if h := spec.FlowDst(i, id); h >= 0 {
				dst = t.Hosts[h].Name
			}
			f.rec.SetFlow(report.FlowInfo{ID: int(id), Src: t.Hosts[i].Name, Dst: dst, Bytes: d.bytes, FCTUs: d.fctUs})
		}
	}
	for si, eng := range fr.Switches {
		for _, pc := range eng.Snapshot().Ports {
			// The port's congestion notifications: the switch CP's own feedback
			// plus the CNPs of the host behind the port (DCQCN's NP).
			cnps := pc.FeedbackSent
			peer, _, _ := t.Peer(len(t.Hosts)+si, pc.Port)
			if t.IsHost(peer) {
				hrx, _ := fr.Hosts[peer].Counters()
				cnps += hrx.CNPs
			}
			name := ""
			if len(fr.Switches) > 1 {
				name = fmt.Sprintf("%s.p%d", t.Switches[si].Name, pc.Port)
			}
			f.rec.SetPortCounters(report.PortCounters{
				ID: f.base[si] + pc.Port, Name: name, PFCPauses: pc.PausesSent, Drops: pc.DropsTotal,
				PFCActivations: pc.PFCOnsets, PFCPausesReceived: pc.PausesRecv, PausedUs: float64(pc.PausedNs) / 1e3,
				PFCPausesByPrio: &pc.PausesSentPrio, PFCActivationsByPrio: &pc.PFCOnsetsPrio,
				ECNMarked: pc.ECNMarkedTotal, CNPsSent: cnps,
			})
		}
	}
}

// record turns a driver's whole result into a Recorder (a run that did not
// stream: the DPDK clock).
func (e *Experiment) record(fr *fabric.Result) *report.Recorder {
	f := e.newFeed(fr.Clock, fr.T0Ns)
	f.switchSamples(fr.Switches, fr.Samples)
	f.pfcEvents(fr.PFCEvents)
	for i, he := range fr.Hosts {
		f.host(i, he.Samples(), he.FCTs())
	}
	f.finish(fr)
	return f.rec
}

// topologyString describes the topology in a few words.
func (e *Experiment) topologyString() string {
	t := &e.Topology
	n := len(e.topo.Hosts)
	switch t.Kind {
	case KindChain:
		return fmt.Sprintf("chain of %d switches, %d hosts", len(e.topo.Switches), n)
	case KindLeafSpine:
		return fmt.Sprintf("leaf-spine, %d leaves x %d hosts, %d spines", t.Leaves, t.HostsPerLeaf, t.Spines)
	case KindFatTree:
		return fmt.Sprintf("fat-tree k=%d, %d hosts", t.K, n)
	case KindExplicit:
		return fmt.Sprintf("explicit, %d switches, %d hosts", len(e.topo.Switches), n)
	case KindNS3:
		return fmt.Sprintf("ns-3 topology file, %d switches, %d hosts", len(e.topo.Switches), n)
	}
	return fmt.Sprintf("star of %d hosts", n)
}

// hostLinkGbps is the fastest host link's rate.
func hostLinkGbps(t *fabric.Topology) float64 {
	g := 0.0
	for h := range t.Hosts {
		_, _, d := t.Peer(h, 0)
		g = max(g, d.Bps/1e9)
	}
	return g
}

// serveMetrics is dpdkrun's Serve for -metrics: every switch's and host's
// collector, labelled with its node's name (nil without an address).
func serveMetrics(f *metrics.Flags) func(dpdkrun.Serving) (func(), error) {
	if f == nil || f.Addr == "" {
		return nil
	}
	return func(sv dpdkrun.Serving) (func(), error) {
		var cs []prometheus.Collector
		for _, s := range sv.Switches {
			cs = append(cs, metrics.OfNode{Node: s.Name, Collector: metrics.Switch(s.Engine, s.Adapter)})
		}
		for _, h := range sv.Hosts {
			cs = append(cs, metrics.OfNode{Node: h.Name, Collector: metrics.Host(h.Host, h.Name, h.Port)})
		}
		return f.Serve(cs...)
	}
}
