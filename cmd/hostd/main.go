// Command hostd runs one ccbed traffic-generator host on DPDK: hostd -c
// host.toml. It starts the EAL, a mempool and the port named in the file, runs
// the host engine (hostd.Engine) on one lcore (rx and tx in one loop) or two (rx,
// tx), stops after duration_s or on SIGINT / SIGTERM, and writes rate.csv,
// fct.csv and counters.json into results_dir. See configs/host-*.toml. hostd
// -c host.toml -check checks the file as a run would and exits before DPDK
// starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
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
	flag.Parse()
	if *path == "" {
		fmt.Fprintln(os.Stderr, "usage: hostd -c host.toml [-check]")
		os.Exit(2)
	}
	if *check {
		if _, err := hostd.LoadFile(*path); err != nil {
			fmt.Fprintln(os.Stderr, "hostd:", err)
			os.Exit(1)
		}
		fmt.Printf("hostd: %s: ok\n", *path)
		return
	}
	if err := run(*path); err != nil {
		fmt.Fprintln(os.Stderr, "hostd:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := hostd.LoadFile(path)
	if err != nil {
		return err
	}
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
	start := clock.Now()
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
	rx, tx := eng.Counters()
	fmt.Printf("hostd %s: %.3f s, sent %d data frames (%d resent, %d timeouts), %d flows done; received %d data frames, %d ACKs, %d CNPs\n",
		f.Host.Name, float64(clock.Now()-start)/1e9, tx.DataFrames, tx.RetxFrames, tx.Timeouts,
		tx.FlowsCompleted, rx.Data, rx.Acks, rx.CNPs)
	for _, s := range stats {
		fmt.Printf("  lcore %d %-4s %d polls (%d busy), worst stall %.1f us%s\n",
			s.Lcore, s.Name, s.Iterations, s.BusyPolls, float64(s.MaxStallNs)/1000, panicNote(s.Panic))
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
