// Package dpdkrun is the fabric's DPDK driver: the engines of a fabric.Plan on
// EAL lcores in one process, in real time, every link of the topology an ethdev
// cable (two net_ring ports joined by crossed rte_rings, dpdk.NewEthCable). It is
// the same plan the virtual-time driver (fabric.Virtual) runs: where the two
// differ on one experiment, the difference is the dataplane's (polling, bursts,
// CPU stalls), not the model's.
//
// Links have no rate of their own here: each switch port's shaper and each
// host's NIC bucket pace at the link rate. Propagation delays sit on the switch
// ports' delay lines: a switch-to-switch link's on the sending port, a host
// link's both directions on the switch port toward the host (the round trip is
// the same; one-way delays of host-to-switch frames are not modelled). Every
// switch runs in the switch lcore's loop (run-to-completion); hosts are spread
// over the host lcores. Options.Capture taps chosen ports into pcap files
// (capture.go, docs/capture.md).
package dpdkrun

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
)

// Options place and time a run.
type Options struct {
	// EALArgs initialise the EAL (once per process; later runs reuse it).
	EALArgs []string
	// SwitchLcore runs every switch; HostLcores the hosts (host i on
	// HostLcores[i % len]); a host lcore equal to SwitchLcore shares its loop.
	SwitchLcore uint
	HostLcores  []uint
	// DurationNs is the run's length from its time 0.
	DurationNs int64
	// Capture, when not nil, writes the frames of its ports to capture files
	// (pcapng, each frame's direction marked, or pcap; Capture.Format):
	// what a port receives, stamped with the TSC time of the rx burst that
	// brought it, and what it transmits, with the time of its tx burst,
	// relative to time 0 (docs/capture.md). A captured switch port costs its
	// switch the one-cgo-call rx and tx of every port (they become one call
	// per port); ports not captured are untouched.
	Capture *fabric.Capture
	// Progress, when not nil, is called about every second while the run
	// goes, from a goroutine of its own (never from a loop), with the time
	// since time 0 and the hosts' flows done and started.
	Progress func(fabric.Progress)
	// Serve, when not nil, is called once the switches and hosts are built
	// and before their loops start, with what a run can serve while it goes
	// (testbed run -metrics: a Prometheus endpoint); the stop it returns is
	// called before the run's switches and hosts are closed. An error ends
	// the run before it starts.
	Serve func(Serving) (stop func(), err error)

	// wrapHostPort, when not nil, wraps host i's port before its engine
	// gets it, told the pool, the clock, the run's time 0 and a flag set
	// once the loops stopped (the tests' forging NIC, trust_test.go); the
	// wrapper runs in the host's loop, and once more in the host's Close,
	// which drains the port (stopped set then).
	wrapHostPort func(i int, p port.Port, pool *dpdk.Mempool, clock *lcore.TSCClock, t0 int64, stopped *atomic.Bool) port.Port
	// leftOver, when not nil, is told every frame still on a cable when the
	// loops stopped (sent, never received), or sent there by a Close, by the
	// node and port whose rx it waited on, as the run frees it (the tests'
	// count of frames in flight at the end).
	leftOver func(node, port int, frame []byte)
}

// Serving is what a run offers to serve while it goes (Options.Serve): every
// switch and host, built, in the topology's order.
type Serving struct {
	Switches []ServedSwitch
	Hosts    []ServedHost
}

// ServedSwitch is a switch of a running fabric: its name, its engine (whose
// Snapshot any goroutine may take) and its DPDK adapter.
type ServedSwitch struct {
	Name    string
	Engine  *switchd.Engine
	Adapter *dataplane.Switch
}

// ServedHost is a host of a running fabric: its name, its port's name and
// its dataplane (whose Progress any goroutine may ask for).
type ServedHost struct {
	Name, Port string
	Host       *hostdp.Host
}

// Outcome is a run's fabric.Result with what only real time has.
type Outcome struct {
	*fabric.Result
	Loops []lcore.Stats
	// HostPorts are the hosts' adapter counters (tx drops, no mbuf).
	HostPorts []hostd.PortCounter
	// MbufsLeaked is the pool's in-use count after shutdown (0 when every mbuf
	// came back).
	MbufsLeaked int
	// Captures are the pcap files written (Options.Capture), with the frames
	// each could not keep up with.
	Captures []fabric.CaptureFile
}

// runSeq numbers the runs of this process: DPDK object names must be unique.
var runSeq atomic.Int64

// maxCableSlots is a cable ring's size (and its ports' descriptors) in a small
// topology; cableMbufBudget bounds the mbufs that all cables together may
// hold, so that a large topology fits the EAL's memory with smaller rings.
const (
	maxCableSlots   = 4096
	minCableSlots   = 256
	cableMbufBudget = 200_000
)

// cableSlots is the ring size for a topology of links links: the largest
// power of two, up to maxCableSlots, whose cables in both directions hold at
// most cableMbufBudget mbufs.
func cableSlots(links int) int {
	n := maxCableSlots
	for n > minCableSlots && 2*n*links > cableMbufBudget {
		n /= 2
	}
	return n
}

// setupNs is how far ahead of the set-up's start time 0 lies: flows due at 0
// are posted when the loops already run, so that no FCT counts set-up time.
const setupNs = 50_000_000

// Check reports why plan cannot run on DPDK in one process: every link takes
// two ethdev ports, and a DPDK build has at most dpdk.MaxEthPorts; injected
// link failures are the virtual-time driver's alone.
func Check(plan *fabric.Plan) error {
	if s := plan.Spec; s != nil && (s.Failures.LossRate > 0 || len(s.Failures.LinkDown) > 0) {
		return fmt.Errorf("dpdkrun: link loss and link failures are injected in virtual time only")
	}
	if n := 2 * len(plan.Topo.Links); n > dpdk.MaxEthPorts {
		return fmt.Errorf("dpdkrun: %d links need %d ethdev ports in one process; this DPDK build has at most %d (RTE_MAX_ETHPORTS): run it in virtual time, or on real nodes",
			len(plan.Topo.Links), n, dpdk.MaxEthPorts)
	}
	return nil
}

// Run runs plan on DPDK until o.DurationNs past time 0 or until ctx ends.
func Run(ctx context.Context, plan *fabric.Plan, o Options) (*Outcome, error) {
	if err := Check(plan); err != nil {
		return nil, err
	}
	if err := dpdk.EALInit(o.EALArgs); err != nil && err != dpdk.ErrEALInitialised {
		return nil, fmt.Errorf("dpdkrun: %w", err)
	}
	if len(o.HostLcores) == 0 {
		o.HostLcores = []uint{o.SwitchLcore}
	}
	tag := fmt.Sprintf("fr%d", runSeq.Add(1))
	t := plan.Topo
	nh := len(t.Hosts)

	// Enough mbufs to fill every cable in both directions and still run.
	slots := cableSlots(len(t.Links))
	mbufs := uint32(2*slots*len(t.Links) + 16384 - 1)
	pool, err := dpdk.NewPktMbufPool(tag+"_pool", mbufs, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		return nil, fmt.Errorf("dpdkrun: mempool: %w", err)
	}
	var started port.Started
	defer func() {
		started.Close()
		pool.Free()
	}()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	var capt *capture
	if o.Capture != nil {
		if capt, err = openCapture(t, o.Capture, pool.DataRoom()-dpdk.MbufHeadroom, clock); err != nil {
			return nil, fmt.Errorf("dpdkrun: %w", err)
		}
		defer func() {
			if capt != nil { // an early return: close the files as they are
				capt.set.Close()
			}
		}()
	}
	ports := make([][]port.Port, t.NumNodes())
	for n := range ports {
		ports[n] = make([]port.Port, t.NumPorts(n))
	}
	for i, l := range t.Links {
		a, b, err := dpdk.NewEthCable(fmt.Sprintf("%s_l%da", tag, i), fmt.Sprintf("%s_l%db", tag, i), uint32(slots), dpdk.SocketAny)
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: cable %d: %w", i, err)
		}
		for _, p := range []dpdk.EthPort{a, b} {
			if _, err := started.Start(port.EthConfig{Name: p.Name(), Pool: pool, RxDesc: uint16(slots), TxDesc: uint16(slots)}); err != nil {
				return nil, fmt.Errorf("dpdkrun: %w", err)
			}
		}
		ports[l.A][l.APort], ports[l.B][l.BPort] = port.EthQueue{Port: a}, port.EthQueue{Port: b}
	}

	var switches []*dataplane.Switch
	var engines []*switchd.Engine
	defer func() {
		for _, s := range switches {
			s.Close()
		}
	}()
	for si := range plan.Switches {
		c := plan.Switches[si]
		c.Ports = append([]switchd.PortSpec(nil), c.Ports...)
		v := nh + si
		for p := range c.Ports {
			peer, peerPort, out := t.Peer(v, p)
			d := out.DelayNs
			if t.IsHost(peer) {
				_, _, back := t.Peer(peer, peerPort)
				d += back.DelayNs
			}
			c.Ports[p].DelayNs = d
		}
		eng, err := switchd.New(&c)
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: switch %s: %w", t.Switches[si].Name, err)
		}
		sw, err := dataplane.New(eng, capt.ports(v, ports[v]), pool, dataplane.Config{Name: fmt.Sprintf("%ss%d", tag, si)})
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: switch %s: %w", t.Switches[si].Name, err)
		}
		engines = append(engines, eng)
		switches = append(switches, sw)
	}

	t0 := clock.Now() + setupNs
	for _, eng := range engines {
		eng.Start(t0)
	}
	hosts := make([]*hostdp.Host, nh)
	var stopped atomic.Bool // the loops stopped (wrapHostPort)
	defer func() {
		for _, h := range hosts {
			if h != nil {
				h.Close()
			}
		}
	}()
	for i := range plan.Hosts {
		he, err := hostd.NewEngine(plan.Hosts[i], t0)
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: host %s: %w", t.Hosts[i].Name, err)
		}
		hp := capt.ports(i, ports[i])[0]
		if o.wrapHostPort != nil {
			hp = o.wrapHostPort(i, hp, pool, clock, t0, &stopped)
		}
		if hosts[i], err = hostdp.NewHost(he, hp, pool, fmt.Sprintf("%s_h%d", tag, i)); err != nil {
			return nil, fmt.Errorf("dpdkrun: host %s: %w", t.Hosts[i].Name, err)
		}
	}

	if o.Serve != nil {
		sv := Serving{}
		for si, eng := range engines {
			sv.Switches = append(sv.Switches, ServedSwitch{Name: t.Switches[si].Name, Engine: eng, Adapter: switches[si]})
		}
		for i, h := range hosts {
			sv.Hosts = append(sv.Hosts, ServedHost{Name: t.Hosts[i].Name, Port: t.PortName(i, 0), Host: h})
		}
		stop, err := o.Serve(sv)
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: %w", err)
		}
		defer stop() // before the hosts' and switches' Close (deferred earlier)
	}

	byLcore := map[uint][]*hostdp.Host{}
	for i, h := range hosts {
		l := o.HostLcores[i%len(o.HostLcores)]
		byLcore[l] = append(byLcore[l], h)
	}
	g := lcore.NewGroup()
	// A set-up slower than setupNs (a loaded machine) launches the loops
	// after time 0: their stalls count from it, so the run says so.
	g.SetOrigin(clock.TSCAt(t0))
	swHosts := byLcore[o.SwitchLcore]
	delete(byLcore, o.SwitchLcore)
	if err := g.Launch(o.SwitchLcore, "switch", func() int {
		now := clock.Now()
		n := 0
		for _, s := range switches {
			n += s.PollRTC(now)
		}
		for _, h := range swHosts {
			n += h.Poll(now)
		}
		return n
	}); err != nil {
		return nil, fmt.Errorf("dpdkrun: %w", err)
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
			return nil, fmt.Errorf("dpdkrun: %w", err)
		}
	}

	res := &fabric.Result{Clock: fabric.ClockDPDK, Plan: plan, T0Ns: t0, Switches: engines}
	var mu sync.Mutex
	drain := func() {
		mu.Lock()
		defer mu.Unlock()
		for si, eng := range engines {
			eng.DrainSamples(func(s *switchd.Sample) {
				if s.TNs >= t0 { // before time 0 the loops idle while the set-up ends
					res.Samples = append(res.Samples, fabric.SwitchSample{Switch: si, Sample: *s})
				}
			})
			eng.DrainPFCEvents(func(ev *switchd.PFCEvent) {
				if ev.TNs >= t0 {
					res.PFCEvents = append(res.PFCEvents, fabric.SwitchPFCEvent{Switch: si, PFCEvent: *ev})
				}
			})
		}
	}
	wall := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(t0-clock.Now()+o.DurationNs))
	defer cancel()
	// Drain the switches' samples while the run goes on, so their rings never fill.
	done := make(chan struct{})
	var wg sync.WaitGroup
	every(&wg, done, 10*time.Millisecond, drain)
	if capt != nil {
		// Move the taps' frames into the files while the run goes on.
		every(&wg, done, tapDrainEvery, func() { capt.drain(t0, false) })
	}
	if o.Progress != nil {
		var pace fabric.PaceMeter
		every(&wg, done, time.Second, func() {
			p := fabric.Progress{Clock: fabric.ClockDPDK, SimNs: max(clock.Now()-t0, 0), EndNs: o.DurationNs, Wall: time.Since(wall)}
			for _, h := range hosts {
				select {
				case <-done: // the loops stopped: none would answer
					return
				default:
				}
				// The loops copy their counters at their next poll.
				if hp, ok := h.Progress(100 * time.Millisecond); ok {
					p.FlowsDone += hp.Tx.FlowsCompleted
					p.FlowsStarted += hp.Tx.FlowsStarted
				}
			}
			pace.Fill(&p)
			o.Progress(p)
		})
	}
	loops := g.Run(runCtx)
	stopped.Store(true)
	close(done)
	wg.Wait()
	// What the cables hold now was sent in the loops' last passes and never
	// received: free it (telling leftOver) before the switches' and hosts'
	// Close, which would free it unseen.
	scratch := dpdk.NewBurst(32)
	defer scratch.Free()
	drainCables := func() {
		for n, ps := range ports {
			for i, p := range ps {
				if o.leftOver != nil {
					p = &leftOverPort{Port: p, node: n, port: i, told: o.leftOver}
				}
				port.Drain(p, scratch.Pkts)
			}
		}
	}
	drainCables()
	res.EndNs = clock.Now()
	res.WallNs = time.Since(wall).Nanoseconds()
	res.Interrupt = ctx.Err() != nil
	drain()
	for _, l := range loops {
		if l.Panic != "" {
			return nil, fmt.Errorf("dpdkrun: loop %s panicked: %s", l.Name, l.Panic)
		}
	}
	out := &Outcome{Result: res, Loops: loops}
	if capt != nil {
		files, err := capt.close(t0)
		capt = nil
		if err != nil {
			return nil, fmt.Errorf("dpdkrun: %w", err)
		}
		out.Captures = files
	}
	for _, eng := range engines {
		eng.PublishEgress()
		eng.PublishIngress()
	}
	for _, h := range hosts {
		res.Hosts = append(res.Hosts, h.Engine())
		out.HostPorts = append(out.HostPorts, h.PortCounters())
	}

	for _, s := range switches {
		s.Close()
	}
	switches = nil
	for i, h := range hosts {
		h.Close()
		hosts[i] = nil
	}
	drainCables() // what the Closes sent
	out.MbufsLeaked = pool.InUse()
	return out, nil
}

// leftOverPort tells told every frame its port receives (Options.leftOver).
type leftOverPort struct {
	port.Port
	node, port int
	told       func(node, port int, frame []byte)
}

func (p *leftOverPort) RxBurst(pkts []*dpdk.Mbuf) int {
	n := p.Port.RxBurst(pkts)
	for _, m := range pkts[:n] {
		p.told(p.node, p.port, m.Data())
	}
	return n
}

// every runs fn every period on a goroutine of wg until done is closed.
func every(wg *sync.WaitGroup, done <-chan struct{}, period time.Duration, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
}
