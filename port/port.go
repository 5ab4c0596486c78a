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
	return p, nil
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

// Close stops and closes every started port.
func (s *Started) Close() {
	for _, p := range s.ports {
		p.Stop()
		p.Close()
	}
	s.ports = nil
}
