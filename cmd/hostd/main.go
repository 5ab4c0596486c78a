// Command hostd runs one ccbed traffic-generator host on DPDK: hostd -c
// host.toml. It starts the EAL, a mempool and the port named in the file, runs
// the host engine (hostd.Engine) on one lcore (rx and tx in one loop) or two (rx,
// tx), stops after duration_s or on SIGINT / SIGTERM, and writes rate.csv,
// fct.csv, counters.json and run.json into results_dir. See
// configs/host-*.toml. hostd -c host.toml -check checks the file as a run would
// and exits before DPDK starts.
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
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"

	_ "github.com/ccbed/ccbed/ccalgo/all"
)

func main() {
	path := flag.String("c", "", "hostd TOML file")
	check := flag.Bool("check", false, "check the file (its CDFs, every range) and exit, before DPDK starts")
	startAt := flag.String("start-at", "", "wall-clock instant of time 0 (RFC 3339 or Unix ns): bring up DPDK and the port, then wait for it")
	flag.Parse()
	if *path == "" {
		fmt.Fprintln(os.Stderr, "usage: hostd -c host.toml [-check] [-start-at RFC3339|unix-ns]")
		os.Exit(2)
	}
	if *check {
		f, err := hostd.LoadFile(*path)
		if err == nil {
			_, err = startInstant(f, *startAt, time.Now())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostd:", err)
			os.Exit(1)
		}
		fmt.Printf("hostd: %s: ok\n", *path)
		return
	}
	if err := run(*path, *startAt); err != nil {
		fmt.Fprintln(os.Stderr, "hostd:", err)
		os.Exit(1)
	}
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

func run(path, startAtFlag string) error {
	f, err := hostd.LoadFile(path)
	if err != nil {
		return err
	}
	startAt, err := startInstant(f, startAtFlag, time.Now())
	if err != nil {
		return err
	}
	info := hostd.RunInfo{Host: f.Host.Name, ClockOffsetBoundNs: hostd.ClockOffsetBoundNs}
	if !startAt.IsZero() {
		info.StartAtUnixNs, info.StartAt = startAt.UnixNano(), startAt.UTC().Format(time.RFC3339Nano)
	}
	info.ClockOffset = hostd.ReadClockOffset(context.Background())
	info.ClockOffsetExceeded = info.ClockOffset.Exceeds(hostd.ClockOffsetBoundNs)
	if err := dpdk.EALInit(f.EALArgs); err != nil {
		return err
	}
	mp, err := dpdk.NewPktMbufPool("hostd", f.Mbufs, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		return err
	}
	p, err := port.StartEth(port.EthConfig{Name: f.Port, Pool: mp})
	if err != nil {
		return err
	}
	defer p.Close()
	defer p.Stop() // a second stop after the one at the end is harmless
	scratch := dpdk.NewBurst(hostdp.Burst)
	defer scratch.Free()
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
	stats := g.Run(ctx) // returns on the timeout, SIGINT or SIGTERM: results are flushed below
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
	fmt.Printf("  results in %s\n", f.ResultsDir)
	if err := p.Stop(); err != nil {
		return err
	}
	port.Drain(port.EthQueue{Port: p}, scratch.Pkts)
	fmt.Printf("  mbufs in use %d\n", mp.InUse())
	return nil
}

func panicNote(p string) string {
	if p == "" {
		return ""
	}
	return ", PANIC: " + p
}
