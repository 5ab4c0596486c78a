package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

func TestDecodeBuiltFrames(t *testing.T) {
	for _, tc := range builtFrames(t) {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			if err := Decode(tc.frame, &f); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if f.Kind != tc.kind {
				t.Fatalf("kind = %v, want %v", f.Kind, tc.kind)
			}
			if len(tc.frame) < MinFrameLen {
				t.Errorf("frame of %d bytes is below the Ethernet minimum", len(tc.frame))
			}
			if f.IP != nil && !f.IP.VerifyChecksum() {
				t.Error("IPv4 checksum does not verify")
			}
			if f.BTH != nil && !VerifyICRC(f.IP) {
				t.Error("ICRC does not verify")
			}
		})
	}
}

func TestDecodeFields(t *testing.T) {
	frames := map[string][]byte{}
	for _, tc := range builtFrames(t) {
		frames[tc.name] = tc.frame
	}
	wantINT := testINT()
	tests := []struct {
		name  string
		check func(t *testing.T, f *Frame)
	}{
		{"data", func(t *testing.T, f *Frame) {
			if f.Eth.Dst() != macB || f.Eth.Src() != macA || f.Eth.HasVLAN() {
				t.Errorf("ethernet %v > %v vlan %v", f.Eth.Src(), f.Eth.Dst(), f.Eth.HasVLAN())
			}
			if f.IP.Src() != ipA || f.IP.Dst() != ipB || f.IP.DSCP() != 26 || f.IP.ECN() != ECNECT0 || f.IP.TTL() != DefaultTTL || f.IP.ID() != 7 {
				t.Errorf("ipv4 %x > %x dscp %d ecn %d ttl %d id %d", f.IP.Src(), f.IP.Dst(), f.IP.DSCP(), f.IP.ECN(), f.IP.TTL(), f.IP.ID())
			}
			if f.UDP.SrcPort() != 0xc001 || f.UDP.DstPort() != RoCEv2Port || f.UDP.Checksum() != 0 {
				t.Errorf("udp %d > %d cksum %x", f.UDP.SrcPort(), f.UDP.DstPort(), f.UDP.Checksum())
			}
			b := f.BTH
			if b.Opcode() != OpSendFirst || b.DestQP() != 0xabc || b.PSN() != 0x123456 || !b.AckReq() || b.PKey() != DefaultPKey || b.Flags() != 0 || b.BECN() {
				t.Errorf("bth op %#x qp %#x psn %#x ackreq %v pkey %#x flags %#x", b.Opcode(), b.DestQP(), b.PSN(), b.AckReq(), b.PKey(), b.Flags())
			}
			if f.INT != nil {
				t.Error("INT present without FlagINT")
			}
			if f.Data.SendTS() != 1_000_000_007 || len(f.Payload) != 1024 {
				t.Errorf("send ts %d, payload %d bytes", f.Data.SendTS(), len(f.Payload))
			}
		}},
		{"data+INT", func(t *testing.T, f *Frame) {
			if f.BTH.Flags() != FlagINT || f.BTH.PSN() != 0xffffff || f.BTH.Opcode() != OpWriteOnly {
				t.Errorf("flags %#x psn %#x op %#x", f.BTH.Flags(), f.BTH.PSN(), f.BTH.Opcode())
			}
			var s ccalgo.INTStack
			f.INT.Stack(&s)
			if s != wantINT {
				t.Errorf("INT = %+v, want %+v", s, wantINT)
			}
			if f.INT.PathID() != 0x123^0x456 {
				t.Errorf("pathID %#x", f.INT.PathID())
			}
			if f.Data.SendTS() != 42 || len(f.Payload) != 64 {
				t.Errorf("send ts %d, payload %d", f.Data.SendTS(), len(f.Payload))
			}
		}},
		{"data VLAN", func(t *testing.T, f *Frame) {
			if !f.Eth.HasVLAN() || f.Eth.PCP() != 3 || f.Eth.VLANID() != 100 || f.Eth.EtherType() != EtherTypeIPv4 {
				t.Errorf("vlan %v pcp %d vid %d type %#x", f.Eth.HasVLAN(), f.Eth.PCP(), f.Eth.VLANID(), f.Eth.EtherType())
			}
			if f.BTH.Opcode() != OpSendOnly || f.Data.SendTS() != 3 {
				t.Errorf("op %#x ts %d", f.BTH.Opcode(), f.Data.SendTS())
			}
		}},
		{"ack", func(t *testing.T, f *Frame) {
			if f.IP.Src() != ipB || f.IP.ECN() != ECNNotECT || f.IP.DSCP() != 46 {
				t.Errorf("ip src %x ecn %d dscp %d", f.IP.Src(), f.IP.ECN(), f.IP.DSCP())
			}
			if !f.AETH.IsACK() || f.AETH.Code() != CreditsUnlimited || f.AETH.MSN() != 9 || f.BTH.PSN() != 0x123456 {
				t.Errorf("aeth %#x msn %d psn %#x", f.AETH.Syndrome(), f.AETH.MSN(), f.BTH.PSN())
			}
			var got ccalgo.AckFields
			f.Ext.Fields(&got)
			want := testAckFields()
			want.INT = ccalgo.INTStack{}
			if got != want {
				t.Errorf("ack fields %+v, want %+v", got, want)
			}
			if f.INT != nil {
				t.Error("INT echo without FlagINT")
			}
		}},
		{"ack+INT", func(t *testing.T, f *Frame) {
			if f.BTH.Flags() != FlagAckExt|FlagINT {
				t.Errorf("flags %#x", f.BTH.Flags())
			}
			var got ccalgo.AckFields
			f.Ext.Fields(&got)
			f.INT.Stack(&got.INT)
			if want := testAckFields(); got != want {
				t.Errorf("ack fields %+v, want %+v", got, want)
			}
			if f.INT.PathID() != 0x123^0x456 {
				t.Errorf("pathID %#x", f.INT.PathID())
			}
		}},
		{"nak", func(t *testing.T, f *Frame) {
			if !f.AETH.IsNAK() || f.AETH.Code() != NAKPSNSeqError || f.BTH.PSN() != 77 || f.AETH.MSN() != 8 {
				t.Errorf("aeth %#x psn %d msn %d", f.AETH.Syndrome(), f.BTH.PSN(), f.AETH.MSN())
			}
		}},
		{"cnp", func(t *testing.T, f *Frame) {
			if f.BTH.Opcode() != OpCNP || !f.BTH.BECN() || f.BTH.FECN() || f.BTH.DestQP() != 0xabc || f.BTH.PSN() != 0 {
				t.Errorf("bth op %#x becn %v qp %#x", f.BTH.Opcode(), f.BTH.BECN(), f.BTH.DestQP())
			}
			if f.UDP.Length() != UDPLen+BTHLen+CNPPadLen+ICRCLen {
				t.Errorf("udp length %d", f.UDP.Length())
			}
		}},
		{"rocc rate", func(t *testing.T, f *Frame) {
			if f.IP.Protocol() != IPProtoICMP || f.IP.Src() != ipSw || f.IP.Dst() != ipA {
				t.Errorf("ip proto %d %x > %x", f.IP.Protocol(), f.IP.Src(), f.IP.Dst())
			}
			var fb ccalgo.Feedback
			f.Rate.Feedback(&fb)
			want := ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: testFlow, CPID: ipSw, RateUnits: 333, DeltaFBps: 10e6, RateBps: 3.33e9}
			if fb != want {
				t.Errorf("feedback %+v, want %+v", fb, want)
			}
		}},
		{"p4qcn", func(t *testing.T, f *Frame) {
			if f.IP.ECN() != ECNCE || f.BTH.Opcode() != OpP4QCNFeedback || f.BTH.DestQP() != testFlow.DestQP {
				t.Errorf("ecn %d op %#x qp %#x", f.IP.ECN(), f.BTH.Opcode(), f.BTH.DestQP())
			}
			var fb ccalgo.Feedback
			f.Feedback.Feedback(&fb, ccalgo.FeedbackP4QCN, f.BTH.DestQP())
			want := ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN, Flow: testFlow, CPID: ipSw, QOff: 50_000, QDelta: -3_000}
			if fb != want {
				t.Errorf("feedback %+v, want %+v", fb, want)
			}
		}},
		{"qcn", func(t *testing.T, f *Frame) {
			var fb ccalgo.Feedback
			f.Feedback.Feedback(&fb, ccalgo.FeedbackQCN, f.BTH.DestQP())
			want := ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Flow: testFlow, CPID: ipSw, Fb: 63, QOff: 26_000, QDelta: 1_500}
			if fb != want {
				t.Errorf("feedback %+v, want %+v", fb, want)
			}
		}},
		{"pfc", func(t *testing.T, f *Frame) {
			if f.Eth.Dst() != PFCDst || f.Eth.EtherType() != EtherTypeMACCtl {
				t.Errorf("dst %v type %#x", f.Eth.Dst(), f.Eth.EtherType())
			}
			for p := 0; p < PFCPriorities; p++ {
				wantEn := p == 3 || p == 5
				wantQ := uint16(0)
				if p == 3 {
					wantQ = PFCMaxQuanta
				}
				if f.PFC.Enabled(p) != wantEn || f.PFC.PauseQuanta(p) != wantQ {
					t.Errorf("priority %d: enabled %v quanta %d", p, f.PFC.Enabled(p), f.PFC.PauseQuanta(p))
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr, ok := frames[tc.name]
			if !ok {
				t.Fatalf("no built frame %q", tc.name)
			}
			var f Frame
			if err := Decode(fr, &f); err != nil {
				t.Fatal(err)
			}
			tc.check(t, &f)
		})
	}
}

// TestBuildCNPMatchesConnectX builds the CNP that a ConnectX-4 Lx sent (cx4CNP)
// from its decoded fields and expects the same bytes, ICRC included.
func TestBuildCNPMatchesConnectX(t *testing.T) {
	want := mustHex(t, cx4CNP)
	ep := Endpoints{
		DstMAC: MAC{0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2}, SrcMAC: MAC{0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32},
		SrcIP: 0x0a001101, DstIP: 0x0a001201, SrcPort: 0, DSCP: 48, TTL: 64, IPID: 0x718c, ICRC: true,
	}
	b := make([]byte, 128)
	n, err := BuildCNP(b, &ep, 0x118)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:n], want) {
		t.Fatalf("BuildCNP\n got %x\nwant %x", b[:n], want)
	}
}

// TestBuildDataLiteral checks BuildData against a packet written out by hand from
// the formats (IPv4 checksum computed separately with Python's RFC 1071 sum).
func TestBuildDataLiteral(t *testing.T) {
	// Ethernet 02:00:00:00:00:01 > 02:00:00:00:00:02, IPv4
	// IPv4 10.0.0.1 > 10.0.0.2, DSCP 26, ECN 10, len 60, id 7, DF, TTL 64, UDP, cksum 0x263e
	// UDP 49153 > 4791, len 40, cksum 0
	// BTH SEND Only, P_Key 0xffff, DestQP 0xabc, AckReq, PSN 0x123456
	// DataHeader send ts 0x0102030405060708, 8 payload bytes 0xaa, ICRC 0 (off)
	want := mustHex(t, `020000000002 020000000001 0800
		456a003c 00074000 4011263e 0a000001 0a000002
		c00112b7 00280000
		0400ffff 00000abc 80123456
		0102030405060708 aaaaaaaaaaaaaaaa
		00000000`)
	ep := epAB()
	ep.ICRC = false
	b := bytes.Repeat([]byte{0xaa}, 128)
	n, err := BuildData(b, &ep, &DataSpec{Opcode: OpSendOnly, DestQP: 0xabc, PSN: 0x123456, AckReq: true, SendTS: 0x0102030405060708, PayloadLen: 16})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:n], want) {
		t.Fatalf("BuildData\n got %x\nwant %x", b[:n], want)
	}
}

func TestBuildErrors(t *testing.T) {
	ep := epAB()
	short := make([]byte, 40)
	big := make([]byte, 2048)
	f := testAckFields()
	tests := []struct {
		name string
		run  func() (int, error)
		want error
	}{
		{"data short buffer", func() (int, error) {
			return BuildData(short, &ep, &DataSpec{Opcode: OpSendOnly, PayloadLen: 8})
		}, ErrShortBuffer},
		{"data payload below header", func() (int, error) {
			return BuildData(big, &ep, &DataSpec{Opcode: OpSendOnly, PayloadLen: 7})
		}, ErrPayloadLen},
		{"data payload too big", func() (int, error) {
			return BuildData(big, &ep, &DataSpec{Opcode: OpSendOnly, PayloadLen: 70000})
		}, ErrPayloadLen},
		{"ack short buffer", func() (int, error) {
			return BuildAck(short, &ep, &AckSpec{}, &f)
		}, ErrShortBuffer},
		{"cnp short buffer", func() (int, error) { return BuildCNP(short, &ep, 1) }, ErrShortBuffer},
		{"feedback unknown kind", func() (int, error) {
			return BuildFeedback(big, &ep, &ccalgo.Feedback{Kind: 99})
		}, ErrUnknownFeedback},
		{"feedback short buffer", func() (int, error) {
			return BuildFeedback(short, &ep, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN})
		}, ErrShortBuffer},
		{"pfc short buffer", func() (int, error) {
			return BuildPFC(short, macA, 1, &[PFCPriorities]uint16{})
		}, ErrShortBuffer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.run()
			if !errors.Is(err, tc.want) || n != 0 {
				t.Fatalf("got (%d, %v), want (0, %v)", n, err, tc.want)
			}
		})
	}
}

// TestDecodeMalformed corrupts built frames and expects the matching error.
func TestDecodeMalformed(t *testing.T) {
	frames := map[string][]byte{}
	for _, tc := range builtFrames(t) {
		frames[tc.name] = tc.frame
	}
	clone := func(name string) []byte { return append([]byte(nil), frames[name]...) }
	const ip = EthernetLen
	const udp = ip + IPv4MinLen
	const bth = udp + UDPLen
	tests := []struct {
		name  string
		frame func() []byte
		want  error
	}{
		{"empty", func() []byte { return nil }, ErrTruncated},
		{"short ethernet", func() []byte { return clone("data")[:13] }, ErrTruncated},
		{"vlan tag cut", func() []byte { return clone("data VLAN")[:16] }, ErrTruncated},
		{"short ipv4", func() []byte { return clone("data")[:ip+19] }, ErrTruncated},
		{"ipv4 version 6", func() []byte { b := clone("data"); b[ip] = 0x65; return b }, ErrBadIPv4},
		{"ipv4 IHL 4", func() []byte { b := clone("data"); b[ip] = 0x44; return b }, ErrBadIPv4},
		{"ipv4 total length beyond frame", func() []byte { return clone("data")[:200] }, ErrBadIPv4},
		{"ipv4 checksum", func() []byte { b := clone("data"); b[ip+10] ^= 1; return b }, ErrIPv4Checksum},
		{"ipv4 fragment", func() []byte {
			b := clone("data")
			b[ip+6] |= 0x20
			IPv4(b[ip:]).SetChecksum(IPv4(b[ip:]).ComputeChecksum())
			return b
		}, ErrFragment},
		{"udp length", func() []byte { b := clone("cnp"); b[udp+5]--; return b }, ErrBadUDP},
		{"data without data header", func() []byte { return shrinkRoCE(clone("data"), 1024-7) }, ErrBadBTH},
		{"data INT flag without room", func() []byte { return shrinkRoCE(clone("data+INT"), 64+INTLen-10) }, ErrBadBTH},
		{"data INT 6 hops", func() []byte {
			b := clone("data+INT")
			b[bth+BTHLen] = 6 << 4
			return b
		}, ErrBadINT},
		{"ack without AETH", func() []byte { return shrinkRoCE(clone("ack"), AETHLen+AckExtLen-2) }, ErrBadBTH},
		{"ack extension cut", func() []byte { return shrinkRoCE(clone("ack"), 4) }, ErrBadBTH},
		{"ack INT echo cut", func() []byte { return shrinkRoCE(clone("ack+INT"), 4) }, ErrBadBTH},
		{"cnp padding cut", func() []byte { return shrinkRoCE(clone("cnp"), 4) }, ErrBadBTH},
		{"feedback cut", func() []byte { return shrinkRoCE(clone("p4qcn"), 4) }, ErrBadBTH},
		{"bth cut", func() []byte { return shrinkRoCE(clone("cnp"), CNPPadLen+4) }, ErrBadBTH},
		{"rocc rate checksum", func() []byte { b := clone("rocc rate"); b[ip+IPv4MinLen+9] ^= 0x10; return b }, ErrICMPChecksum},
		{"rocc rate code 1", func() []byte { b := clone("rocc rate"); b[ip+IPv4MinLen+1] = 1; return b }, ErrBadRoCCRate},
		{"rocc rate version 2", func() []byte { b := clone("rocc rate"); b[ip+IPv4MinLen+4] = 2; return b }, ErrBadRoCCRate},
		{"pfc cut", func() []byte { return clone("pfc")[:EthernetLen+10] }, ErrBadPFC},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			err := Decode(tc.frame(), &f)
			if err != tc.want {
				t.Fatalf("Decode error = %v, want %v", err, tc.want)
			}
			if f.Kind != KindOther {
				t.Errorf("kind %v on error", f.Kind)
			}
		})
	}
}

// shrinkRoCE removes cut bytes before the ICRC of a RoCEv2 frame (untagged) and
// fixes the IPv4 and UDP lengths and the IPv4 checksum, so that only the RoCE
// part is malformed.
func shrinkRoCE(b []byte, cut int) []byte {
	n := len(b) - cut
	copy(b[n-ICRCLen:], b[len(b)-ICRCLen:])
	b = b[:n]
	ip := IPv4(b[EthernetLen:])
	ip.SetTotalLength(n - EthernetLen)
	ip.SetChecksum(ip.ComputeChecksum())
	UDP(b[EthernetLen+IPv4MinLen:]).SetLength(n - EthernetLen - IPv4MinLen)
	return b
}

// TestDecodeOther checks frames that are well formed but not ccbed's.
func TestDecodeOther(t *testing.T) {
	frames := map[string][]byte{}
	for _, tc := range builtFrames(t) {
		frames[tc.name] = tc.frame
	}
	clone := func(name string) []byte { return append([]byte(nil), frames[name]...) }
	tests := []struct {
		name  string
		frame func() []byte
	}{
		{"arp", func() []byte { b := clone("data"); b[12], b[13] = 0x08, 0x06; return b }},
		{"802.3x pause", func() []byte { b := clone("pfc"); b[EthernetLen] = 0x00; return b }},
		{"udp other port", func() []byte { b := clone("cnp"); UDP(b[EthernetLen+IPv4MinLen:]).SetDstPort(53); return b }},
		{"rdma read request", func() []byte { b := clone("cnp"); b[EthernetLen+IPv4MinLen+UDPLen] = 0x0c; return b }},
		{"icmp echo", func() []byte {
			b := clone("rocc rate")
			b[EthernetLen+IPv4MinLen] = 8
			return b
		}},
		{"tcp", func() []byte {
			b := clone("data")
			ip := IPv4(b[EthernetLen:])
			ip.SetProtocol(6)
			ip.SetChecksum(ip.ComputeChecksum())
			return b
		}},
		{"ack reserved syndrome", func() []byte { b := clone("ack"); b[EthernetLen+IPv4MinLen+UDPLen+BTHLen] = 0x40; return b }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			if err := Decode(tc.frame(), &f); err != nil || f.Kind != KindOther {
				t.Fatalf("Decode = %v, kind %v; want nil, other", err, f.Kind)
			}
		})
	}
}
