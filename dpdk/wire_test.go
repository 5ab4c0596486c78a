package dpdk_test

import (
	"bytes"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/wire"
)

// TestWirePacketsThroughRingPort builds one packet of each ccbed format with wire/
// directly in mbufs, sends the burst through a net_ring port and checks that every
// frame comes back byte-identical and decodes to the kind it was built as.
func TestWirePacketsThroughRingPort(t *testing.T) {
	mp := newPool(t, "p_wire", 511, dpdk.MbufDefaultDataRoom)
	p := startPort(t, "net_ring0", mp)
	ep := wire.Endpoints{
		DstMAC: wire.MAC{0x02, 0, 0, 0, 0, 2}, SrcMAC: wire.MAC{0x02, 0, 0, 0, 0, 1},
		SrcIP: 0x0a000001, DstIP: 0x0a000002, SrcPort: 0xc000,
	}
	flow := ccalgo.FlowKey{SrcIP: ep.SrcIP, DstIP: ep.DstIP, SrcPort: ep.SrcPort, DstPort: wire.RoCEv2Port, DestQP: 7}
	fields := ccalgo.AckFields{EchoTS: 12345, Mark: ccalgo.MarkCE, Window: 64000}
	var quanta [wire.PFCPriorities]uint16
	quanta[3] = 0xffff
	builders := []struct {
		kind  wire.Kind
		build func(b []byte) (int, error)
	}{
		{wire.KindData, func(b []byte) (int, error) {
			return wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: 7, PSN: 42, SendTS: 99, PayloadLen: 1000})
		}},
		{wire.KindData, func(b []byte) (int, error) {
			return wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpSendFirst, DestQP: 7, PSN: 43, INT: true, PayloadLen: 64})
		}},
		{wire.KindAck, func(b []byte) (int, error) {
			return wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: 7, PSN: 42, Syndrome: wire.SyndromeAckNoCred}, &fields)
		}},
		{wire.KindNak, func(b []byte) (int, error) {
			return wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: 7, PSN: 40, Syndrome: wire.SyndromeNAKSeq}, &fields)
		}},
		{wire.KindCNP, func(b []byte) (int, error) { return wire.BuildCNP(b, &ep, 7) }},
		{wire.KindRoCCRate, func(b []byte) (int, error) {
			return wire.BuildFeedback(b, &ep, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: flow, CPID: 1, RateUnits: 333, DeltaFBps: 10e6, RateBps: 3.33e9})
		}},
		{wire.KindP4QCN, func(b []byte) (int, error) {
			return wire.BuildFeedback(b, &ep, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN, Flow: flow, CPID: 1})
		}},
		{wire.KindPFC, func(b []byte) (int, error) { return wire.BuildPFC(b, ep.SrcMAC, 1<<3, &quanta) }},
	}
	tx := dpdk.NewBurst(len(builders))
	defer tx.Free()
	rx := dpdk.NewBurst(len(builders) + 1)
	defer rx.Free()
	if err := mp.AllocBulk(tx.Pkts); err != nil {
		t.Fatal(err)
	}
	sent := make([][]byte, len(builders))
	for i, bl := range builders {
		m := tx.Pkts[i]
		n, err := bl.build(m.Room())
		if err != nil {
			dpdk.FreeBulk(tx.Pkts)
			t.Fatalf("build %v: %v", bl.kind, err)
		}
		m.SetLen(n)
		sent[i] = bytes.Clone(m.Data())
	}
	if n := p.TxBurst(0, tx.Pkts); n != len(tx.Pkts) {
		dpdk.FreeBulk(tx.Pkts[n:])
		t.Fatalf("sent %d of %d", n, len(tx.Pkts))
	}
	n := p.RxBurst(0, rx.Pkts)
	defer dpdk.FreeBulk(rx.Pkts[:n])
	if n != len(builders) {
		t.Fatalf("received %d of %d", n, len(builders))
	}
	var f wire.Frame
	for i, m := range rx.Pkts[:n] {
		if !bytes.Equal(m.Data(), sent[i]) {
			t.Errorf("frame %d (%v) changed in transit", i, builders[i].kind)
		}
		if err := wire.Decode(m.Data(), &f); err != nil || f.Kind != builders[i].kind {
			t.Errorf("frame %d decodes as %v (%v), want %v", i, f.Kind, err, builders[i].kind)
		}
	}
	if f := (wire.Frame{}); wire.Decode(rx.Pkts[0].Data(), &f) == nil && f.BTH.PSN() != 42 {
		t.Errorf("data PSN %d, want 42", f.BTH.PSN())
	}
}
