package switchd

import (
	"math/bits"

	"github.com/ccbed/ccbed/wire"
)

// updatePause keeps the paused priorities, PortState.Paused / LastOff (TCD)
// and the port's paused time: the port counts as paused while a received pause
// holds a priority with frames queued (or, with none queued, pfc.priority).
func (e *Engine) updatePause(now int64, g *egress) {
	g.pausedMask = 0
	for p, u := range g.pausedUntil {
		if u > now {
			g.pausedMask |= 1 << p
		}
	}
	held := g.nonEmpty
	if held == 0 {
		held = 1 << e.prio
	}
	var until int64
	for m := held; m != 0; m &= m - 1 {
		until = max(until, g.pausedUntil[bits.TrailingZeros8(m)])
	}
	if g.pausedMask&held != 0 {
		if !g.ps.Paused {
			g.ps.Paused = true
			g.pauseStart = now
		}
		g.ps.LastOff = now
		return
	}
	if g.ps.Paused {
		end := max(until, g.pauseStart)
		g.c[cPausedNs] += uint64(end - g.pauseStart)
		g.ps.Paused = false
		g.ps.LastOff = end
	}
}

// receivePFC applies a PFC frame received on g's port: data of each enabled
// priority is held for its quanta at g's line rate; 0 resumes it.
func (e *Engine) receivePFC(now int64, g *egress, frame []byte) {
	pfc := wire.PFC(wire.Ethernet(frame).Payload())
	g.pfcSeen = true
	paused := false
	for i := 0; i < wire.PFCPriorities; i++ {
		if !pfc.Enabled(i) {
			continue
		}
		q := pfc.PauseQuanta(i)
		if q != 0 {
			paused = true
		}
		if !e.honor {
			continue
		}
		if q == 0 {
			g.pausedUntil[i] = min(g.pausedUntil[i], now)
		} else {
			g.pausedUntil[i] = now + wire.QuantaNs(q, g.linkBps)
		}
	}
	if paused {
		g.c[cPausesRecv]++
	} else {
		g.c[cResumesRecv]++
	}
	e.updatePause(now, g)
}

// acctOf is the lossless count of ingress port in that shard sh keeps: the
// port's own with one shard.
func (e *Engine) acctOf(sh *txShard, in int) *ingressAcct {
	return sh.acctAt[in&(MaxPorts-1)]
}

// ingressAdd counts l more bytes of lossless priority prio from port in inside
// the switch (in shard sh: the frame's egress port's) with a static buffer,
// and sends XOFF upstream when they cross xoff_bytes (pauseIngress). A
// shared buffer's frames are counted at admission (admitInReserve, admitAdd).
func (e *Engine) ingressAdd(now int64, sh *txShard, in int, prio uint8, l int64) {
	a := e.acctOf(sh, in)
	if a[prio].in += l; a[prio].in > e.xoffBytes {
		e.pauseIngress(now, sh, in, prio)
	}
}

// pauseIngress acts on shard sh's count of lossless priority prio of ingress
// port in calling for XOFF (admitAdd's call, or ingressAdd's threshold): with one shard, XOFF unless the
// port is in it; with several, the shard's want of it, sent at once when sh
// owns port in (else at the next ServiceShard of port in's shard, syncPFC).
func (e *Engine) pauseIngress(now int64, sh *txShard, in int, prio uint8) {
	if sh.acct == nil {
		if g := &e.eg[in]; g.xoff&(1<<prio) == 0 {
			e.setXOFF(now, g, prio)
		}
		return
	}
	if sh.xoff[in]&(1<<prio) == 0 {
		sh.xoff[in] |= 1 << prio
		sh.xoffIn |= 1 << in
		e.pfcWant[in].Or(1 << (8*sh.k + int(prio)))
		if int(e.eg[in].sh) == sh.k {
			e.syncPort(now, in)
		}
	}
}

// ingressRelease counts l bytes leaving and sends XON below the resume level
// (with several shards, as ingressAdd sends XOFF).
func (e *Engine) ingressRelease(now int64, sh *txShard, in int, prio uint8, l int64) {
	a := e.acctOf(sh, in)
	if buf := &sh.buf; buf.on {
		if a[prio].hdrm == 0 && a[prio].in <= buf.reserve {
			a[prio].in -= l // buf.remove: nothing in the headroom or the shared pool
		} else {
			buf.remove(a, prio, l)
		}
	} else {
		a[prio].in -= l
	}
	if sh.acct == nil {
		if sh.xoffPorts&(1<<in) == 0 {
			return // port in holds no priority in XOFF
		}
		if g := &e.eg[in]; g.xoff&(1<<prio) != 0 && e.shouldResume(sh, a, prio) {
			e.setXON(now, g, prio)
		}
		return
	}
	if sh.xoff[in]&(1<<prio) != 0 && e.shouldResume(sh, a, prio) {
		e.shardResume(sh, in, prio)
		if int(e.eg[in].sh) == sh.k {
			e.syncPort(now, in)
		}
	}
}

// releaseBatch counts off the bytes drainData's loop released from each
// ingress port in ports (bit i: sh.released[i] bytes of priority prio),
// none of which held a priority in XOFF in the shard's view, so that no
// XON is to be decided. One release of the sum is the releases one by one:
// the shared buffer's remove takes from the headroom, then the shared pool,
// then the reserve, greedily, and the loop adds nothing in between.
func (e *Engine) releaseBatch(sh *txShard, ports uint64, prio uint8) {
	for ; ports != 0; ports &= ports - 1 {
		in := bits.TrailingZeros64(ports)
		l := sh.released[in]
		sh.released[in] = 0
		a := e.acctOf(sh, in)
		if buf := &sh.buf; buf.on {
			buf.remove(a, prio, l)
		} else {
			a[prio].in -= l
		}
	}
}

// shardResume withdraws shard sh's want of XOFF for priority prio of port in.
func (e *Engine) shardResume(sh *txShard, in int, prio uint8) {
	sh.xoff[in] &^= 1 << prio
	if sh.xoff[in] == 0 {
		sh.xoffIn &^= 1 << in
	}
	e.pfcWant[in].And(^(uint64(1) << (8*sh.k + int(prio))))
}

// syncPFC, with several shards, runs on shard sh's lcore at ServiceShard:
// the shard's own wants of XOFF that the shared buffer's moving threshold
// now lets go, then, for each of its ports, the pauses every shard's wants
// call for: XOFF for a priority some shard wants held, XON for one that no
// shard wants any more.
func (e *Engine) syncPFC(now int64, sh *txShard) {
	for a := sh.xoffIn; a != 0; a &= a - 1 {
		in := bits.TrailingZeros64(a)
		for x := sh.xoff[in]; x != 0; x &= x - 1 {
			p := uint8(bits.TrailingZeros8(x))
			if e.shouldResume(sh, &sh.acct[in], p) {
				e.shardResume(sh, in, p)
			}
		}
	}
	for a := sh.ports; a != 0; a &= a - 1 {
		e.syncPort(now, bits.TrailingZeros64(a))
	}
}

// syncPort sends the pauses port i's wants call for (syncPFC), on the lcore
// of the shard owning port i.
func (e *Engine) syncPort(now int64, i int) {
	w := e.pfcWant[i].Load()
	w |= w >> 32
	w |= w >> 16
	w |= w >> 8
	want, g := uint8(w), &e.eg[i]
	for x := want &^ g.xoff; x != 0; x &= x - 1 {
		e.setXOFF(now, g, uint8(bits.TrailingZeros8(x)))
	}
	for x := g.xoff &^ want; x != 0; x &= x - 1 {
		e.setXON(now, g, uint8(bits.TrailingZeros8(x)))
	}
}

// setXOFF puts priority prio of ingress port g into XOFF and pauses upstream.
func (e *Engine) setXOFF(now int64, g *egress, prio uint8) {
	g.xoff |= 1 << prio
	e.tx[g.sh].xoffPorts |= 1 << g.idx
	g.c[cPFCOnsets]++
	g.c[cPFCOnsetsPrio+counter(prio)]++
	g.sinceXOFF[prio] = 0
	e.pfcEvent(now, g, prio, true)
	e.sendPause(now, g, prio, e.pauseQuanta)
}

// pfcEvent records an XOFF or XON of priority prio of ingress port g.
func (e *Engine) pfcEvent(now int64, g *egress, prio uint8, xoff bool) {
	sh := &e.tx[g.sh]
	sh.pfcEvents.push(&PFCEvent{TNs: now, Port: int32(g.idx), Prio: prio, XOFF: xoff,
		IngressBytes: e.acctOf(sh, int(g.idx))[prio].in})
	e.tracePFC(now, g, prio, xoff, e.acctOf(sh, int(g.idx))[prio].in)
}

// setXON resumes priority prio of ingress port g upstream.
func (e *Engine) setXON(now int64, g *egress, prio uint8) {
	g.xoff &^= 1 << prio
	if g.xoff == 0 {
		e.tx[g.sh].xoffPorts &^= 1 << g.idx
	}
	if e.pfcWant == nil {
		e.recordAfterXOFF(g, prio)
	}
	e.pfcEvent(now, g, prio, false)
	e.sendPause(now, g, prio, 0)
}

// retryXON sends again the XONs of shard sh's ports that found their
// control queue full (sendPause), unless the priority went back into XOFF
// since.
func (e *Engine) retryXON(now int64, sh *txShard) {
	ports := sh.xonRetryPorts
	sh.xonRetryPorts = 0
	for ; ports != 0; ports &= ports - 1 {
		g := &e.eg[bits.TrailingZeros64(ports)]
		g.xonRetry &^= g.xoff
		for x := g.xonRetry; x != 0; x &= x - 1 {
			e.sendPause(now, g, uint8(bits.TrailingZeros8(x)), 0)
		}
	}
}

// recordAfterXOFF counts the bytes priority prio of ingress port g took
// between its XOFF and its XON into the port's histogram and maximum
// (PortCounters.PFCAfterXOFFHist): the peer's reaction to a pause, which
// the headroom must hold.
func (e *Engine) recordAfterXOFF(g *egress, prio uint8) {
	n := g.sinceXOFF[prio]
	g.sinceXOFF[prio] = 0
	g.c[cAfterXOFFHist+counter(AfterXOFFBucket(n))]++
	if uint64(n) > g.c[cAfterXOFFMax] {
		g.c[cAfterXOFFMax] = uint64(n)
	}
}

// shouldResume reports whether the paused lossless priority prio of count a
// (shard sh's) may resume.
func (e *Engine) shouldResume(sh *txShard, a *ingressAcct, prio uint8) bool {
	if buf := &sh.buf; buf.on {
		return buf.shouldResume(a, prio)
	}
	return a[prio].in < e.xonBytes
}

// sendPause queues a PFC frame for priority prio out of g's port (upstream).
func (e *Engine) sendPause(now int64, g *egress, prio uint8, quanta uint16) {
	g.refreshAt[prio] = now + g.refreshNs
	b := g.gen.slot()
	if b == nil {
		g.c[cDropControl]++
		if quanta != 0 {
			g.refreshAt[prio] = now // retry at the next Service
		} else {
			g.xonRetry |= 1 << prio // retried by retryXON at the next Service
			e.tx[g.sh].xonRetryPorts |= 1 << g.idx
		}
		return
	}
	g.xonRetry &^= 1 << prio // this frame, XOFF or XON, supersedes a pending XON
	var qs [wire.PFCPriorities]uint16
	qs[prio] = quanta
	n, _ := wire.BuildPFC(b, g.mac, 1<<prio, &qs)
	g.gen.commit(n)
	e.tx[g.sh].active |= 1 << g.idx
	if quanta != 0 {
		g.c[cPausesSent]++
		g.c[cPausesSentPrio+counter(prio)]++
	} else {
		g.c[cResumesSent]++
	}
}
