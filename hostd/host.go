package hostd

import (
	"fmt"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/port"
)

// This file is the thin adapter between the Engine and DPDK: mbufs, a port.Port
// and a mempool. It is the only file of the package that imports dpdk.

// Burst is the number of frames a poll receives or transmits at most.
const Burst = 32

// Host runs an Engine on a port. The testbed's composition contract: build it
// from a Config (NewEngine) plus an already started port and a mempool, call
// PollRx and PollTx from two lcores (or Poll from one, or several hosts' polls
// from one lcore loop), read Counters, call Close after the loops stop, and
// write results with WriteResults.
//
// The rx side receives a burst and hands each frame to Engine.Receive; the ACK /
// NAK it owes is built in place into the received mbuf (its data is no longer
// needed), a CNP into a fresh one, and both go through a single-producer
// single-consumer rte_ring to the tx side, which alone transmits on the port (a
// net_ring or NIC queue takes one producer). The tx side runs Engine.Service,
// transmits the control frames first, then data frames built by
// Engine.NextData into mbufs from a per-lcore spare burst.
type Host struct {
	eng  *Engine
	port port.Port
	pool *dpdk.Mempool

	// rx side
	rxb    *dpdk.Burst
	rxOut  *dpdk.Burst // built control frames, to enqueue
	rxFree *dpdk.Burst // mbufs to free
	rxSp   *dpdk.Burst // spare mbufs for CNPs
	nRxSp  int
	ctls   Controls
	prx    PortCounter

	ctl *dpdk.Ring // control frames, rx side to tx side

	// tx side
	ctlb  *dpdk.Burst
	txb   *dpdk.Burst
	txSp  *dpdk.Burst
	nTxSp int
	ptx   PortCounter
}

// NewHost builds the adapter for eng on p with mbufs from pool; name makes the
// internal ring's name unique in the process. The pool's mbufs must hold
// eng.MaxFrameBytes() bytes.
func NewHost(eng *Engine, p port.Port, pool *dpdk.Mempool, name string) (*Host, error) {
	if pool == nil || p == nil {
		return nil, fmt.Errorf("hostd: NewHost %s: needs a port and a mempool", name)
	}
	if room := pool.DataRoom() - dpdk.MbufHeadroom; room < eng.MaxFrameBytes() {
		return nil, fmt.Errorf("hostd: NewHost %s: mbuf room %d < largest frame %d", name, room, eng.MaxFrameBytes())
	}
	ring, err := dpdk.NewRing("hostd_ctl_"+name, 4096, -1, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
	if err != nil {
		return nil, fmt.Errorf("hostd: NewHost %s: %w", name, err)
	}
	return &Host{
		eng: eng, port: p, pool: pool, ctl: ring,
		rxb: dpdk.NewBurst(Burst), rxOut: dpdk.NewBurst(2 * Burst), rxFree: dpdk.NewBurst(Burst),
		rxSp: dpdk.NewBurst(Burst), ctlb: dpdk.NewBurst(Burst), txb: dpdk.NewBurst(Burst),
		txSp: dpdk.NewBurst(Burst),
	}, nil
}

// Engine is the host's engine.
func (h *Host) Engine() *Engine { return h.eng }

// PollRx is one iteration of the rx side at now (ns): receive a burst, run the
// receiver and NP, queue the owed control frames for the tx side, pass control
// events to the engine. It returns the number of frames received.
func (h *Host) PollRx(now int64) int {
	n := h.port.RxBurst(h.rxb.Pkts)
	if n == 0 {
		return 0
	}
	h.prx.RxFrames += uint64(n)
	nOut, nFree := 0, 0
	for i := 0; i < n; i++ {
		m := h.rxb.Pkts[i]
		k := h.eng.Receive(now, m.Data(), &h.ctls)
		if k == 0 {
			h.rxFree.Pkts[nFree] = m
			nFree++
			continue
		}
		// The data frame has been read: its mbuf carries the first reply.
		if l := h.eng.BuildControl(m.Room(), &h.ctls.C[0]); l > 0 {
			m.SetLen(l)
			h.rxOut.Pkts[nOut] = m
			nOut++
		} else {
			h.rxFree.Pkts[nFree] = m
			nFree++
		}
		for j := 1; j < k; j++ {
			if h.nRxSp == 0 {
				if h.pool.AllocBulk(h.rxSp.Pkts) != nil {
					h.prx.NoMbuf++
					continue
				}
				h.nRxSp = len(h.rxSp.Pkts)
			}
			c := h.rxSp.Pkts[h.nRxSp-1]
			if l := h.eng.BuildControl(c.Room(), &h.ctls.C[j]); l > 0 {
				h.nRxSp--
				c.SetLen(l)
				h.rxOut.Pkts[nOut] = c
				nOut++
			}
		}
	}
	if nFree > 0 {
		dpdk.FreeBulk(h.rxFree.Pkts[:nFree])
	}
	if nOut > 0 {
		q := h.ctl.EnqueueBurst(h.rxOut.Pkts[:nOut])
		if q < nOut {
			h.prx.CtlRingDrops += uint64(nOut - q)
			dpdk.FreeBulk(h.rxOut.Pkts[q:nOut])
		}
	}
	return n
}

// PollTx is one iteration of the tx side at now (ns): engine service (events,
// timers, flow starts), control frames, then up to Burst data frames. It returns
// the work done (events, frames).
func (h *Host) PollTx(now int64) int {
	work := h.eng.Service(now)
	if c := h.ctl.DequeueBurst(h.ctlb.Pkts); c > 0 {
		for _, m := range h.ctlb.Pkts[:c] {
			h.eng.ChargeControl(now, m.Len())
		}
		sent := h.port.TxBurst(h.ctlb.Pkts[:c])
		h.ptx.TxFrames += uint64(sent)
		if sent < c {
			h.ptx.TxDrops += uint64(c - sent)
			dpdk.FreeBulk(h.ctlb.Pkts[sent:c])
		}
		work += c
	}
	k := 0
	for k < len(h.txb.Pkts) && h.eng.CanSend(now) {
		if h.nTxSp == 0 {
			if h.pool.AllocBulk(h.txSp.Pkts) != nil {
				h.ptx.NoMbuf++
				break
			}
			h.nTxSp = len(h.txSp.Pkts)
		}
		m := h.txSp.Pkts[h.nTxSp-1]
		l := h.eng.NextData(now, m.Room())
		if l == 0 {
			break
		}
		h.nTxSp--
		m.SetLen(l)
		h.txb.Pkts[k] = m
		k++
	}
	if k > 0 {
		sent := h.port.TxBurst(h.txb.Pkts[:k])
		h.ptx.TxFrames += uint64(sent)
		if sent < k {
			h.ptx.TxDrops += uint64(k - sent)
			dpdk.FreeBulk(h.txb.Pkts[sent:k])
		}
		work += k
	}
	return work
}

// Poll is PollRx then PollTx: the 1-lcore mode.
func (h *Host) Poll(now int64) int { return h.PollRx(now) + h.PollTx(now) }

// PortCounters returns the adapter's counters (rx and tx sides summed).
func (h *Host) PortCounters() PortCounter {
	return PortCounter{
		RxFrames:     h.prx.RxFrames,
		TxFrames:     h.ptx.TxFrames,
		TxDrops:      h.ptx.TxDrops,
		NoMbuf:       h.prx.NoMbuf + h.ptx.NoMbuf,
		CtlRingDrops: h.prx.CtlRingDrops,
	}
}

// Close returns every mbuf the host holds to the pool (spares, queued control
// frames, and what is still waiting on the port's rx side) and frees its burst
// arrays and ring. Call it after the loops have stopped; the port stays open.
func (h *Host) Close() {
	if h.ctl == nil {
		return
	}
	for n := h.ctl.DequeueBurst(h.ctlb.Pkts); n > 0; n = h.ctl.DequeueBurst(h.ctlb.Pkts) {
		dpdk.FreeBulk(h.ctlb.Pkts[:n])
	}
	port.Drain(h.port, h.rxb.Pkts)
	dpdk.FreeBulk(h.rxSp.Pkts[:h.nRxSp])
	dpdk.FreeBulk(h.txSp.Pkts[:h.nTxSp])
	h.nRxSp, h.nTxSp = 0, 0
	h.ctl.Free()
	h.ctl = nil
	for _, b := range []*dpdk.Burst{h.rxb, h.rxOut, h.rxFree, h.rxSp, h.ctlb, h.txb, h.txSp} {
		b.Free()
	}
}
