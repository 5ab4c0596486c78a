// Command switchd is ccbed's DPDK software switch: `switchd -c switch.toml`.
//
// It reads the TOML file (switchd.Config; unknown keys and bad values are errors
// with file:line), initialises the EAL with the file's eal_args plus --vdev for
// every vdev port and -a for every PCI port, starts the ports, builds the engine
// (switchd) and its DPDK adapter (switchd/dataplane), and runs the loops in rtc
// or pipeline mode. It prints a one-line summary every second, writes the queue /
// fair-rate time series to telemetry.csv while it runs and the counters to
// telemetry.json on exit. SIGINT / SIGTERM (or -duration) stop the loops, flush
// the files, and exit 0.
//
//	switchd -c configs/switch-vdev.toml [-duration 10s] [-check]
//
// -check validates the file (as for real NICs, which this machine lacks) and
// exits without touching DPDK.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("switchd", flag.ContinueOnError)
	cfgPath := fs.String("c", "", "switch TOML file (required)")
	duration := fs.Duration("duration", 0, "stop after this long (0: until SIGINT / SIGTERM)")
	check := fs.Bool("check", false, "validate the file and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(os.Stderr, "switchd: -c switch.toml is required")
		return 2
	}
	cfg, err := switchd.LoadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchd:", err)
		return 1
	}
	if *check {
		fmt.Printf("%s: ok: %d ports, mode %s, schemes %s\n", *cfgPath, len(cfg.Ports), cfg.Switch.Mode,
			strings.Join(cfg.SchemesInUse(), ","))
		return 0
	}
	if err := serve(cfg, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "switchd:", err)
		return 1
	}
	return 0
}

// ealArgs is the file's eal_args plus the devices of the ports.
func ealArgs(cfg *switchd.Config) []string {
	args := append([]string(nil), cfg.Switch.EALArgs...)
	for _, p := range cfg.Ports {
		switch {
		case p.Device == "":
		case switchd.IsPCIAddress(p.Device):
			args = append(args, "-a", p.Device)
		default:
			args = append(args, "--vdev="+p.Device)
		}
	}
	return args
}

func lcoresOf(cfg *switchd.Config) []uint {
	if len(cfg.Switch.Lcores) > 0 {
		return cfg.Switch.Lcores
	}
	if cfg.Switch.Mode == switchd.ModePipeline {
		return []uint{0, 1, 2}
	}
	return []uint{0}
}

func serve(cfg *switchd.Config, duration time.Duration) error {
	lcores := lcoresOf(cfg)
	debug.SetGCPercent(400)
	if err := dpdk.EALInit(ealArgs(cfg)); err != nil {
		return err
	}
	pool, err := dpdk.NewPktMbufPool("switchd", cfg.Switch.Mbufs, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		return err
	}
	var eths port.Started
	defer func() {
		eths.Close()
		pool.Free()
	}()
	ports := make([]port.Port, len(cfg.Ports))
	for i := range cfg.Ports {
		pc := &cfg.Ports[i]
		p, err := eths.Start(port.EthConfig{Name: switchd.DeviceName(pc.Device), Pool: pool, Promisc: true,
			RxDesc: uint16(cfg.Switch.RingSize), TxDesc: uint16(cfg.Switch.RingSize)})
		if err != nil {
			return err
		}
		ports[i] = port.EthQueue{Port: p}
		if pc.MAC == "" {
			mac, err := p.MACAddr()
			if err != nil {
				return err
			}
			pc.MAC = mac.String()
		}
	}
	eng, err := switchd.New(cfg)
	if err != nil {
		return err
	}
	sw, err := dataplane.New(eng, ports, pool, dataplane.Config{
		Pipeline: cfg.Switch.Mode == switchd.ModePipeline, Burst: cfg.Switch.Burst, RingSize: cfg.Switch.RingSize, Name: "switchd",
	})
	if err != nil {
		return err
	}
	var csv *switchd.CSVWriter
	if cfg.Telemetry.CSV != "" {
		if csv, err = switchd.CreateCSV(cfg.Telemetry.CSV); err != nil {
			sw.Close()
			return err
		}
	}
	for i, p := range cfg.Ports {
		fmt.Printf("switchd: port %d %s %s mac %s peer %s %.1f Gb/s scheme %s\n", i, p.Name, p.Device, p.MAC, p.PeerMAC, p.LinkGbps, cfg.SchemeOf(i))
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	g := lcore.NewGroup()
	if err := sw.Launch(g, clock, lcores); err != nil {
		g.Stop()
		g.Wait()
		sw.Close()
		return err
	}
	fmt.Printf("switchd: running, mode %s on lcores %v\n", cfg.Switch.Mode, lcores)
	start := time.Now()

	ctx, cancel := context.WithCancel(context.Background())
	if duration > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), duration)
	}
	defer cancel()
	done, stopTel := make(chan struct{}), make(chan struct{})
	go func() { // telemetry: CSV samples and the console line
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var prev *switchd.Snapshot
		last := time.Now()
		for {
			select {
			case <-tick.C:
			case <-stopTel:
				return
			}
			if csv != nil {
				csv.DrainFrom(eng.Samples())
			}
			if now := time.Now(); now.Sub(last) >= time.Second {
				cur := eng.Snapshot()
				if cfg.Telemetry.Console {
					fmt.Println(switchd.SummaryLine(now.Sub(start).Seconds(), now.Sub(last).Seconds(), prev, &cur))
				}
				prev, last = &cur, now
			}
		}
	}()
	stats := g.Run(ctx)
	close(stopTel)
	<-done
	sw.Close()
	res := switchd.Results{DurationS: time.Since(start).Seconds(), Mode: cfg.Switch.Mode, Counters: eng.Snapshot()}
	for _, s := range stats {
		res.Lcores = append(res.Lcores, switchd.LcoreResults{Name: s.Name, Lcore: s.Lcore, Iterations: s.Iterations,
			BusyPolls: s.BusyPolls, Work: s.Work, MaxStallNs: s.MaxStallNs, Panic: s.Panic})
	}
	var errs []string
	if csv != nil {
		csv.DrainFrom(eng.Samples())
		if err := csv.Close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if cfg.Telemetry.JSON != "" {
		if err := switchd.WriteResultsJSON(cfg.Telemetry.JSON, &res); err != nil {
			errs = append(errs, err.Error())
		}
	}
	tot := switchd.PortCounters{}
	for _, p := range res.Counters.Ports {
		tot.RxPackets += p.RxPackets
		tot.TxPackets += p.TxPackets
		tot.DropsTotal += p.DropsTotal
	}
	fmt.Printf("switchd: stopped after %.1fs: rx %d tx %d drops %d; mbufs in use %d\n",
		res.DurationS, tot.RxPackets, tot.TxPackets, tot.DropsTotal, pool.InUse())
	for _, s := range stats {
		if s.Panic != "" {
			errs = append(errs, fmt.Sprintf("loop %s panicked: %s", s.Name, s.Panic))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
