// Command testbed runs the papers' experiments, in virtual time (the real
// engines under a discrete-event clock, exact and deterministic) or on DPDK
// virtual devices in real time, and writes results, a summary and plots
// (docs/results.md).
//
//	testbed run EXPERIMENT.toml [-set key=value]... [-clock virtual|dpdk] [-seed N] [-o DIR] [-duration-ms N] [-pcap DIR] [-pcap-ports LIST] [-pcap-snaplen N]
//	testbed sweep EXPERIMENT.toml -set key=v1,v2... [-o DIR] [-clock virtual|dpdk] [-duration-ms N]  # every combination, one directory, an index
//	testbed validate [-set key=value]... EXPERIMENT.toml...
//	testbed compare [-o DIR] [-port N] LABEL=RESULTS_DIR...  # queue and fair rate of several runs on shared axes
//	testbed schemes
//	testbed nodes EXPERIMENT.toml [-inventory FILE] -o DIR  # configs, inventory and Ansible playbook for real nodes
//	testbed collect [-o OUT] DIR       # merge the nodes' results (DIR/results/<node>/) into one results directory
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/testbed"
	"github.com/ccbed/ccbed/testbed/report"
)

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  testbed run EXPERIMENT.toml [-set key=value]... [-clock virtual|dpdk] [-seed N] [-o DIR] [-duration-ms N]
              [-pcap DIR] [-pcap-ports s0.p3,h2,...] [-pcap-snaplen N]
  testbed sweep EXPERIMENT.toml -set key=v1,v2,... [-set ...] [-o DIR] [-clock virtual|dpdk] [-duration-ms N]
  testbed validate [-set key=value]... EXPERIMENT.toml...
  testbed compare [-o DIR] [-port N] LABEL=RESULTS_DIR...
  testbed schemes
  testbed nodes EXPERIMENT.toml [-inventory FILE] -o DIR
  testbed collect [-o OUT] DIR
`)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "run":
		err = run(args)
	case "sweep":
		err = sweep(args)
	case "validate":
		err = validate(args)
	case "schemes":
		schemes()
	case "nodes":
		err = nodes(args)
	case "collect":
		err = collect(args)
	case "compare":
		err = compare(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbed:", err)
		os.Exit(1)
	}
}

// parse splits args into the experiment path and flags (flags may follow it).
func parse(fs *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("%s: want one experiment file, got %d", fs.Name(), len(pos))
	}
	return pos[0], nil
}

// overrides is a repeatable -set key=value flag.
type overrides []string

func (o *overrides) String() string      { return strings.Join(*o, " ") }
func (o *overrides) Set(kv string) error { *o = append(*o, kv); return nil }

const setUsage = "override a key of the experiment file: -set cc.scheme=dcqcn, -set topology.link_gbps=25, -set cc.params.q_ref_bytes=50000 (repeatable; docs/results.md)"

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
	outDir *string
	durMs  *float64
	clock  *string
	sets   overrides
}

func addRunFlags(fs *flag.FlagSet, outHelp string) *runFlags {
	f := &runFlags{
		outDir: fs.String("o", "", outHelp),
		durMs:  fs.Float64("duration-ms", 0, "override the experiment's duration"),
		clock:  fs.String("clock", "", "virtual (discrete events) or dpdk (real time on lcores); default: the file's experiment.clock"),
	}
	fs.Var(&f.sets, "set", setUsage)
	return f
}

// load reads the experiment with the flags' overrides applied.
func (f *runFlags) load(path string, sets []string) (*testbed.Experiment, error) {
	e, err := testbed.LoadWith(path, sets)
	if err != nil {
		return nil, err
	}
	if *f.durMs != 0 {
		e.Experiment.DurationMs = *f.durMs
		// The override passes the file's own checks (finite, bounded).
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("-duration-ms %v: %w", *f.durMs, err)
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
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	rf := addRunFlags(fs, "results directory's parent (default: the experiment's output_dir)")
	seed := fs.Uint64("seed", 0, "override the experiment's seed")
	quiet := fs.Bool("q", false, "no live progress line")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the run to this file")
	pcapDir := fs.String("pcap", "", "capture frames to pcap files in this directory, one per port (docs/capture.md)")
	pcapPorts := fs.String("pcap-ports", "", "ports to capture, comma-separated: s0.p3 (a switch port), s0 (all its ports), h2 (a host), switches, hosts (default: the file's [capture], or every switch port)")
	pcapSnaplen := fs.Int("pcap-snaplen", 0, "bytes kept of each captured frame (0: whole frames)")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	snaplenSet := false
	fs.Visit(func(f *flag.Flag) { snaplenSet = snaplenSet || f.Name == "pcap-snaplen" })
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
	if *rf.outDir != "" {
		e.Experiment.OutputDir = *rf.outDir
	}
	if *seed != 0 {
		e.Experiment.Seed = *seed
	}
	capture, err := e.CaptureFromFlags(*pcapDir, *pcapPorts, *pcapSnaplen, snaplenSet)
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
	var progress testbed.Progress
	if !*quiet {
		progress = func(line string) { fmt.Fprintf(os.Stderr, "\r%s   ", line) }
	}
	ctx, stop := signalContext()
	defer stop()
	res, err := testbed.RunWith(ctx, e, os.Stdout, testbed.RunOptions{Progress: progress, Capture: capture})
	if progress != nil && res != nil && res.Fabric != nil && res.Fabric.WallNs > 1e9 {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return err
	}
	if f := res.Fabric; f.Clock == testbed.ClockVirtual {
		wall := float64(f.WallNs) / 1e9
		sim := float64(f.EndNs-f.T0Ns) / 1e9
		fmt.Printf("virtual time: %d events in %.2f s of wall time (%.2f M events/s, %.3g simulated s per wall s), %d frame buffers\n",
			f.Events, wall, float64(f.Events)/wall/1e6, sim/wall, f.FrameBuffers)
	}
	for _, c := range res.Captures {
		dropped := ""
		if c.Dropped > 0 {
			dropped = fmt.Sprintf(", %d not kept up with", c.Dropped)
		}
		fmt.Printf("pcap %s: port %s (link to %s), %d frames%s\n", c.Path, c.Port, c.Peer, c.Frames, dropped)
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

// sweep runs the experiment at every combination of the -set values (a
// cartesian product, the first -set varying slowest) into one directory:
// run-000/, run-001/, ... and index.csv and index.json listing each run's
// settings, directory and headline results.
func sweep(args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	rf := addRunFlags(fs, "sweep directory (default: the experiment's output_dir/<name>-sweep)")
	quiet := fs.Bool("q", false, "no per-run summary tables")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	points, err := testbed.SweepPoints(rf.sets)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	e, err := rf.load(path, points[0])
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	dir := *rf.outDir
	if dir == "" {
		dir = filepath.Join(e.Experiment.OutputDir, e.Experiment.Name+"-sweep")
	}
	ctx, stop := signalContext()
	defer stop()
	var out io.Writer = os.Stdout
	if *quiet {
		out = nil
	}
	idx, err := testbed.Sweep(ctx, dir, points, func(sets []string) (*testbed.Experiment, error) { return rf.load(path, sets) }, out)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	fmt.Printf("%d runs in %s (index: %s, %s)\n", len(idx), dir, testbed.SweepIndexCSV, testbed.SweepIndexJSON)
	return nil
}

func validate(args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var sets overrides
	fs.Var(&sets, "set", setUsage)
	var files []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			files = append(files, args[0])
			args = args[1:]
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("validate: no experiment files")
	}
	for _, p := range files {
		e, err := testbed.LoadWith(p, sets)
		if err != nil {
			return err
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
		fmt.Printf("%s: ok (%s, %s, %d hosts, %d switches, clock %s)\n", p, e.Experiment.Name, e.CC.Scheme,
			len(e.Topo().Hosts), len(e.Topo().Switches), e.Experiment.Clock)
	}
	return nil
}

func schemes() {
	for _, s := range ccalgo.Schemes() {
		role := func(has bool, name string) string {
			if has {
				return name
			}
			return "-"
		}
		r := s.Roles()
		fmt.Printf("%s %s %s %s\n", s.Name, role(r&ccalgo.RoleCP != 0, "CP"), role(r&ccalgo.RoleNP != 0, "NP"), role(r&ccalgo.RoleRP != 0, "RP"))
	}
}

func nodes(args []string) error {
	fs := flag.NewFlagSet("nodes", flag.ContinueOnError)
	outDir := fs.String("o", "nodes", "directory for the per-node files")
	invPath := fs.String("inventory", "", "Ansible INI inventory of the nodes (default: write a template with FILL_IN_ placeholders)")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	e, err := testbed.Load(path)
	if err != nil {
		return err
	}
	if sc := e.Experiment.Scaling; sc != "" {
		// Real nodes run the file as written: a file scaled down for one
		// machine's cores would run scaled on 10-100 GbE NICs too.
		fmt.Fprintf(os.Stderr, "testbed: nodes: warning: %s is scaled for one machine (%s); real nodes run it as written: "+
			"for the paper's scale use its -virtual copy, which is unscaled\n", path, sc)
	}
	var inv *testbed.Inventory
	if *invPath != "" {
		if inv, err = testbed.ReadInventory(*invPath); err != nil {
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
	if inv == nil {
		fmt.Printf("fill in the %s values of %s, then: testbed nodes %s -inventory %s -o %s\n", testbed.Placeholder,
			filepath.Join(*outDir, testbed.InventoryFile), path, filepath.Join(*outDir, testbed.InventoryFile), *outDir)
	} else {
		fmt.Printf("next: go build -o %s/ ./cmd/switchd ./cmd/hostd && ansible-playbook -i %s %s && testbed collect %s\n",
			filepath.Join(*outDir, "bin"), filepath.Join(*outDir, testbed.InventoryFile), filepath.Join(*outDir, testbed.PlaybookFile), *outDir)
	}
	return nil
}

// collect merges the results a playbook fetched into DIR/results/<node>/
// into one results directory, checks the nodes' counters against each other
// and fails when they disagree.
func collect(args []string) error {
	fs := flag.NewFlagSet("collect", flag.ContinueOnError)
	outDir := fs.String("o", "", "results directory (default DIR/merged)")
	dir, err := parse(fs, args)
	if err != nil {
		return err
	}
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
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	outDir := fs.String("o", "results/compare", "directory for the plots")
	port := fs.Int("port", 0, "switch port (queue.csv / fairrate.csv id) to draw")
	var runs []report.CompareRun
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			label, dir, ok := strings.Cut(args[0], "=")
			if !ok || label == "" || dir == "" {
				return fmt.Errorf("compare: %q: want LABEL=RESULTS_DIR", args[0])
			}
			runs = append(runs, report.CompareRun{Label: label, Dir: dir})
			args = args[1:]
		}
	}
	if len(runs) < 1 {
		return fmt.Errorf("compare: no runs (LABEL=RESULTS_DIR ...)")
	}
	for i := range runs {
		runs[i].Port = *port
	}
	files, err := report.ComparePlots(runs, *outDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(f)
	}
	return nil
}
