// Command pktgen blasts packets on DPDK ports at line rate or a set rate, with
// live per-port stats each second and a final summary (text, and JSON with
// -json), optionally receiving and reporting loss and latency. It is the thin
// main of package pktgen: flags or a TOML file (-c), EAL, ports, lcores, signals.
//
//	pktgen -c configs/pktgen-null.toml
//	pktgen -eal "--no-huge -m 512 --no-pci --no-shconf -l 0-1 --vdev=net_null0" \
//	       -ports net_null0 -size 64 -duration 5 -json -
//
// SIGINT or SIGTERM stops the run and still prints the summary. -check
// checks the config and flags and exits before DPDK starts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/pktgen"
	"github.com/ccbed/ccbed/port"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pktgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		cfgPath  = flag.String("c", "", "TOML config file (flags below then override its first port's stream)")
		eal      = flag.String("eal", "", "EAL arguments, space separated")
		ports    = flag.String("ports", "", "comma-separated port devices (PCI address or vdev name)")
		lcores   = flag.String("lcores", "", "comma-separated lcore ids for the poll loops")
		rateGbps = flag.Float64("rate", 0, "rate cap per port, Gb/s on the wire (0: line rate)")
		rateMpps = flag.Float64("mpps", 0, "rate cap per port, Mpps")
		size     = flag.Int("size", 0, "frame length without FCS (default 64)")
		mix      = flag.String("mix", "", `size mix: "imix" or "size:weight,..."`)
		flows    = flag.Int("flows", 0, "flows per port")
		vary     = flag.String("vary", "", "comma-separated fields varied per flow (src_port, dst_port, src_ip, dst_ip, dest_qp)")
		proto    = flag.String("proto", "", "udp or roce")
		count    = flag.Uint64("count", 0, "packets per port (0: no limit)")
		burst    = flag.Int("burst", 0, "burst size")
		rx       = flag.Bool("rx", false, "also receive on every port: loss and latency")
		duration = flag.Float64("duration", -1, "seconds to run (0: until SIGINT or counts)")
		jsonOut  = flag.String("json", "", `write the summary as JSON to this path ("-": stdout)`)
		interval = flag.Float64("interval", 0, "live stats period in seconds (default 1; < 0 off)")
		check    = flag.Bool("check", false, "check the config and flags (file, ranges, ports) and exit, before DPDK starts")
	)
	flag.Parse()

	var cfg pktgen.Config
	var file *config.File
	if *cfgPath != "" {
		f, err := config.Load(*cfgPath, &cfg)
		if err != nil {
			return err
		}
		file = f
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *eal != "" {
		cfg.EAL = strings.Fields(*eal)
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
	if *lcores != "" {
		cfg.Lcores = nil
		for _, s := range strings.Split(*lcores, ",") {
			var id uint
			if _, err := fmt.Sscan(strings.TrimSpace(s), &id); err != nil {
				return fmt.Errorf("-lcores: %q: %v", s, err)
			}
			cfg.Lcores = append(cfg.Lcores, id)
		}
	}
	for i := range cfg.Ports {
		p := &cfg.Ports[i]
		if set["rate"] {
			p.RateGbps = *rateGbps
		}
		if set["mpps"] {
			p.RateMpps = *rateMpps
		}
		if set["size"] {
			p.Size = *size
		}
		if set["mix"] {
			p.Mix = *mix
		}
		if set["flows"] {
			p.Flows = *flows
		}
		if set["vary"] {
			p.Vary = strings.Split(*vary, ",")
		}
		if set["proto"] {
			p.Proto = *proto
		}
		if set["count"] {
			p.Count = *count
		}
		if set["burst"] {
			p.Burst = *burst
		}
		if set["rx"] {
			p.Rx = *rx
		}
	}
	if set["duration"] {
		cfg.DurationS = *duration
	}
	if set["json"] {
		cfg.SummaryJSON = *jsonOut
	}
	if set["interval"] {
		cfg.StatsIntervalS = *interval
	}
	if cfg.StatsIntervalS == 0 {
		cfg.StatsIntervalS = 1
	}
	if cfg.PoolMbufs == 0 {
		cfg.PoolMbufs = 16383
	}
	if err := cfg.Validate(file); err != nil {
		return err
	}
	if *check {
		fmt.Printf("pktgen: %s: ok (%d ports)\n", *cfgPath, len(cfg.Ports))
		return nil
	}
	if len(cfg.EAL) == 0 {
		return errors.New("no EAL arguments (-eal or eal = [...])")
	}

	if err := dpdk.EALInit(cfg.EAL); err != nil {
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
	}
	bl, err := pktgen.NewBlaster(&cfg, pports, pool)
	if err != nil {
		return err
	}
	defer bl.Close()

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

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cfg.DurationS > 0 {
		// The streams stop themselves at their duration; give the receivers
		// a moment to drain before the loops stop.
		ctx, cancel = context.WithTimeout(ctx, time.Duration(cfg.DurationS*1e9)+100*time.Millisecond)
		defer cancel()
	}
	go monitor(ctx, cancel, bl, &cfg, clock)
	stats := g.Run(ctx)
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

// monitor prints live stats each interval and ends the run once every counted
// stream is done and its receivers have caught up.
func monitor(ctx context.Context, cancel context.CancelFunc, bl *pktgen.Blaster, cfg *pktgen.Config, clock *lcore.TSCClock) {
	period := time.Duration(cfg.StatsIntervalS * 1e9)
	live := period > 0
	if !live {
		period = 100 * time.Millisecond
	}
	prev, prevT := bl.Snapshot(), clock.Now()
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
			cur := bl.Snapshot()
			fmt.Printf("--- t=%.1f s\n", float64(now)/1e9)
			bl.WriteLive(os.Stdout, prev, cur, now-prevT)
			prev, prevT = cur, now
		}
	}
}
