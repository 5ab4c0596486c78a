package fabric

import (
	"context"
	"fmt"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// The forgery tests run a star of three hosts in virtual time: host 0 sends
// one long flow to host 1 at 10 Gb/s, and host 2, the attacker, forges control
// frames against it. A frame forged "at the switch" comes in on the switch's
// port 2 (host 2's link); one forged "at host 0" comes in on host 0's link.
const (
	forgeBps   = 10e9
	forgeFlow  = 1
	forgeFrom  = 1_000_000 // ns: forging starts
	forgeEnd   = 3_000_000
	forgeMeter = 1_200_000 // goodput is measured over (forgeMeter, forgeEnd]
	forgeSw    = 3         // the switch's node
	attackPort = 2         // the switch's port to host 2
)

// inject hands frame to port of node n at the virtual clock's now, as if its
// link had delivered it, and lets the node react at once (as Run does for a
// frame off a wire).
func inject(v *Virtual, n, port int, frame []byte) {
	h, b := v.frames.Alloc()
	copy(b, frame)
	v.nodes[n].Receive(v.now, port, h, b[:len(frame)])
	v.transmit(n)
	v.schedule(n, n) // the serial driver: agenda entry n is node n
}

// forgeRun runs spec in virtual time until end and, from from on, every
// period, hands node the forgery frame returns (none when nil) as if its link
// had delivered it: at the switch (forgeSw) on port attackPort, at a host on
// its link. It returns the number of frames forged and the result.
func forgeRun(t *testing.T, spec *Spec, from, end, period int64, node int, frame func(*Virtual) []byte) (uint64, *Result) {
	t.Helper()
	v := newVirtual(t, spec)
	port := 0
	if node == forgeSw {
		port = attackPort
	}
	forged := uint64(0)
	for at := from; at < end; at += period {
		if err := v.Run(context.Background(), at, nil); err != nil {
			t.Fatal(err)
		}
		if f := frame(v); f != nil {
			inject(v, node, port, f)
			forged++
		}
	}
	if err := v.Run(context.Background(), end, nil); err != nil {
		t.Fatal(err)
	}
	return forged, v.Result()
}

// victim is the attacked flow's sender QP as the attacker predicts it: its QP
// number, and the highest PSN it has sent.
func victim(v *Virtual) (qpn, highest uint32) {
	f := v.hostNodes[0].Engine().ActiveFlows()[0]
	return f.QPN, uint32(f.SentBytes/int64(v.plan.Spec.MTU)-1) & 0xffffff
}

// forgedFeedback is a RoCC rate message of 100 Mb/s for the victim's flow
// from src, with the CP id of the switch port toward host 1 (the switch's
// address + 1: predictable), entering on host 2's link.
func forgedFeedback(v *Virtual, src uint32) []byte {
	qpn, _ := victim(v)
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: SwitchPortMAC(0, attackPort), SrcMAC: HostMAC(2), SrcIP: src, DstIP: HostIP(0)}
	fb := ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, CPID: SwitchIP(0) + 1, RateUnits: 10, DeltaFBps: 10e6,
		Flow: ccalgo.FlowKey{SrcIP: HostIP(0), DstIP: HostIP(1), SrcPort: hostd.QPSrcPort(HostIP(0), HostIP(1), qpn),
			DstPort: wire.RoCEv2Port, DestQP: qpn}}
	n, err := wire.BuildFeedback(b, &ep, &fb)
	if err != nil {
		panic(err)
	}
	return b[:n]
}

// forgedAck is an ACK from src of everything the victim has sent; nil once
// the victim's flow is over.
func forgedAck(v *Virtual, src uint32) []byte {
	if len(v.hostNodes[0].Engine().ActiveFlows()) == 0 {
		return nil
	}
	qpn, highest := victim(v)
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: SwitchPortMAC(0, attackPort), SrcMAC: HostMAC(2), SrcIP: src, DstIP: HostIP(0),
		SrcPort: 0xc000, DSCP: DefaultPriority << 3}
	n, err := wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: qpn, PSN: highest, Syndrome: wire.SyndromeAckNoCred},
		&ccalgo.AckFields{})
	if err != nil {
		panic(err)
	}
	return b[:n]
}

// slowed reports whether the victim's goodput over (forgeMeter, forgeEnd]
// fell under 0.85 of the link (a trusted run keeps 0.92: the payload's share
// of its frames).
func slowed(r *Result) (bool, string) {
	share := r.Goodput(forgeFlow, forgeMeter, forgeEnd) / forgeBps
	return share < 0.85, fmt.Sprintf("goodput %.3f of the link", share)
}

// ackedEarly reports whether the victim's sender took its message as
// delivered before the receiver had its last packet.
func ackedEarly(r *Result) (bool, string) {
	f, ok := r.FCTOf(forgeFlow)
	rx := r.Hosts[1].RxFlows()
	if !ok || len(rx) != 1 {
		return false, "the message did not complete"
	}
	done := f.StartNs + f.FCTNs
	return done < rx[0].LastNs, fmt.Sprintf("sender done at %d ns, the receiver's last packet at %d ns", done, rx[0].LastNs)
}

// TestForgedControlFrames forges each kind of control frame against a
// trusted fabric (the default: every forgery refused and counted where it
// came in, the flow unharmed) and an untrusted one (Spec.TrustAll: every
// forgery taken, as before trust existed, and the flow harmed).
func TestForgedControlFrames(t *testing.T) {
	hostRefused := func(kind func(*hostd.Refusals) uint64) func(*Result) uint64 {
		return func(r *Result) uint64 { x := r.Hosts[0].Refused(); return kind(&x) }
	}
	for _, tc := range []struct {
		name   string
		scheme string
		size   int64 // of the victim's message; 0: unlimited
		period int64
		node   int // where the frame comes in: forgeSw (port attackPort) or host 0
		// frame is the forgery at the clock's now; nil: none this time.
		frame   func(v *Virtual) []byte
		harmed  func(r *Result) (bool, string)
		refused func(r *Result) uint64
	}{
		// One pause of 65535 quanta holds data for 3.4 ms at 10 Gb/s: one
		// every ms keeps the sender stopped.
		{name: "pfc at host 0", scheme: "none", period: 1_000_000, node: 0,
			frame: func(*Virtual) []byte {
				var q [wire.PFCPriorities]uint16
				q[DefaultPriority] = 0xffff
				b := make([]byte, 64)
				n, _ := wire.BuildPFC(b, HostMAC(2), 1<<DefaultPriority, &q)
				return b[:n]
			},
			harmed: slowed, refused: hostRefused(func(r *hostd.Refusals) uint64 { return r.PFC })},
		{name: "rocc rate spoofing the switch at the switch", scheme: "rocc", period: 100_000, node: forgeSw,
			frame:   func(v *Virtual) []byte { return forgedFeedback(v, SwitchIP(0)) },
			harmed:  slowed,
			refused: func(r *Result) uint64 { return r.Port(0, attackPort).RefusedRoCCRate }},
		{name: "rocc rate from host 2 at host 0", scheme: "rocc", period: 100_000, node: 0,
			frame:   func(v *Virtual) []byte { return forgedFeedback(v, HostIP(2)) },
			harmed:  slowed,
			refused: hostRefused(func(r *hostd.Refusals) uint64 { return r.RoCCRate })},
		{name: "cnp spoofing the receiver at the switch", scheme: "dcqcn", period: 50_000, node: forgeSw,
			frame: func(v *Virtual) []byte {
				qpn, _ := victim(v)
				b := make([]byte, 128)
				ep := wire.Endpoints{DstMAC: SwitchPortMAC(0, attackPort), SrcMAC: HostMAC(2), SrcIP: HostIP(1),
					DstIP: HostIP(0), DSCP: DefaultPriority << 3}
				n, _ := wire.BuildCNP(b, &ep, qpn)
				return b[:n]
			},
			harmed:  slowed,
			refused: func(r *Result) uint64 { return r.Port(0, attackPort).RefusedCNP }},
		// ACKs of everything sent, every us: the sender takes its 2 MB
		// message (1.7 ms at 10 Gb/s) as delivered before it is.
		{name: "ack spoofing the receiver at the switch", scheme: "none", size: 2e6, period: 1000, node: forgeSw,
			frame:   func(v *Virtual) []byte { return forgedAck(v, HostIP(1)) },
			harmed:  ackedEarly,
			refused: func(r *Result) uint64 { return r.Port(0, attackPort).RefusedAck }},
		{name: "ack from host 2 at the switch", scheme: "none", size: 2e6, period: 1000, node: forgeSw,
			frame:   func(v *Virtual) []byte { return forgedAck(v, HostIP(2)) },
			harmed:  ackedEarly,
			refused: hostRefused(func(r *hostd.Refusals) uint64 { return r.Ack })},
	} {
		for _, trustAll := range []bool{false, true} {
			name := tc.name + "/trusted"
			if trustAll {
				name = tc.name + "/trust-all"
			}
			t.Run(name, func(t *testing.T) {
				spec := &Spec{Topo: Star(3, forgeBps, 1000), Scheme: tc.scheme, TrustAll: trustAll, Exact: true,
					Flows: []Flow{{ID: forgeFlow, Src: 0, Dst: 1, SizeBytes: tc.size}}}
				forged, r := forgeRun(t, spec, forgeFrom, forgeEnd, tc.period, tc.node, tc.frame)
				harmed, what := tc.harmed(r)
				refused := tc.refused(r)
				// A forgery still on its way to host 0 when the flow ends
				// finds no QP there: stale, neither taken nor refused.
				_, tx := r.Hosts[0].Counters()
				stale := tx.StaleEvents
				t.Logf("%d forged, %d refused, %d stale; %s", forged, refused, stale, what)
				if trustAll {
					if refused != 0 || !harmed {
						t.Errorf("trusting all: %d refused, %s: want none refused and the flow harmed", refused, what)
					}
					return
				}
				if refused+stale != forged || stale > 2 || harmed {
					t.Errorf("trusted: %d of %d forgeries refused (%d stale), %s: want all refused and the flow unharmed",
						refused, forged, stale, what)
				}
			})
		}
	}
}

// TestTrustedFabricRefusesNothing runs every scheme on a two-switch chain
// with PFC and a 3-to-1 incast across the trunk, trusted by topology (the
// default): the CP feedback, CNPs, ACKs, NAKs and PFC frames of a genuine run
// are all taken, whatever their path, and nothing is refused.
func TestTrustedFabricRefusesNothing(t *testing.T) {
	for _, scheme := range []string{"none", "dcqcn", "dctcp", "hpcc", "timely", "rcc", "acc", "rocc", "p4qcn", "qcn"} {
		t.Run(scheme, func(t *testing.T) {
			// A 2 MiB buffer: PFC pauses before the schemes have tamed the
			// incast.
			spec := &Spec{Topo: Chain([]int{2, 2}, 10e9, 10e9, 1000), Scheme: scheme, PFC: PFC{Enabled: true},
				Buffer: switchd.BufferConfig{SizeBytes: 2 << 20},
				Flows:  []Flow{{ID: 0, Src: 0, Dst: 3}, {ID: 1, Src: 1, Dst: 3}, {ID: 2, Src: 2, Dst: 3}}}
			r, err := Simulate(spec, 2_000_000)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range r.Plan.Hosts {
				if c.Trust != hostd.TrustTopology || len(c.TrustedCPs) != 1 {
					t.Fatalf("host %d: trust %q, trusted CPs %v: want topology, one range", i, c.Trust, c.TrustedCPs)
				}
			}
			var feedback, pfc uint64
			for i, h := range r.Hosts {
				if x := h.Refused(); x.Total() != 0 {
					t.Errorf("host %d refused %+v", i, x)
				}
				rx, _ := h.Counters()
				feedback += rx.RoCCRate + rx.P4QCN + rx.QCN + rx.CNPs
				pfc += rx.PFC
			}
			for s := range r.Switches {
				for _, pc := range r.Switches[s].Snapshot().Ports {
					if pc.Refused != 0 {
						t.Errorf("switch %d port %d refused %d", s, pc.Port, pc.Refused)
					}
					pfc += pc.PausesRecv + pc.ResumesRecv
				}
			}
			t.Logf("%d CP feedback frames and CNPs, %d PFC frames taken", feedback, pfc)
			if scheme == "rocc" || scheme == "p4qcn" || scheme == "qcn" || scheme == "dcqcn" {
				if feedback == 0 {
					t.Error("no feedback reached the hosts: the test checked nothing")
				}
			}
		})
	}
}

func TestCPRanges(t *testing.T) {
	star := Star(3, 10e9, 1000)
	if got := star.CPRanges(); len(got) != 1 || got[0] != "10.254.0.254-10.254.1.0" {
		t.Errorf("star: %v", got)
	}
	// Switches' ranges join across addresses that no host holds.
	ls := LeafSpine(2, 2, 2, 10e9, 10e9, 1000)
	if got := ls.CPRanges(); len(got) != 1 || got[0] != "10.254.0.254-10.254.3.255" {
		t.Errorf("leaf-spine: %v", got)
	}
	// A host between two switches keeps their ranges apart.
	t2 := &Topology{}
	t2.AddHost("")
	t2.AddHost("")
	a, b := t2.AddSwitch(""), t2.AddSwitch("")
	t2.ConnectSym(0, a, 10e9, 1000)
	t2.ConnectSym(1, b, 10e9, 1000)
	t2.ConnectSym(a, b, 10e9, 1000)
	t2.Hosts[1].IP = SwitchIP(1) - 10
	if got := t2.CPRanges(); len(got) != 2 {
		t.Errorf("a host between the switches: %v, want 2 ranges", got)
	}
}

// Data forgery: the attacker (host 2) sends small data frames carrying the
// victim's source address and QP and a PSN far ahead of what the victim has
// sent, 5,000 a second, toward the victim's receiver (host 1). Each one that
// reaches host 1 opens a gap there, host 1 NAKs the real sender (from the
// flow's real destination, for a PSN in its window) and the sender goes back.
const (
	dataForgePeriod = 200_000 // ns: 5,000 frames a second
	dataForgeDelay  = 10_000  // ns per link: a 40 us RTT, so that a go-back resends ~50 KB
	dataForgeFrom   = 1_000_000
	dataForgeEnd    = 21_000_000
	dataForgeMeter  = 2_000_000 // goodput over (dataForgeMeter, dataForgeEnd]
)

// forgedData is a data frame with the victim's source address, QP and UDP
// source port and a PSN 1,000 packets past the highest it has sent, 64 bytes
// of payload, from host 2's link toward host 1; nil once the flow is over.
func forgedData(v *Virtual) []byte {
	if len(v.hostNodes[0].Engine().ActiveFlows()) == 0 {
		return nil
	}
	qpn, highest := victim(v)
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: SwitchPortMAC(0, attackPort), SrcMAC: HostMAC(0), SrcIP: HostIP(0), DstIP: HostIP(1),
		SrcPort: hostd.QPSrcPort(HostIP(0), HostIP(1), qpn), DSCP: DefaultPriority << 3}
	n, err := wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpSendMiddle, DestQP: qpn,
		PSN: (highest + 1000) & 0xffffff, SendTS: v.now, PayloadLen: 64})
	if err != nil {
		panic(err)
	}
	return b[:n]
}

// TestForgedDataFrames runs the victim's flow alone (the baseline) and with
// the data forger, trusted by topology (the default: the switch refuses every
// forged frame at host 2's port, counted as refused_data, and the victim's
// goodput stays within 5 % of its baseline) and trusting all (the forgeries
// reach host 1, and the victim's goodput falls).
func TestForgedDataFrames(t *testing.T) {
	run := func(t *testing.T, trustAll, forge bool) (goodput float64, forged uint64, r *Result) {
		spec := &Spec{Topo: Star(3, forgeBps, dataForgeDelay), Scheme: "none", TrustAll: trustAll, Exact: true,
			Flows: []Flow{{ID: forgeFlow, Src: 0, Dst: 1}}}
		frame := forgedData
		if !forge {
			frame = func(*Virtual) []byte { return nil }
		}
		forged, r = forgeRun(t, spec, dataForgeFrom, dataForgeEnd, dataForgePeriod, forgeSw, frame)
		return r.Goodput(forgeFlow, dataForgeMeter, dataForgeEnd), forged, r
	}
	for _, trustAll := range []bool{false, true} {
		name := "trusted"
		if trustAll {
			name = "trust-all"
		}
		t.Run(name, func(t *testing.T) {
			base, _, _ := run(t, trustAll, false)
			got, forged, r := run(t, trustAll, true)
			refused := r.Port(0, attackPort).RefusedData
			rx, _ := r.Hosts[1].Counters()
			_, tx := r.Hosts[0].Counters()
			share := got / base
			t.Logf("goodput %.3f Gb/s, baseline %.3f Gb/s (%.3f); %d forged, %d refused at the switch; "+
				"host 1: %d out of order, %d NAKs owed; host 0: %d go-backs, %d NAKs refused",
				got/1e9, base/1e9, share, forged, refused, rx.OutOfOrder, rx.NaksOwed, tx.NakRewinds, tx.Refused.Nak)
			if forged < 90 {
				t.Fatalf("%d frames forged: want ~100 (the flow ended early?)", forged)
			}
			if trustAll {
				if refused != 0 || share > 0.95 {
					t.Errorf("trusting all: %d refused, goodput %.3f of the baseline: want none refused and the flow harmed", refused, share)
				}
				return
			}
			if refused != forged || share < 0.95 || rx.OutOfOrder != 0 {
				t.Errorf("trusted: %d of %d forgeries refused, goodput %.3f of the baseline, %d out of order at host 1: "+
					"want all refused, within 5 %%, none", refused, forged, share, rx.OutOfOrder)
			}
		})
	}
}
