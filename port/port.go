// Package port is the hub of the dataplane (after gVisor netstack's
// pkg/tcpip/stack/registration.go, whose narrow interfaces the protocol
// packages implement): the burst-shaped Port interface that every packet
// source and sink implements, so that the switch and host lcore adapters are
// written once against it.
// Implementations: EthQueue (one queue pair of an ethdev port: a NIC, net_ring,
// net_af_packet, net_memif) and RingPair (two rte_rings, the link between two
// stages or two engines in one process).
//
// Ownership: RxBurst hands the received mbufs to the caller. TxBurst takes the
// mbufs it reports as sent; the rest stay the caller's, who frees or retries them
// (and counts them as drops).
package port

import (
	"fmt"
	"strings"
	"time"

	"github.com/ccbed/ccbed/dpdk"
)

// Port moves bursts of mbufs. Calls on one Port come from one lcore.
type Port interface {
	// RxBurst fills pkts with up to len(pkts) received mbufs and returns how many.
	RxBurst(pkts []*dpdk.Mbuf) int
	// TxBurst transmits from pkts and returns how many were taken.
	TxBurst(pkts []*dpdk.Mbuf) int
}

// EthQueue is rx queue and tx queue Queue of an ethdev port.
type EthQueue struct {
	Port  dpdk.EthPort
	Queue uint16
}

var _ Port = EthQueue{}

// RxBurst receives on the rx queue.
func (e EthQueue) RxBurst(pkts []*dpdk.Mbuf) int { return e.Port.RxBurst(e.Queue, pkts) }

// TxBurst transmits on the tx queue.
func (e EthQueue) TxBurst(pkts []*dpdk.Mbuf) int { return e.Port.TxBurst(e.Queue, pkts) }

// RingPair is a port made of two rte_rings: it receives from Rx and transmits
// into Tx. Two RingPairs with crossed rings are the two ends of a link.
type RingPair struct {
	Rx, Tx *dpdk.Ring
}

var _ Port = RingPair{}

// RxBurst dequeues from Rx.
func (r RingPair) RxBurst(pkts []*dpdk.Mbuf) int { return r.Rx.DequeueBurst(pkts) }

// TxBurst enqueues into Tx.
func (r RingPair) TxBurst(pkts []*dpdk.Mbuf) int { return r.Tx.EnqueueBurst(pkts) }

// EthConfig describes how to bring up an ethdev port for ccbed: one rx and one tx
// queue per lcore that uses it.
type EthConfig struct {
	Name     string // PCI address or vdev name
	Queues   uint16 // rx and tx queue pairs (default 1)
	RxDesc   uint16 // descriptors per rx queue (default 1024)
	TxDesc   uint16 // descriptors per tx queue (default 1024)
	MTU      uint32 // 0: driver default
	Promisc  bool
	Pool     *dpdk.Mempool
	SocketID int
	// FlowControl is what the NIC does with 802.3x pause and 802.1Qbb PFC
	// frames (default FlowControlOff).
	FlowControl FlowControl
	// PFCPriorities are the priorities of FlowControlPFC (default 3, RoCE's
	// usual lossless class).
	PFCPriorities []uint8
}

// FlowControl is how a port's NIC is told to handle link-level flow control.
type FlowControl string

// The flow control choices of EthConfig.
const (
	// FlowControlOff turns the NIC's pause off, both ways: the default, for
	// switchd doing PFC in software (the NIC must neither stop on a pause
	// meant for the switch nor send its own). A driver without flow control
	// (virtual devices) is off already.
	FlowControlOff FlowControl = "off"
	// FlowControlDriver leaves the driver's setting (often rx+tx pause on
	// Intel NICs): not recommended, results then depend on the NIC.
	FlowControlDriver FlowControl = "driver"
	// FlowControlPause is 802.3x link pause both ways, done by the NIC.
	FlowControlPause FlowControl = "pause"
	// FlowControlPFC is the NIC's own 802.1Qbb PFC on PFCPriorities, with the
	// link-level pause off; it needs a NIC with DCB and a driver that has
	// rte_eth_dev_priority_flow_ctrl_set.
	FlowControlPFC FlowControl = "pfc"
)

// ParseFlowControl reads a FlowControl ("" is FlowControlOff).
func ParseFlowControl(s string) (FlowControl, error) {
	switch fc := FlowControl(strings.ToLower(strings.TrimSpace(s))); fc {
	case "":
		return FlowControlOff, nil
	case FlowControlOff, FlowControlDriver, FlowControlPause, FlowControlPFC:
		return fc, nil
	}
	return "", fmt.Errorf("flow control %q: want off, driver, pause or pfc", s)
}

// StartEth configures and starts the port named in c and returns its id.
func StartEth(c EthConfig) (dpdk.EthPort, error) {
	if c.Pool == nil {
		return 0, fmt.Errorf("port %s: no mempool", c.Name)
	}
	if c.Queues == 0 {
		c.Queues = 1
	}
	if c.RxDesc == 0 {
		c.RxDesc = 1024
	}
	if c.TxDesc == 0 {
		c.TxDesc = 1024
	}
	p, err := dpdk.EthPortByName(c.Name)
	if err != nil {
		return 0, fmt.Errorf("port %s: %w", c.Name, err)
	}
	if err := p.Configure(c.Queues, c.Queues, c.MTU); err != nil {
		return 0, fmt.Errorf("port %s: %w", c.Name, err)
	}
	for q := uint16(0); q < c.Queues; q++ {
		if err := p.RxQueueSetup(q, c.RxDesc, c.SocketID, c.Pool); err != nil {
			return 0, fmt.Errorf("port %s: %w", c.Name, err)
		}
		if err := p.TxQueueSetup(q, c.TxDesc, c.SocketID); err != nil {
			return 0, fmt.Errorf("port %s: %w", c.Name, err)
		}
	}
	if err := p.Start(); err != nil {
		return 0, fmt.Errorf("port %s: %w", c.Name, err)
	}
	if c.Promisc {
		if err := p.SetPromiscuous(true); err != nil {
			p.Stop()
			return 0, fmt.Errorf("port %s: %w", c.Name, err)
		}
	}
	if err := SetFlowControl(p, c.FlowControl, c.PFCPriorities); err != nil {
		p.Stop()
		return 0, fmt.Errorf("port %s: %w", c.Name, err)
	}
	return p, nil
}

// SetFlowControl applies fc to p (see FlowControl). Off on a driver without
// flow control is no error; pause or pfc on one is.
func SetFlowControl(p dpdk.EthPort, fc FlowControl, pfcPriorities []uint8) error {
	switch fc {
	case FlowControlDriver:
		return nil
	case "", FlowControlOff:
		if err := p.SetFlowControl(dpdk.FlowControlNone); err != nil && !dpdk.IsNotSupported(err) {
			return fmt.Errorf("turning the NIC's flow control off: %w", err)
		}
		return nil
	case FlowControlPause:
		if err := p.SetFlowControl(dpdk.FlowControlFull); err != nil {
			return fmt.Errorf("flow control \"pause\": %w (the driver has no 802.3x pause control: use \"off\")", err)
		}
		return nil
	case FlowControlPFC:
		if err := p.SetFlowControl(dpdk.FlowControlNone); err != nil && !dpdk.IsNotSupported(err) {
			return fmt.Errorf("flow control \"pfc\": turning link pause off: %w", err)
		}
		if len(pfcPriorities) == 0 {
			pfcPriorities = []uint8{3}
		}
		for _, prio := range pfcPriorities {
			if prio > 7 {
				return fmt.Errorf("flow control \"pfc\": priority %d: want 0..7", prio)
			}
			if err := p.SetPriorityFlowControl(prio, 0, 0, 0xffff); err != nil {
				return fmt.Errorf("flow control \"pfc\": %w (needs a NIC with DCB and its driver's PFC; use \"off\" and switchd's software PFC)", err)
			}
		}
		return nil
	}
	return fmt.Errorf("flow control %q: want off, driver, pause or pfc", fc)
}

// FlowControlState describes p's link flow control as the driver reports it,
// for a log line: "off", "rx+tx", or "none (driver has no flow control)".
func FlowControlState(p dpdk.EthPort) string {
	m, err := p.FlowControl()
	switch {
	case dpdk.IsNotSupported(err):
		return "none (the driver has no flow control)"
	case err != nil:
		return "unknown (" + err.Error() + ")"
	}
	return m.String()
}

// DefaultLinkTimeout is how long WaitLinkUp waits by default: NICs take from
// a few hundred ms to several seconds (autonegotiation, optics) after start.
const DefaultLinkTimeout = 10 * time.Second

// WaitLinkUp polls p's link (rte_eth_link_get_nowait, every 50 ms) until it is
// up or timeout passes; the error then says what to check. Virtual devices
// (net_ring, net_null, net_af_packet) report up once started.
func WaitLinkUp(p dpdk.EthPort, timeout time.Duration) (dpdk.Link, error) {
	deadline := time.Now().Add(timeout)
	for {
		l, err := p.Link()
		if err != nil {
			return l, fmt.Errorf("port %s: reading the link: %w", p.Name(), err)
		}
		if l.Up {
			return l, nil
		}
		if !time.Now().Before(deadline) {
			return l, fmt.Errorf("port %s: link still down %v after start: check the cable or optics, that the peer's port is up (ip link / the switch's port), and, for mlx5, that the kernel interface is up; a slow NIC may need a longer link timeout", p.Name(), timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SpeedMismatch is a warning when the NIC's negotiated speed differs from the
// link rate the config shapes at (gbps), or "" when they agree (within 1%) or
// the driver does not know its speed. Shaping below line rate is how scaled
// experiments run, but it is worth a line in the log; above it, the NIC, not
// the engine, becomes the bottleneck and its queue is invisible.
func SpeedMismatch(name string, l dpdk.Link, gbps float64) string {
	if l.SpeedMbps == 0 || l.SpeedMbps == dpdk.SpeedUnknown || !(gbps > 0) {
		return ""
	}
	nic := float64(l.SpeedMbps) / 1000
	switch {
	case gbps > nic*1.01:
		return fmt.Sprintf("port %s: link_gbps %g is above the NIC's %g Gb/s: the NIC, not the engine, will queue and drop; set link_gbps <= %g", name, gbps, nic, nic)
	case gbps < nic*0.99:
		return fmt.Sprintf("port %s: link_gbps %g is below the NIC's %g Gb/s: the engine shapes to %g Gb/s (as scaled experiments intend)", name, gbps, nic, gbps)
	}
	return ""
}

// Shutdown is the clean end of an ethdev port: receive and free what waits on
// it while it still runs, then stop and close it (which returns the mbufs its
// rx descriptors hold). Receiving after stop is an error in DPDK ("rx_pkt_burst
// for not ready port" and a stack dump): never drain a stopped port.
func Shutdown(p dpdk.EthPort, scratch []*dpdk.Mbuf) error {
	Drain(EthQueue{Port: p}, scratch)
	err := p.Stop()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxDrainBursts bounds Drain: a port that keeps receiving (a live NIC, a
// net_null device that makes packets on every poll) never runs dry.
const maxDrainBursts = 4096

// Drain receives and frees what is queued on p (at most maxDrainBursts bursts:
// a port with live traffic never empties) and returns the count; use it at
// shutdown, after the senders stopped, so that every mbuf returns to its pool.
func Drain(p Port, scratch []*dpdk.Mbuf) int {
	total := 0
	for i := 0; i < maxDrainBursts; i++ {
		n := p.RxBurst(scratch)
		if n == 0 {
			break
		}
		dpdk.FreeBulk(scratch[:n])
		total += n
	}
	return total
}

// Started is the set of ethdev ports a program brought up with Start: Close
// stops and closes them all, in the order they were started, at shutdown.
type Started struct {
	ports []dpdk.EthPort
}

// Start is StartEth that remembers the port for Close.
func (s *Started) Start(c EthConfig) (dpdk.EthPort, error) {
	p, err := StartEth(c)
	if err == nil {
		s.ports = append(s.ports, p)
	}
	return p, err
}

// Close shuts every started port down (Shutdown: drain, stop, close).
func (s *Started) Close() {
	if len(s.ports) == 0 {
		return
	}
	scratch := dpdk.NewBurst(32)
	defer scratch.Free()
	for _, p := range s.ports {
		Shutdown(p, scratch.Pkts)
	}
	s.ports = nil
}
