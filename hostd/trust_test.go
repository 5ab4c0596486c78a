package hostd

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// Addresses of the trust tests: the sender A (ipA) sends one flow to the
// receiver B (ipB) through a switch whose address is cpIP and whose port 1's
// CP id is cpID; attacker is a third host.
const (
	cpIP       = 0x0a0000fe // 10.0.0.254
	cpID       = cpIP + 1
	attacker   = 0x0a000003 // 10.0.0.3
	gatewayMAC = "02:00:00:00:ff:01"
)

// trustSender is host A with one 100-packet flow to B, under trust; it has
// sent its first 10 packets at now.
type trustSender struct {
	e   *Engine
	now int64
	qpn uint32
	buf []byte
}

func newTrustSender(t *testing.T, scheme, trust string) *trustSender {
	t.Helper()
	c := testConfig("h1", ipA, scheme)
	c.GatewayMAC, _ = wire.ParseMAC(gatewayMAC)
	c.Flows = []Flow{{ID: 7, Dst: ipB, SizeBytes: 100 * 1024}}
	c.Trust = trust
	if trust == TrustTopology {
		c.TrustedCPs = []AddrRange{{0x0a0000fe, 0x0a00013d}} // 10.0.0.254-10.0.1.61: the switch and its 64 ports' CP ids
	}
	e, err := NewEngine(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &trustSender{e: e, buf: make([]byte, 2048)}
	for sent := 0; sent < 10; {
		s.now += 1000
		e.Service(s.now)
		if e.NextData(s.now, s.buf) > 0 {
			sent++
		}
	}
	s.qpn = e.ActiveFlows()[0].QPN
	return s
}

// send has the sender send n more data packets (resent or new).
func (s *trustSender) send(t *testing.T, n int) {
	t.Helper()
	for sent, tries := 0, 0; sent < n; tries++ {
		if tries > 100*n {
			t.Fatalf("the sender sent %d of %d packets", sent, n)
		}
		s.now += 1000
		s.e.Service(s.now)
		if s.e.NextData(s.now, s.buf) > 0 {
			sent++
		}
	}
}

// flow is the sender's flow now.
func (s *trustSender) flow() FlowState { return s.e.ActiveFlows()[0] }

// deliver hands frame to the sender and applies it.
func (s *trustSender) deliver(t *testing.T, frame []byte) {
	t.Helper()
	s.now += 100
	var out Controls
	if s.e.Receive(s.now, frame, &out) != 0 {
		t.Fatal("a control frame owed a control frame")
	}
	s.e.Service(s.now)
}

// ack builds an ACK (or NAK) from src for the sender's flow.
func (s *trustSender) ack(t *testing.T, src uint32, psn uint32, nak bool) []byte {
	t.Helper()
	ipa := uint32(ipA)
	ep := wire.Endpoints{SrcMAC: wire.MAC{2, 0, 0, 0, 0xff, 1}, SrcIP: src, DstIP: ipa, SrcPort: 0xc000}
	syn := uint8(wire.SyndromeAckNoCred)
	if nak {
		syn = wire.SyndromeNAKSeq
	}
	b := make([]byte, 256)
	n, err := wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: s.qpn, PSN: psn, Syndrome: syn}, &ccalgo.AckFields{})
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// cnp builds a CNP from src for the sender's flow.
func (s *trustSender) cnp(t *testing.T, src uint32) []byte {
	t.Helper()
	ipa := uint32(ipA)
	ep := wire.Endpoints{SrcMAC: wire.MAC{2, 0, 0, 0, 0xff, 1}, SrcIP: src, DstIP: ipa}
	b := make([]byte, 256)
	n, err := wire.BuildCNP(b, &ep, s.qpn)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// feedback builds CP feedback of kind for the sender's flow, from src with CP
// id id: a rate of 3 Gb/s (RoCC), or |Fb| 63 with the queue far above its
// reference (QCN, P4QCN).
func (s *trustSender) feedback(t *testing.T, kind ccalgo.FeedbackKind, src, id uint32) []byte {
	t.Helper()
	ipa := uint32(ipA)
	ipb := uint32(ipB)
	fb := ccalgo.Feedback{Kind: kind, CPID: id,
		Flow:      ccalgo.FlowKey{SrcIP: ipa, DstIP: ipb, SrcPort: QPSrcPort(ipa, ipb, s.qpn), DstPort: wire.RoCEv2Port, DestQP: s.qpn},
		RateUnits: 300, DeltaFBps: 10e6, Fb: 63, QOff: -100_000, QDelta: -10_000}
	ep := wire.Endpoints{SrcMAC: wire.MAC{2, 0, 0, 0, 0xff, 1}, SrcIP: src, DstIP: ipa}
	b := make([]byte, 256)
	n, err := wire.BuildFeedback(b, &ep, &fb)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// pfc builds a pause of the data priority (3) for 65535 quanta from mac.
func pfc(t *testing.T, mac string) []byte {
	t.Helper()
	m, err := wire.ParseMAC(mac)
	if err != nil {
		t.Fatal(err)
	}
	var q [wire.PFCPriorities]uint16
	q[3] = 0xffff
	b := make([]byte, 64)
	n, _ := wire.BuildPFC(b, m, 1<<3, &q)
	return b[:n]
}

// TestTrustControlFrames hands the sender genuine and forged control frames
// with trust "all" (every one taken, as before trust existed) and "topology"
// (forgeries refused and counted by kind), and checks both what the frame did
// and what the counters say.
func TestTrustControlFrames(t *testing.T) {
	ipb := uint32(ipB)
	rateCut := func(s *trustSender, b FlowState) bool { return s.flow().RateBps < b.RateBps }
	acked := func(s *trustSender, b FlowState) bool { return s.flow().AckedBytes != b.AckedBytes }
	rewound := func(s *trustSender, _ FlowState) bool { _, tc := s.e.Counters(); return tc.NakRewinds > 0 }
	for _, tc := range []struct {
		name   string
		scheme string
		pre    func(t *testing.T, s *trustSender) // before the frame (e.g. a genuine ACK)
		frame  func(t *testing.T, s *trustSender) []byte
		// effect reports whether the frame took effect on the flow (nil:
		// no visible effect to check).
		effect func(s *trustSender, before FlowState) bool
		// forged: refused with trust "topology"; always: refused with
		// "all" too (as BadAcks).
		forged, always bool
		counter        func(r *Refusals) uint64
	}{
		{name: "pfc from the gateway", scheme: "none",
			frame:  func(t *testing.T, s *trustSender) []byte { return pfc(t, gatewayMAC) },
			effect: func(s *trustSender, _ FlowState) bool { return !s.e.CanSend(s.now + 1000) }},
		{name: "forged pfc", scheme: "none", forged: true,
			frame:   func(t *testing.T, s *trustSender) []byte { return pfc(t, "02:00:00:00:00:09") },
			effect:  func(s *trustSender, _ FlowState) bool { return !s.e.CanSend(s.now + 1000) },
			counter: func(r *Refusals) uint64 { return r.PFC }},
		{name: "rocc rate from the CP", scheme: "rocc",
			frame: func(t *testing.T, s *trustSender) []byte {
				return s.feedback(t, ccalgo.FeedbackRoCCRate, cpIP, cpID)
			},
			effect: rateCut},
		{name: "rocc rate from a host with a predicted CP id", scheme: "rocc", forged: true,
			frame: func(t *testing.T, s *trustSender) []byte {
				return s.feedback(t, ccalgo.FeedbackRoCCRate, attacker, cpID)
			},
			effect: rateCut, counter: func(r *Refusals) uint64 { return r.RoCCRate }},
		{name: "rocc rate from the CP's address with a foreign CP id", scheme: "rocc", forged: true,
			frame: func(t *testing.T, s *trustSender) []byte {
				return s.feedback(t, ccalgo.FeedbackRoCCRate, cpIP, 0x0a090909)
			},
			effect: rateCut, counter: func(r *Refusals) uint64 { return r.RoCCRate }},
		{name: "p4qcn from the CP", scheme: "p4qcn",
			frame:  func(t *testing.T, s *trustSender) []byte { return s.feedback(t, ccalgo.FeedbackP4QCN, cpIP, cpID) },
			effect: rateCut},
		{name: "forged p4qcn", scheme: "p4qcn", forged: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.feedback(t, ccalgo.FeedbackP4QCN, attacker, cpID) },
			effect: rateCut, counter: func(r *Refusals) uint64 { return r.P4QCN }},
		{name: "qcn from the CP", scheme: "qcn",
			frame:  func(t *testing.T, s *trustSender) []byte { return s.feedback(t, ccalgo.FeedbackQCN, cpIP, cpID) },
			effect: rateCut},
		{name: "forged qcn", scheme: "qcn", forged: true,
			frame: func(t *testing.T, s *trustSender) []byte {
				return s.feedback(t, ccalgo.FeedbackQCN, attacker, attacker)
			},
			effect: rateCut, counter: func(r *Refusals) uint64 { return r.QCN }},
		{name: "cnp from the receiver", scheme: "dcqcn",
			frame:  func(t *testing.T, s *trustSender) []byte { return s.cnp(t, ipb) },
			effect: rateCut},
		{name: "forged cnp", scheme: "dcqcn", forged: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.cnp(t, attacker) },
			effect: rateCut, counter: func(r *Refusals) uint64 { return r.CNP }},
		{name: "ack from the receiver", scheme: "none",
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, ipb, 4, false) },
			effect: acked},
		{name: "forged ack up to the highest psn sent", scheme: "none", forged: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, attacker, 9, false) },
			effect: acked, counter: func(r *Refusals) uint64 { return r.Ack }},
		{name: "ack above snd_max", scheme: "none", forged: true, always: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, ipb, 10, false) },
			effect: acked, counter: func(r *Refusals) uint64 { return r.Ack }},
		{name: "ack below snd_una", scheme: "none", forged: true,
			pre:     func(t *testing.T, s *trustSender) { s.deliver(t, s.ack(t, ipb, 4, false)) },
			frame:   func(t *testing.T, s *trustSender) []byte { return s.ack(t, ipb, 1, false) },
			counter: func(r *Refusals) uint64 { return r.Ack }},
		{name: "nak from the receiver", scheme: "none",
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, ipb, 3, true) },
			effect: rewound},
		{name: "forged nak", scheme: "none", forged: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, attacker, 3, true) },
			effect: rewound, counter: func(r *Refusals) uint64 { return r.Nak }},
		{name: "nak above snd_max", scheme: "none", forged: true, always: true,
			frame:  func(t *testing.T, s *trustSender) []byte { return s.ack(t, ipb, 11, true) },
			effect: rewound, counter: func(r *Refusals) uint64 { return r.Nak }},
	} {
		for _, trust := range []string{TrustAll, TrustTopology} {
			t.Run(tc.name+"/"+trust, func(t *testing.T) {
				s := newTrustSender(t, tc.scheme, trust)
				if tc.pre != nil {
					tc.pre(t, s)
				}
				before := s.flow()
				_, tx0 := s.e.Counters()
				s.deliver(t, tc.frame(t, s))
				refused := (tc.forged && trust == TrustTopology) || tc.always
				if tc.effect != nil {
					if took := tc.effect(s, before); took == refused {
						t.Errorf("the frame took effect: %v, want %v (flow %+v -> %+v)", took, !refused, before, s.flow())
					}
				}
				r := s.e.Refused()
				_, tx := s.e.Counters()
				badAcks := tx.BadAcks - tx0.BadAcks
				switch {
				case refused && trust == TrustTopology:
					if got := tc.counter(&r); got != 1 || r.Total() != 1 || badAcks != 0 {
						t.Errorf("refused: kind counter %d, all refusals %d, bad ACKs %d: want 1, 1, 0 (%+v)", got, r.Total(), badAcks, r)
					}
				case refused:
					if r.Total() != 0 || badAcks != 1 {
						t.Errorf("trust all: refusals %d, bad ACKs %d: want 0, 1", r.Total(), badAcks)
					}
				default:
					if r.Total() != 0 || badAcks != 0 {
						t.Errorf("taken: refusals %+v, bad ACKs %d: want none", r, badAcks)
					}
				}
			})
		}
	}
}

// TestNakAcceptance hands the sender (PSNs 0-9 sent, none acknowledged;
// base RTT 4 us) sequences of ACKs, NAKs and resends from its receiver, and
// counts the go-backs and the refusals. With trust "topology" a NAK must name
// a PSN sent and not yet acknowledged ([snd_una, snd_max)), and a second NAK
// for the PSN the sender went back to within a base RTT is refused
// (Refusals.NakRepeat); with "all", only a NAK below snd_una or above
// snd_max is (as BadAcks).
func TestNakAcceptance(t *testing.T) {
	ipb := uint32(ipB)
	const rtt = 4000 // testConfig's BaseRTTNs
	type step struct {
		wait int64  // ns before the step
		send int    // send this many packets; else deliver:
		ack  bool   // an ACK (else a NAK)
		psn  uint32 // of the ACK or NAK
	}
	nak := func(psn uint32) step { return step{psn: psn} }
	for _, tc := range []struct {
		name  string
		trust string
		steps []step
		// go-backs, NAKs refused (Refusals.Nak), repeats refused
		// (Refusals.NakRepeat), bad ACKs (trust "all"); sndNxt after.
		rewinds, refused, repeats, bad uint64
		sndNxt                         uint32
	}{
		{name: "sent and unacknowledged", trust: TrustTopology, steps: []step{nak(3)}, rewinds: 1, sndNxt: 3},
		{name: "at snd_una", trust: TrustTopology, steps: []step{{ack: true, psn: 4}, nak(5)}, rewinds: 1, sndNxt: 5},
		{name: "the last sent", trust: TrustTopology, steps: []step{nak(9)}, rewinds: 1, sndNxt: 9},
		{name: "unsent: snd_max", trust: TrustTopology, steps: []step{nak(10)}, refused: 1, sndNxt: 10},
		{name: "unsent: far ahead", trust: TrustTopology, steps: []step{nak(1000)}, refused: 1, sndNxt: 10},
		{name: "acknowledged", trust: TrustTopology, steps: []step{{ack: true, psn: 4}, nak(3)}, refused: 1, sndNxt: 10},
		{name: "acknowledged: the last acknowledged", trust: TrustTopology, steps: []step{{ack: true, psn: 4}, nak(4)},
			refused: 1, sndNxt: 10},
		{name: "twice within an rtt", trust: TrustTopology, steps: []step{nak(3), {send: 2}, nak(3)},
			rewinds: 1, repeats: 1, sndNxt: 5},
		{name: "three times within an rtt", trust: TrustTopology, steps: []step{nak(3), {send: 1}, nak(3), {send: 1}, nak(3)},
			rewinds: 1, repeats: 2, sndNxt: 5},
		{name: "twice an rtt apart", trust: TrustTopology, steps: []step{nak(3), {send: 2}, {wait: rtt, psn: 3}},
			rewinds: 2, sndNxt: 3},
		{name: "two psns within an rtt", trust: TrustTopology, steps: []step{nak(3), {send: 3}, nak(5)},
			rewinds: 2, sndNxt: 5},
		{name: "again after another psn", trust: TrustTopology, steps: []step{nak(3), {send: 3}, nak(5), {send: 1}, nak(5)},
			rewinds: 2, repeats: 1, sndNxt: 6},
		{name: "twice within an rtt, trusting all", trust: TrustAll, steps: []step{nak(3), {send: 2}, nak(3)},
			rewinds: 2, sndNxt: 3},
		{name: "snd_max, trusting all", trust: TrustAll, steps: []step{nak(10)}, sndNxt: 10},
		{name: "far ahead, trusting all", trust: TrustAll, steps: []step{nak(1000)}, bad: 1, sndNxt: 10},
		{name: "acknowledged, trusting all", trust: TrustAll, steps: []step{{ack: true, psn: 4}, nak(3)}, bad: 1, sndNxt: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTrustSender(t, "none", tc.trust)
			for _, st := range tc.steps {
				s.now += st.wait
				if st.send > 0 {
					s.send(t, st.send)
					continue
				}
				s.deliver(t, s.ack(t, ipb, st.psn, !st.ack))
			}
			_, tx := s.e.Counters()
			r := s.e.Refused()
			got := []uint64{tx.NakRewinds, r.Nak, r.NakRepeat, tx.BadAcks, s.e.qps[s.e.active[0]].sndNxt}
			want := []uint64{tc.rewinds, tc.refused, tc.repeats, tc.bad, uint64(tc.sndNxt)}
			if !slices.Equal(got, want) || r.Total() != tc.refused+tc.repeats {
				t.Errorf("go-backs, NAKs refused, repeats refused, bad ACKs, snd_nxt %v, want %v (all refusals %+v)", got, want, r)
			}
		})
	}
}

// TestForgedPFCStopsSenderUntrusted is the failure the trust was built for,
// in virtual time: one forged pause (65535 quanta, 3.4 ms at 10 Gb/s) every
// 3 ms from a station that is not the switch stops a sender completely when
// the host trusts everyone, and changes nothing with trust "topology".
func TestForgedPFCStopsSenderUntrusted(t *testing.T) {
	for _, trust := range []string{TrustAll, TrustTopology} {
		t.Run(trust, func(t *testing.T) {
			a, b := oneFlow("none", 0, 0)
			a.Trust, a.GatewayMAC = trust, wire.MAC{2, 0, 0, 0, 0, 2} // back to back: the gateway is B
			v := newVnet(t, a, b)
			v.run(100_000)
			start := v.sent[0]
			forged := 0
			for at := int64(100_000); at < 9_100_000; at += 3_000_000 {
				v.run(at)
				v.inject(0, pfc(t, "02:00:00:00:00:09"))
				forged++
			}
			v.run(9_100_000)
			sent := v.sent[0] - start
			// 9 ms at 10 Gb/s is about 10,000 data frames of 1024 B.
			refused := v.eng[0].Refused().PFC
			t.Logf("trust %s: %d frames sent in 9 ms, %d forged pauses, %d refused", trust, sent, forged, refused)
			if trust == TrustAll {
				if sent > 50 || refused != 0 {
					t.Errorf("%d frames sent and %d pauses refused under forged pauses: want the sender stopped", sent, refused)
				}
				return
			}
			if sent < 9000 || refused != uint64(forged) {
				t.Errorf("%d frames sent, %d of %d forged pauses refused: want line rate, all refused", sent, refused, forged)
			}
		})
	}
}

func TestTrustConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(c *Spec)
		want string
	}{
		{"bad trust", func(c *Spec) { c.Trust = "some" }, `trust: "some"`},
		{"cps without trust", func(c *Spec) { c.TrustedCPs = []AddrRange{{0x0a0000fe, 0x0a0000fe}} }, "trusted_cps: given with trust \"all\""},
		{"reversed range", func(c *Spec) {
			c.Trust, c.TrustedCPs = TrustTopology, []AddrRange{{0x0a0000fe, 0x0a0000fe}, {0x0a000100, 0x0a000001}}
		}, "trusted_cps: entry 1: \"10.0.1.0-10.0.0.1\": the range ends before it starts"},
	} {
		c := testConfig("h1", ipA, "none")
		tc.mod(&c)
		if _, err := NewEngine(c, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestAddrRanges(t *testing.T) {
	// 10.254.1.0/24, 10.0.0.254, 10.254.0.254-10.254.1.3, 10.0.0.255, 192.168.0.1
	rs := addrRanges{{0x0afe0100, 0x0afe01ff}, {0x0a0000fe, 0x0a0000fe}, {0x0afe00fe, 0x0afe0103}, {0x0a0000ff, 0x0a0000ff},
		{0xc0a80001, 0xc0a80001}}.merged()
	if len(rs) != 3 {
		t.Fatalf("%d ranges after merging, want 3: %+v", len(rs), rs)
	}
	for _, tc := range []struct {
		a  string
		in bool
	}{
		{"10.0.0.253", false}, {"10.0.0.254", true}, {"10.0.0.255", true}, {"10.0.1.0", false},
		{"10.254.0.253", false}, {"10.254.0.254", true}, {"10.254.1.3", true}, {"10.254.1.255", true},
		{"10.254.2.0", false}, {"192.168.0.1", true}, {"192.168.0.2", false}, {"0.0.0.0", false}, {"255.255.255.255", false},
	} {
		a, _ := wire.ParseIPv4(tc.a)
		if got := rs.has(a); got != tc.in {
			t.Errorf("has(%s) = %v, want %v", tc.a, got, tc.in)
		}
	}
}

// TestTaggedPFCRefused: a VLAN-tagged pause, even from the gateway, is no
// pause under either trust (a MAC Control frame is never tagged, IEEE 802.3
// Clause 31): the sender keeps sending and counts the frame refused.
func TestTaggedPFCRefused(t *testing.T) {
	for _, trust := range []string{TrustAll, TrustTopology} {
		t.Run(trust, func(t *testing.T) {
			s := newTrustSender(t, "none", trust)
			f := pfc(t, gatewayMAC)
			// An 802.1Q tag (PCP 3, VID 0) after the source MAC.
			s.deliver(t, append(append(f[:12:12], 0x81, 0x00, 3<<5, 0), f[12:]...))
			if !s.e.CanSend(s.now + 1000) {
				t.Error("a tagged pause stopped the sender")
			}
			if r := s.e.Refused(); r.PFC != 1 || r.Total() != 1 {
				t.Errorf("refusals %+v: want one PFC", r)
			}
		})
	}
}
