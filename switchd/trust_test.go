package switchd

import (
	"runtime"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/cpuclock"
	"github.com/ccbed/ccbed/wire"
)

// trustConfig is the 4-port test switch with ports 0-2 facing hosts 0-2 and
// port 3 facing another switch, under trust (TrustAll or TrustTopology).
func trustConfig(trust string) Spec {
	c := testSpec(4, 10)
	c.Trust = trust
	for i := range c.Ports {
		c.Ports[i].Faces = FacesHost
	}
	c.Ports[3].Faces = FacesSwitch
	return c
}

// switchIP is the test switch's address (DefaultConfig's), the source of its
// CP feedback.
const switchIP = 0x0a0000fe

// ctlFrame builds a control frame of kind from the station on port in: its
// source MAC is that station's (hostMAC(in)), its source address src, its
// destination host 0's.
func ctlFrame(tb testing.TB, kind wire.Kind, in int, src uint32) []byte {
	tb.Helper()
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: portMAC(in), SrcMAC: hostMAC(in), SrcIP: src, DstIP: hostIP(0), SrcPort: 49152}
	flow := ccalgo.FlowKey{SrcIP: hostIP(0), DstIP: hostIP(1), SrcPort: 0xc401, DstPort: wire.RoCEv2Port, DestQP: 0x401}
	var n int
	var err error
	switch kind {
	case wire.KindAck, wire.KindNak:
		syn := uint8(wire.SyndromeAckNoCred)
		if kind == wire.KindNak {
			syn = wire.SyndromeNAKSeq
		}
		n, err = wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: flow.DestQP, PSN: 100, Syndrome: syn}, &ccalgo.AckFields{Mark: ccalgo.MarkCE})
	case wire.KindCNP:
		n, err = wire.BuildCNP(b, &ep, flow.DestQP)
	case wire.KindRoCCRate, wire.KindP4QCN, wire.KindQCN:
		fk := map[wire.Kind]ccalgo.FeedbackKind{wire.KindRoCCRate: ccalgo.FeedbackRoCCRate,
			wire.KindP4QCN: ccalgo.FeedbackP4QCN, wire.KindQCN: ccalgo.FeedbackQCN}[kind]
		n, err = wire.BuildFeedback(b, &ep, &ccalgo.Feedback{Kind: fk, CPID: switchIP + 1, Flow: flow,
			RateUnits: 1, DeltaFBps: 10e6, Fb: 63})
	case wire.KindPFC:
		var q [wire.PFCPriorities]uint16
		q[3] = 0xffff
		n, err = wire.BuildPFC(b, hostMAC(in), 1<<3, &q)
	case wire.KindData, wire.KindOther:
		// RoCEv2 data to host 0; KindOther: with a BTH opcode ccbed does
		// not use (RDMA READ request).
		ep.DstIP = hostIP(0)
		n, err = wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpWriteOnly, DestQP: 7, PSN: 1 << 20, PayloadLen: 100})
		if kind == wire.KindOther {
			b[wire.EthernetLen+wire.IPv4MinLen+wire.UDPLen] = 0x0c
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	return b[:n]
}

// TestTrustControlFrames sends forged and genuine control frames into each
// kind of port, with trust "all" (today's behaviour: everything is taken,
// control frames forwarded ahead of data) and "topology" (forgeries refused
// and counted by kind at the port they came in on).
func TestTrustControlFrames(t *testing.T) {
	const other = 0x0a0063fe // an address the switch has no route to
	for _, tc := range []struct {
		name string
		kind wire.Kind
		in   int    // the port it comes in on (3 faces a switch)
		src  uint32 // IPv4 source
		// spoofMAC: a PFC frame from another MAC than the peer's.
		spoofMAC bool
		// refused under trust "topology", and the counter that says so.
		refused bool
		counter func(*PortCounters) uint64
	}{
		{name: "pfc from the peer", kind: wire.KindPFC, in: 1},
		{name: "pfc from a switch peer", kind: wire.KindPFC, in: 3},
		{name: "forged pfc", kind: wire.KindPFC, in: 1, spoofMAC: true, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedPFC }},
		{name: "forged pfc from a switch port", kind: wire.KindPFC, in: 3, spoofMAC: true, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedPFC }},
		{name: "cnp from its host", kind: wire.KindCNP, in: 1, src: hostIP(1)},
		{name: "cnp spoofing another host", kind: wire.KindCNP, in: 2, src: hostIP(1), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedCNP }},
		{name: "cnp from an unrouted address", kind: wire.KindCNP, in: 2, src: other, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedCNP }},
		{name: "cnp from a switch port", kind: wire.KindCNP, in: 3, src: hostIP(1)},
		{name: "ack from its host", kind: wire.KindAck, in: 1, src: hostIP(1)},
		{name: "ack spoofing another host", kind: wire.KindAck, in: 2, src: hostIP(1), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedAck }},
		{name: "nak spoofing another host", kind: wire.KindNak, in: 2, src: hostIP(1), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedNak }},
		{name: "rocc rate from a host", kind: wire.KindRoCCRate, in: 2, src: switchIP, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedRoCCRate }},
		{name: "p4qcn feedback from a host", kind: wire.KindP4QCN, in: 2, src: hostIP(2), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedP4QCN }},
		{name: "qcn feedback from a host", kind: wire.KindQCN, in: 2, src: switchIP, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedQCN }},
		{name: "rocc rate from a switch port", kind: wire.KindRoCCRate, in: 3, src: 0x0a0001fe},
		{name: "data from its host", kind: wire.KindData, in: 2, src: hostIP(2)},
		{name: "data spoofing another host", kind: wire.KindData, in: 2, src: hostIP(1), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedData }},
		{name: "data from an unrouted address", kind: wire.KindData, in: 2, src: other, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedData }},
		{name: "data from 0.0.0.0", kind: wire.KindData, in: 2, src: 0, refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedData }},
		{name: "data from a switch port", kind: wire.KindData, in: 3, src: hostIP(1)},
		{name: "other roce opcode spoofing another host", kind: wire.KindOther, in: 2, src: hostIP(1), refused: true,
			counter: func(p *PortCounters) uint64 { return p.RefusedData }},
		{name: "other roce opcode from its host", kind: wire.KindOther, in: 2, src: hostIP(2)},
	} {
		for _, trust := range []string{TrustAll, TrustTopology} {
			t.Run(tc.name+"/"+trust, func(t *testing.T) {
				h := newHarness(t, trustConfig(trust))
				f := ctlFrame(t, tc.kind, tc.in, tc.src)
				if tc.spoofMAC {
					spoof := hostMAC(9)
					copy(f[6:12], spoof[:])
				}
				kept := h.e.Classify(tc.in, f, &h.meta)
				refused := tc.refused && trust == TrustTopology
				if kept == refused {
					t.Fatalf("Classify kept the frame: %v, want %v", kept, !refused)
				}
				pc := counters0(h.e, tc.in)
				if refused {
					if got := tc.counter(&pc); got != 1 || pc.Refused != 1 || pc.DropsTotal != 1 {
						t.Errorf("refused: kind counter %d, refused %d, drops %d: want 1, 1, 1", got, pc.Refused, pc.DropsTotal)
					}
					return
				}
				if pc.Refused != 0 || pc.DropsTotal != 0 {
					t.Errorf("refused %d, drops %d: want 0", pc.Refused, pc.DropsTotal)
				}
				want := ClassControl
				switch tc.kind {
				case wire.KindPFC:
					want = ClassPFC
				case wire.KindAck, wire.KindNak:
					want = ClassOther
				case wire.KindData, wire.KindOther:
					want = ClassData
				}
				if h.meta.Class != want {
					t.Errorf("class %d, want %d", h.meta.Class, want)
				}
			})
		}
	}
}

// TestTrustDataSourceChanges: a host port's check of the data's source
// follows the source from frame to frame (Classify remembers the last
// source it looked up): genuine and forged frames interleaved are taken and
// refused each on its own.
func TestTrustDataSourceChanges(t *testing.T) {
	h := newHarness(t, trustConfig(TrustTopology))
	own, forged := ctlFrame(t, wire.KindData, 2, hostIP(2)), ctlFrame(t, wire.KindData, 2, hostIP(1))
	ack := ctlFrame(t, wire.KindAck, 2, hostIP(1))
	for i, tc := range []struct {
		frame []byte
		taken bool
	}{{own, true}, {own, true}, {forged, false}, {forged, false}, {own, true}, {ack, false}, {forged, false}, {own, true}} {
		if got := h.e.Classify(2, tc.frame, &h.meta); got != tc.taken {
			t.Errorf("frame %d: taken %v, want %v", i, got, tc.taken)
		}
	}
	if pc := counters0(h.e, 2); pc.RefusedData != 3 || pc.RefusedAck != 1 || pc.Refused != 4 {
		t.Errorf("refused data %d, ACKs %d, all %d: want 3, 1, 4", pc.RefusedData, pc.RefusedAck, pc.Refused)
	}
}

// TestForgedPFCDoesNotPause: a pause frame from another MAC than the peer's
// holds the port's data with trust "all" (today), and is refused with trust
// "topology", where the peer's still pauses. ignore_pfc refuses every one. A
// VLAN-tagged pause, even from the peer, is refused under either trust: a
// MAC Control frame is never tagged (IEEE 802.3 Clause 31).
func TestForgedPFCDoesNotPause(t *testing.T) {
	for _, tc := range []struct {
		name      string
		trust     string
		spoof     bool
		tagged    bool
		ignorePFC bool
		paused    bool
	}{
		{"forged/all", TrustAll, true, false, false, true},
		{"forged/topology", TrustTopology, true, false, false, false},
		{"peer/topology", TrustTopology, false, false, false, true},
		{"peer/ignore_pfc", TrustAll, false, false, true, false},
		{"tagged peer/all", TrustAll, false, true, false, false},
		{"tagged peer/topology", TrustTopology, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := trustConfig(tc.trust)
			c.Ports[1].IgnorePFC = tc.ignorePFC
			h := newHarness(t, c)
			f := ctlFrame(t, wire.KindPFC, 1, 0)
			if tc.spoof {
				spoof := hostMAC(9)
				copy(f[6:12], spoof[:])
			}
			if tc.tagged {
				// An 802.1Q tag (PCP 3, VID 0) after the source MAC.
				f = append(append(f[:12:12], 0x81, 0x00, 3<<5, 0), f[12:]...)
			}
			h.inject(0, 1, f)
			h.inject(0, 0, dataFrame(t, 0, 1, 1, 100, false))
			sent := len(h.tx(1000, 1))
			if paused := sent == 0; paused != tc.paused {
				t.Fatalf("%d frames out of port 1: paused %v, want %v", sent, paused, tc.paused)
			}
			if pc := counters0(h.e, 1); (pc.RefusedPFC == 1) == tc.paused || pc.PausesRecv != map[bool]uint64{true: 1}[tc.paused] {
				t.Errorf("refused %d, pauses received %d", pc.RefusedPFC, pc.PausesRecv)
			}
		})
	}
}

// TestTrustECMPReversePath: a host behind an ECMP group (two ports to one
// dual-homed host) may send its ACKs in on either port.
func TestTrustECMPReversePath(t *testing.T) {
	c := trustConfig(TrustTopology)
	c.Routes[1] = Route{Addr: 0x0a000100, Len: 24, Ports: []int{1, 2}}
	h := newHarness(t, c)
	for _, in := range []int{1, 2} {
		if !h.e.Classify(in, ctlFrame(t, wire.KindAck, in, hostIP(1)), &h.meta) {
			t.Errorf("ACK of host 1 in on port %d refused", in)
		}
	}
	if h.e.Classify(0, ctlFrame(t, wire.KindAck, 0, hostIP(1)), &h.meta) {
		t.Error("ACK of host 1 in on port 0 taken")
	}
}

// TestTrustAllocatesNothing: the trusted Classify path (data and ACKs from
// host ports, reverse-path checked, taken and refused) allocates nothing.
func TestTrustAllocatesNothing(t *testing.T) {
	h := newHarness(t, trustConfig(TrustTopology))
	data := dataFrame(t, 1, 0, 7, 1000, false)
	ack := ctlFrame(t, wire.KindAck, 1, hostIP(1))
	forged := ctlFrame(t, wire.KindCNP, 2, hostIP(1))
	forgedData := ctlFrame(t, wire.KindData, 2, hostIP(1))
	h.e.decTTL = false
	if a := testing.AllocsPerRun(1000, func() {
		h.e.Classify(1, data, &h.meta)
		h.e.Classify(1, ack, &h.meta)
		h.e.Classify(2, forged, &h.meta)
		h.e.Classify(2, forgedData, &h.meta)
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// BenchmarkClassifyTrust is Classify of a data frame and of an ACK from a
// host port, trusting all and by topology (the reverse-path lookup of the
// frame's source), in CPU time per frame.
func BenchmarkClassifyTrust(b *testing.B) {
	for _, trust := range []string{TrustAll, TrustTopology} {
		for _, kind := range []wire.Kind{wire.KindData, wire.KindAck} {
			b.Run(trust+"/"+kind.String(), func(b *testing.B) {
				h := newHarness(b, trustConfig(trust))
				h.e.decTTL = false
				f := ctlFrame(b, kind, 1, hostIP(1))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := cpuclock.Thread()
				for b.Loop() {
					h.e.Classify(1, f, &h.meta)
				}
				b.ReportMetric(float64((cpuclock.Thread()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
