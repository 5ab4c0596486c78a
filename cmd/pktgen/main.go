// Command pktgen blasts packets on DPDK ports at line rate or a set rate, with
// live per-port stats each second and a final summary (text, and JSON with
// -json), optionally receiving and reporting loss and latency. It is the thin
// main of package pktgen: flags or a TOML file (-c), EAL, ports, lcores, signals.
//
//	pktgen -c configs/pktgen-null.toml
//	pktgen -eal-args "--no-huge -m 512 --no-pci --no-shconf -l 0-1 --vdev=net_null0" \
//	       -ports net_null0 -size 64 -duration 5s -json -
//
// SIGINT or SIGTERM stops the run and still prints the summary. -metrics
// 127.0.0.1:9102 serves the ports' counters in the Prometheus text format at
// /metrics while the loops run (docs/metrics.md; an address that is not
// loopback needs -metrics-any too). -check
// checks the config and flags and exits before DPDK starts. Rates are
// labelled: "Gb/s L2" counts frame bytes without FCS, "Gb/s L1" adds FCS,
// preamble and inter-frame gap (24 B a frame); -rate and rate_gbps cap L1.
// The command line follows package cli: -h prints the usage (exit 0),
// -version the build, a bad flag or a stray argument exits 2, a failed run 1.
// Status messages and warnings are log lines on standard error (-v, -q,
// -log-format console|json); the live stats and the summary stay on
// standard output.
// eal (the file's key) and -eal are deprecated spellings of eal_args and
// -eal-args.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/pktgen"
	"github.com/ccbed/ccbed/port"
	"go.uber.org/zap"
)

func main() { os.Exit(run(os.Args[1:])) }

// run is pktgen's command line: it returns the exit code (package cli).
func run(args []string) int {
	c := cli.New("pktgen", "[-c pktgen.toml] [-eal-args \"EAL ARGS\"] [-ports DEV,...] [-duration 5s] [flags]",
		"Blast packets on DPDK ports at line rate or a set rate; live stats and a final summary.\n"+
			"Rates are labelled: \"Gb/s L2\" counts frame bytes without FCS, \"Gb/s L1\" adds FCS, preamble and\n"+
			"inter-frame gap (24 B a frame), as a NIC's line rate does; -rate and rate_gbps cap L1.").Logging()
	fs := c.Flags
	var (
		cfgPath  = fs.String("c", "", "TOML config file (flags below then override its first port's stream)")
		ealArgs  = fs.String("eal-args", "", "EAL arguments, space separated (the file's eal_args)")
		eal      = fs.String("eal", "", "deprecated spelling of -eal-args")
		ports    = fs.String("ports", "", "comma-separated port devices (PCI address or vdev name)")
		lcores   = fs.String("lcores", "", "comma-separated lcore ids for the poll loops")
		rateGbps = fs.Float64("rate", 0, "rate cap per port, Gb/s of L1 bytes: frames plus FCS, preamble and gap, 24 B each (0: line rate)")
		rateMpps = fs.Float64("mpps", 0, "rate cap per port, Mpps")
		size     = fs.Int("size", 0, "frame length without FCS (default 64)")
		mix      = fs.String("mix", "", `size mix: "imix" or "size:weight,..."`)
		flows    = fs.Int("flows", 0, "flows per port")
		flowRate = fs.String("flow-rates", "", "a rate for each flow of every port, comma separated: Gb/s L1 (2.5 or 2.5g), Mpps (0.5mpps) or 0 (no cap of its own); each flow gets its own token bucket ([[ports.flow]] in the file)")
		vary     = fs.String("vary", "", "comma-separated fields varied per flow (src_port, dst_port, src_ip, dst_ip, dest_qp)")
		proto    = fs.String("proto", "", "udp or roce")
		count    = fs.Uint64("count", 0, "packets per port (0: no limit)")
		burst    = fs.Int("burst", 0, "burst size")
		rx       = fs.Bool("rx", false, "also receive on every port: loss and latency")
		jsonOut  = fs.String("json", "", `write the summary as JSON to this path ("-": stdout)`)
		check    = fs.Bool("check", false, "check the config and flags (file, ranges, ports) and exit, before DPDK starts")
		replay   = fs.String("replay", "", "replay this pcap or pcapng file on every port instead of building a stream ([ports.replay] in the file)")
		rTiming  = fs.String("replay-timing", "", "replay timing: recorded (default), rate (-rate or -mpps) or fast")
		rSpeed   = fs.Float64("replay-speed", 0, "replay at recorded timing this many times as fast (default 1)")
		rLoops   = fs.Int("replay-loops", 0, "times through the capture (default 1; -1: until -duration or SIGINT)")
		dumpPcap = fs.String("dump-pcap", "", "write the first port's stream to this pcap file, its count of frames (1000 when none) at the times its rate gives from 0 (as fast as possible: 1 ns apart), and exit, without DPDK")
		duration time.Duration
		interval time.Duration
		mf       = metrics.AddFlags(fs)
	)
	c.Duration(&duration, "duration", 0, "run this long, a Go `duration` such as 5s or 500ms (0: until SIGINT or the counts; default: the file's duration_s)")
	c.Duration(&interval, "interval", time.Second, "live stats period, a Go `duration` (0: no live stats)")
	if _, err := c.Parse(args); err != nil {
		return cli.Exit("pktgen", err)
	}
	if *ealArgs != "" && *eal != "" {
		return cli.Exit("pktgen", c.Errorf("give -eal-args alone: -eal is its deprecated spelling"))
	}
	if err := mf.Check(); err != nil {
		return cli.Exit("pktgen", c.Errorf("%v", err))
	}
	log := c.Log()
	if *eal != "" {
		log.Warn("-eal is deprecated: write -eal-args")
		*ealArgs = *eal
	}
	var lcs []uint
	if *lcores != "" {
		for _, s := range strings.Split(*lcores, ",") {
			var id uint
			if _, err := fmt.Sscan(strings.TrimSpace(s), &id); err != nil {
				return cli.Exit("pktgen", c.Errorf("-lcores: %q: %v", s, err))
			}
			lcs = append(lcs, id)
		}
	}

	var cfg pktgen.Config
	var file *config.File
	if *cfgPath != "" {
		f, err := config.Load(*cfgPath, &cfg)
		if err == nil {
			err = f.Require(&cfg)
		}
		if err != nil {
			return c.Exit(err)
		}
		file = f
	}
	if *ealArgs != "" {
		cfg.EALArgs, cfg.EAL = strings.Fields(*ealArgs), nil
	}
	if *ports != "" {
		names := strings.Split(*ports, ",")
		base := pktgen.PortConfig{}
		if len(cfg.Ports) > 0 {
			base = cfg.Ports[0]
		}
		cfg.Ports = cfg.Ports[:0]
		for _, n := range names {
			p := base
			p.Name = strings.TrimSpace(n)
			cfg.Ports = append(cfg.Ports, p)
		}
	}
	if lcs != nil {
		cfg.Lcores = lcs
	}
	var flowRates []pktgen.FlowConfig
	if c.Set("flow-rates") {
		fr, err := pktgen.ParseFlowRates(*flowRate)
		if err != nil {
			return cli.Exit("pktgen", c.Errorf("-flow-rates: %v", err))
		}
		flowRates = fr
	}
	for i := range cfg.Ports {
		p := &cfg.Ports[i]
		if c.Set("rate") {
			p.RateGbps = *rateGbps
		}
		if c.Set("mpps") {
			p.RateMpps = *rateMpps
		}
		if c.Set("size") {
			p.Size = *size
		}
		if c.Set("mix") {
			p.Mix = *mix
		}
		if c.Set("flows") {
			p.Flows = *flows
		}
		if c.Set("flow-rates") {
			p.Flow = flowRates
		}
		if c.Set("vary") {
			p.Vary = strings.Split(*vary, ",")
		}
		if c.Set("proto") {
			p.Proto = *proto
		}
		if c.Set("count") {
			p.Count = *count
		}
		if c.Set("burst") {
			p.Burst = *burst
		}
		if c.Set("rx") {
			p.Rx = *rx
		}
		if c.Set("replay") {
			p.Replay = &pktgen.ReplayConfig{File: *replay}
		}
		if r := p.Replay; r != nil {
			if c.Set("replay-timing") {
				r.Timing = *rTiming
			}
			if c.Set("replay-speed") {
				r.Speed = *rSpeed
			}
			if c.Set("replay-loops") {
				r.Loops = *rLoops
			}
		}
	}
	if !c.Set("replay") && (c.Set("replay-timing") || c.Set("replay-speed") || c.Set("replay-loops")) {
		has := false
		for i := range cfg.Ports {
			has = has || cfg.Ports[i].Replay != nil
		}
		if !has {
			return cli.Exit("pktgen", c.Errorf("-replay-timing, -replay-speed and -replay-loops need -replay or [ports.replay]"))
		}
	}
	if c.Set("duration") {
		cfg.DurationS = duration.Seconds()
	}
	if c.Set("json") {
		cfg.SummaryJSON = *jsonOut
	}
	if c.Set("interval") {
		cfg.StatsIntervalS = interval.Seconds()
		if interval == 0 {
			cfg.StatsIntervalS = -1 // off
		}
	}
	if cfg.StatsIntervalS == 0 {
		cfg.StatsIntervalS = 1
	}
	if cfg.PoolMbufs == 0 {
		cfg.PoolMbufs = 16383
	}
	err := cfg.Validate(file)
	if err == nil {
		err = dpdk.CheckEALArgs(cfg.EALArgs)
	}
	if err != nil {
		return c.Exit(err)
	}
	if cfg.DeprecatedEAL() {
		log.Warn("the key eal is deprecated: write eal_args, as in switchd's and hostd's files")
	}
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	if *check {
		fmt.Printf("pktgen: %s: ok (%d ports)\n", *cfgPath, len(cfg.Ports))
		return cli.ExitOK
	}
	if *dumpPcap != "" {
		n, err := pktgen.DumpPcap(*dumpPcap, &cfg.Ports[0])
		if err != nil {
			return c.Exit(err)
		}
		log.Info("wrote the stream", zap.String("file", *dumpPcap), zap.Uint64("frames", n))
		return cli.ExitOK
	}
	if len(cfg.EALArgs) == 0 {
		return cli.Exit("pktgen", c.Errorf("no EAL arguments (-eal-args or eal_args = [...])"))
	}
	return c.Exit(blast(&cfg, log, mf))
}

// blast runs cfg on DPDK: EAL, pool, ports, loops, live stats and summary.
// Status messages go to log; the live stats and the summary, the command's
// product, to standard output; mf serves the counters at /metrics while the
// loops run.
func blast(cfg *pktgen.Config, log *zap.Logger, mf *metrics.Flags) error {
	if err := dpdk.EALInit(cfg.EALArgs); err != nil {
		return err
	}
	lcs := cfg.Lcores
	if len(lcs) == 0 {
		workers := dpdk.Lcores(false)
		if len(workers) == 0 {
			workers = []uint{dpdk.MainLcore()}
		}
		lcs = workers[:1]
	}
	debug.SetGCPercent(400)

	maxSize := 0
	for i := range cfg.Ports {
		mixes, _ := cfg.Ports[i].SizeMix()
		for _, m := range mixes {
			maxSize = max(maxSize, m.Size)
		}
	}
	room := uint16(dpdk.MbufDefaultDataRoom)
	if maxSize > int(room)-dpdk.MbufHeadroom {
		room = uint16(pktgen.MaxFrameLen + dpdk.MbufHeadroom)
	}
	pool, err := dpdk.NewPktMbufPool("pktgen_pool", cfg.PoolMbufs, 256, room, dpdk.SocketAny)
	if err != nil {
		return err
	}
	var eths port.Started
	defer func() {
		eths.Close()
		pool.Free()
	}()
	pports := make([]port.Port, len(cfg.Ports))
	for i, pc := range cfg.Ports {
		mtu := uint32(0)
		if maxSize > 1514 {
			mtu = uint32(maxSize - 14)
		}
		p, err := eths.Start(port.EthConfig{Name: pc.Name, Pool: pool, MTU: mtu, Promisc: pc.Rx, SocketID: dpdk.SocketAny})
		if err != nil {
			return err
		}
		pports[i] = port.EthQueue{Port: p}
		log.Debug("port up", zap.Int("port", i), zap.String("device", pc.Name), zap.Uint32("mtu", mtu), zap.Bool("rx", pc.Rx))
	}
	bl, err := pktgen.NewBlaster(cfg, pports, pool)
	if err != nil {
		return err
	}
	defer bl.Close()
	stopMetrics, err := mf.Serve(metrics.Pktgen(bl, cfg)) // before the loops; stopped at return
	if err != nil {
		return err
	}
	defer stopMetrics()

	clock := lcore.NewTSCClock(dpdk.TSCHz())
	perLcore := make([][]func(int64) int, len(lcs))
	for i := range cfg.Ports {
		k := i % len(lcs)
		perLcore[k] = append(perLcore[k], bl.Pollers(i)...)
	}
	g := lcore.NewGroup()
	for k, id := range lcs {
		polls := perLcore[k]
		if len(polls) == 0 {
			continue
		}
		if err := g.Launch(id, fmt.Sprintf("pktgen%d", k), func() int {
			now, n := clock.Now(), 0
			for _, p := range polls {
				n += p(now)
			}
			return n
		}); err != nil {
			g.Stop()
			g.Wait()
			return err
		}
	}
	start := clock.Now()
	// Signals stop the run (and print the summary) from before it says it
	// runs (lcore.SignalContext).
	ctx, cancel := lcore.SignalContext(context.Background(), nil)
	defer cancel()
	log.Info("running", zap.Int("ports", len(cfg.Ports)), zap.Uints("lcores", lcs), zap.Float64("duration_s", cfg.DurationS))

	if cfg.DurationS > 0 {
		// The streams stop themselves at their duration; give the receivers
		// a moment to drain before the loops stop.
		ctx, cancel = context.WithTimeout(ctx, time.Duration(cfg.DurationS*1e9)+100*time.Millisecond)
		defer cancel()
	}
	go monitor(ctx, cancel, bl, cfg, clock)
	stats := g.Run(ctx)
	bl.LoopsStopped()
	elapsed := clock.Now() - start
	if cfg.DurationS > 0 {
		elapsed = min(elapsed, int64(cfg.DurationS*1e9))
	}
	for _, s := range stats {
		if s.Panic != "" {
			return fmt.Errorf("loop %s on lcore %d: %s", s.Name, s.Lcore, s.Panic)
		}
		fmt.Printf("loop %s lcore %d: %d polls, %.1f%% busy, max stall %.1f us\n", s.Name, s.Lcore,
			s.Iterations, 100*float64(s.BusyPolls)/float64(max(s.Iterations, 1)), float64(s.MaxStallNs)/1e3)
	}
	sum := bl.Summary(elapsed)
	pktgen.WriteText(os.Stdout, sum)
	if cfg.SummaryJSON != "" {
		if err := pktgen.WriteSummary(cfg.SummaryJSON, sum); err != nil {
			return err
		}
	}
	return nil
}

// liveTimeout bounds how long a live read waits for the loops' copies of
// their latency histograms.
const liveTimeout = 200 * time.Millisecond

// monitor prints live stats each interval and ends the run once every counted
// stream is done and its receivers have caught up.
func monitor(ctx context.Context, cancel context.CancelFunc, bl *pktgen.Blaster, cfg *pktgen.Config, clock *lcore.TSCClock) {
	period := time.Duration(cfg.StatsIntervalS * 1e9)
	live := period > 0
	if !live {
		period = 100 * time.Millisecond
	}
	// Two reads of the live stats, swapped each interval; the latency
	// histograms' copies are reused.
	prev, cur, scratch := new(pktgen.Live), new(pktgen.Live), new(pktgen.Histogram)
	bl.ReadLive(prev, liveTimeout)
	prevT := clock.Now()
	tick := time.NewTicker(min(period, 50*time.Millisecond))
	defer tick.Stop()
	var doneAt time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		counted := cfg.DurationS == 0
		for _, p := range cfg.Ports {
			counted = counted && (!p.TxEnabled() || p.Count > 0)
		}
		if counted && bl.TxDone() {
			if doneAt.IsZero() {
				doneAt = time.Now()
			} else if time.Since(doneAt) > 100*time.Millisecond {
				cancel()
			}
		}
		if now := clock.Now(); live && now-prevT >= int64(period) {
			bl.ReadLive(cur, liveTimeout)
			fmt.Printf("--- t=%.1f s\n", float64(now)/1e9)
			bl.WriteLive(os.Stdout, prev, cur, now-prevT, cfg.ShownFlows(), scratch)
			prev, cur, prevT = cur, prev, now
		}
	}
}
