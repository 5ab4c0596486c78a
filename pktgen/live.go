package pktgen

import (
	"fmt"
	"io"
	"time"
)

// Live is what the loops count beyond the port counters, read while they
// run (Blaster.ReadLive): the tracked flows' send counters and the
// receiving ports' latency histograms, whole and per tracked flow. The
// live lines and /metrics take quantiles from it; two reads give an
// interval's (Histogram.Delta).
type Live struct {
	// Counters are the ports' counters (Snapshot), read first.
	Counters []PortStats
	// Ports are the rest, one entry a port.
	Ports []PortLive
	// Fresh: every receiving port's loop answered; when one did not (a
	// stalled or stopped loop not yet marked stopped), its histograms are
	// those of an earlier read.
	Fresh bool
}

// PortLive is one port's part of Live.
type PortLive struct {
	// TxFlows are the port's first flow_stats flows: frames built and their
	// bytes, at most FlowPublishNs old.
	TxFlows []FlowStat
	// Latency of every pktgen packet the port received, ns; RxFlows the
	// (stream, flow) pairs it tracks, in the order first seen. Empty when
	// the port does not receive.
	Latency Histogram
	RxFlows []FlowRx
}

// LoopsStopped tells the Blaster that its loops have stopped: ReadLive then
// reads the engines directly instead of asking the loops.
func (b *Blaster) LoopsStopped() { b.stopped.Store(true) }

// ReadLive fills dst (reusing its memory) with the port counters, the
// tracked flows' counters and the latency histograms. It asks each
// receiving port's loop for a copy, made at the loop's next poll (two
// atomic loads a poll when nobody asks), and waits up to timeout for the
// answers; it reports whether all came (Live.Fresh). Callers take turns;
// after LoopsStopped it reads the engines itself.
func (b *Blaster) ReadLive(dst *Live, timeout time.Duration) bool {
	b.liveMu.Lock()
	defer b.liveMu.Unlock()
	dst.Counters = b.Snapshot()
	if len(dst.Ports) != len(b.Tx) {
		dst.Ports = make([]PortLive, len(b.Tx))
	}
	stopped := b.stopped.Load()
	var want [MaxStreams]uint64
	for i, r := range b.Rx {
		if r != nil && !stopped {
			want[i] = r.want.Add(1)
		}
	}
	fresh := true
	deadline := time.Now().Add(timeout)
	for i, r := range b.Rx {
		d := &dst.Ports[i]
		if r == nil {
			d.Latency.Reset()
			d.RxFlows = d.RxFlows[:0]
			continue
		}
		if stopped {
			r.copyLive()
		} else {
			for r.done.Load() != want[i] && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
			if r.done.Load() != want[i] {
				fresh = false
				continue // the loop may still write its copy: keep dst's
			}
		}
		d.Latency.CopyFrom(&r.latCopy)
		d.RxFlows = copyFlows(d.RxFlows, r.flowsCopy)
	}
	for i, t := range b.Tx {
		d := &dst.Ports[i]
		d.TxFlows = d.TxFlows[:0]
		if t == nil {
			continue
		}
		for f := range len(t.flowPub) / 2 {
			d.TxFlows = append(d.TxFlows, FlowStat{t.flowPub[2*f].Load(), t.flowPub[2*f+1].Load()})
		}
	}
	dst.Fresh = fresh
	return fresh
}

// WriteLive writes the live lines between two reads dtNs apart: one line a
// port with the rates (Mpps, Gb/s of L2 bytes, frames without FCS, and of
// L1 bytes, plus FCS, preamble and gap: what rate_gbps caps) sent and
// received, tx-full, mempool-empty, loss and the interval's latency (mean
// and p50, p90, p99, p99.9, max: within HistogramRelErr); under it one
// compact line for each of the first shown flows it sends and receives.
// scratch holds an interval's histogram (about 30 KB; reused).
func (b *Blaster) WriteLive(w io.Writer, prev, cur *Live, dtNs int64, shown int, scratch *Histogram) {
	dt := float64(dtNs) / 1e9
	for i := range cur.Counters {
		p, c := prev.Counters[i], cur.Counters[i]
		txL2, txL1 := gbps(c.TxPackets-p.TxPackets, c.TxBytes-p.TxBytes, dt)
		line := fmt.Sprintf("port %d %-12s tx %7.3f Mpps %7.3f Gb/s L2 %7.3f Gb/s L1 full %d nombuf %d",
			i, b.cfg.Ports[i].Name,
			float64(c.TxPackets-p.TxPackets)/dt/1e6, txL2, txL1,
			c.TxFull-p.TxFull, c.NoMbuf-p.NoMbuf)
		if b.Rx[i] != nil {
			rxL2, rxL1 := gbps(c.RxPackets-p.RxPackets, c.RxBytes-p.RxBytes, dt)
			line += fmt.Sprintf(" | rx %7.3f Mpps %7.3f Gb/s L2 %7.3f Gb/s L1 lost %d late %d other %d",
				float64(c.RxPackets-p.RxPackets)/dt/1e6, rxL2, rxL1,
				c.Lost-p.Lost, c.Late-p.Late, c.RxOther-p.RxOther)
			scratch.Delta(&cur.Ports[i].Latency, &prevPort(prev, i).Latency)
			line += " " + latencyText(scratch)
		}
		fmt.Fprintln(w, line)
		cp, pp := &cur.Ports[i], prevPort(prev, i)
		for f := range min(shown, len(cp.TxFlows)) {
			var p0 FlowStat
			if f < len(pp.TxFlows) {
				p0 = pp.TxFlows[f]
			}
			c0 := cp.TxFlows[f]
			_, l1 := gbps(c0.Packets-p0.Packets, c0.Bytes-p0.Bytes, dt)
			fmt.Fprintf(w, "    flow %-4d tx %7.3f Mpps %7.3f Gb/s L1\n", f, float64(c0.Packets-p0.Packets)/dt/1e6, l1)
		}
		for k := range min(shown, len(cp.RxFlows)) {
			c0 := &cp.RxFlows[k]
			var p0 *FlowRx
			if k < len(pp.RxFlows) {
				p0 = &pp.RxFlows[k] // flows keep their order: the same pair
			}
			pk, ph := uint64(0), &emptyPort.Latency
			if p0 != nil {
				pk, ph = p0.Packets, &p0.Latency
			}
			scratch.Delta(&c0.Latency, ph)
			fmt.Fprintf(w, "    rx stream %d flow %-4d %7.3f Mpps %s\n", c0.Stream, c0.Flow,
				float64(c0.Packets-pk)/dt/1e6, latencyText(scratch))
		}
	}
}

// emptyPort is a port that counted nothing (read only).
var emptyPort PortLive

// prevPort is port i of an earlier read, or an empty one.
func prevPort(l *Live, i int) *PortLive {
	if i < len(l.Ports) {
		return &l.Ports[i]
	}
	return &emptyPort
}

// latencyText is the compact latency of h in microseconds.
func latencyText(h *Histogram) string {
	if h.Count == 0 {
		return "lat -"
	}
	s := h.Summary()
	return fmt.Sprintf("lat us avg %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f",
		s.AvgUs, s.P50Us, s.P90Us, s.P99Us, s.P999Us, s.MaxUs)
}
