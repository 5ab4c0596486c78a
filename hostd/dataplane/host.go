// Package dataplane is the thin adapter between hostd's Engine and DPDK: mbufs,
// a port.Port and a mempool, polled from lcores. The engine itself stays pure Go
// (and runs in virtual time through hostd.Node); this package alone of hostd's
// imports dpdk.
package dataplane

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/port"
)

// Burst is the number of frames a poll receives, and of data frames it
// transmits, at most.
const Burst = 32

// txBurst is the size of the tx array: the control frames owed for a received
// burst (an ACK or NAK and a CNP per frame) and a burst of data frames.
const txBurst = 3 * Burst

// Host runs an Engine on a port. The testbed's composition contract: build it
// from a hostd.Spec (hostd.NewEngine) plus an already started port and a mempool, call
// PollRx and PollTx from two lcores (or Poll from one, or several hosts' polls
// from one lcore loop), read Counters, call Close after the loops stop, and
// write results with hostd/daemon.WriteResults.
//
// In 2-lcore mode (PollRx and PollTx on different lcores) the rx side receives
// a burst and hands each frame to Engine.Receive; the ACK / NAK it owes is built
// in place into the received mbuf (its data is no longer needed), a CNP into a
// fresh one, and both go through a single-producer single-consumer rte_ring to
// the tx side, which alone transmits on the port (a net_ring or NIC queue takes
// one producer). The tx side transmits the control frames and, when the engine
// has something due, runs Engine.Service and builds a burst of data frames
// with one Engine.NextDataBurst into mbufs from a per-lcore spare stack, all
// in one TxBurst.
// In 1-lcore mode (Poll) the ring is skipped and the mbufs of received frames
// that owe nothing (ACKs at a sender) are reused for data frames: a poll with
// traffic costs an RxBurst and a TxBurst, an idle one an RxBurst.
//
// Mbufs received are reused for transmission as they are (single segment, the
// offsets the sender left, flags not cleared), as for the in-place replies.
type Host struct {
	eng      *hostd.Engine
	port     port.Port
	pool     *dpdk.Mempool
	maxFrame int // largest frame the engine builds: a recycled mbuf must hold it

	// rx side
	rxb    *dpdk.Burst
	rxOut  *dpdk.Burst // built control frames, to enqueue
	rxFree *dpdk.Burst // mbufs to free
	rxSp   *dpdk.Burst // spare mbufs for CNPs
	nRxSp  int
	ctls   hostd.Controls
	prx    hostd.PortCounter

	ctl     *dpdk.Ring  // control frames, rx side to tx side (2-lcore mode)
	ctlUsed atomic.Bool // PollRx has put frames on ctl: Poll must look at it too

	// tx side
	txb   *dpdk.Burst // control frames then data frames: one TxBurst per poll
	txSp  *dpdk.Burst // spare mbufs (fresh, or recycled from received frames in Poll)
	nTxSp int
	wake  int64 // the engine's tx side has nothing to do before this, unless events come
	ptx   hostd.PortCounter
	rooms [Burst][]byte // the spare mbufs' rooms a data burst is built into
	lens  [Burst]int

	// Progress hand-off (see Progress): the control plane bumps want; the
	// side that owns the counters copies them and stores want into done.
	// progMu makes the control plane's callers (checkpoints, metrics
	// scrapes) take turns.
	progMu       sync.Mutex
	rxPub, txPub publication
	rxCopy       hostd.RxCounters
	rxPort       hostd.PortCounter
	txCopy       hostd.TxCounters
	txPort       hostd.PortCounter
}

// publication is one side's hand-off of a counter copy to the control plane.
type publication struct{ want, done atomic.Uint64 }

// due reports whether the control plane waits for a copy.
func (p *publication) due() bool { return p.want.Load() != p.done.Load() }

// publishRx copies the rx side's counters for Progress (rx lcore).
func (h *Host) publishRx() {
	if h.rxPub.due() {
		h.rxCopy, h.rxPort = h.eng.RxCounters(), h.prx
		h.rxPub.done.Store(h.rxPub.want.Load())
	}
}

// publishTx copies the tx side's counters for Progress (tx lcore).
func (h *Host) publishTx() {
	if h.txPub.due() {
		h.txCopy, h.txPort = h.eng.TxCounters(), h.ptx
		h.txPub.done.Store(h.txPub.want.Load())
	}
}

// Progress is what a running host has counted so far.
type Progress struct {
	Rx   hostd.RxCounters  `json:"rx"`
	Tx   hostd.TxCounters  `json:"tx"`
	Port hostd.PortCounter `json:"port"`
}

// Progress asks the running loops for a copy of their counters and waits up
// to timeout for it; each side copies its own at the end of its next poll (two
// atomic loads per poll when nobody asks). ok is false when a side did not
// answer in time (its loop stopped or stalls). Call it from any goroutine
// (callers take turns) while the loops run; after they stop, read
// PortCounters and the engine directly.
func (h *Host) Progress(timeout time.Duration) (p Progress, ok bool) {
	h.progMu.Lock()
	defer h.progMu.Unlock()
	wr, wt := h.rxPub.want.Add(1), h.txPub.want.Add(1)
	deadline := time.Now().Add(timeout)
	for h.rxPub.done.Load() != wr || h.txPub.done.Load() != wt {
		if time.Now().After(deadline) {
			return p, false
		}
		time.Sleep(100 * time.Microsecond)
	}
	p.Rx, p.Tx = h.rxCopy, h.txCopy
	p.Port = hostd.PortCounter{RxFrames: h.rxPort.RxFrames, TxFrames: h.txPort.TxFrames, TxDrops: h.txPort.TxDrops,
		NoMbuf: h.rxPort.NoMbuf + h.txPort.NoMbuf, CtlRingDrops: h.rxPort.CtlRingDrops}
	return p, true
}

// NewHost builds the adapter for eng on p with mbufs from pool; name makes the
// internal ring's name unique in the process. The pool's mbufs must hold
// eng.MaxFrameBytes() bytes.
func NewHost(eng *hostd.Engine, p port.Port, pool *dpdk.Mempool, name string) (*Host, error) {
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
		eng: eng, port: p, pool: pool, ctl: ring, maxFrame: eng.MaxFrameBytes(),
		rxb: dpdk.NewBurst(Burst), rxOut: dpdk.NewBurst(2 * Burst), rxFree: dpdk.NewBurst(Burst),
		rxSp: dpdk.NewBurst(Burst), txb: dpdk.NewBurst(txBurst), txSp: dpdk.NewBurst(2 * Burst),
	}, nil
}

// Engine is the host's engine.
func (h *Host) Engine() *hostd.Engine { return h.eng }

// PollRx is one iteration of the rx side at now (ns): receive a burst, run the
// receiver and NP, queue the owed control frames for the tx side, pass control
// events to the engine. It returns the number of frames received.
func (h *Host) PollRx(now int64) int {
	h.publishRx()
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
		if !h.ctlUsed.Load() {
			h.ctlUsed.Store(true)
		}
		q := h.ctl.EnqueueBurst(h.rxOut.Pkts[:nOut])
		if q < nOut {
			h.prx.CtlRingDrops += uint64(nOut - q)
			dpdk.FreeBulk(h.rxOut.Pkts[q:nOut])
		}
	}
	return n
}

// PollTx is one iteration of the tx side at now (ns): control frames from the
// rx side, then, when the engine has something due (an event from the rx side,
// or its NextWake has come), engine service (events, timers, flow starts) and up
// to Burst data frames; controls and data leave in one TxBurst. It returns the
// work done (events, frames).
func (h *Host) PollTx(now int64) int {
	h.publishTx()
	c := 0
	if h.ctlUsed.Load() { // else the ring is empty: no cgo call
		c = h.ctl.DequeueBurst(h.txb.Pkts[:Burst])
	}
	return h.txSide(now, c, true)
}

// Poll is one iteration of both sides at now, for a host whose two sides share
// one lcore (the 1-lcore mode; several hosts' Polls may share a loop). It does
// what PollRx then PollTx do, cheaper: the control frames owed go straight to
// the tx array instead of through the ring, received frames that owe nothing
// become the spare mbufs of the data frames (no free, no allocation), controls
// and data leave in one TxBurst, and the tx side's work is skipped until the
// engine has something due. An idle host costs one RxBurst. A full rx burst is
// followed by another, up to maxRxBursts, so that a receiver that several
// senders polled from the same loop feed is drained as fast as they fill it.
// Drive a Host either with Poll or with PollRx and PollTx.
func (h *Host) Poll(now int64) int {
	h.publishRx()
	h.publishTx()
	total, nOut := 0, 0
	backlog := false
	for round := 1; ; round++ {
		n := h.port.RxBurst(h.rxb.Pkts)
		if n == 0 {
			break
		}
		total += n
		nOut = h.receive(now, n, nOut)
		if n < len(h.rxb.Pkts) {
			break
		}
		if round == maxRxBursts {
			backlog = true
			break
		}
		// More is waiting: send the controls owed so far, and receive again.
		h.chargeControls(now, nOut)
		h.transmit(nOut)
		nOut = 0
	}
	if h.ctlUsed.Load() && nOut <= txBurst-2*Burst {
		nOut += h.ctl.DequeueBurst(h.txb.Pkts[nOut : nOut+Burst])
	}
	return total + h.txSide(now, nOut, !backlog)
}

// maxRxBursts is the number of rx bursts one Poll takes at most. When the
// last was full too, frames may still wait on the port (a PFC pause among
// them): that Poll sends control frames only, no data, so that a pause the
// port holds stops data before another burst leaves, as a NIC acts on a pause
// before its next frame (docs/switch.md, "PFC over af_packet").
const maxRxBursts = 4

// receive hands the n frames of the rx burst to the engine (1-lcore mode),
// builds the control frames owed into the tx array from index nOut on, and
// returns the new count there.
func (h *Host) receive(now int64, n, nOut int) int {
	h.prx.RxFrames += uint64(n)
	nFree := 0
	for i := 0; i < n; i++ {
		m := h.rxb.Pkts[i]
		k := h.eng.Receive(now, m.Data(), &h.ctls)
		if k == 0 {
			nFree = h.recycle(m, nFree)
			continue
		}
		// The data frame has been read: its mbuf carries the first reply.
		if l := h.eng.BuildControl(m.Room(), &h.ctls.C[0]); l > 0 {
			m.SetLen(l)
			h.txb.Pkts[nOut] = m
			nOut++
		} else {
			nFree = h.recycle(m, nFree)
		}
		for j := 1; j < k; j++ {
			if h.nTxSp == 0 && !h.refill() {
				h.prx.NoMbuf++
				continue
			}
			c := h.txSp.Pkts[h.nTxSp-1]
			if l := h.eng.BuildControl(c.Room(), &h.ctls.C[j]); l > 0 {
				h.nTxSp--
				c.SetLen(l)
				h.txb.Pkts[nOut] = c
				nOut++
			}
		}
	}
	if nFree > 0 {
		dpdk.FreeBulk(h.rxFree.Pkts[:nFree])
	}
	return nOut
}

// chargeControls accounts the first n frames of the tx array, control frames,
// against the NIC's line rate.
func (h *Host) chargeControls(now int64, n int) {
	for _, m := range h.txb.Pkts[:n] {
		h.eng.ChargeControl(now, m.Len())
	}
}

// transmit sends the first k frames of the tx array; what the port does not
// take is freed and counted.
func (h *Host) transmit(k int) {
	if k == 0 {
		return
	}
	sent := h.port.TxBurst(h.txb.Pkts[:k])
	h.ptx.TxFrames += uint64(sent)
	if sent < k {
		h.ptx.TxDrops += uint64(k - sent)
		dpdk.FreeBulk(h.txb.Pkts[sent:k])
	}
}

// recycle keeps a received mbuf whose frame has been handled as a spare for the
// tx side (1-lcore mode), or adds it to the mbufs to free; it returns the new
// count of those.
func (h *Host) recycle(m *dpdk.Mbuf, nFree int) int {
	if h.nTxSp < len(h.txSp.Pkts) && len(m.Room()) >= h.maxFrame {
		h.txSp.Pkts[h.nTxSp] = m
		h.nTxSp++
		return nFree
	}
	h.rxFree.Pkts[nFree] = m
	return nFree + 1
}

// refill allocates a burst of spare mbufs for the tx side; false when the pool
// is empty.
func (h *Host) refill() bool {
	if h.pool.AllocBulk(h.txSp.Pkts[h.nTxSp:h.nTxSp+Burst]) != nil {
		return false
	}
	h.nTxSp += Burst
	return true
}

// txSide charges and transmits the nCtl control frames at the head of the tx
// array, with the data frames the engine builds at now when it has work due
// and data is true (false: received frames may still wait on the port).
func (h *Host) txSide(now int64, nCtl int, data bool) int {
	work := nCtl
	h.chargeControls(now, nCtl)
	k := nCtl
	if data && (now >= h.wake || h.eng.EventsPending()) {
		work += h.eng.Service(now)
		end := nCtl + Burst
		// Spares for a whole burst, allocated only when a frame may leave;
		// then one engine call builds the burst (Engine.NextDataBurst).
		if h.nTxSp < Burst && h.eng.CanSend(now) && !h.refill() {
			h.ptx.NoMbuf++
		}
		if want := min(h.nTxSp, Burst); want > 0 {
			sp := h.txSp.Pkts[h.nTxSp-want : h.nTxSp]
			for i, m := range sp {
				h.rooms[i] = m.Room()
			}
			n := h.eng.NextDataBurst(now, h.rooms[:want], h.lens[:want])
			for i, m := range sp[:n] {
				m.SetLen(h.lens[i])
				h.txb.Pkts[k+i] = m
			}
			// The unused spares move down to the bottom of the stack.
			copy(h.txSp.Pkts[h.nTxSp-want:], sp[n:])
			h.nTxSp -= n
			k += n
		}
		h.wake = now
		if k < end {
			h.wake = h.eng.NextWake(now)
		}
		work += k - nCtl
	}
	h.transmit(k)
	return work
}

// PortCounters returns the adapter's counters (rx and tx sides summed).
func (h *Host) PortCounters() hostd.PortCounter {
	return hostd.PortCounter{
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
	for n := h.ctl.DequeueBurst(h.txb.Pkts); n > 0; n = h.ctl.DequeueBurst(h.txb.Pkts) {
		dpdk.FreeBulk(h.txb.Pkts[:n])
	}
	port.Drain(h.port, h.rxb.Pkts)
	dpdk.FreeBulk(h.rxSp.Pkts[:h.nRxSp])
	dpdk.FreeBulk(h.txSp.Pkts[:h.nTxSp])
	h.nRxSp, h.nTxSp = 0, 0
	h.ctl.Free()
	h.ctl = nil
	for _, b := range []*dpdk.Burst{h.rxb, h.rxOut, h.rxFree, h.rxSp, h.txb, h.txSp} {
		b.Free()
	}
}
