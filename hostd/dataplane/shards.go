package dataplane

import (
	"fmt"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
)

// Shards runs the engines of one host (hostd.NewEngines) on the queue pairs
// of its port, one Host per engine: engine i receives on rx queue i and
// transmits on tx queue i, and only the lcores that poll it touch its state.
// What crosses engines goes through the engines' own event rings: the
// control frames an rx queue receives for another engine's QPs (RSS hashes
// an ACK by its addresses and ports, not by the engine that sent the data),
// and PFC pauses, which stop every engine. The ACKs and CNPs an engine's rx
// side owes leave on its own tx queue.
//
// A NIC needs one rx and one tx queue per engine with RSS on the IPv4
// addresses and UDP ports (port.EthConfig.Queues; dpdk.EthPort.Configure
// turns RSS on where the device has it), so that every frame of an incoming
// flow reaches the same engine's receiver. Without UDP in its hash, a NIC
// still keeps each flow on one queue, only less evenly spread. Virtual
// devices without RSS (net_ring: dpdk.NewEthCableQueues) map queues as
// they are built.
type Shards struct {
	Hosts []*Host
}

// EthQueues returns queue pairs 0..n-1 of p as ports, for NewShards.
func EthQueues(p dpdk.EthPort, n int) []port.Port {
	ps := make([]port.Port, n)
	for i := range ps {
		ps[i] = port.EthQueue{Port: p, Queue: uint16(i)}
	}
	return ps
}

// NewShards builds a Host for each engine of one host, engine i on
// ports[i], with mbufs from pool; name makes the hosts' ring names unique in
// the process.
func NewShards(engs []*hostd.Engine, ports []port.Port, pool *dpdk.Mempool, name string) (*Shards, error) {
	if len(engs) == 0 || len(ports) != len(engs) {
		return nil, fmt.Errorf("hostd: NewShards %s: %d engines on %d ports: want one port each", name, len(engs), len(ports))
	}
	s := &Shards{}
	for i, e := range engs {
		h, err := NewHost(e, ports[i], pool, fmt.Sprintf("%s.%d", name, i))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Hosts = append(s.Hosts, h)
	}
	return s, nil
}

// Engines returns the hosts' engines.
func (s *Shards) Engines() hostd.Shards {
	engs := make(hostd.Shards, len(s.Hosts))
	for i, h := range s.Hosts {
		engs[i] = h.Engine()
	}
	return engs
}

// Launch starts one loop on g for each of loops (hostd/daemon.File.Loops), with
// clock's time: a loop polls the rx sides (PollRx) and tx sides (PollTx) of
// the engines it names, and both sides of an engine it names in both with
// one Poll. Every engine's rx and tx side must be polled by exactly one
// loop. On an error the loops already started keep running: stop g.
func (s *Shards) Launch(g *lcore.Group, loops []hostd.Loop, clock *lcore.TSCClock) error {
	n := len(s.Hosts)
	rx, tx := make([]int, n), make([]int, n)
	for _, l := range loops {
		for _, i := range l.Rx {
			if i < 0 || i >= n {
				return fmt.Errorf("hostd: loop %s: engine %d of %d", l.Name, i, n)
			}
			rx[i]++
		}
		for _, i := range l.Tx {
			if i < 0 || i >= n {
				return fmt.Errorf("hostd: loop %s: engine %d of %d", l.Name, i, n)
			}
			tx[i]++
		}
	}
	for i := range rx {
		if rx[i] != 1 || tx[i] != 1 {
			return fmt.Errorf("hostd: engine %d: its rx side is polled by %d loops, its tx side by %d: want 1 each", i, rx[i], tx[i])
		}
	}
	for _, l := range loops {
		var both, rxOnly, txOnly []*Host
		for _, i := range l.Rx {
			if contains(l.Tx, i) {
				both = append(both, s.Hosts[i])
			} else {
				rxOnly = append(rxOnly, s.Hosts[i])
			}
		}
		for _, i := range l.Tx {
			if !contains(l.Rx, i) {
				txOnly = append(txOnly, s.Hosts[i])
			}
		}
		if err := g.Launch(l.Lcore, l.Name, pollLoop(clock, both, rxOnly, txOnly)); err != nil {
			return err
		}
	}
	return nil
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// pollLoop is one lcore's iteration over the hosts it polls, all at one
// time: both sides of those in both, the rx side of those in rx, the tx side
// of those in tx.
func pollLoop(clock *lcore.TSCClock, both, rx, tx []*Host) lcore.Poll {
	return func() int {
		now := clock.Now()
		work := 0
		for _, h := range both {
			work += h.Poll(now)
		}
		for _, h := range rx {
			work += h.PollRx(now)
		}
		for _, h := range tx {
			work += h.PollTx(now)
		}
		return work
	}
}

// Progress is the hosts' progress summed (Host.Progress, asked of each
// host's loops in turn); it waits at most timeout in all, and ok is false
// when a host's loops did not answer.
func (s *Shards) Progress(timeout time.Duration) (p Progress, ok bool) {
	deadline := time.Now().Add(timeout)
	for _, h := range s.Hosts {
		hp, ok := h.Progress(max(time.Until(deadline), 0))
		if !ok {
			return Progress{}, false
		}
		p.Rx.Add(&hp.Rx)
		p.Tx.Add(&hp.Tx)
		p.Port.Add(&hp.Port)
	}
	return p, true
}

// PortCounters sums the hosts' counters (Host.PortCounters).
func (s *Shards) PortCounters() hostd.PortCounter {
	var pc hostd.PortCounter
	for _, h := range s.Hosts {
		c := h.PortCounters()
		pc.Add(&c)
	}
	return pc
}

// Close closes every host (Host.Close), after the loops have stopped.
func (s *Shards) Close() {
	for _, h := range s.Hosts {
		h.Close()
	}
}
