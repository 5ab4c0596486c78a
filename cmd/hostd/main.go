// Command hostd runs one ccbed traffic-generator host on DPDK: hostd -c
// host.toml. It starts the EAL, a mempool and the port named in the file, runs
// the host engine (hostd.Engine) on one lcore (rx and tx in one loop) or two (rx,
// tx), stops after duration_s or on SIGINT / SIGTERM, and writes rate.csv,
// fct.csv, counters.json and run.json into results_dir. See
// configs/host-*.toml.
//
// The port comes up with an mbuf data room that holds the host's largest frame
// (mtu_bytes, jumbo included), the NIC's flow control set explicitly
// (-nic-flow-control, default off), a wait for link-up (-link-timeout) and a
// warning when the NIC's speed differs from link_gbps. results_dir is checked
// before DPDK starts; while the host runs it rewrites progress.json (its
// counters, "final": false) every -checkpoint (2 s), so that a SIGKILL loses
// at most that; run.json says whether SIGINT / SIGTERM ended the run
// (interrupted, signal). At exit it drains the port, then stops and closes it.
//
// hostd -c host.toml -duration 500ms runs that long instead of the file's
// duration_s. The command line follows package cli: -h prints the usage
// (exit 0), -version the build, a bad flag or a stray argument exits 2, a
// failed run 1. Status messages are log lines on standard error (-v, -q,
// -log-format console|json); while it runs, hostd reports its progress
// (time, share done, flows done, frames) every -progress (2s).
//
// hostd -c host.toml -check checks the file, then brings up the EAL, lcores,
// mempool and port as a run would, without traffic, and exits; -check-syntax
// checks the file alone, before DPDK.
//
// hostd -c host.toml -metrics 127.0.0.1:9101 serves the host's counters in
// the Prometheus text format at /metrics while its loops run (package
// metrics, docs/metrics.md); an address that is not loopback needs
// -metrics-any too.
//
// hostd -c host.toml -pdump serves DPDK's capture tools: dpdk-dumpcap
// --file-prefix PREFIX -i PORT -w FILE, run beside it as a secondary process,
// captures what the port sends and receives (docs/capture.md, "dpdk-dumpcap");
// the EAL must then run on hugepages (eal_args without --no-huge, --no-shconf
// or --in-memory).
//
// hostd -c host.toml -start-at INSTANT (RFC 3339 or Unix ns; or the file's
// start_at_unix_ns) brings up DPDK and the port, then waits for that
// wall-clock instant before its time 0, so that the hosts of a multi-node run
// (testbed nodes, docs/real-nodes.md) start their traffic together. An
// instant in the past, or more than hostdaemon.MaxStartLead ahead, is an error.
// With -start-at-file PATH it brings up DPDK and the port, says "ready,
// waiting for the start instant", and waits for the instant to be written
// to PATH: the playbook of a multi-node run picks the instant once every
// host is ready, so the lead only covers writing it, not DPDK's bring-up.
// run.json records the instant and the node's clock offset (chrony or PTP;
// "unknown" when neither answers) against hostd.ClockOffsetBoundNs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/ccbed/ccbed/internal/atomicfile"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
	"go.uber.org/zap"

	_ "github.com/ccbed/ccbed/ccalgo/all"
)

// options are the command line's settings beside the file.
type options struct {
	linkTimeout time.Duration
	flowControl port.FlowControl
	checkpoint  time.Duration
	// duration, when durationSet, overrides the file's duration_s.
	duration    time.Duration
	durationSet bool
	// log receives the status messages (nil: none); progress, when not
	// nil, reports the run's progress, every progressEvery.
	log           *zap.Logger
	progress      *cli.Progress
	progressEvery time.Duration
	metrics       *metrics.Flags // -metrics, -metrics-any (nil: none)
	// startFile, when not "", is where the start instant will be written
	// once every host is ready (-start-at-file).
	startFile string
	// pdump serves dpdk-dumpcap (rte_pdump_init after the EAL; -pdump).
	pdump bool
}

// defaults are the options of a run without flags.
var defaults = options{linkTimeout: port.DefaultLinkTimeout, flowControl: port.FlowControlOff, checkpoint: 2 * time.Second,
	progressEvery: 2 * time.Second}

func main() { os.Exit(command(os.Args[1:])) }

// command is hostd's command line: it returns the exit code (package cli).
func command(args []string) int {
	c := cli.New("hostd", "-c host.toml [-duration 10s] [-check | -check-syntax] [-start-at RFC3339|unix-ns | -start-at-file PATH] [flags]",
		"One ccbed traffic-generator host on DPDK: the file's port, lcores, flows and CC scheme.").Logging()
	fs := c.Flags
	path := fs.String("c", "", "hostd TOML file (required)")
	check := fs.Bool("check", false, "check the file, then bring up the EAL, lcores, mempool and port a run would use (no traffic), and exit")
	checkSyntax := fs.Bool("check-syntax", false, "check the file (its CDFs, every range) and exit, before DPDK starts")
	startAt := fs.String("start-at", "", "wall-clock instant of time 0 (RFC 3339 or Unix ns): bring up DPDK and the port, then wait for it")
	o := defaults
	fs.StringVar(&o.startFile, "start-at-file", "", "bring up DPDK and the port, then wait for a start instant (as -start-at takes it) to be written to this file, which must not exist yet; the instant must still lie ahead when it appears")
	c.Duration(&o.duration, "duration", 0, "run this long, a Go `duration` such as 2s or 500ms, overriding the file's duration_s (0: until SIGINT / SIGTERM)")
	c.Duration(&o.linkTimeout, "link-timeout", defaults.linkTimeout, "how long to wait for the port's link to come up")
	fc := fs.String("nic-flow-control", "off", "the NIC's own flow control: off, pause (802.3x), pfc (the NIC's 802.1Qbb on priority 3), driver (leave it)")
	c.Duration(&o.checkpoint, "checkpoint", defaults.checkpoint, "rewrite progress.json this often while running")
	c.Duration(&o.progressEvery, "progress", defaults.progressEvery, "report the run's progress this often at info level (0: never; -q: never)")
	fs.BoolVar(&o.pdump, "pdump", false, "serve dpdk-dumpcap and dpdk-pdump (rte_pdump_init): the EAL must run on hugepages, without --no-huge, --no-shconf or --in-memory (docs/capture.md)")
	o.metrics = metrics.AddFlags(fs)
	if _, err := c.Parse(args); err != nil {
		return cli.Exit("hostd", err)
	}
	if *path == "" {
		return cli.Exit("hostd", c.Errorf("-c host.toml is required"))
	}
	if o.startFile != "" && *startAt != "" {
		return cli.Exit("hostd", c.Errorf("-start-at and -start-at-file: give one"))
	}
	o.durationSet = c.Set("duration")
	o.log, o.progress = c.Log(), c.Progress(o.progressEvery)
	var err error
	if o.flowControl, err = port.ParseFlowControl(*fc); err != nil {
		return cli.Exit("hostd", c.Errorf("-nic-flow-control: %v", err))
	}
	if o.checkpoint <= 0 || o.linkTimeout <= 0 {
		return cli.Exit("hostd", c.Errorf("-checkpoint and -link-timeout must be > 0"))
	}
	if err := o.metrics.Check(); err != nil {
		return cli.Exit("hostd", c.Errorf("%v", err))
	}
	if *check || *checkSyntax {
		f, err := o.load(*path)
		if err == nil {
			_, err = startInstant(f, *startAt, time.Now())
		}
		if err == nil && *check {
			err = checkBringUp(f, o)
		}
		if err != nil {
			return c.Exit(err)
		}
		if *check {
			fmt.Printf("hostd: %s: ok; port, lcores and memory checked\n", *path)
		} else {
			fmt.Printf("hostd: %s: ok\n", *path)
		}
		return cli.ExitOK
	}
	return c.Exit(runWith(*path, *startAt, o))
}

// load reads the file at path and applies the options that override it.
func (o options) load(path string) (*hostdaemon.File, error) {
	f, err := hostdaemon.LoadFile(path)
	if err != nil {
		return nil, err
	}
	if o.durationSet {
		f.DurationS = o.duration.Seconds()
	}
	if err := dpdk.CheckEALArgs(f.EALArgs); err != nil {
		return nil, err
	}
	if o.pdump {
		if err := dpdk.CheckPdumpEAL(f.EALArgs); err != nil {
			return nil, fmt.Errorf("-pdump: eal_args: %w", err)
		}
	}
	return f, nil
}

// startInstant is the start instant of f, from flag (which overrides the
// file's start_at_unix_ns); zero when there is none. It must lie ahead of now.
func startInstant(f *hostdaemon.File, flag string, now time.Time) (time.Time, error) {
	var at time.Time
	switch {
	case flag != "":
		t, err := hostdaemon.ParseStartAt(flag)
		if err != nil {
			return at, fmt.Errorf("-start-at: %w", err)
		}
		at = t
	case f.StartAtUnixNs != 0:
		at = time.Unix(0, f.StartAtUnixNs)
	default:
		return at, nil
	}
	if err := hostdaemon.CheckStartAt(at, now); err != nil {
		return at, err
	}
	return at, nil
}

// run is a run with the default options, logging (progress included) at
// info level to standard error.
func run(path, startAtFlag string) error {
	c, o := cli.New("hostd", "", ""), defaults
	o.log, o.progress = c.Log(), c.Progress(o.progressEvery)
	return runWith(path, startAtFlag, o)
}

// startFilePoll is how often hostd looks for its start file.
const startFilePoll = 10 * time.Millisecond

// waitStartFile waits until the file at path holds a start instant (as
// hostdaemon.ParseStartAt reads it), for at most maxWait or until ctx ends. A file
// that does not parse yet (being written) is read again at the next poll; one
// that still does not parse when maxWait is up is an error that quotes it.
// A writer should write the file whole (to a temporary name, then rename).
func waitStartFile(ctx context.Context, path string, maxWait time.Duration) (time.Time, error) {
	deadline := time.Now().Add(maxWait)
	tick := time.NewTicker(startFilePoll)
	defer tick.Stop()
	last := "it never appeared"
	for {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			at, perr := hostdaemon.ParseStartAt(string(b))
			if perr == nil {
				return at, nil
			}
			last = perr.Error()
		case !errors.Is(err, fs.ErrNotExist):
			return time.Time{}, fmt.Errorf("-start-at-file: %w", err)
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("-start-at-file %s: no start instant within %v: %s", path, maxWait, last)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("interrupted while waiting for the start instant in %s", path)
		case <-tick.C:
		}
	}
}

// nicMTU is the port MTU (DPDK's: the frame without its Ethernet header) for
// frames of maxFrame bytes; 0 leaves the driver's 1500.
func nicMTU(maxFrame int) uint32 {
	if m := maxFrame - wire.EthernetLen; m > 1500 {
		return uint32(m)
	}
	return 0
}

// bringUp initialises the EAL, checks the lcores, makes the mempool (its
// data room holds the host's largest frame) and starts the port: flow
// control, link up, speed against link_gbps.
func bringUp(f *hostdaemon.File, o options) (*dpdk.Mempool, dpdk.EthPort, error) {
	log := o.logger(f)
	if err := dpdk.EALInit(f.EALArgs); err != nil {
		return nil, 0, err
	}
	for _, lp := range f.Loops() {
		if l := lp.Lcore; !dpdk.LcoreEnabled(l) {
			return nil, 0, fmt.Errorf("lcore %d (lcores, tx_lcores, rx_lcores) is not enabled by the EAL (eal_args -l / --lcores enable %v)", l, dpdk.Lcores(true))
		}
	}
	frame := f.MaxFrameBytes()
	room := dpdk.DataRoomFor(frame)
	need := float64(f.Mbufs) * float64(int(room)+dpdk.MbufOverheadBytes) / (1 << 20)
	mp, err := dpdk.NewPktMbufPool("hostd", f.Mbufs, 256, room, dpdk.SocketAny)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %d mbufs of %d B need about %.0f MiB; give the EAL more memory (hugepages, or -m with --no-huge) or lower mbufs",
			err, f.Mbufs, room, need)
	}
	log.Info("mempool", zap.Uint32("mbufs", uint32(f.Mbufs)), zap.Int("data_room_bytes", int(room)), zap.Int("largest_frame_bytes", frame),
		zap.Float64("mib", math.Round(need)), zap.Float64("eal_mib", math.Round(float64(dpdk.PhysMemBytes())/(1<<20))))
	if o.pdump {
		if err := dpdk.PdumpInit(mp); err != nil {
			mp.Free()
			return nil, 0, fmt.Errorf("-pdump: %w", err)
		}
		log.Info("pdump: serving dpdk-dumpcap", zap.String("device", f.Port), zap.Strings("mempool_ops", dpdk.MempoolOps()))
		var lcores []uint
		for _, lp := range f.Loops() {
			lcores = append(lcores, lp.Lcore)
		}
		if w := dpdk.PdumpLcoreClash(lcores); w != "" {
			log.Warn(w)
		}
	}
	p, err := port.StartEth(port.EthConfig{Name: f.Port, Pool: mp, MTU: nicMTU(frame), FlowControl: o.flowControl,
		Queues: uint16(f.Engines())}) // a queue pair per engine, RSS on rx
	if err != nil {
		mp.Free()
		return nil, 0, err
	}
	link, err := port.WaitLinkUp(p, o.linkTimeout)
	if err != nil {
		p.Stop()
		p.Close()
		mp.Free()
		return nil, 0, err
	}
	drv := "?"
	if info, err := p.Info(); err == nil {
		drv = info.Driver
	}
	log.Info("port up", zap.String("device", f.Port), zap.String("driver", drv), zap.Uint32("link_mbps", uint32(link.SpeedMbps)),
		zap.String("nic_flow_control", port.FlowControlState(p)))
	gbps := f.Host.LinkGbps
	if gbps == 0 {
		gbps = 10 // the host's default
	}
	if w := port.SpeedMismatch(f.Port, link, gbps); w != "" {
		log.Warn(w)
	}
	return mp, p, nil
}

// checkBringUp is -check: the results directory, then what bringUp does,
// then an engine and its adapter on the port; everything released again.
func checkBringUp(f *hostdaemon.File, o options) error {
	if err := hostdaemon.CheckResultsDir(f.ResultsDir); err != nil {
		return err
	}
	mp, p, err := bringUp(f, o)
	if err != nil {
		return err
	}
	scratch := dpdk.NewBurst(hostdp.Burst)
	defer scratch.Free()
	engs, err := f.NewEngines(0)
	if err == nil {
		var h *hostdp.Shards
		if h, err = hostdp.NewShards(engs, hostdp.EthQueues(p, len(engs)), mp, "check"); err == nil {
			h.Close()
		}
	}
	port.Shutdown(p, scratch.Pkts)
	if o.pdump {
		dpdk.PdumpUninit()
	}
	in := mp.InUse()
	mp.Free()
	if err == nil && in != 0 {
		err = fmt.Errorf("%d mbufs not returned after the port closed", in)
	}
	return err
}

func runWith(path, startAtFlag string, o options) error {
	f, err := o.load(path)
	if err != nil {
		return err
	}
	startAt, err := startInstant(f, startAtFlag, time.Now())
	if err != nil {
		return err
	}
	if o.startFile != "" {
		// A start file left from an earlier run would start this one at a
		// stale instant.
		if _, err := os.Lstat(o.startFile); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-start-at-file %s: exists already (an earlier run's?): remove it first", o.startFile)
		}
		startAt = time.Time{} // the file's instant replaces the config's
	}
	// The results directory first: a run never ends with results it cannot write.
	if err := hostdaemon.CheckResultsDir(f.ResultsDir); err != nil {
		return err
	}
	info := hostd.RunInfo{Host: f.Host.Name, ClockOffsetBoundNs: hostd.ClockOffsetBoundNs}
	if !startAt.IsZero() {
		info.StartAtUnixNs, info.StartAt = startAt.UnixNano(), startAt.UTC().Format(time.RFC3339Nano)
	}
	info.ClockOffset = hostdaemon.ReadClockOffset(context.Background())
	info.ClockOffsetExceeded = info.ClockOffset.Exceeds(hostd.ClockOffsetBoundNs)
	log := o.logger(f)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	mp, p, err := bringUp(f, o)
	if err != nil {
		return err
	}
	if o.pdump {
		defer dpdk.PdumpUninit() // after the port's shutdown below
	}
	scratch := dpdk.NewBurst(hostdp.Burst)
	defer scratch.Free()
	// Shutdown order: the host's Close drains the port while it still runs,
	// then the port stops and closes; never receive from a stopped port.
	portUp := true
	defer func() {
		if portUp {
			port.Shutdown(p, scratch.Pkts)
		}
	}()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	ready := time.Now()
	info.ReadyUnixNs = ready.UnixNano()
	if o.startFile != "" {
		log.Info("ready, waiting for the start instant", zap.String("start_at_file", o.startFile),
			zap.Stringer("clock_offset", info.ClockOffset))
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		startAt, err = waitStartFile(ctx, o.startFile, hostdaemon.MaxStartLead)
		stop()
		if err != nil {
			return err
		}
		if err := hostdaemon.CheckStartAt(startAt, time.Now()); err != nil {
			return fmt.Errorf("-start-at-file %s: %w", o.startFile, err)
		}
		info.StartAtUnixNs, info.StartAt = startAt.UnixNano(), startAt.UTC().Format(time.RFC3339Nano)
	}
	if !startAt.IsZero() {
		if time.Now().After(startAt) {
			return fmt.Errorf("the start instant %s passed while DPDK and the port came up (they took until %s): give a later instant",
				info.StartAt, ready.UTC().Format(time.RFC3339Nano))
		}
		msg := "ready, waiting for the start instant"
		if o.startFile != "" {
			msg = "start instant read" // "ready" was said before the wait for the file
		}
		log.Info(msg, zap.String("start_at", info.StartAt),
			zap.Float64("wait_s", math.Round(time.Until(startAt).Seconds()*1000)/1000), zap.Stringer("clock_offset", info.ClockOffset))
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := hostdaemon.WaitUntil(ctx, startAt)
		stop()
		if err != nil {
			return fmt.Errorf("interrupted while waiting for the start instant %s", info.StartAt)
		}
	}
	start := clock.Now()
	info.T0UnixNs = time.Now().UnixNano()
	engs, err := f.NewEngines(start) // one engine per tx lcore (hostd.NewEngines)
	if err != nil {
		return err
	}
	eng := hostd.Shards(engs)
	if f.Host.MAC == "" {
		hw, err := p.MACAddr()
		if err != nil {
			return err
		}
		eng.SetMAC(wire.MAC(hw))
	}
	h, err := hostdp.NewShards(engs, hostdp.EthQueues(p, len(engs)), mp, "main")
	if err != nil {
		return err
	}
	stopMetrics, err := o.metrics.Serve(metrics.Host(h, f.Host.Name, f.Port)) // before the loops; stopped at return
	if err != nil {
		h.Close()
		return err
	}
	defer stopMetrics()
	g := lcore.NewGroup()
	if err = h.Launch(g, f.Loops(), clock); err != nil {
		g.Stop()
		g.Wait()
		h.Close()
		return err
	}
	// A signal since sigc was registered stops the run too (lcore.SignalContext).
	ctx, cancelSig := lcore.SignalContext(context.Background(), sigc)
	defer cancelSig()
	if f.DurationS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(f.DurationS*float64(time.Second)))
		defer cancel()
	}
	progressPath := filepath.Join(f.ResultsDir, hostd.ProgressFile)
	stopCkpt, ckptDone := make(chan struct{}), make(chan struct{})
	go func() { // checkpoints: progress.json every o.checkpoint; the progress report
		defer close(ckptDone)
		period := o.checkpoint
		if o.progress != nil {
			period = min(period, o.progressEvery)
		}
		tick := time.NewTicker(period)
		defer tick.Stop()
		nextCkpt := time.Now().Add(o.checkpoint)
		warned := false
		for {
			var now time.Time
			select {
			case now = <-tick.C:
			case <-stopCkpt:
				return
			}
			pr, ok := h.Progress(500 * time.Millisecond)
			if !ok {
				continue
			}
			ts := float64(clock.Now()-start) / 1e9
			reportProgress(o.progress, f, ts, pr.Rx, pr.Tx)
			if now.Add(period / 2).Before(nextCkpt) {
				continue
			}
			nextCkpt = now.Add(o.checkpoint)
			err := atomicfile.WriteJSON(progressPath, &hostd.Progress{Host: f.Host.Name, TS: ts,
				Rx: pr.Rx, Tx: pr.Tx, Port: pr.Port})
			if err != nil && !warned {
				log.Warn("checkpoint failed (warned once)", zap.Error(err))
				warned = true
			}
		}
	}()
	stats := g.Run(ctx) // returns on the timeout, SIGINT or SIGTERM: results are flushed below
	close(stopCkpt)
	<-ckptDone
	o.progress.Done()
	select {
	case s := <-sigc:
		info.Interrupted, info.Signal = true, s.String()
	default:
	}
	h.Close()
	pc := h.PortCounters()
	if err := hostdaemon.WriteResults(f.ResultsDir, "", eng.Merged(), &pc, start); err != nil {
		return err
	}
	info.DurationS = float64(clock.Now()-start) / 1e9
	for _, s := range stats {
		info.Lcores = append(info.Lcores, hostd.LcoreRun{Name: s.Name, Lcore: s.Lcore, Iterations: s.Iterations, MaxStallNs: s.MaxStallNs})
	}
	if err := hostdaemon.WriteRunInfo(f.ResultsDir, info); err != nil {
		return err
	}
	rx, tx := eng.Counters()
	if err := atomicfile.WriteJSON(progressPath, &hostd.Progress{Host: f.Host.Name, TS: info.DurationS, Final: true,
		Interrupted: info.Interrupted, Rx: rx, Tx: tx, Port: pc}); err != nil {
		return err
	}
	log.Info("done", zap.Float64("duration_s", math.Round(float64(clock.Now()-start)/1e6)/1e3),
		zap.Uint64("data_frames_sent", tx.DataFrames), zap.Uint64("resent", tx.RetxFrames), zap.Uint64("timeouts", tx.Timeouts),
		zap.Uint64("flows_done", tx.FlowsCompleted), zap.Uint64("data_frames_received", rx.Data),
		zap.Uint64("acks", rx.Acks), zap.Uint64("cnps", rx.CNPs))
	for _, s := range stats {
		fields := []zap.Field{zap.Uint("lcore", s.Lcore), zap.String("loop", s.Name), zap.Uint64("polls", s.Iterations),
			zap.Uint64("busy_polls", s.BusyPolls), zap.Float64("worst_stall_us", math.Round(float64(s.MaxStallNs)/100)/10)}
		if s.Panic != "" {
			log.Error("PANIC in an lcore loop", append(fields, zap.String("panic", s.Panic))...)
		} else {
			log.Info("lcore loop", fields...)
		}
	}
	if !startAt.IsZero() {
		log.Info("time 0", zap.String("t0", time.Unix(0, info.T0UnixNs).UTC().Format(time.RFC3339Nano)),
			zap.Float64("after_start_instant_us", float64(info.T0UnixNs-info.StartAtUnixNs)/1e3))
	}
	if info.ClockOffsetExceeded {
		log.Warn("clock offset above the bound: cross-node time series of this run are degraded",
			zap.Stringer("clock_offset", info.ClockOffset), zap.Float64("bound_us", float64(hostd.ClockOffsetBoundNs)/1e3))
	} else {
		log.Info("clock offset", zap.Stringer("clock_offset", info.ClockOffset))
	}
	if info.Interrupted {
		log.Info("interrupted", zap.String("signal", info.Signal))
	}
	log.Info("results written", zap.String("dir", f.ResultsDir))
	portUp = false
	if err := port.Shutdown(p, scratch.Pkts); err != nil {
		return err
	}
	log.Info("port closed", zap.Int("mbufs_in_use", mp.InUse()))
	return nil
}

// logger is o's logger for the host of f (a no-op logger when o has none).
func (o options) logger(f *hostdaemon.File) *zap.Logger {
	if o.log == nil {
		return zap.NewNop()
	}
	return o.log.With(zap.String("host", f.Host.Name))
}

// reportProgress reports a running host's progress, ts seconds after its
// time 0 (p nil: nothing).
func reportProgress(p *cli.Progress, f *hostdaemon.File, ts float64, rx hostd.RxCounters, tx hostd.TxCounters) {
	if p == nil {
		return
	}
	fields := []zap.Field{zap.String("host", f.Host.Name), zap.Float64("elapsed_s", math.Round(ts*10)/10)}
	line := fmt.Sprintf("hostd %s: %.1f s", f.Host.Name, ts)
	if f.DurationS > 0 {
		pct := math.Round(1000*min(ts/f.DurationS, 1)) / 10
		fields = append(fields, zap.Float64("duration_s", f.DurationS), zap.Float64("done_pct", pct))
		line += fmt.Sprintf(" of %.1f s (%.0f%%)", f.DurationS, pct)
	}
	fields = append(fields, zap.Uint64("flows_done", tx.FlowsCompleted), zap.Uint64("flows_started", tx.FlowsStarted),
		zap.Uint64("data_frames_sent", tx.DataFrames), zap.Uint64("data_frames_received", rx.Data))
	line += fmt.Sprintf(", flows %d of %d done, sent %d data frames, received %d", tx.FlowsCompleted, tx.FlowsStarted,
		tx.DataFrames, rx.Data)
	p.Report(line, fields...)
}
