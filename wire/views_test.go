package wire

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

func TestChecksumsAgainstScapy(t *testing.T) {
	p := mustHex(t, scapyUC)[EthernetLen:]
	ip := IPv4(p)
	if !ip.IsValid() {
		t.Fatal("invalid")
	}
	if got := ip.ComputeChecksum(); got != 0xb4d5 {
		t.Errorf("IPv4 checksum %#04x, want 0xb4d5", got)
	}
	u := UDP(ip.Payload())
	if !u.IsValid() {
		t.Fatal("udp invalid")
	}
	// scapy's UDP checksum covers the ICRC trailer too.
	if got := u.ComputeChecksum(ip.Src(), ip.Dst()); got != 0xaca2 {
		t.Errorf("UDP checksum %#04x, want 0xaca2", got)
	}
	if !u.VerifyChecksum(ip.Src(), ip.Dst()) {
		t.Error("VerifyChecksum = false")
	}
	b := BTH(u.Payload())
	if b.Opcode() != 0x24 || !b.MigReq() || b.PadCount() != 2 || b.DestQP() != 211 || b.PSN() != 13571856 || b.TVer() != 0 || b.SE() {
		t.Errorf("BTH op %#x migreq %v pad %d qp %d psn %d", b.Opcode(), b.MigReq(), b.PadCount(), b.DestQP(), b.PSN())
	}
	u.SetChecksum(0)
	if !u.VerifyChecksum(ip.Src(), ip.Dst()) {
		t.Error("checksum 0 (none) does not verify")
	}
}

// TestIncrementalChecksum checks RFC 1624 updates (DecTTL, SetECN) against a full
// recomputation on many random headers.
func TestIncrementalChecksum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ops := []struct {
		name string
		op   func(IPv4) bool
	}{
		{"DecTTL", func(ip IPv4) bool { return ip.DecTTL() }},
		{"SetECN CE", func(ip IPv4) bool { ip.SetECN(ECNCE); return true }},
		{"SetECN UE", func(ip IPv4) bool { ip.SetECN(ECNECT1); return true }},
		{"SetECN not-ECT", func(ip IPv4) bool { ip.SetECN(ECNNotECT); return true }},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, IPv4MinLen)
			for i := 0; i < 20000; i++ {
				tos := uint8(rng.UintN(256))
				ttl := uint8(rng.UintN(256))
				encodeIPv4(b, tos, uint16(rng.UintN(65536)), ttl, uint8(rng.UintN(256)), rng.Uint32(), rng.Uint32(), int(rng.UintN(1400)))
				ip := IPv4(b)
				if !tc.op(ip) {
					if ttl > 1 || ip.TTL() != ttl {
						t.Fatalf("DecTTL refused TTL %d", ttl)
					}
					continue
				}
				if !ip.VerifyChecksum() {
					t.Fatalf("header %x: checksum %#04x does not verify (full: %#04x)", b, ip.Checksum(), ip.ComputeChecksum())
				}
			}
		})
	}
}

func TestDecTTL(t *testing.T) {
	tests := []struct {
		ttl     uint8
		ok      bool
		wantTTL uint8
	}{{64, true, 63}, {2, true, 1}, {1, false, 1}, {0, false, 0}, {255, true, 254}}
	for _, tc := range tests {
		b := make([]byte, IPv4MinLen)
		encodeIPv4(b, 0, 0, tc.ttl, IPProtoUDP, ipA, ipB, 0)
		ip := IPv4(b)
		if ok := ip.DecTTL(); ok != tc.ok || ip.TTL() != tc.wantTTL || !ip.VerifyChecksum() {
			t.Errorf("TTL %d: DecTTL = %v, TTL %d, checksum ok %v", tc.ttl, ok, ip.TTL(), ip.VerifyChecksum())
		}
	}
}

func TestIPv4IsValid(t *testing.T) {
	good := make([]byte, 40)
	encodeIPv4(good, 0, 0, 64, IPProtoUDP, ipA, ipB, 20)
	tests := []struct {
		name string
		mut  func([]byte) []byte
		want bool
	}{
		{"good", func(b []byte) []byte { return b }, true},
		{"short", func(b []byte) []byte { return b[:19] }, false},
		{"version 6", func(b []byte) []byte { b[0] = 0x65; return b }, false},
		{"IHL 4", func(b []byte) []byte { b[0] = 0x44; return b }, false},
		{"IHL 6 with room", func(b []byte) []byte { b[0] = 0x46; return b }, true},
		{"total below IHL", func(b []byte) []byte { binary.BigEndian.PutUint16(b[2:], 16); return b }, false},
		{"total beyond slice", func(b []byte) []byte { return b[:39] }, false},
	}
	for _, tc := range tests {
		b := append([]byte(nil), good...)
		if got := IPv4(tc.mut(b)).IsValid(); got != tc.want {
			t.Errorf("%s: IsValid = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMarkECN(t *testing.T) {
	tests := []struct {
		ecn  uint8
		mark ccalgo.Mark
	}{{ECNNotECT, ccalgo.MarkNone}, {ECNECT0, ccalgo.MarkNone}, {ECNECT1, ccalgo.MarkUE}, {ECNCE, ccalgo.MarkCE}}
	for _, tc := range tests {
		if got := MarkFromECN(tc.ecn); got != tc.mark {
			t.Errorf("MarkFromECN(%d) = %v, want %v", tc.ecn, got, tc.mark)
		}
		if tc.ecn != ECNNotECT {
			if got := ECNForMark(tc.mark); got != tc.ecn && !(tc.mark == ccalgo.MarkNone && got == ECNECT0) {
				t.Errorf("ECNForMark(%v) = %d", tc.mark, got)
			}
		}
	}
	for _, m := range []ccalgo.Mark{ccalgo.MarkNone, ccalgo.MarkUE, ccalgo.MarkCE} {
		if MarkFromECN(ECNForMark(m)) != m {
			t.Errorf("mark %v does not survive ECN", m)
		}
	}
}

func TestBTHSetters(t *testing.T) {
	b := BTH(make([]byte, BTHLen))
	b.SetOpcode(OpWriteMiddle)
	b.SetSE(true)
	b.SetMigReq(true)
	b.SetPadCount(3)
	b.SetTVer(0xf)
	b.SetPKey(0x8001)
	b.SetFECN(true)
	b.SetBECN(true)
	b.SetDestQP(0x1abcdef) // 24 bits kept
	b.SetAckReq(true)
	b.SetFlags(FlagINT | FlagAckExt)
	b.SetPSN(0xfedcba98)
	// opcode 07 | SE MigReq pad 3 TVer f | P_Key 8001 | FECN BECN | QP abcdef |
	// AckReq + flags 0x60 | PSN dcba98
	want := mustHex(t, "07 ff 8001 c0 abcdef e0 dcba98")
	if string(b) != string(want) {
		t.Fatalf("BTH %x, want %x", []byte(b), want)
	}
	if b.Opcode() != OpWriteMiddle || !b.SE() || !b.MigReq() || b.PadCount() != 3 || b.TVer() != 0xf ||
		b.PKey() != 0x8001 || !b.FECN() || !b.BECN() || b.DestQP() != 0xabcdef || !b.AckReq() ||
		b.Flags() != FlagINT|FlagAckExt || b.PSN() != 0xdcba98 {
		t.Error("getters disagree with setters")
	}
	b.SetSE(false)
	b.SetMigReq(false)
	b.SetFECN(false)
	b.SetBECN(false)
	b.SetAckReq(false)
	b.SetFlags(0)
	if b.SE() || b.MigReq() || b.FECN() || b.BECN() || b.AckReq() || b.Flags() != 0 || b.PadCount() != 3 || b.TVer() != 0xf {
		t.Error("clearing bits changed others")
	}
}

func TestOpcodeClasses(t *testing.T) {
	tests := []struct {
		op                uint8
		data, first, last bool
	}{
		{OpSendFirst, true, true, false}, {OpSendMiddle, true, false, false}, {OpSendLast, true, false, true},
		{0x03, false, false, false}, {OpSendOnly, true, true, true}, {0x05, false, false, false},
		{OpWriteFirst, true, true, false}, {OpWriteMiddle, true, false, false}, {OpWriteLast, true, false, true},
		{0x09, false, false, false}, {OpWriteOnly, true, true, true}, {OpAcknowledge, false, false, false},
		{OpCNP, false, false, false}, {OpP4QCNFeedback, false, false, false}, {0x24, false, false, false},
	}
	for _, tc := range tests {
		if IsDataOpcode(tc.op) != tc.data || IsFirstOpcode(tc.op) != tc.first || IsLastOpcode(tc.op) != tc.last {
			t.Errorf("opcode %#x: data %v first %v last %v", tc.op, IsDataOpcode(tc.op), IsFirstOpcode(tc.op), IsLastOpcode(tc.op))
		}
	}
}

func TestAETH(t *testing.T) {
	tests := []struct {
		syn      uint8
		ack, nak bool
		code     uint8
	}{
		{SyndromeAckNoCred, true, false, 0x1f}, {SyndromeACK | 5, true, false, 5},
		{SyndromeNAKSeq, false, true, 0}, {SyndromeNAK | 3, false, true, 3},
		{SyndromeRNRNAK | 7, false, false, 7},
	}
	for _, tc := range tests {
		a := AETH(make([]byte, AETHLen))
		a.SetSyndrome(tc.syn)
		a.SetMSN(0x1234567)
		if a.IsACK() != tc.ack || a.IsNAK() != tc.nak || a.Code() != tc.code || a.MSN() != 0x234567 {
			t.Errorf("syndrome %#x: ack %v nak %v code %d msn %#x", tc.syn, a.IsACK(), a.IsNAK(), a.Code(), a.MSN())
		}
	}
}

func TestINTPushAndUnits(t *testing.T) {
	tests := []struct {
		name string
		in   ccalgo.INTHop
		want ccalgo.INTHop
	}{
		{"exact", ccalgo.INTHop{LinkBps: 25e9, TS: 77, TxBytes: 1280, QLen: 800}, ccalgo.INTHop{LinkBps: 25e9, TS: 77, TxBytes: 1280, QLen: 800}},
		{"round down to units", ccalgo.INTHop{LinkBps: 40e9, TS: 1, TxBytes: 1279, QLen: 159}, ccalgo.INTHop{LinkBps: 40e9, TS: 1, TxBytes: 1152, QLen: 80}},
		{"TS wraps at 2^24", ccalgo.INTHop{LinkBps: 100e9, TS: 1<<24 + 5}, ccalgo.INTHop{LinkBps: 100e9, TS: 5}},
		{"txBytes wraps", ccalgo.INTHop{LinkBps: 100e9, TxBytes: ccalgo.INTTxBytesWrap + 256}, ccalgo.INTHop{LinkBps: 100e9, TxBytes: 256}},
		{"qLen saturates", ccalgo.INTHop{LinkBps: 100e9, QLen: 10 << 20}, ccalgo.INTHop{LinkBps: 100e9, QLen: ccalgo.INTQLenMax}},
		{"odd rate to nearest code", ccalgo.INTHop{LinkBps: 9e9}, ccalgo.INTHop{LinkBps: 10e9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := INT(make([]byte, INTLen))
			if !s.IsValid() || !s.Push(&tc.in, 0xabc) {
				t.Fatal("push failed")
			}
			if s.NHops() != 1 || s.PathID() != 0xabc {
				t.Errorf("nHop %d pathID %#x", s.NHops(), s.PathID())
			}
			if got := s.Hop(0); got != tc.want {
				t.Errorf("hop %+v, want %+v", got, tc.want)
			}
			// PushCode with the rate's code writes the same bytes, the
			// rate itself unread.
			code, _ := LinkSpeedCode(tc.in.LinkBps)
			c := INT(make([]byte, INTLen))
			in := tc.in
			in.LinkBps = 0
			if !c.PushCode(code, &in, 0xabc) || !bytes.Equal(c, s) {
				t.Errorf("PushCode wrote %x, Push %x", []byte(c), []byte(s))
			}
		})
	}
}

func TestINTFullAndPathID(t *testing.T) {
	s := INT(make([]byte, INTLen))
	h := ccalgo.INTHop{LinkBps: 10e9}
	var id uint16
	for i := 0; i < ccalgo.MaxINTHops; i++ {
		sw := uint16(0x111 * (i + 1))
		if !s.Push(&h, sw) {
			t.Fatalf("push %d failed", i)
		}
		id ^= sw & 0xfff
	}
	if s.Push(&h, 1) {
		t.Error("push on a full stack succeeded")
	}
	if s.NHops() != ccalgo.MaxINTHops || s.PathID() != id {
		t.Errorf("nHop %d pathID %#x, want %d %#x", s.NHops(), s.PathID(), ccalgo.MaxINTHops, id)
	}
	s.Reset()
	if s.NHops() != 0 || s.PathID() != 0 {
		t.Error("Reset")
	}
	var st ccalgo.INTStack
	st.NHops = 9 // clamped
	s.SetStack(&st, 0x7)
	if s.NHops() != ccalgo.MaxINTHops {
		t.Errorf("SetStack with 9 hops wrote %d", s.NHops())
	}
}

func TestLinkSpeedCode(t *testing.T) {
	tests := []struct {
		bps  float64
		code uint8
		ok   bool
	}{
		{1e9, 1, true}, {10e9, 4, true}, {25e9, 6, true}, {100e9, 10, true}, {400e9, 12, true},
		{12e9, 4, false}, {90e9, 10, false}, {0, 0, false}, {-1, 0, false},
	}
	for _, tc := range tests {
		c, ok := LinkSpeedCode(tc.bps)
		if c != tc.code || ok != tc.ok {
			t.Errorf("LinkSpeedCode(%g) = %d %v, want %d %v", tc.bps, c, ok, tc.code, tc.ok)
		}
		if ok && LinkSpeedBps(c) != tc.bps {
			t.Errorf("LinkSpeedBps(%d) = %g", c, LinkSpeedBps(c))
		}
	}
}

func TestEthernetVLAN(t *testing.T) {
	b := make([]byte, 64)
	n := encodeEthernet(b, macB, macA, true, 5, 0xabc, EtherTypeIPv4)
	e := Ethernet(b)
	if n != 18 || !e.IsValid() || e.HeaderLen() != 18 || e.PCP() != 5 || e.VLANID() != 0xabc || e.EtherType() != EtherTypeIPv4 {
		t.Fatalf("tagged: n %d pcp %d vid %#x type %#x", n, e.PCP(), e.VLANID(), e.EtherType())
	}
	e.SetPCP(2)
	if e.PCP() != 2 || e.VLANID() != 0xabc {
		t.Errorf("SetPCP: pcp %d vid %#x", e.PCP(), e.VLANID())
	}
	if Ethernet(b[:17]).IsValid() {
		t.Error("cut tag is valid")
	}
	n = encodeEthernet(b, macB, macA, false, 5, 1, EtherTypeMACCtl)
	e.SetPCP(7) // no tag: no effect
	if n != 14 || e.HasVLAN() || e.PCP() != 0 || e.VLANID() != 0 || e.EtherType() != EtherTypeMACCtl || len(e.Payload()) != 50 {
		t.Errorf("untagged: n %d vlan %v type %#x", n, e.HasVLAN(), e.EtherType())
	}
	e.SetDst(macSw)
	e.SetSrc(macB)
	if e.Dst() != macSw || e.Src() != macB {
		t.Error("MAC setters")
	}
}

func TestPFCQuanta(t *testing.T) {
	tests := []struct {
		q    uint16
		bps  float64
		want int64
	}{{PFCMaxQuanta, 10e9, 3_355_392}, {1, 100e9, 5}, {0, 10e9, 0}, {100, 40e9, 1280}}
	for _, tc := range tests {
		if got := QuantaNs(tc.q, tc.bps); got != tc.want {
			t.Errorf("QuantaNs(%d, %g) = %d, want %d", tc.q, tc.bps, got, tc.want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k := KindOther; k <= KindPFC; k++ {
		if k.String() == "kind?" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(200).String() != "kind?" {
		t.Error("unknown kind")
	}
}

// TestDecTTLMatchesUpdate holds DecTTL's specialised checksum update to the
// general RFC 1624 update (updateChecksum16) bit for bit: every header
// checksum, for TTLs and protocols at the edges and in between.
func TestDecTTLMatchesUpdate(t *testing.T) {
	ip := make(IPv4, IPv4MinLen)
	for _, ttl := range []uint8{2, 3, 64, 128, 255} {
		for _, proto := range []uint8{0, 1, 17, 255} {
			old := uint16(ttl)<<8 | uint16(proto)
			for hc := 0; hc <= 0xffff; hc++ {
				ip[8], ip[9] = ttl, proto
				binary.BigEndian.PutUint16(ip[10:], uint16(hc))
				if !ip.DecTTL() {
					t.Fatalf("DecTTL refused TTL %d", ttl)
				}
				want := updateChecksum16(uint16(hc), old, old-0x100)
				if got := ip.Checksum(); got != want || ip.TTL() != ttl-1 {
					t.Fatalf("TTL %d proto %d checksum %#04x: got %#04x TTL %d, want %#04x TTL %d", ttl, proto, hc, got, ip.TTL(), want, ttl-1)
				}
			}
		}
	}
}
