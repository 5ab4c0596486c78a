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
// failed run 1.
//
// hostd -c host.toml -check checks the file, then brings up the EAL, lcores,
// mempool and port as a run would, without traffic, and exits; -check-syntax
// checks the file alone, before DPDK.
//
// hostd -c host.toml -start-at INSTANT (RFC 3339 or Unix ns; or the file's
// start_at_unix_ns) brings up DPDK and the port, then waits for that
// wall-clock instant before its time 0, so that the hosts of a multi-node run
// (testbed nodes, docs/real-nodes.md) start their traffic together. An
// instant in the past, or more than hostd.MaxStartLead ahead, is an error.
// run.json records the instant and the node's clock offset (chrony or PTP;
// "unknown" when neither answers) against hostd.ClockOffsetBoundNs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"

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
}

// defaults are the options of a run without flags.
var defaults = options{linkTimeout: port.DefaultLinkTimeout, flowControl: port.FlowControlOff, checkpoint: 2 * time.Second}

func main() { os.Exit(command(os.Args[1:])) }

// command is hostd's command line: it returns the exit code (package cli).
func command(args []string) int {
	c := cli.New("hostd", "-c host.toml [-duration 10s] [-check | -check-syntax] [-start-at RFC3339|unix-ns] [flags]",
		"One ccbed traffic-generator host on DPDK: the file's port, lcores, flows and CC scheme.")
	fs := c.Flags
	path := fs.String("c", "", "hostd TOML file (required)")
	check := fs.Bool("check", false, "check the file, then bring up the EAL, lcores, mempool and port a run would use (no traffic), and exit")
	checkSyntax := fs.Bool("check-syntax", false, "check the file (its CDFs, every range) and exit, before DPDK starts")
	startAt := fs.String("start-at", "", "wall-clock instant of time 0 (RFC 3339 or Unix ns): bring up DPDK and the port, then wait for it")
	o := defaults
	c.Duration(&o.duration, "duration", 0, "run this long, a Go `duration` such as 2s or 500ms, overriding the file's duration_s (0: until SIGINT / SIGTERM)")
	c.Duration(&o.linkTimeout, "link-timeout", defaults.linkTimeout, "how long to wait for the port's link to come up")
	fc := fs.String("nic-flow-control", "off", "the NIC's own flow control: off, pause (802.3x), pfc (the NIC's 802.1Qbb on priority 3), driver (leave it)")
	c.Duration(&o.checkpoint, "checkpoint", defaults.checkpoint, "rewrite progress.json this often while running")
	if _, err := c.Parse(args); err != nil {
		return cli.Exit("hostd", err)
	}
	if *path == "" {
		return cli.Exit("hostd", c.Errorf("-c host.toml is required"))
	}
	o.durationSet = c.Set("duration")
	var err error
	if o.flowControl, err = port.ParseFlowControl(*fc); err != nil {
		return cli.Exit("hostd", c.Errorf("-nic-flow-control: %v", err))
	}
	if o.checkpoint <= 0 || o.linkTimeout <= 0 {
		return cli.Exit("hostd", c.Errorf("-checkpoint and -link-timeout must be > 0"))
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
			return cli.Exit("hostd", err)
		}
		if *check {
			fmt.Printf("hostd: %s: ok; port, lcores and memory checked\n", *path)
		} else {
			fmt.Printf("hostd: %s: ok\n", *path)
		}
		return cli.ExitOK
	}
	return cli.Exit("hostd", runWith(*path, *startAt, o))
}

// load reads the file at path and applies the options that override it.
func (o options) load(path string) (*hostd.File, error) {
	f, err := hostd.LoadFile(path)
	if err != nil {
		return nil, err
	}
	if o.durationSet {
		f.DurationS = o.duration.Seconds()
	}
	if err := dpdk.CheckEALArgs(f.EALArgs); err != nil {
		return nil, err
	}
	return f, nil
}

// startInstant is the start instant of f, from flag (which overrides the
// file's start_at_unix_ns); zero when there is none. It must lie ahead of now.
func startInstant(f *hostd.File, flag string, now time.Time) (time.Time, error) {
	var at time.Time
	switch {
	case flag != "":
		t, err := hostd.ParseStartAt(flag)
		if err != nil {
			return at, fmt.Errorf("-start-at: %w", err)
		}
		at = t
	case f.StartAtUnixNs != 0:
		at = time.Unix(0, f.StartAtUnixNs)
	default:
		return at, nil
	}
	if err := hostd.CheckStartAt(at, now); err != nil {
		return at, err
	}
	return at, nil
}

// run is a run with the default options.
func run(path, startAtFlag string) error { return runWith(path, startAtFlag, defaults) }

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
func bringUp(f *hostd.File, o options) (*dpdk.Mempool, dpdk.EthPort, error) {
	if err := dpdk.EALInit(f.EALArgs); err != nil {
		return nil, 0, err
	}
	for _, l := range f.Lcores {
		if !dpdk.LcoreEnabled(l) {
			return nil, 0, fmt.Errorf("lcore %d (lcores) is not enabled by the EAL (eal_args -l / --lcores enable %v)", l, dpdk.Lcores(true))
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
	fmt.Printf("hostd %s: mempool %d mbufs of %d B data room (largest frame %d B): about %.0f MiB of the EAL's %.0f MiB\n",
		f.Host.Name, f.Mbufs, room, frame, need, float64(dpdk.PhysMemBytes())/(1<<20))
	p, err := port.StartEth(port.EthConfig{Name: f.Port, Pool: mp, MTU: nicMTU(frame), FlowControl: o.flowControl})
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
	fmt.Printf("hostd %s: port %s (%s): link up %d Mb/s, NIC flow control %s\n", f.Host.Name, f.Port, drv, link.SpeedMbps, port.FlowControlState(p))
	gbps := f.Host.LinkGbps
	if gbps == 0 {
		gbps = 10 // the host's default
	}
	if w := port.SpeedMismatch(f.Port, link, gbps); w != "" {
		fmt.Printf("hostd %s: WARNING: %s\n", f.Host.Name, w)
	}
	return mp, p, nil
}

// checkBringUp is -check: the results directory, then what bringUp does,
// then an engine and its adapter on the port; everything released again.
func checkBringUp(f *hostd.File, o options) error {
	if err := hostd.CheckResultsDir(f.ResultsDir); err != nil {
		return err
	}
	mp, p, err := bringUp(f, o)
	if err != nil {
		return err
	}
	scratch := dpdk.NewBurst(hostdp.Burst)
	defer scratch.Free()
	eng, err := f.NewEngine(0)
	if err == nil {
		var h *hostdp.Host
		if h, err = hostdp.NewHost(eng, port.EthQueue{Port: p}, mp, "check"); err == nil {
			h.Close()
		}
	}
	port.Shutdown(p, scratch.Pkts)
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
	// The results directory first: a run never ends with results it cannot write.
	if err := hostd.CheckResultsDir(f.ResultsDir); err != nil {
		return err
	}
	info := hostd.RunInfo{Host: f.Host.Name, ClockOffsetBoundNs: hostd.ClockOffsetBoundNs}
	if !startAt.IsZero() {
		info.StartAtUnixNs, info.StartAt = startAt.UnixNano(), startAt.UTC().Format(time.RFC3339Nano)
	}
	info.ClockOffset = hostd.ReadClockOffset(context.Background())
	info.ClockOffsetExceeded = info.ClockOffset.Exceeds(hostd.ClockOffsetBoundNs)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	mp, p, err := bringUp(f, o)
	if err != nil {
		return err
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
	if !startAt.IsZero() {
		if time.Now().After(startAt) {
			return fmt.Errorf("the start instant %s passed while DPDK and the port came up (they took until %s): give a later instant",
				info.StartAt, ready.UTC().Format(time.RFC3339Nano))
		}
		fmt.Printf("hostd %s: ready, waiting %.3f s for the start instant %s; clock offset %s\n",
			f.Host.Name, time.Until(startAt).Seconds(), info.StartAt, info.ClockOffset)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := hostd.WaitUntil(ctx, startAt)
		stop()
		if err != nil {
			return fmt.Errorf("interrupted while waiting for the start instant %s", info.StartAt)
		}
	}
	start := clock.Now()
	info.T0UnixNs = time.Now().UnixNano()
	eng, err := f.NewEngine(start)
	if err != nil {
		return err
	}
	if f.Host.MAC == "" {
		hw, err := p.MACAddr()
		if err != nil {
			return err
		}
		eng.SetMAC(wire.MAC(hw))
	}
	h, err := hostdp.NewHost(eng, port.EthQueue{Port: p}, mp, "main")
	if err != nil {
		return err
	}
	g := lcore.NewGroup()
	if len(f.Lcores) == 1 {
		err = g.Launch(f.Lcores[0], "host", func() int { return h.Poll(clock.Now()) })
	} else {
		err = g.Launch(f.Lcores[0], "rx", func() int { return h.PollRx(clock.Now()) })
		if err == nil {
			err = g.Launch(f.Lcores[1], "tx", func() int { return h.PollTx(clock.Now()) })
		}
	}
	if err != nil {
		g.Stop()
		g.Wait()
		h.Close()
		return err
	}
	ctx := context.Background()
	if f.DurationS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(f.DurationS*float64(time.Second)))
		defer cancel()
	}
	progressPath := filepath.Join(f.ResultsDir, hostd.ProgressFile)
	stopCkpt, ckptDone := make(chan struct{}), make(chan struct{})
	go func() { // checkpoints: progress.json every o.checkpoint
		defer close(ckptDone)
		tick := time.NewTicker(o.checkpoint)
		defer tick.Stop()
		warned := false
		for {
			select {
			case <-tick.C:
			case <-stopCkpt:
				return
			}
			pr, ok := h.Progress(500 * time.Millisecond)
			if !ok {
				continue
			}
			err := hostd.WriteJSONAtomic(progressPath, &hostd.Progress{Host: f.Host.Name, TS: float64(clock.Now()-start) / 1e9,
				Rx: pr.Rx, Tx: pr.Tx, Port: pr.Port})
			if err != nil && !warned {
				fmt.Fprintf(os.Stderr, "hostd %s: WARNING: checkpoint: %v\n", f.Host.Name, err)
				warned = true
			}
		}
	}()
	stats := g.Run(ctx) // returns on the timeout, SIGINT or SIGTERM: results are flushed below
	close(stopCkpt)
	<-ckptDone
	select {
	case s := <-sigc:
		info.Interrupted, info.Signal = true, s.String()
	default:
	}
	h.Close()
	pc := h.PortCounters()
	if err := hostd.WriteResults(f.ResultsDir, "", eng, &pc, start); err != nil {
		return err
	}
	info.DurationS = float64(clock.Now()-start) / 1e9
	if err := hostd.WriteRunInfo(f.ResultsDir, info); err != nil {
		return err
	}
	rx, tx := eng.Counters()
	if err := hostd.WriteJSONAtomic(progressPath, &hostd.Progress{Host: f.Host.Name, TS: info.DurationS, Final: true,
		Interrupted: info.Interrupted, Rx: rx, Tx: tx, Port: pc}); err != nil {
		return err
	}
	fmt.Printf("hostd %s: %.3f s, sent %d data frames (%d resent, %d timeouts), %d flows done; received %d data frames, %d ACKs, %d CNPs\n",
		f.Host.Name, float64(clock.Now()-start)/1e9, tx.DataFrames, tx.RetxFrames, tx.Timeouts,
		tx.FlowsCompleted, rx.Data, rx.Acks, rx.CNPs)
	for _, s := range stats {
		fmt.Printf("  lcore %d %-4s %d polls (%d busy), worst stall %.1f us%s\n",
			s.Lcore, s.Name, s.Iterations, s.BusyPolls, float64(s.MaxStallNs)/1000, panicNote(s.Panic))
	}
	if !startAt.IsZero() {
		fmt.Printf("  time 0 at %s, %.1f us after the start instant\n",
			time.Unix(0, info.T0UnixNs).UTC().Format(time.RFC3339Nano), float64(info.T0UnixNs-info.StartAtUnixNs)/1e3)
	}
	fmt.Printf("  clock offset %s\n", info.ClockOffset)
	if info.ClockOffsetExceeded {
		fmt.Printf("  WARNING: clock offset above the %.0f us bound: cross-node time series of this run are degraded\n",
			float64(hostd.ClockOffsetBoundNs)/1e3)
	}
	if info.Interrupted {
		fmt.Printf("  interrupted by %s\n", info.Signal)
	}
	fmt.Printf("  results in %s\n", f.ResultsDir)
	portUp = false
	if err := port.Shutdown(p, scratch.Pkts); err != nil {
		return err
	}
	fmt.Printf("  mbufs in use %d\n", mp.InUse())
	return nil
}

func panicNote(p string) string {
	if p == "" {
		return ""
	}
	return ", PANIC: " + p
}
