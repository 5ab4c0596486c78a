// Command testbed runs the papers' experiments, in virtual time (the real
// engines under a discrete-event clock, exact and deterministic) or on DPDK
// virtual devices in real time, and writes results, a summary and plots
// (docs/results.md).
//
//	testbed run EXPERIMENT.toml [-set key=value]... [-clock virtual|dpdk] [-seed N] [-o DIR | -results DIR] [-duration 10ms] [-flows] [-pcap DIR] [-pcap-ports LIST] [-pcap-snaplen N] [-pcap-format pcapng|pcap] [-trace [-trace-nodes LIST] [-trace-kinds LIST]]
//	testbed sweep EXPERIMENT.toml -set key=v1,v2... [-j N] [-o DIR | -results DIR] [-clock virtual|dpdk] [-duration 10ms]  # every combination, N at once, one directory, an index
//	testbed sweep EXPERIMENT.toml -set key=v1,v2... -plan DIR  # the same as commands for GNU parallel or a Slurm array
//	testbed sweep -merge DIR           # the index and plots of what finished in DIR
//	testbed validate [-set key=value]... EXPERIMENT.toml...
//	testbed compare [-o DIR] [-port N] LABEL=RESULTS_DIR...  # queue and fair rate of several runs on shared axes
//	testbed schemes [-v] [SCHEME...]   # -v: each scheme's [cc.params] keys, types, defaults and meanings
//	testbed reference                  # the experiment file's and the schemes' reference (docs/reference.md)
//	testbed export-flows EXPERIMENT.toml [-set key=value]... [-o DIR]  # the flows a run posts, as an ns-3 flow.txt
//	testbed trace TRACE.bin [-csv] [-node NAME,...] [-kind drop,...]  # a run's per-packet trace (run -trace): counts, or every record as CSV
//	testbed nodes EXPERIMENT.toml [-inventory FILE] -o DIR  # configs, inventory and Ansible playbook for real nodes
//	testbed collect [-o DIR] DIR       # merge the nodes' results (DIR/results/<node>/) into one results directory
//	testbed version                    # or testbed -version: the build
//	testbed help [SUBCOMMAND]          # or testbed -h, testbed SUBCOMMAND -h
//
// -o is the output directory of the subcommand that writes it, everywhere:
// run's the run's own directory, sweep's the sweep's, compare's the plots',
// nodes' the per-node files', collect's the merged run's, export-flows' the
// one flow.txt goes in. -results DIR is the results' root of run and sweep
// (DIR/<name>/<run id>/, what -o named before). The old meanings are kept
// for one release with a warning: run's or sweep's -o naming a directory
// that holds other files is read as -results, export-flows' -o ending in
// .txt (or naming a file) is the file (docs/results.md).
//
// The command line follows package cli: -h prints the usage (exit 0), a bad
// flag, an unknown subcommand or a stray argument exits 2, a failed run 1.
// -duration-ms N is the deprecated spelling of -duration Nms. run, sweep,
// validate, compare, nodes, collect and export-flows log status messages to standard error
// (-v: debug too, -q: warnings and errors only, -log-format console|json);
// their tables and results stay on standard output. run reports its progress
// every -progress (2s) and points results/latest at the run's directory.
package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ccbed/ccbed/buildinfo"
	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/testbed"
	"github.com/ccbed/ccbed/testbed/report"
	"github.com/ccbed/ccbed/trace"
	"go.uber.org/zap"
)

// subcommand is one of testbed's subcommands.
type subcommand struct {
	name, synopsis string
	run            func(args []string) error
}

// subcommands are testbed's subcommands, in the order the usage lists them.
var subcommands []subcommand

func init() {
	subcommands = []subcommand{
		{"run", "EXPERIMENT.toml [-set key=value]... [-clock virtual|dpdk] [-seed N] [-o DIR | -results DIR] [-duration 10ms] [-flows] [-pcap DIR] [-pcap-ports LIST] [-pcap-snaplen N] [-pcap-format pcapng|pcap] [-trace [-trace-nodes LIST] [-trace-kinds LIST]]", run},
		{"sweep", "EXPERIMENT.toml -set key=v1,v2,... [-set ...] [-j N] [-o DIR | -results DIR | -plan DIR] [-clock virtual|dpdk] [-duration 10ms]  |  -merge DIR", sweep},
		{"validate", "[-set key=value]... EXPERIMENT.toml...", validate},
		{"compare", "[-o DIR] [-port N] LABEL=RESULTS_DIR...", compare},
		{"schemes", "[-v] [SCHEME...]", schemes},
		{"reference", "", reference},
		{"export-flows", "EXPERIMENT.toml [-set key=value]... [-o DIR]", exportFlows},
		{"trace", "TRACE.bin [-csv] [-node NAME,...] [-kind KIND,...]", traceCmd},
		{"nodes", "EXPERIMENT.toml [-inventory FILE] -o DIR", nodes},
		{"collect", "[-o DIR] DIR", collect},
		{"version", "", version},
		{"help", "[SUBCOMMAND]", help},
	}
}

// usage writes testbed's usage: every subcommand's synopsis.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: testbed SUBCOMMAND [flags] [arguments]  (testbed SUBCOMMAND -h: its flags)")
	fmt.Fprintln(w, "\nsubcommands:")
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  testbed %s %s\n", sc.name, sc.synopsis)
	}
	fmt.Fprintln(w, "\ntestbed -h, testbed help: this text; testbed -version, testbed version: the build")
}

// names lists the subcommands, for errors.
func names() string {
	var n []string
	for _, sc := range subcommands {
		n = append(n, sc.name)
	}
	return strings.Join(n, ", ")
}

func main() { os.Exit(command(os.Args[1:])) }

// command is testbed's command line: it returns the exit code (package cli).
func command(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "testbed: missing subcommand: want one of", names())
		usage(os.Stderr)
		return cli.ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(os.Stdout)
		return cli.ExitOK
	case "-version", "--version":
		return cli.Exit("testbed", version(args[1:]))
	}
	for _, sc := range subcommands {
		if sc.name == args[0] {
			err := sc.run(args[1:])
			if current != nil {
				return current.Exit(err) // under -log-format json, a JSON entry
			}
			return cli.Exit("testbed", err)
		}
	}
	fmt.Fprintf(os.Stderr, "testbed: unknown subcommand %q: want one of %s\n", args[0], names())
	usage(os.Stderr)
	return cli.ExitUsage
}

// logging are the subcommands with the log flags (-v, -q, -log-format).
var logging = map[string]bool{"run": true, "sweep": true, "validate": true, "compare": true, "nodes": true, "collect": true, "export-flows": true}

// current is the subcommand's command that newCommand made last: command
// reports the subcommand's error with it.
var current *cli.Command

// newCommand is subcommand name's cli.Command, with the log flags when the
// subcommand has them.
func newCommand(name, summary string) *cli.Command {
	for _, sc := range subcommands {
		if sc.name == name {
			c := cli.New("testbed "+name, sc.synopsis, summary)
			if logging[name] {
				c.Logging()
			}
			current = c
			return c
		}
	}
	panic("testbed: no subcommand " + name)
}

// version prints the build (package buildinfo).
func version(args []string) error {
	c := newCommand("version", "Print the build: module, version, VCS revision, Go.")
	if _, err := c.Parse(args); err != nil {
		return err
	}
	fmt.Println("testbed", buildinfo.Read())
	return nil
}

// help prints testbed's usage, or a subcommand's.
func help(args []string) error {
	c := newCommand("help", "Print testbed's usage, or a subcommand's.").Positional("SUBCOMMAND", 0, 1)
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		usage(os.Stdout)
		return nil
	}
	for _, sc := range subcommands {
		if sc.name == pos[0] {
			return sc.run([]string{"-h"})
		}
	}
	return c.Errorf("unknown subcommand %q: want one of %s", pos[0], names())
}

// overrides is a repeatable -set key=value flag.
type overrides []string

func (o *overrides) String() string      { return strings.Join(*o, " ") }
func (o *overrides) Set(kv string) error { *o = append(*o, kv); return nil }

const setUsage = "override a key of the experiment file: -set cc.scheme=dcqcn, -set topology.link_gbps=25, -set cc.params.q_ref_bytes=50000, -set flows.0.rate_gbps=5 (the first [[flows]]) (repeatable; docs/results.md)"

// signalContext is a context that SIGINT or SIGTERM ends, so that a run stops
// cleanly and still writes its results, marked interrupted. After the first
// signal the default action is back: a second one kills the process.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// runFlags are the flags run and sweep share.
type runFlags struct {
	outDir    *string
	results   *string
	dur       time.Duration
	durMsFlag float64
	// durMs is the experiment's duration in ms from -duration (or the
	// deprecated -duration-ms), durFlag the flag as given; 0: the file's.
	durMs   float64
	durFlag string
	clock   *string
	sets    overrides
}

func addRunFlags(c *cli.Command, outHelp, resultsHelp string) *runFlags {
	f := &runFlags{
		outDir:  c.Flags.String("o", "", outHelp),
		results: c.Flags.String("results", "", resultsHelp),
		clock:   c.Flags.String("clock", "", "virtual (discrete events) or dpdk (real time on lcores); default: the file's experiment.clock"),
	}
	c.Duration(&f.dur, "duration", 0, "override the experiment's duration, a Go `duration` such as 10ms or 1.5s (0: the file's)")
	c.Flags.Float64Var(&f.durMsFlag, "duration-ms", 0, "deprecated: the experiment's duration in ms; write -duration 10ms")
	c.Flags.Var(&f.sets, "set", setUsage)
	return f
}

// parse parses the run and sweep command line: one experiment file (unless
// c's Positional says otherwise; "" when none is given).
func (f *runFlags) parse(c *cli.Command, args []string) (string, error) {
	if c.MaxArgs == 0 {
		c.Positional("EXPERIMENT.toml", 1, 1)
	}
	pos, err := c.Parse(args)
	if err != nil || len(pos) == 0 {
		return "", err
	}
	switch {
	case c.Set("duration") && c.Set("duration-ms"):
		return "", c.Errorf("give -duration alone: -duration-ms is its deprecated spelling")
	case c.Set("duration-ms"):
		if err := config.Time(f.durMsFlag, "ms"); err != nil {
			return "", c.Errorf("-duration-ms: %v", err)
		}
		c.Log().Warn(fmt.Sprintf("-duration-ms is deprecated: write -duration %vms", f.durMsFlag))
		f.durMs, f.durFlag = f.durMsFlag, fmt.Sprintf("-duration-ms %v", f.durMsFlag)
	case c.Set("duration") && f.dur > 0:
		f.durMs, f.durFlag = float64(f.dur)/1e6, "-duration "+f.dur.String()
	}
	return pos[0], nil
}

// words are the flags that change the experiment (-duration, -clock), as
// words of a command line that gives them to testbed run.
func (f *runFlags) words() []string {
	var w []string
	if f.durMs != 0 {
		w = append(w, "-duration", strconv.FormatFloat(f.durMs, 'f', -1, 64)+"ms")
	}
	if *f.clock != "" {
		w = append(w, "-clock", *f.clock)
	}
	return w
}

// resolveRun applies run's -o and -results to e and runDir: -o DIR is the
// run's own directory (as -run-dir), unless DIR holds other files: then it
// is the deprecated -o, the results' root, with a warning.
func (f *runFlags) resolveRun(c *cli.Command, e *testbed.Experiment, runDir *string) error {
	root := *f.results
	if dir := *f.outDir; dir != "" {
		kind, err := testbed.ClassifyOut(dir, report.SummaryFile)
		switch {
		case err != nil:
			return fmt.Errorf("run: %w", err)
		case kind == testbed.OutLegacy:
			c.Log().Warn(testbed.OutLegacyWarning("run", dir, e.Experiment.Name))
			root = dir
		default:
			*runDir = dir
		}
	}
	if root != "" {
		e.Experiment.OutputDir = root
	}
	return nil
}

// load reads the experiment with the flags' overrides applied.
func (f *runFlags) load(path string, sets []string) (*testbed.Experiment, error) {
	e, err := testbed.LoadWith(path, sets)
	if err != nil {
		return nil, err
	}
	if f.durMs != 0 {
		e.Experiment.DurationMs = f.durMs
		// The override passes the file's own checks (finite, bounded).
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", f.durFlag, err)
		}
	}
	if *f.clock != "" {
		if *f.clock != testbed.ClockVirtual && *f.clock != testbed.ClockDPDK {
			return nil, fmt.Errorf("-clock %q: want %s or %s", *f.clock, testbed.ClockVirtual, testbed.ClockDPDK)
		}
		e.Experiment.Clock = *f.clock
	}
	return e, nil
}

func run(args []string) error {
	c := newCommand("run", "Run an experiment in virtual time or on DPDK; write its results directory (docs/results.md).")
	fs := c.Flags
	rf := addRunFlags(c, "the run's own `DIR`: its files go into DIR itself, which must be absent, empty or an earlier run's (replaced); "+
		"deprecated for one release: a DIR holding other files is read as -results DIR, with a warning",
		"the results' root `DIR`: the run goes to DIR/<name>/<run id>/ and DIR/latest points at it (default: the experiment's output_dir)")
	seed := fs.Uint64("seed", 0, "override the experiment's seed")
	var every time.Duration
	c.Duration(&every, "progress", 2*time.Second, "report the run's progress this often at info level (0: never; -q: never)")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the run to this file")
	memProfile := fs.String("memprofile", "", "write a Go heap profile to this file when the run ends, its network still in memory (go tool pprof -sample_index=inuse_space)")
	pcapDir := fs.String("pcap", "", "capture frames into this directory: a pcapng file per node, or with -pcap-format pcap a pcap file per port (docs/capture.md)")
	pcapPorts := fs.String("pcap-ports", "", "ports to capture, comma-separated: s0.p3 (a switch port), s0 (all its ports), h2 (a host), switches, hosts (default: the file's [capture], or every switch port)")
	pcapSnaplen := fs.Int("pcap-snaplen", 0, "bytes kept of each captured frame (0: whole frames)")
	traceOn := fs.Bool("trace", false, "virtual time: write the per-packet event trace of the switches to trace.bin in the run's directory (enqueue, dequeue, drop, ECN mark, PFC pause and resume; testbed trace prints it; needs -workers 1, the default with -trace; docs/results.md)")
	traceNodes := fs.String("trace-nodes", "", "with -trace: the switches traced, comma-separated names (default: the file's [trace] nodes, or every switch)")
	traceKinds := fs.String("trace-kinds", "", "with -trace: the event kinds kept, comma-separated: "+strings.Join(trace.KindNames(), ", ")+" (default: the file's [trace] kinds, or every kind)")
	allFlows := fs.Bool("flows", false, "print every flow in the terminal summary (default: every flow up to 32, else the 5 with the largest FCT slowdown; -v stays debug logging)")
	pcapFormat := fs.String("pcap-format", "", "capture file format: pcapng (default: a file per node, an interface per port, each frame's direction) or pcap (a file per port, as before; default: the file's [capture] format, else pcapng)")
	workers := fs.Int("workers", runtime.NumCPU(), "virtual time: run the fabric in partitions on this many goroutines; the results are the same for any number (1: the serial driver; default: this machine's logical CPUs, 1 with -pcap or a [capture]; docs/fabric.md)")
	partition := fs.String("partition", "switch", "virtual time with -workers: what a partition holds: switch (a switch and its hosts) or node (every node alone)")
	groups := fs.Int("partition-groups", 0, "virtual time: deal the partitions into this many groups of even load (by their ports' line rates; 0: as they are); with -workers 1, runs the parallel driver on one goroutine")
	mflags := metrics.AddFlags(fs)
	runDir := fs.String("run-dir", "", "the run's own `DIR`, as -o but never read in -o's deprecated meaning (what testbed sweep -plan writes): staged and renamed into place, replacing an earlier run's results there; the latest links stay as they are")
	path, err := rf.parse(c, args)
	if err != nil {
		return err
	}
	switch {
	case *runDir != "" && *rf.outDir != "":
		return c.Errorf("give -o or -run-dir, not both")
	case *rf.results != "" && (*rf.outDir != "" || *runDir != ""):
		return c.Errorf("give -results or -o, not both: -o names the run's own directory, -results the root it would go below")
	}
	snaplenSet := c.Set("pcap-snaplen")
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	e, err := rf.load(path, rf.sets)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	for _, w := range e.Warnings() {
		c.Log().Warn(w)
	}
	if err := rf.resolveRun(c, e, runDir); err != nil {
		return err
	}
	if *seed != 0 {
		e.Experiment.Seed = *seed
	}
	capture, err := e.CaptureFromFlags(*pcapDir, *pcapPorts, *pcapSnaplen, snaplenSet, *pcapFormat)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	tr, err := e.TraceFromFlags(*traceOn, *traceNodes, *traceKinds)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	fmt.Printf("experiment %s (%s), %d hosts, %d switches, %g ms, clock %s, seed %d\n", e.Experiment.Name, e.CC.Scheme,
		len(e.Topo().Hosts), len(e.Topo().Switches), e.Experiment.DurationMs, e.Experiment.Clock, e.Experiment.Seed)
	if e.Experiment.Mirrors != "" {
		fmt.Println("mirrors:", e.Experiment.Mirrors)
	}
	if e.Experiment.Scaling != "" {
		fmt.Println("scaling:", e.Experiment.Scaling)
	}
	if err := mflags.Check(); err != nil {
		return c.Errorf("%v", err)
	}
	if mflags.Addr != "" && e.Experiment.Clock != testbed.ClockDPDK {
		return c.Errorf("-metrics serves a run on the DPDK clock (-clock dpdk); a virtual-time run has no wall-clock rates to scrape")
	}
	opts := testbed.RunOptions{Capture: capture, Trace: tr, Log: c.Log(), Dir: *runDir, Metrics: mflags, Table: report.TableOptions{AllFlows: *allFlows},
		Parallel: fabric.Parallel{Workers: *workers, Groups: *groups}}
	if *workers < 1 {
		return c.Errorf("-workers %d: want 1 or more", *workers)
	}
	if capture != nil {
		if !c.Set("workers") {
			opts.Parallel.Workers = 1 // a capture needs the serial driver
		} else if *workers > 1 {
			return c.Errorf("-workers %d: a capture (-pcap, [capture]) needs the serial driver: -workers 1", *workers)
		}
	}
	if tr != nil {
		if !c.Set("workers") {
			opts.Parallel.Workers = 1 // a trace needs the serial driver
		} else if *workers > 1 {
			return c.Errorf("-workers %d: the per-packet trace (-trace, [trace]) needs the serial driver: -workers 1", *workers)
		}
	}
	switch *partition {
	case "switch":
		if opts.Parallel.Workers > 1 || *groups > 0 {
			opts.Parallel.Partition = fabric.PartitionSwitch
		}
	case "node":
		opts.Parallel.Partition = fabric.PartitionNode
	default:
		return c.Errorf("-partition %q: want switch or node", *partition)
	}
	prog := c.Progress(every)
	if prog != nil {
		opts.Progress = func(p fabric.Progress) { prog.Report(p.String(), progressFields(p)...) }
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := testbed.RunWith(ctx, e, prog.Writer(os.Stdout), opts)
	prog.Done()
	if err != nil {
		return err
	}
	if *memProfile != "" {
		// res holds the fabric: its engines are still live here.
		runtime.GC()
		if err := writeHeapProfile(*memProfile); err != nil {
			return err
		}
		runtime.KeepAlive(res)
	}
	if f := res.Fabric; f.Clock == testbed.ClockVirtual {
		wall := float64(f.WallNs) / 1e9
		sim := float64(f.EndNs-f.T0Ns) / 1e9
		fmt.Printf("virtual time: %d events in %.2f s of wall time (%.2f M events/s, %.3g simulated s per wall s), %d frame buffers\n",
			f.Events, wall, float64(f.Events)/wall/1e6, sim/wall, f.FrameBuffers)
		if f.Parallel != nil {
			fmt.Printf("parallel: %s\n", f.Parallel)
		}
	}
	for _, c := range res.Captures {
		dropped := ""
		if c.Dropped > 0 {
			dropped = fmt.Sprintf(", %d not kept up with", c.Dropped)
		}
		fmt.Printf("capture %s: port %s (link to %s), %d frames%s\n", c.Path, c.Port, c.Peer, c.Frames, dropped)
	}
	for _, l := range res.Loops {
		fmt.Printf("lcore %d %-10s iterations %d busy %.1f%% worst stall %.2f ms\n", l.Lcore, l.Name,
			l.Iterations, 100*float64(l.BusyPolls)/float64(max(l.Iterations, 1)), float64(l.MaxStallNs)/1e6)
	}
	if res.MbufsLeaked != 0 {
		return fmt.Errorf("%d mbufs not returned to the pool", res.MbufsLeaked)
	}
	return nil
}

// writeHeapProfile writes the heap profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// progressFields are a run's progress as log fields: events only in virtual
// time, eta only once known.
func progressFields(p fabric.Progress) []zap.Field {
	f := []zap.Field{zap.String("clock", p.Clock), zap.Float64("time_ms", math.Round(float64(p.SimNs)/1e3)/1e3),
		zap.Float64("end_ms", float64(p.EndNs)/1e6), zap.Float64("done_pct", math.Round(1000*p.Done())/10),
		zap.Uint64("flows_done", p.FlowsDone), zap.Uint64("flows_started", p.FlowsStarted),
		zap.Float64("wall_s", math.Round(p.Wall.Seconds()*1000)/1000)}
	if p.Clock == fabric.ClockVirtual {
		f = append(f, zap.Int64("events", p.Events), zap.Float64("events_per_s", math.Round(p.EventsPerS)),
			zap.Float64("sim_per_wall", p.SimPerWall))
	}
	if p.HeapBytes > 0 {
		f = append(f, zap.Float64("heap_mib", math.Round(float64(p.HeapBytes)/(1<<20))))
	}
	if p.PeakRSSBytes > 0 {
		f = append(f, zap.Float64("peak_rss_mib", math.Round(float64(p.PeakRSSBytes)/(1<<20))))
	}
	if s := p.Parallel; s != nil {
		busy := make([]float64, len(s.BusyNs))
		for i, ns := range s.BusyNs {
			busy[i] = math.Round(1000*float64(ns)/float64(max(s.WallNs, 1))) / 1000
		}
		f = append(f, zap.Int("workers", s.Workers), zap.Float64s("worker_busy", busy),
			zap.Float64("parallelism", math.Round(100*s.Parallelism())/100),
			zap.Float64("sync_us_per_window", math.Round(float64(s.SyncPerWindow())/10)/100))
	}
	if eta := p.ETA(); eta >= 0 {
		f = append(f, zap.Duration("eta", eta))
	}
	return f
}

// sweep runs the experiment at every combination of the -set values (a
// cartesian product, the first -set varying slowest) into one directory:
// run-000/, run-001/, ... and index.csv and index.json listing each run's
// settings, directory, status and metrics, and plots of each metric that
// varies against each swept key (sweep_<metric>_vs_<key>.png and .svg), -j
// runs at once. -plan writes the runs as commands instead (jobs.txt, a Slurm
// array script), -merge the index and plots of those that finished.
func sweep(args []string) error {
	c := newCommand("sweep", "Run the experiment at every combination of the -set values into one directory, with an index; or plan the runs for GNU parallel or Slurm, and merge what finished.")
	c.Positional("EXPERIMENT.toml", 0, 1)
	rf := addRunFlags(c, "the sweep's own `DIR`: plan.json, the index, the plots and run-NNN/ go into DIR itself, which must be absent or empty; "+
		"deprecated for one release: a DIR holding other files is read as -results DIR, with a warning",
		"the results' root `DIR`: the sweep goes to DIR/<name>-sweep/<sweep id>/ and DIR/<name>-sweep/latest points at it (default: the experiment's output_dir)")
	jobs := c.Flags.Int("j", runtime.NumCPU(), "run this many points at once (default: this machine's logical CPUs; on the DPDK clock always one at a time)")
	planDir := c.Flags.String("plan", "", "run nothing: write into `DIR` one testbed run command per point (jobs.txt, a GNU parallel job list) and a Slurm array script (slurm.sh), each run writing DIR/run-NNN; then testbed sweep -merge DIR")
	mergeDir := c.Flags.String("merge", "", "run nothing: build index.csv, index.json and the plots of the sweep in `DIR` (a -plan's or a sweep's) from the runs that finished, listing those missing")
	var every time.Duration
	c.Duration(&every, "progress", 2*time.Second, "report the sweep's progress this often at info level (0: never; -q: never)")
	path, err := rf.parse(c, args)
	if err != nil {
		return err
	}
	if *mergeDir != "" {
		if path != "" || *planDir != "" || len(rf.sets) > 0 {
			return c.Errorf("-merge DIR takes no experiment file, -set or -plan: the plan is DIR's plan.json")
		}
		return mergeSweep(c, *mergeDir)
	}
	switch {
	case path == "":
		return c.Errorf("missing EXPERIMENT.toml (or -merge DIR)")
	case *jobs < 1:
		return c.Errorf("-j %d: want 1 or more", *jobs)
	case *planDir != "" && (*rf.outDir != "" || *rf.results != ""):
		return c.Errorf("give -o or -plan, not both: a plan's runs write into its directory")
	case *rf.results != "" && *rf.outDir != "":
		return c.Errorf("give -results or -o, not both: -o names the sweep's own directory, -results the root it would go below")
	}
	points, err := testbed.SweepPoints(rf.sets)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	load := func(sets []string) (*testbed.Experiment, error) { return rf.load(path, sets) }
	if *planDir != "" {
		return planSweep(c, *planDir, path, rf, points, load)
	}
	e, err := load(points[0])
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for _, w := range e.Warnings() { // the first point's: what the file says, once
		c.Log().Warn(w)
	}
	outDir := e.Experiment.OutputDir
	if *rf.results != "" {
		outDir = *rf.results
	}
	o := testbed.SweepOptions{Jobs: *jobs, Log: c.Log(), File: path, Flags: rf.words()}
	if dir := *rf.outDir; dir != "" {
		kind, err := testbed.ClassifyOut(dir, testbed.SweepPlanFile)
		switch {
		case err != nil:
			return fmt.Errorf("sweep: %w", err)
		case kind == testbed.OutLegacy:
			c.Log().Warn(testbed.OutLegacyWarning("sweep", dir, e.Experiment.Name))
			outDir = dir
		case kind == testbed.OutSame:
			return fmt.Errorf("sweep: -o %s holds a sweep already: give a directory of its own (absent or empty)", dir)
		default:
			o.Dir = dir
		}
	}
	parent := filepath.Join(outDir, e.Experiment.Name+"-sweep")
	ctx, stop := signalContext()
	defer stop()
	prog := c.Progress(every)
	if !c.Quiet() { // -q: no per-run summary tables either
		o.Out = prog.Writer(os.Stdout)
	}
	if prog != nil {
		o.Progress = func(p testbed.SweepProgress) { prog.Report(p.String(), sweepFields(p)...) }
	}
	dir, idx, err := testbed.Sweep(ctx, parent, points, load, o)
	prog.Done()
	if dir != "" {
		c.Log().Info("sweep done", zap.Int("runs", len(idx)), zap.String("dir", dir),
			zap.Strings("index", []string{filepath.Join(dir, testbed.SweepIndexCSV), filepath.Join(dir, testbed.SweepIndexJSON)}))
	}
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// sweepFields are a sweep's progress as log fields.
func sweepFields(p testbed.SweepProgress) []zap.Field {
	var running []string
	for _, r := range p.Running {
		running = append(running, fmt.Sprintf("%s %.0f%%", r.Dir, 100*r.Progress.Done()))
	}
	return []zap.Field{zap.Int("done", p.Done), zap.Int("total", p.Total), zap.Int("failed", p.Failed), zap.Strings("running", running)}
}

// planSweep writes the sweep's points into dir as testbed run commands
// (testbed.PlanSweep), after loading and checking every one.
func planSweep(c *cli.Command, dir, path string, rf *runFlags, points [][]string, load func([]string) (*testbed.Experiment, error)) error {
	o := testbed.SweepOptions{File: path, Flags: rf.words()}
	files, err := testbed.PlanSweep(dir, points, load, o, func(sets []string, e *testbed.Experiment, runDir string) []string {
		args := []string{"run", path}
		for _, s := range sets {
			args = append(args, "-set", s)
		}
		return append(append(args, o.Flags...), "-seed", strconv.FormatUint(e.Experiment.Seed, 10), "-run-dir", runDir)
	})
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for _, f := range files {
		fmt.Println(f)
	}
	c.Log().Info("planned: run the commands from this directory, then merge", zap.Int("runs", len(points)),
		zap.String("parallel", "parallel -j N < "+filepath.Join(dir, testbed.SweepJobsFile)),
		zap.String("slurm", "sbatch "+filepath.Join(dir, testbed.SweepSlurmFile)),
		zap.String("merge", "testbed sweep -merge "+dir))
	return nil
}

// mergeSweep builds the index and plots of the sweep in dir from the runs
// that finished (testbed.MergeSweep) and lists those that did not.
func mergeSweep(c *cli.Command, dir string) error {
	runs, err := testbed.MergeSweep(dir)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	ok := 0
	for _, r := range runs {
		if r.Status == testbed.SweepOK {
			ok++
			continue
		}
		fmt.Printf("%s %s: %s (%s)\n", r.Dir, r.Status, r.Error, strings.Join(r.Sets, " "))
	}
	c.Log().Info("sweep merged", zap.Int("runs", len(runs)), zap.Int("ok", ok), zap.Int("missing_or_failed", len(runs)-ok),
		zap.Strings("index", []string{filepath.Join(dir, testbed.SweepIndexCSV), filepath.Join(dir, testbed.SweepIndexJSON)}))
	return nil
}

func validate(args []string) error {
	c := newCommand("validate", "Check experiment files as run would, without running them.").Positional("EXPERIMENT.toml", 1, -1)
	var sets overrides
	c.Flags.Var(&sets, "set", setUsage)
	files, err := c.Parse(args)
	if err != nil {
		return err
	}
	for _, p := range files {
		e, err := testbed.LoadWith(p, sets)
		if err != nil {
			return err
		}
		for _, w := range e.Warnings() {
			c.Log().Warn(w)
		}
		plan, err := e.Plan()
		if err != nil {
			return err
		}
		if err := e.CheckClock(plan); err != nil {
			return err
		}
		if err := e.CheckCapture(); err != nil {
			return err
		}
		if err := e.CheckTrace(); err != nil {
			return err
		}
		fmt.Printf("%s: ok (%s, %s, %d hosts, %d switches, clock %s)\n", p, e.Experiment.Name, e.CC.Scheme,
			len(e.Topo().Hosts), len(e.Topo().Switches), e.Experiment.Clock)
	}
	return nil
}

func schemes(args []string) error {
	c := newCommand("schemes", "List every CC scheme (or those named) and its roles: CP (switch), NP (receiver), RP (sender).").Positional("SCHEME", 0, -1)
	verbose := c.Flags.Bool("v", false, "with each scheme's doc and its [cc.params] keys: type, default and meaning (Markdown)")
	names, err := c.Parse(args)
	if err != nil {
		return err
	}
	list := ccalgo.Schemes()
	if len(names) > 0 {
		list = list[:0:0]
		for _, n := range names {
			s, err := ccalgo.Lookup(n)
			if err != nil {
				return c.Errorf("%v", err)
			}
			list = append(list, s)
		}
	}
	for i, s := range list {
		line := s.Name + " " + s.Roles().String()
		if !*verbose {
			fmt.Println(line)
			continue
		}
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("## %s\n\n%s\n", line, s.Doc)
		if err := testbed.WriteSchemeParams(os.Stdout, s.Name); err != nil {
			return err
		}
	}
	if *verbose {
		fmt.Printf("\n(defaults at %g Gb/s, base RTT %g us, MTU %d B, expected_flows %d; docs/reference.md)\n",
			testbed.ReferenceEnv.LinkBps/1e9, float64(testbed.ReferenceEnv.BaseRTT)/1e3, testbed.ReferenceEnv.MTU, testbed.ReferenceEnv.ExpectedFlows)
	}
	return nil
}

// reference prints the experiment file's and the schemes' reference.
func reference(args []string) error {
	c := newCommand("reference", "Print the reference of the experiment file and of every scheme's [cc.params] (Markdown; docs/reference.md).")
	if _, err := c.Parse(args); err != nil {
		return err
	}
	return testbed.WriteReference(os.Stdout)
}

// exportFlows writes the flows the experiment's run posts as an HPCC ns-3
// flow.txt.
func exportFlows(args []string) error {
	c := newCommand("export-flows", "Write the flows a run of the experiment posts (static, incast and workload flows) as an HPCC ns-3 flow.txt.").Positional("EXPERIMENT.toml", 1, 1)
	var sets overrides
	c.Flags.Var(&sets, "set", setUsage)
	out := c.Flags.String("o", "", "the `DIR` to write flow.txt in (created if missing; default: standard output); "+
		"deprecated for one release: a path ending in .txt, or a file that exists, is the file itself, with a warning")
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	path, legacy, err := testbed.ExportFlowsPath(*out)
	if err != nil {
		return err
	}
	if legacy {
		c.Log().Warn(fmt.Sprintf("-o %s names the file itself, the deprecated meaning: write -o %s (the directory flow.txt goes in; "+
			"from the next release -o will only mean that)", *out, filepath.Dir(*out)))
	}
	e, err := testbed.LoadWith(pos[0], sets)
	if err != nil {
		return err
	}
	if path == "" {
		_, err = e.ExportNS3Flows(os.Stdout)
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	n, err := e.ExportNS3Flows(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	c.Log().Info("flows written", zap.String("file", path), zap.Int("flows", n))
	return nil
}

func nodes(args []string) error {
	c := newCommand("nodes", "Write every node's config, an inventory and an Ansible playbook for real nodes.").Positional("EXPERIMENT.toml", 1, 1)
	outDir := c.Flags.String("o", "nodes", "directory for the per-node files")
	invPath := c.Flags.String("inventory", "", "Ansible INI inventory of the nodes (default: write a template with FILL_IN_ placeholders)")
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	path := pos[0]
	e, err := testbed.Load(path)
	if err != nil {
		return err
	}
	if sc := e.Experiment.Scaling; sc != "" {
		// Real nodes run the file as written: a file scaled down for one
		// machine's cores would run scaled on 10-100 GbE NICs too.
		c.Log().Warn("the experiment is scaled for one machine; real nodes run it as written: "+
			"for the paper's scale use its -virtual copy, which is unscaled", zap.String("file", path), zap.String("scaling", sc))
	}
	var inv *testbed.Inventory
	if *invPath != "" {
		if inv, err = testbed.ReadInventory(*invPath); err != nil {
			return err
		}
		if err := inv.CheckPlaybookHosts(); err != nil {
			return err
		}
	}
	files, err := e.NodeFiles(*outDir, inv)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(f)
	}
	inventory := filepath.Join(*outDir, testbed.InventoryFile)
	if inv == nil {
		c.Log().Info("next: fill in the inventory's "+testbed.Placeholder+" values, then run the command",
			zap.String("inventory", inventory),
			zap.String("command", fmt.Sprintf("testbed nodes %s -inventory %s -o %s", path, inventory, *outDir)))
	} else {
		c.Log().Info("next: build the daemons, run the playbook, collect the results", zap.String("command",
			fmt.Sprintf("go build -o %s/ ./cmd/switchd ./cmd/hostd && ansible-playbook -i %s %s && testbed collect %s",
				filepath.Join(*outDir, "bin"), inventory, filepath.Join(*outDir, testbed.PlaybookFile), *outDir)))
	}
	return nil
}

// collect merges the results a playbook fetched into DIR/results/<node>/
// into one results directory, checks the nodes' counters against each other
// and fails when they disagree.
func collect(args []string) error {
	c := newCommand("collect", "Merge the nodes' results (DIR/results/<node>/) into one results directory.").Positional("DIR", 1, 1)
	outDir := c.Flags.String("o", "", "results directory (default DIR/merged)")
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	dir := pos[0]
	res, err := testbed.Collect(dir, *outDir, os.Stdout)
	if err != nil {
		return err
	}
	if !res.Consistency.OK {
		return fmt.Errorf("collect: the nodes' counters disagree: %s", res.Consistency.Text)
	}
	return nil
}

// compare draws several runs' queue and fair rate on shared axes, time scaled
// to the fastest run's link rate and the fair rate normalised to each run's C.
func compare(args []string) error {
	c := newCommand("compare", "Draw several runs' queue and fair rate on shared axes.").Positional("LABEL=RESULTS_DIR", 1, -1)
	outDir := c.Flags.String("o", "results/compare", "directory for the plots")
	port := c.Flags.Int("port", report.HottestPort, "switch port (queue.csv / fairrate.csv id) to draw (default: each run's hottest, the largest p99 queue)")
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	var runs []report.CompareRun
	for _, a := range pos {
		label, dir, ok := strings.Cut(a, "=")
		if !ok || label == "" || dir == "" {
			return c.Errorf("%q: want LABEL=RESULTS_DIR", a)
		}
		// An experiment's directory stands for its newest run.
		runs = append(runs, report.CompareRun{Label: label, Dir: report.ResolveRun(dir)})
	}
	for i := range runs {
		runs[i].Port = *port
	}
	files, err := report.ComparePlots(runs, *outDir)
	if err != nil {
		return err
	}
	for _, r := range runs {
		c.Log().Info("drawn", zap.String("run", r.Label), zap.String("dir", r.Dir), zap.Int("port", r.Port))
	}
	for _, f := range files {
		fmt.Println(f)
	}
	return nil
}

// traceCmd prints a run's per-packet trace (testbed run -trace): each
// node's count of each event kind, or with -csv every record.
func traceCmd(args []string) error {
	c := newCommand("trace", "Print a run's per-packet event trace (trace.bin, testbed run -trace): each switch's count of each event kind, or with -csv every record as CSV (docs/results.md).").Positional("TRACE.bin", 1, 1)
	asCSV := c.Flags.Bool("csv", false, "print every record as CSV, one header line (time_ns, node, kind, port, priority, frame_bytes, queue_bytes, src_ip, dst_ip, src_port, dst_port, qp)")
	nodeList := c.Flags.String("node", "", "only these nodes' records, comma-separated names")
	kindList := c.Flags.String("kind", "", "only these kinds, comma-separated: "+strings.Join(trace.KindNames(), ", "))
	pos, err := c.Parse(args)
	if err != nil {
		return err
	}
	kinds, err := trace.ParseKinds(*kindList)
	if err != nil {
		return c.Errorf("-kind: %v", err)
	}
	var q testbed.TraceQuery
	q.Kinds = kinds
	if *nodeList != "" {
		for _, n := range strings.Split(*nodeList, ",") {
			q.Nodes = append(q.Nodes, strings.TrimSpace(n))
		}
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	if *asCSV {
		err = testbed.WriteTraceCSV(os.Stdout, f, q)
	} else {
		err = testbed.WriteTraceSummary(os.Stdout, f, q)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	return nil
}
