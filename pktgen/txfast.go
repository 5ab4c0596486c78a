package pktgen

import (
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/wire"
)

// The C fast path of a TxPort on an ethdev queue: dpdk.TxGen allocates a
// granted burst, builds every frame as Generator.Build would (the same
// templates, schedule and flows, copied to C memory once) and transmits it, in
// one cgo call; the Generator stays the owner of the stream's state (rate,
// schedule position, flow, sequence number, picks) and advances it by what
// the call built. TestTxGenMatchesBuild holds the two builders to the same
// bytes. Ports that are not an ethdev queue (rings, test ports) take the Go
// path: Build into each mbuf, then TxBurst.

// txGenSpec is the C builder's copy of g's templates, schedule and flows.
func (g *Generator) txGenSpec() *dpdk.TxGenSpec {
	s := &dpdk.TxGenSpec{Schedule: g.sched}
	for _, c := range g.classes {
		s.Classes = append(s.Classes, dpdk.TxGenClass{Size: c.size, Header: c.tmpl, IPSum: c.ipSum})
	}
	for _, f := range g.flows {
		s.Flows = append(s.Flows, dpdk.TxGenFlow{SrcIP: f.srcIP, DstIP: f.dstIP, SrcPort: f.srcPort,
			DstPort: f.dstPort, QP: f.destQP, IPSum: f.ipSum, Tag: f.tag})
	}
	s.Offsets = dpdk.TxGenOffsets{IPv4: ipOff, UDP: udpOff, Seq32: g.hdrOff + 4, Time64: g.hdrOff + 8,
		Time64b: -1, QP24: -1, PSN24: -1, Tag16: g.hdrOff + 2}
	if g.roce {
		s.Offsets.QP24, s.Offsets.PSN24 = bthOff+5, bthOff+9
		s.Offsets.Time64b = bthOff + wire.BTHLen // the DataHeader's send time
		s.Offsets.ZeroTail = wire.ICRCLen
	}
	return s
}

// cursor is where the C builder starts the next burst.
func (g *Generator) cursor() dpdk.TxGenCursor {
	return dpdk.TxGenCursor{Pos: g.pos, Flow: g.flow, Seq: g.seq}
}

// sendFast builds and transmits k granted packets through t.fast; it returns
// the number the port took, as Poll does.
func (t *TxPort) sendFast(now int64, k int) int {
	pkts := t.burst.Pkts[:k]
	picks := t.gen.perFlow != nil
	if picks {
		copy(t.fast.Picks, t.gen.perFlow.pending()[:k])
	}
	n, sentBytes, built, err := t.fast.Send(pkts, now, t.gen.cursor(), picks)
	if err != nil {
		if err != dpdk.ErrNoMbufs {
			panic(err) // a cursor outside the schedule: a bug, caught by the lcore's loop
		}
		t.noMbuf++
		t.pub.noMbuf.Store(t.noMbuf)
		return 0
	}
	t.gen.advance(k, built)
	if n > 0 {
		t.packets += uint64(n)
		t.bytes += sentBytes
		t.pub.packets.Store(t.packets)
		t.pub.bytes.Store(t.bytes)
	}
	t.keepRefused(n, k)
	return n
}
