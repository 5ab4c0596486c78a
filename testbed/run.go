package testbed

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/ccbed/ccbed/ccalgo/all" // every scheme, chosen by name
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
	"github.com/ccbed/ccbed/testbed/report"
)

// Result is what Run produced.
type Result struct {
	Dir     string // results/<experiment>
	Summary report.Summary
	Loops   []lcore.Stats
	Switch  switchd.Snapshot
	Hosts   []hostd.Report
	// MbufsLeaked is the pool's in-use count after shutdown (0 when every mbuf
	// came back).
	MbufsLeaked int
	// Interrupted is true when SIGINT/SIGTERM ended the run early.
	Interrupted bool
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

// Run runs the experiment on DPDK virtual devices in this process: it
// initialises the EAL (once per process), wires host i to switch port i with
// an ethdev cable, runs the switch in run-to-completion mode and the hosts on
// their lcores for the experiment's duration (or until ctx ends or SIGINT),
// then writes results/<name>/ and a summary table to out.
func Run(ctx context.Context, e *Experiment, out io.Writer) (*Result, error) {
	// SIGINT / SIGTERM from here on end the run early but still write results
	// (a signal during set-up ends the run as soon as it starts).
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	if err := dpdk.EALInit(e.EALArgs()); err != nil && err != dpdk.ErrEALInitialised {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	tag := fmt.Sprintf("tb%d", runSeq.Add(1))
	t := &e.Topology
	hostCfgs := e.HostConfigs()
	swCfg := e.SwitchConfig()

	// Enough mbufs to fill every cable in both directions and still run.
	const cableSlots = 4096
	mbufs := uint32(2*cableSlots*t.Hosts + 16384 - 1)
	pool, err := dpdk.NewPktMbufPool(tag+"_pool", mbufs, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		return nil, fmt.Errorf("testbed: mempool: %w", err)
	}
	var started port.Started
	defer func() {
		started.Close()
		pool.Free()
	}()
	swPorts := make([]port.Port, t.Hosts)
	hostPorts := make([]port.Port, t.Hosts)
	for i := 0; i < t.Hosts; i++ {
		a, b, err := dpdk.NewEthCable(fmt.Sprintf("%s_h%d", tag, i), fmt.Sprintf("%s_s%d", tag, i), cableSlots, dpdk.SocketAny)
		if err != nil {
			return nil, fmt.Errorf("testbed: cable %d: %w", i, err)
		}
		for _, p := range []dpdk.EthPort{a, b} {
			if _, err := started.Start(port.EthConfig{Name: p.Name(), Pool: pool, RxDesc: cableSlots, TxDesc: cableSlots}); err != nil {
				return nil, fmt.Errorf("testbed: %w", err)
			}
		}
		hostPorts[i], swPorts[i] = port.EthQueue{Port: a}, port.EthQueue{Port: b}
	}

	eng, err := switchd.New(&swCfg)
	if err != nil {
		return nil, fmt.Errorf("testbed: switch: %w", err)
	}
	sw, err := dataplane.New(eng, swPorts, pool, dataplane.Config{Name: tag + "sw"})
	if err != nil {
		return nil, fmt.Errorf("testbed: switch: %w", err)
	}
	defer sw.Close()

	clock := lcore.NewTSCClock(dpdk.TSCHz())
	// Time 0 of the experiment lies a little ahead, past the rest of the
	// set-up (hosts' adapters, lcore launch): flows due at 0 are posted when
	// the loops already run, so that no FCT counts set-up time.
	const setupNs = 50_000_000
	t0 := clock.Now() + setupNs
	hosts := make([]*hostdp.Host, t.Hosts)
	for i, hc := range hostCfgs {
		he, err := hostd.NewEngine(hc, t0)
		if err != nil {
			return nil, fmt.Errorf("testbed: host %d: %w", i, err)
		}
		h, err := hostdp.NewHost(he, hostPorts[i], pool, fmt.Sprintf("%s_h%d", tag, i))
		if err != nil {
			return nil, fmt.Errorf("testbed: host %d: %w", i, err)
		}
		hosts[i] = h
		defer h.Close()
	}

	// Loops: the switch on its lcore; hosts spread over theirs. A host lcore
	// equal to the switch's shares that loop.
	byLcore := map[uint][]*hostdp.Host{}
	for i, h := range hosts {
		l := e.Lcores.Hosts[i%len(e.Lcores.Hosts)]
		byLcore[l] = append(byLcore[l], h)
	}
	g := lcore.NewGroup()
	tStart := t0
	swHosts := byLcore[e.Lcores.Switch]
	delete(byLcore, e.Lcores.Switch)
	if err := g.Launch(e.Lcores.Switch, "switch", func() int {
		now := clock.Now()
		n := sw.PollRTC(now)
		for _, h := range swHosts {
			n += h.Poll(now)
		}
		return n
	}); err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	for l, hs := range byLcore {
		if err := g.Launch(l, fmt.Sprintf("hosts@%d", l), func() int {
			now := clock.Now()
			n := 0
			for _, h := range hs {
				n += h.Poll(now)
			}
			return n
		}); err != nil {
			g.Stop()
			g.Wait()
			return nil, fmt.Errorf("testbed: %w", err)
		}
	}

	rec := report.NewRecorder(report.Meta{
		Experiment: e.Experiment.Name, Scheme: e.CC.Scheme, Scaling: e.Experiment.Scaling,
		Notes: e.Experiment.Mirrors,
	})
	usOf := func(ns int64) float64 { return float64(ns-tStart) / 1e3 }
	drainSwitch := func() {
		eng.Samples().Drain(func(s *switchd.Sample) {
			tu := usOf(s.TNs)
			if tu < 0 {
				return // before time 0: the loops idle while the set-up ends
			}
			rec.AddQueueSample(tu, s.Port, s.QueueBytes)
			if s.FairRateBps >= 0 {
				rec.AddFairRate(tu, s.Port, s.FairRateBps/1e9)
			}
		})
	}
	dur := time.Duration(e.Experiment.DurationMs * float64(time.Millisecond))
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(t0-clock.Now())+dur)
	defer cancel()
	// Drain the switch's samples while the run goes on, so its ring never fills.
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				drainSwitch()
			}
		}
	}()
	loops := g.Run(runCtx)
	close(done)
	end := clock.Now()
	drainSwitch()
	res := &Result{Loops: loops, Interrupted: ctx.Err() != nil}
	for _, l := range loops {
		if l.Panic != "" {
			return nil, fmt.Errorf("testbed: loop %s panicked: %s", l.Name, l.Panic)
		}
	}

	// Results: flows from the hosts, ports from the switch.
	rec.SetDuration(float64(end-tStart) / 1e9)
	warm := e.Experiment.WarmupMs * 1e3
	for i, h := range hosts {
		he := h.Engine()
		for _, s := range he.Samples() {
			if tu := usOf(s.T); tu >= warm {
				rec.AddRateSample(tu, int(s.Flow), s.Gbps)
			}
		}
		delivered := map[int64]int64{}
		fcts := map[int64]float64{}
		for _, f := range he.FCTs() {
			rec.AddFCT(int(f.Flow), f.SizeBytes, float64(f.FCTNs)/1e3, float64(f.FCTNs)/float64(f.IdealNs))
			delivered[f.Flow] += f.SizeBytes
			fcts[f.Flow] = float64(f.FCTNs) / 1e3
		}
		for _, f := range he.ActiveFlows() {
			delivered[f.Flow] += f.AckedBytes
		}
		for id, bytes := range delivered {
			rec.SetFlow(report.FlowInfo{ID: int(id), Src: hostCfgs[i].Name, Dst: e.flowDst(i, id),
				Bytes: bytes, FCTUs: fcts[id]})
		}
		pc := h.PortCounters()
		res.Hosts = append(res.Hosts, he.Report(&pc))
	}
	res.Switch = eng.Snapshot()
	for i, pc := range res.Switch.Ports {
		hrx, _ := hosts[i].Engine().Counters()
		rec.SetPortCounters(report.PortCounters{
			ID: i, PFCPauses: pc.PausesSent, Drops: pc.DropsTotal, ECNMarked: pc.ECNMarkedTotal,
			// The port's congestion notifications: the switch CP's own feedback
			// plus the CNPs of the host behind the port (DCQCN's NP).
			CNPsSent: pc.FeedbackSent + hrx.CNPs,
		})
	}

	sw.Close()
	for _, h := range hosts {
		h.Close()
	}
	scratch := dpdk.NewBurst(32)
	for _, p := range append(append([]port.Port{}, swPorts...), hostPorts...) {
		port.Drain(p, scratch.Pkts)
	}
	scratch.Free()
	res.MbufsLeaked = pool.InUse()

	res.Dir = filepath.Join(e.Experiment.OutputDir, e.Experiment.Name)
	sum, err := rec.WriteAll(res.Dir)
	if err != nil {
		return nil, fmt.Errorf("testbed: results: %w", err)
	}
	res.Summary = sum
	if out != nil {
		rec.PrintTable(out)
		fmt.Fprintf(out, "results in %s\n", res.Dir)
	}
	return res, nil
}

// flowDst names the destination host of flow id sent by host src.
func (e *Experiment) flowDst(src int, id int64) string {
	for _, f := range e.Flows {
		if f.Src == src && int64(f.ID) == id {
			return fmt.Sprintf("h%d", f.Dst)
		}
	}
	for _, in := range e.Incast {
		for _, s := range in.Senders {
			if s == src {
				return fmt.Sprintf("h%d", in.Dst)
			}
		}
	}
	return "workload"
}

// runSeq numbers the runs of this process: DPDK object names must be unique.
var runSeq atomic.Int64
