package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// ackTemplateCase is one ACK or NAK built both ways: ep, a and f for
// BuildAck, the same for an AckTemplate.
type ackTemplateCase struct {
	name string
	ep   Endpoints
	a    AckSpec
	f    ccalgo.AckFields
}

func ackTemplateCases() []ackTemplateCase {
	ep, plain, vlan, odd := templateEndpoints()
	var stack ccalgo.INTStack
	for i := range 3 {
		stack.Push(ccalgo.INTHop{LinkBps: 100e9, TS: uint32(1000 * i), TxBytes: uint32(7 * i), QLen: uint32(1500 * i)})
	}
	fields := ccalgo.AckFields{EchoTS: 1_000_000_007, Mark: ccalgo.MarkCE, Window: 1 << 40, ActiveFlows: 3, RecvBytes: 0xfffffff0}
	withINT := fields
	withINT.INT = stack
	return []ackTemplateCase{
		{"ACK", ep, AckSpec{DestQP: 0xabc, PSN: 0x123456, Syndrome: SyndromeAckNoCred, MSN: 9}, fields},
		{"NAK/no ICRC", plain, AckSpec{DestQP: 0xabc, PSN: 7, Syndrome: SyndromeNAKSeq, MSN: 0xffffff}, ccalgo.AckFields{}},
		{"INT echo", plain, AckSpec{DestQP: 0xffffff, PSN: 0xffffff, Syndrome: SyndromeAckNoCred, EchoINT: true, PathID: 0xbeef}, withINT},
		{"INT echo+ICRC", ep, AckSpec{DestQP: 1, Syndrome: SyndromeAckNoCred, EchoINT: true}, withINT},
		{"VLAN", vlan, AckSpec{DestQP: 0x10203, PSN: 0x800000, MSN: 1}, fields},
		{"ones", odd, AckSpec{DestQP: 0x1ffffff, PSN: 0xffffffff, Syndrome: 0xff, MSN: 0xffffffff, EchoINT: true, PathID: 0xffff}, withINT},
	}
}

// buildAckBoth builds c with BuildAck and with a template into buffers
// filled alike beforehand.
func buildAckBoth(c *ackTemplateCase) alike {
	var t AckTemplate
	t.Init(&c.ep, c.a.DestQP, c.a.EchoINT)
	return buildAlike(AckFrameLen(&c.ep, &c.a)+16, 5, 1, "BuildAck",
		func(b []byte) (int, error) { return BuildAck(b, &c.ep, &c.a, &c.f) },
		func(b []byte) (int, error) { return t.Build(b, &c.a, &c.f) })
}

func TestAckTemplateEqualsBuildAck(t *testing.T) {
	for _, c := range ackTemplateCases() {
		t.Run(c.name, func(t *testing.T) {
			a := buildAckBoth(&c)
			checkTemplateFrame(t, a.frame(t), &c.ep, KindAck, KindNak)
		})
	}
}

func TestAckTemplateMatches(t *testing.T) {
	ep := epAB()
	var tm AckTemplate
	buf := make([]byte, 256)
	if tm.Matches(&ep, 1, false) {
		t.Error("the zero template matches")
	}
	if _, err := tm.Build(buf, &AckSpec{}, &ccalgo.AckFields{}); err != ErrShortBuffer {
		t.Errorf("zero template: %v, want ErrShortBuffer", err)
	}
	tm.Init(&ep, 1, false)
	other := ep
	other.SrcPort++
	tests := []struct {
		name    string
		ep      *Endpoints
		qp      uint32
		echoINT bool
		want    bool
	}{
		{"same", &ep, 1, false, true},
		{"other QP", &ep, 2, false, false},
		{"INT echo", &ep, 1, true, false},
		{"other endpoints", &other, 1, false, false},
	}
	for _, tc := range tests {
		if got := tm.Matches(tc.ep, tc.qp, tc.echoINT); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	n := AckFrameLen(&ep, &AckSpec{})
	if _, err := tm.Build(buf[:n-1], &AckSpec{}, &ccalgo.AckFields{}); err != ErrShortBuffer {
		t.Errorf("short buffer: %v, want ErrShortBuffer", err)
	}
	if got, err := tm.Build(buf[:n], &AckSpec{}, &ccalgo.AckFields{}); got != n || err != nil {
		t.Errorf("fits exactly: %d, %v, want %d", got, err, n)
	}
}

// FuzzAckTemplate checks that a template builds what BuildAck builds, for
// any endpoints and fields.
func FuzzAckTemplate(f *testing.F) {
	for _, c := range ackTemplateCases() {
		f.Add(c.ep.DstMAC[5], c.ep.VLAN, c.ep.PCP, c.ep.VLANID, c.ep.SrcIP, c.ep.DstIP, c.ep.SrcPort, c.ep.DstPort,
			c.ep.DSCP, c.ep.TTL, c.ep.IPID, c.ep.ICRC, c.a.DestQP, c.a.PSN, c.a.Syndrome, c.a.MSN, c.a.EchoINT, c.a.PathID,
			c.f.EchoTS, uint8(c.f.Mark), c.f.INT.NHops, c.f.Window, c.f.ActiveFlows, c.f.RecvBytes)
	}
	f.Fuzz(func(t *testing.T, mac byte, vlan bool, pcp uint8, vid uint16, src, dst uint32, sport, dport uint16,
		dscp, ttl uint8, ipid uint16, icrc bool, qp, psn uint32, syn uint8, msn uint32, echoINT bool, pathID uint16,
		echoTS int64, mark uint8, hops uint8, window int64, active, recv uint32) {
		c := ackTemplateCase{
			ep: Endpoints{DstMAC: MAC{2, 0, 0, 0, 0, mac}, SrcMAC: macA, VLAN: vlan, PCP: pcp, VLANID: vid, SrcIP: src, DstIP: dst,
				SrcPort: sport, DstPort: dport, DSCP: dscp, TTL: ttl, IPID: ipid, ICRC: icrc},
			a: AckSpec{DestQP: qp, PSN: psn, Syndrome: syn, MSN: msn, EchoINT: echoINT, PathID: pathID},
			f: ccalgo.AckFields{EchoTS: echoTS, Mark: ccalgo.Mark(mark), Window: window, ActiveFlows: active, RecvBytes: recv},
		}
		for i := 0; i < int(hops); i++ {
			c.f.INT.Push(ccalgo.INTHop{LinkBps: 25e9 * float64(i+1), TS: src + uint32(i), TxBytes: dst, QLen: recv >> i})
		}
		if a := buildAckBoth(&c); !a.same() {
			t.Fatal(&a)
		}
	})
}

func BenchmarkAckTemplate(b *testing.B) {
	c := ackTemplateCases()[0]
	var tm AckTemplate
	tm.Init(&c.ep, c.a.DestQP, c.a.EchoINT)
	buf := make([]byte, 256)
	b.Run("BuildAck", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			BuildAck(buf, &c.ep, &c.a, &c.f)
		}
	})
	b.Run("template", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tm.Build(buf, &c.a, &c.f)
		}
	})
}
