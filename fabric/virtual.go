package fabric

import (
	"context"
	"fmt"
	"time"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/internal/ring"
	"github.com/ccbed/ccbed/node"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/switchd"
)

// ClockVirtual and ClockDPDK name the two drivers (Result.Clock).
const (
	ClockVirtual = "virtual"
	ClockDPDK    = "dpdk"
)

// wireDir is one direction of a link in virtual time: frames start when the
// previous one has left (store and forward), take their serialisation time at
// the link's rate with the per-frame overhead, then the propagation delay, and
// arrive in order.
//
// 128 bytes, two cache lines: a field more goes in place of one.
type wireDir struct {
	to, toPort int32
	// ent is the wire's agenda entry and toEnt its receiver's, in the
	// agenda of the lp that receives from it (lp.glob).
	ent, toEnt int32
	nsPerByte  float64
	delayNs    float64
	free       float64             // when the wire's last bit leaves, ns
	q          ring.FIFO[inflight] // frames on the wire, oldest first
	// Frames and Bytes count what entered the wire.
	frames, bytes uint64
	// capt, when not nil, is the wire's ports' captures (Virtual.Capture).
	capt *wireCapture
	// mail, when not nil, is where the sender posts frames for the
	// receiver's partition (the wire is cut: parallel.go).
	mail *[2]mailbox
}

// wireCapture is a wire's captures: tx, when not nil, the sending port's
// (it gets every frame entering the wire), rx the receiving port's (every
// frame the wire delivers).
type wireCapture struct {
	tx, rx *pcapw.Port
}

// inflight is a frame on a wire, arriving at `at`: 16 bytes, four to a
// cache line of the wire's ring (its handle in 32 bits: a store of 2^32
// buffers would not fit in memory).
type inflight struct {
	h   uint32 // node.Handle
	len int32
	at  int64
}

// wireSlots is the frames a wire direction first has room for; it doubles
// as frames pile up (wireLimit bounds it far beyond any real queue).
const wireSlots, wireLimit = 16, 1 << 30

func (w *wireDir) push(f inflight) {
	w.q.Reserve()
	w.q.Push(f)
}

func (w *wireDir) front() *inflight { return w.q.Front() }

func (w *wireDir) pop() { w.q.Drop() }

// Virtual is the virtual-time driver: a discrete-event loop over the fabric's
// nodes (the real switchd and hostd engines behind node.Node) and its links.
// Deterministic: the same plan gives the same events in the same order,
// whatever the machine; SetParallel runs it in partitions on several
// goroutines with the same results (parallel.go).
type Virtual struct {
	lp        // the serial driver's one logical process: every node
	plan      *Plan
	swNodes   []*switchd.Node
	hostNodes []*hostd.Node
	// par, when not nil, runs the fabric in partitions (SetParallel).
	par *parallel
	// sink receives the results as the run goes (StreamResults), drain
	// what it is handed.
	sink    func(*Drain)
	drain   Drain
	samples []SwitchSample
	pfc     []SwitchPFCEvent
	capture *CaptureSet
	trace   *traceWriter // the per-packet trace (Trace); nil: none
}

// SwitchSample is one telemetry sample of a switch port.
type SwitchSample struct {
	Switch int
	switchd.Sample
}

// SwitchPFCEvent is one XOFF or XON of a switch's ingress port.
type SwitchPFCEvent struct {
	Switch int
	switchd.PFCEvent
}

// NewVirtual builds every node's engine from the plan, at time 0.
func NewVirtual(p *Plan) (*Virtual, error) {
	t := p.Topo
	room := 256 // the largest switch-generated frame fits
	v := &Virtual{plan: p, lp: lp{out: make([]node.Tx, 64)}}
	hosts := make([]*hostd.Engine, len(p.Hosts))
	for i := range p.Hosts {
		e, err := hostd.NewEngine(p.Hosts[i], 0)
		if err != nil {
			return nil, fmt.Errorf("fabric: host %s: %w", t.Hosts[i].Name, err)
		}
		room = max(room, e.MaxFrameBytes())
		hosts[i] = e
	}
	v.frames = newFrameStore(room)
	v.hostNodes = hostd.NewNodes(hosts, v.frames) // one goroutine: one scratch
	for i, hn := range v.hostNodes {
		hosts[i].LeaveICRC(true) // nothing reads a frame past its headers but a capture (Capture)
		v.nodes = append(v.nodes, hn)
	}
	for i := range p.Switches {
		c := p.Switches[i]
		e, err := switchd.New(&c)
		if err != nil {
			return nil, fmt.Errorf("fabric: switch %s: %w", t.Switches[i].Name, err)
		}
		e.Start(0)
		sn := switchd.NewNode(e, v.frames)
		v.swNodes = append(v.swNodes, sn)
		v.nodes = append(v.nodes, sn)
	}
	for n := 0; n < t.NumNodes(); n++ {
		v.portBase = append(v.portBase, len(v.wires))
		for port := 0; port < t.NumPorts(n); port++ {
			peer, peerPort, out := t.Peer(n, port)
			v.wires = append(v.wires, wireDir{q: ring.NewFIFO[inflight](wireSlots, wireLimit), to: int32(peer), toPort: int32(peerPort),
				ent: int32(t.NumNodes() + len(v.wires)), toEnt: int32(peer), nsPerByte: 8e9 / out.Bps, delayNs: float64(out.DelayNs)})
		}
	}
	if err := checkIDs(len(v.nodes), len(v.wires)); err != nil {
		return nil, err
	}
	if p.Spec != nil {
		v.setFailures(&p.Spec.Failures, p.Spec.Seed)
	}
	v.agenda = newAgenda(len(v.nodes) + len(v.wires)) // every entry, numbered as the fabric's
	for n := range v.nodes {
		v.schedule(n, n)
	}
	return v, nil
}

// countFlows sets p's flow counts from the hosts' engines (between events).
func (v *Virtual) countFlows(p *Progress) {
	for _, hn := range v.hostNodes {
		tc := hn.Engine().TxCounters()
		p.FlowsDone += tc.FlowsCompleted
		p.FlowsStarted += tc.FlowsStarted
	}
}

// Run runs the network until simulated time end (ns) or ctx ends; progress,
// when not nil, is called about every second of wall time.
//
// A frame that arrives at a node is received and the node's Transmit runs at
// once, at the same time, as a run-to-completion loop would do; the node's
// other work (shapers, timers) runs at the wake-ups it asks for.
func (v *Virtual) Run(ctx context.Context, end int64, progress func(Progress)) error {
	if end > MaxTimeNs {
		return fmt.Errorf("fabric: end %d ns beyond the virtual clock's %d", end, int64(MaxTimeNs))
	}
	if v.par != nil {
		return v.runParallel(ctx, end, progress)
	}
	start := time.Now()
	nextReport := start.Add(time.Second)
	var pace PaceMeter
	nextDrain := v.now + 1_000_000
	for v.agenda.len() > 0 {
		id, k := v.agenda.top()
		if keyTime(k) > end {
			break
		}
		v.now = keyTime(k)
		v.events++
		v.step(id, id)
		if v.now >= nextDrain {
			v.drainSamples()
			nextDrain = v.now + 1_000_000
		}
		if v.events&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				v.drainSamples()
				return err
			}
			if progress != nil {
				if now := time.Now(); now.After(nextReport) {
					p := Progress{Clock: ClockVirtual, SimNs: v.now, EndNs: end, Events: v.events, Wall: now.Sub(start)}
					v.countFlows(&p)
					pace.Fill(&p)
					progress(p)
					nextReport = now.Add(time.Second)
				}
			}
		}
	}
	v.now = max(v.now, end)
	v.drainSamples()
	return nil
}

// Capture writes the frames of c's ports to capture files (pcapng or pcap,
// Capture.Format) from now on (call it before Run, and CloseCapture after):
// every frame a port hands to its wire, stamped with the time it was handed
// over (outbound), and every frame the wire delivers to it, stamped with its
// arrival (its last bit; inbound), in nanoseconds of virtual time since
// time 0. A file's records are in the order of the events, so their times
// never decrease, and a run writes the same bytes every time.
// Capturing changes nothing in the run.
func (v *Virtual) Capture(c *Capture) error {
	if v.capture != nil {
		return fmt.Errorf("fabric: a capture is already open")
	}
	if v.par != nil {
		return fmt.Errorf("fabric: a capture needs the serial driver (one worker)")
	}
	set, err := OpenCapture(v.plan.Topo, c)
	if err != nil {
		return err
	}
	for _, h := range v.hostNodes {
		h.Engine().LeaveICRC(false) // captured frames carry the ICRC field BuildData writes
	}
	t := v.plan.Topo
	for i, cp := range c.Ports {
		peer, peerPort, _ := t.Peer(cp.Node, cp.Port)
		v.wireCapture(v.portBase[cp.Node] + cp.Port).tx = set.Ports[i]
		v.wireCapture(v.portBase[peer] + peerPort).rx = set.Ports[i]
	}
	v.capture = set
	return nil
}

// wireCapture is wire wi's captures, made when it has none.
func (v *Virtual) wireCapture(wi int) *wireCapture {
	w := &v.wires[wi]
	if w.capt == nil {
		w.capt = new(wireCapture)
	}
	return w.capt
}

// CloseCapture flushes and closes the capture's files and returns them; nil
// when no capture is open.
func (v *Virtual) CloseCapture() ([]CaptureFile, error) {
	if v.capture == nil {
		return nil, nil
	}
	for i := range v.wires {
		v.wires[i].capt = nil
	}
	files, err := v.capture.Close()
	v.capture = nil
	return files, err
}

// Drain is what the virtual driver hands a results sink (StreamResults)
// after each millisecond of simulated time, when ctx ends a run, and at
// its end.
type Drain struct {
	// NowNs is the simulated time reached. Every sample stamped before it
	// has been made: the switches' are in Samples (or an earlier drain's),
	// the hosts' in their engines (hostd.Engine.TakeResults). Samples made
	// later are stamped at NowNs or after.
	NowNs int64
	// Samples are the switches' telemetry samples since the previous drain,
	// each switch's in time order; the slice is reused by the next drain.
	Samples []SwitchSample
	// PFCEvents are the switches' XOFF and XON events since the previous
	// drain, each switch's in time order; reused like Samples.
	PFCEvents []SwitchPFCEvent
	// Switches and Hosts are the engines, in topology order.
	Switches []*switchd.Engine
	Hosts    []*hostd.Engine
}

// StreamResults hands the run's samples to sink as the run goes (see
// Drain), in place of keeping them: Result's Samples stays empty, and the
// sink takes the hosts' samples and FCTs from their engines. Call it
// before Run. sink runs between events, on the run's goroutine (with
// SetParallel, on one of its workers while the others wait).
func (v *Virtual) StreamResults(sink func(*Drain)) {
	v.sink = sink
	v.drain.Switches, v.drain.Hosts = nil, nil
	for _, sn := range v.swNodes {
		v.drain.Switches = append(v.drain.Switches, sn.Engine())
	}
	for _, hn := range v.hostNodes {
		v.drain.Hosts = append(v.drain.Hosts, hn.Engine())
	}
}

// drainSamples moves the switches' telemetry samples and PFC events out of
// their rings: into the run's, or, with a sink (StreamResults), to it.
func (v *Virtual) drainSamples() {
	if v.sink != nil {
		v.drain.Samples = v.drain.Samples[:0]
		v.drain.PFCEvents = v.drain.PFCEvents[:0]
	}
	samples, pfc := &v.samples, &v.pfc
	if v.sink != nil {
		samples, pfc = &v.drain.Samples, &v.drain.PFCEvents
	}
	for i, sn := range v.swNodes {
		sn.Engine().DrainSamples(func(s *switchd.Sample) {
			*samples = append(*samples, SwitchSample{Switch: i, Sample: *s})
		})
		sn.Engine().DrainPFCEvents(func(ev *switchd.PFCEvent) {
			*pfc = append(*pfc, SwitchPFCEvent{Switch: i, PFCEvent: *ev})
		})
	}
	if v.sink != nil {
		v.drain.NowNs = v.now
		v.sink(&v.drain)
	}
}

// Now is the simulated time reached.
func (v *Virtual) Now() int64 { return v.now }

// Events is the number of events processed.
func (v *Virtual) Events() int64 { return v.events }

// Result collects what the run produced. Call it after Run.
func (v *Virtual) Result() *Result {
	r := &Result{Clock: ClockVirtual, Plan: v.plan, T0Ns: 0, EndNs: v.now, Events: v.events,
		Samples: v.samples, PFCEvents: v.pfc, FrameBuffers: v.frameBuffers(), LinkLosses: v.linkLosses(),
		Parallel: v.ParallelStats()}
	for _, sn := range v.swNodes {
		sn.Engine().PublishEgress()
		sn.Engine().PublishIngress()
		r.Switches = append(r.Switches, sn.Engine())
	}
	for _, hn := range v.hostNodes {
		r.Hosts = append(r.Hosts, hn.Engine())
	}
	return r
}

// Simulate plans spec with exact shaping, runs it in virtual time for endNs
// and returns the result: the one call a scheme's closed-loop test needs.
func Simulate(spec *Spec, endNs int64) (*Result, error) {
	spec.Exact = true
	p, err := spec.Plan()
	if err != nil {
		return nil, err
	}
	v, err := NewVirtual(p)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := v.Run(context.Background(), endNs, nil); err != nil {
		return nil, err
	}
	r := v.Result()
	r.WallNs = time.Since(start).Nanoseconds()
	return r, nil
}
