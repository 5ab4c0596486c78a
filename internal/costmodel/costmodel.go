// Package costmodel predicts what switchd's sharded mode forwards and how many
// lcores a switch node needs, from per-packet costs measured one side at a
// time: the engine's stages (switchd's BenchmarkEngineStages), the NIC's PMD
// (dpdk-testpmd on the same devices), the hand-off of a frame from its rx
// lcore to the tx+CC lcore of its egress port (an rte_ring and the cache lines
// of the frame and its Meta), and each lcore's fixed cost per poll.
//
// The sharded mode (switchd/dataplane, docs/switch.md "Lcores") deals port i's
// rx to rx lcore i mod R and its egress to tx+CC lcore i mod T; every rx lcore
// has a ring to every tx+CC lcore, and a tx+CC lcore dequeues from all R of
// them each poll. An lcore under full load takes a burst (B frames) from each
// of its P ports per poll, so one poll costs
//
//	PerPoll + P*B*PerPacket      (rx lcore)
//	PerPoll + R*PerRing + P*B*PerPacket      (tx+CC lcore)
//
// and each of its ports gets B frames per poll. With more lcores busy on one
// machine each costs more (Contention: caches, memory and, where two lcores
// share a core, its pipeline); the factor is 1 + Contention * (n - BaseLcores)
// for n lcores in all, BaseLcores being how many ran when the costs were
// measured. Scale converts costs measured on one machine to another (the
// ratio of the two machines' single-lcore cost per packet).
//
// Saturated answers what a looping benchmark measures (every port as fast as
// its lcores go); Need answers how many lcores keep up with ports at line
// rate. Nothing here measures: the inputs come from scripts/bench-switchd.sh.
package costmodel

import (
	"fmt"
	"math"
)

// WireOverhead is what a frame costs on an Ethernet link beyond its bytes:
// 7 B preamble, 1 B start delimiter and the 12 B inter-frame gap.
const WireOverhead = 20

// LinePPS is the frames per second an Ethernet link of gbps Gb/s carries
// when every frame is frameBytes long (FCS included).
func LinePPS(gbps float64, frameBytes int) float64 {
	return gbps * 1e9 / (float64(frameBytes+WireOverhead) * 8)
}

// Side is one kind of lcore's cost: ns per packet (NIC, engine and hand-off
// together) and ns per poll (what a poll costs whatever it carries: the cgo
// calls for rx and tx, the service of timers and counters).
type Side struct {
	PerPacket float64
	PerPoll   float64
}

// Model is the sharded mode's costs on one machine, for one scheme.
type Model struct {
	Rx, Tx Side
	// PerRing is what a tx+CC lcore pays per poll for each rx lcore's ring
	// it dequeues from (one cgo call, empty or not).
	PerRing float64
	// Burst is the frames an lcore takes from a port per poll (32).
	Burst int
	// Scale multiplies every cost (0 means 1).
	Scale float64
	// Contention is the cost's rise per lcore beyond BaseLcores, as a
	// fraction (0.05: 5 % per lcore).
	Contention float64
	BaseLcores int
}

// Lcores is a sharded switch's lcore count: Rx rx lcores and Tx tx+CC ones.
type Lcores struct{ Rx, Tx int }

func (l Lcores) String() string { return fmt.Sprintf("%d rx + %d tx", l.Rx, l.Tx) }

// Check reports a model that cannot predict: a negative or non-finite cost,
// no per-packet cost on a side, a burst below 1.
func (m *Model) Check() error {
	for _, v := range []struct {
		name string
		x    float64
	}{
		{"rx per packet", m.Rx.PerPacket}, {"rx per poll", m.Rx.PerPoll},
		{"tx per packet", m.Tx.PerPacket}, {"tx per poll", m.Tx.PerPoll},
		{"per ring", m.PerRing}, {"scale", m.Scale}, {"contention", m.Contention},
	} {
		if v.x < 0 || math.IsNaN(v.x) || math.IsInf(v.x, 0) {
			return fmt.Errorf("costmodel: %s = %v: want a finite cost >= 0", v.name, v.x)
		}
	}
	if m.Rx.PerPacket == 0 || m.Tx.PerPacket == 0 {
		return fmt.Errorf("costmodel: a side with no cost per packet (rx %v, tx %v ns)", m.Rx.PerPacket, m.Tx.PerPacket)
	}
	if m.Burst < 1 {
		return fmt.Errorf("costmodel: burst %d: want >= 1", m.Burst)
	}
	if m.BaseLcores < 0 {
		return fmt.Errorf("costmodel: base lcores %d: want >= 0", m.BaseLcores)
	}
	return nil
}

// factor is what every cost is multiplied by with n lcores busy.
func (m *Model) factor(n int) float64 {
	s := m.Scale
	if s == 0 {
		s = 1
	}
	return s * (1 + m.Contention*float64(max(0, n-m.BaseLcores)))
}

// PortsOn is how many of ports the k-th of lcores lcores serves when ports
// are dealt round robin (port i to lcore i mod lcores).
func PortsOn(ports, lcores, k int) int { return (ports - k + lcores - 1) / lcores }

// checkShape reports a switch shape the sharded mode refuses: no port, or a side
// with no lcore or more lcores than ports.
func checkShape(ports int, l Lcores) error {
	if ports < 1 {
		return fmt.Errorf("costmodel: %d ports: want >= 1", ports)
	}
	if l.Rx < 1 || l.Rx > ports || l.Tx < 1 || l.Tx > ports {
		return fmt.Errorf("costmodel: %v lcores for %d ports: want 1..%d on each side", l, ports, ports)
	}
	return nil
}

// pollNs is one poll's cost of an lcore of side s serving p ports at full
// bursts, with extra per-poll ns (the tx side's rings), times f.
func (m *Model) pollNs(s Side, p int, extra, f float64) float64 {
	return f * (s.PerPoll + extra + float64(p*m.Burst)*s.PerPacket)
}

// Saturated is the Mpps a sharded switch of ports looping ports forwards on
// l when every lcore runs flat out, each of its ports giving a full burst a
// poll: a port forwards B frames per poll of the slower of its two lcores.
// (A port held back by its tx lcore leaves its rx lcore a little time for
// its other ports, which this does not give them: with uneven deals it may
// read a little low.)
func (m *Model) Saturated(ports int, l Lcores) (float64, error) {
	if err := m.Check(); err != nil {
		return 0, err
	}
	if err := checkShape(ports, l); err != nil {
		return 0, err
	}
	f := m.factor(l.Rx + l.Tx)
	b := float64(m.Burst)
	pps := 0.0
	for i := 0; i < ports; i++ {
		rx := m.pollNs(m.Rx, PortsOn(ports, l.Rx, i%l.Rx), 0, f)
		tx := m.pollNs(m.Tx, PortsOn(ports, l.Tx, i%l.Tx), float64(l.Rx)*m.PerRing, f)
		pps += b / max(rx, tx) // frames per ns
	}
	return pps * 1e3, nil
}

// Load is what a switch node must carry: Ports ports at Gbps each, every
// frame FrameBytes long, all at line rate.
type Load struct {
	Ports      int
	Gbps       float64
	FrameBytes int
}

// PPS is the load's frames per second per port.
func (ld Load) PPS() float64 { return LinePPS(ld.Gbps, ld.FrameBytes) }

// Utilisation is the busiest lcore's share of its time (1: flat out) when
// the switch on l carries ld, and whether it is an rx lcore. An lcore of P
// ports, each bringing L frames per ns, keeps up when L * (P * PerPacket +
// PerPoll / B) <= 1: it polls as often as it can, and a poll's fixed cost is
// shared by at most B frames of each port.
func (m *Model) Utilisation(ld Load, l Lcores) (u float64, rxBound bool, err error) {
	if err := m.Check(); err != nil {
		return 0, false, err
	}
	if err := checkShape(ld.Ports, l); err != nil {
		return 0, false, err
	}
	if ld.Gbps <= 0 || ld.FrameBytes < 64 {
		return 0, false, fmt.Errorf("costmodel: %v Gb/s, %d B frames: want a rate > 0 and frames >= 64 B", ld.Gbps, ld.FrameBytes)
	}
	f := m.factor(l.Rx + l.Tx)
	perNs := ld.PPS() / 1e9
	b := float64(m.Burst)
	busy := func(s Side, p int, extra float64) float64 {
		return f * perNs * (float64(p)*s.PerPacket + (s.PerPoll+extra)/b)
	}
	// The first lcore of a side has the most ports.
	urx := busy(m.Rx, PortsOn(ld.Ports, l.Rx, 0), 0)
	utx := busy(m.Tx, PortsOn(ld.Ports, l.Tx, 0), float64(l.Rx)*m.PerRing)
	return max(urx, utx), urx >= utx, nil
}

// Need is the fewest lcores (rx + tx+CC; of shapes with as many, the one
// whose busiest lcore is least busy) on which every lcore keeps up with ld,
// and that busiest lcore's utilisation;
// an error when no shape of at most one lcore per port and side does.
func (m *Model) Need(ld Load) (Lcores, float64, error) {
	if err := m.Check(); err != nil {
		return Lcores{}, 0, err
	}
	if ld.Ports < 1 {
		return Lcores{}, 0, fmt.Errorf("costmodel: %d ports: want >= 1", ld.Ports)
	}
	for n := 2; n <= 2*ld.Ports; n++ {
		best, bu := Lcores{}, math.Inf(1)
		for t := 1; t < n; t++ {
			l := Lcores{Rx: n - t, Tx: t}
			if l.Rx > ld.Ports || l.Tx > ld.Ports {
				continue
			}
			u, _, err := m.Utilisation(ld, l)
			if err != nil {
				return Lcores{}, 0, err
			}
			if u < bu {
				best, bu = l, u
			}
		}
		if bu <= 1 {
			return best, bu, nil
		}
	}
	return Lcores{}, 0, fmt.Errorf("costmodel: %d ports of %v Gb/s at %d B: more than %d + %d lcores", ld.Ports, ld.Gbps, ld.FrameBytes, ld.Ports, ld.Ports)
}
