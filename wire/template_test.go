package wire

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// templateCase is one data packet built both ways: ep and d for BuildData,
// the same fields for a DataTemplate.
type templateCase struct {
	name string
	ep   Endpoints
	d    DataSpec
}

// templateEndpoints is the endpoints the template tests build for: with
// the ICRC, without it, with an 802.1Q tag, and odd values in every field.
func templateEndpoints() (ep, plain, vlan, odd Endpoints) {
	ep, plain, vlan = epAB(), epAB(), epAB()
	plain.ICRC = false
	vlan.VLAN, vlan.PCP, vlan.VLANID = true, 3, 100
	odd = Endpoints{DstMAC: macSw, SrcMAC: macB, SrcIP: 0xffffffff, DstIP: 0, SrcPort: 0xffff, DstPort: 1,
		DSCP: 63, TTL: 1, IPID: 0xffff}
	return ep, plain, vlan, odd
}

func templateCases() []templateCase {
	ep, plain, vlan, odd := templateEndpoints()
	return []templateCase{
		{"first+AckReq", ep, DataSpec{Opcode: OpSendFirst, DestQP: 0xabc, PSN: 0x123456, AckReq: true, SendTS: 1_000_000_007, PayloadLen: 1032}},
		{"middle/no ICRC", plain, DataSpec{Opcode: OpSendMiddle, DestQP: 0xabc, PSN: 7, SendTS: 42, PayloadLen: 1032}},
		{"last/INT", plain, DataSpec{Opcode: OpSendLast, DestQP: 0xffffff, PSN: 0xffffff, AckReq: true, SendTS: -1, INT: true, PayloadLen: 100}},
		{"only/INT+ICRC", ep, DataSpec{Opcode: OpSendOnly, DestQP: 1, SendTS: 1 << 62, INT: true, PayloadLen: DataHeaderLen}},
		{"VLAN", vlan, DataSpec{Opcode: OpWriteOnly, DestQP: 0x10203, PSN: 0x800000, SendTS: 5, PayloadLen: 9000}},
		{"ones", odd, DataSpec{Opcode: 0xff, DestQP: 0x1ffffff, PSN: 0xffffffff, AckReq: true, SendTS: -1 << 63, PayloadLen: 1500}},
		{"largest", plain, DataSpec{Opcode: OpSendMiddle, DestQP: 3, PSN: 9, INT: true,
			PayloadLen: 0xffff - IPv4MinLen - UDPLen - BTHLen - INTLen - ICRCLen}},
	}
}

// alike is a frame built twice, by a reference builder and by a template,
// into two buffers filled alike beforehand.
type alike struct {
	want, got []byte
	nw, ng    int
	ew, eg    error
	refName   string
}

// buildAlike fills two buffers of size bytes with byte(i*mul + add) and
// builds into one with ref (named refName in errors) and into the other
// with tmpl.
func buildAlike(size, mul, add int, refName string, ref, tmpl func([]byte) (int, error)) alike {
	a := alike{want: make([]byte, size), got: make([]byte, size), refName: refName}
	for i := range a.want {
		a.want[i] = byte(i*mul + add)
	}
	copy(a.got, a.want)
	a.nw, a.ew = ref(a.want)
	a.ng, a.eg = tmpl(a.got)
	return a
}

// same reports whether both builds gave the same result and bytes.
func (a *alike) same() bool { return a.ew == a.eg && a.nw == a.ng && bytes.Equal(a.want, a.got) }

// String shows both builds.
func (a *alike) String() string {
	return fmt.Sprintf("%s: %d, %v; template: %d, %v\n got %x\nwant %x", a.refName, a.nw, a.ew, a.ng, a.eg, a.got, a.want)
}

// frame fails t unless both builds succeeded with the same bytes, and
// returns the template's frame.
func (a *alike) frame(t *testing.T) []byte {
	t.Helper()
	if a.ew != nil || a.eg != nil || !a.same() {
		t.Fatal(a)
	}
	return a.got[:a.ng]
}

// buildBoth builds c with BuildData and with a template into buffers whose
// payload bytes are alike.
func buildBoth(c *templateCase) alike {
	var t DataTemplate
	t.Init(&c.ep, c.d.DestQP, c.d.INT)
	return buildAlike(DataFrameLen(&c.ep, &c.d)+16, 7, 3, "BuildData",
		func(b []byte) (int, error) { return BuildData(b, &c.ep, &c.d) },
		func(b []byte) (int, error) {
			return t.Build(b, c.ep.IPID, c.d.Opcode, c.d.PSN, c.d.AckReq, c.d.SendTS, c.d.PayloadLen)
		})
}

func TestDataTemplateEqualsBuildData(t *testing.T) {
	for _, c := range templateCases() {
		t.Run(c.name, func(t *testing.T) {
			a := buildBoth(&c)
			checkTemplateFrame(t, a.frame(t), &c.ep, KindData)
		})
	}
}

// checkTemplateFrame fails t unless frame, built for ep, decodes as one of
// kinds (when ep's destination port is RoCEv2's) and carries a correct ICRC
// (when ep computes one).
func checkTemplateFrame(t *testing.T, frame []byte, ep *Endpoints, kinds ...Kind) {
	t.Helper()
	var fr Frame
	if err := Decode(frame, &fr); ep.DstPort == 0 && (err != nil || !slices.Contains(kinds, fr.Kind)) {
		t.Fatalf("decode: %v, kind %v", err, fr.Kind)
	}
	if ep.ICRC && !VerifyICRC(frame[ethLen(ep):]) {
		t.Fatal("bad ICRC")
	}
}

// TestDataTemplateLeaveICRC builds every template case with LeaveICRC: the
// frame is BuildData's but for the ICRC field, which keeps the buffer's
// bytes when the template does not compute the ICRC, and is BuildData's
// (the computed ICRC) when it does; LeaveICRC(false) zeroes it again.
func TestDataTemplateLeaveICRC(t *testing.T) {
	for _, c := range templateCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, leave := range []bool{true, false} {
				var tm DataTemplate
				tm.Init(&c.ep, c.d.DestQP, c.d.INT)
				tm.LeaveICRC(true)
				tm.LeaveICRC(leave)
				a := buildAlike(DataFrameLen(&c.ep, &c.d)+16, 7, 3, "BuildData",
					func(b []byte) (int, error) { return BuildData(b, &c.ep, &c.d) },
					func(b []byte) (int, error) {
						return tm.Build(b, c.ep.IPID, c.d.Opcode, c.d.PSN, c.d.AckReq, c.d.SendTS, c.d.PayloadLen)
					})
				if a.ew != nil || a.eg != nil || a.nw != a.ng {
					t.Fatal(&a)
				}
				n := a.ng
				want := slices.Clone(a.want)
				if leave && !c.ep.ICRC {
					for i := n - ICRCLen; i < n; i++ {
						want[i] = byte(i*7 + 3) // the buffer's byte, as filled
					}
				}
				if !bytes.Equal(a.got, want) {
					t.Fatalf("leave %v:\n got %x\nwant %x", leave, a.got, want)
				}
			}
		})
	}
}

func TestDataTemplateErrors(t *testing.T) {
	ep := epAB()
	var tm DataTemplate
	buf := make([]byte, 2048)
	if _, err := tm.Build(buf, 0, OpSendOnly, 0, false, 0, 100); err != ErrShortBuffer {
		t.Errorf("zero template: %v, want ErrShortBuffer", err)
	}
	tm.Init(&ep, 1, false)
	tests := []struct {
		name    string
		b       []byte
		payload int
		want    error
	}{
		{"short payload", buf, DataHeaderLen - 1, ErrPayloadLen},
		{"long payload", make([]byte, 70000), 0xffff, ErrPayloadLen},
		{"short buffer", buf[:100], 1024, ErrShortBuffer},
		{"fits exactly", buf[:DataFrameLen(&ep, &DataSpec{PayloadLen: 1024})], 1024, nil},
	}
	for _, tc := range tests {
		if _, err := tm.Build(tc.b, 0, OpSendOnly, 0, false, 0, tc.payload); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzDataTemplate checks that a template builds what BuildData builds, for
// any endpoints and fields.
func FuzzDataTemplate(f *testing.F) {
	for _, c := range templateCases() {
		f.Add(c.ep.DstMAC[5], c.ep.VLAN, c.ep.PCP, c.ep.VLANID, c.ep.SrcIP, c.ep.DstIP, c.ep.SrcPort, c.ep.DstPort,
			c.ep.DSCP, c.ep.TTL, c.ep.IPID, c.ep.ICRC, c.d.Opcode, c.d.DestQP, c.d.PSN, c.d.AckReq, c.d.SendTS, c.d.INT, c.d.PayloadLen)
	}
	f.Fuzz(func(t *testing.T, mac byte, vlan bool, pcp uint8, vid uint16, src, dst uint32, sport, dport uint16,
		dscp, ttl uint8, ipid uint16, icrc bool, op uint8, qp, psn uint32, ackReq bool, ts int64, intStack bool, payload int) {
		if payload < -1 || payload > 0x10000 {
			return
		}
		c := templateCase{
			ep: Endpoints{DstMAC: MAC{2, 0, 0, 0, 0, mac}, SrcMAC: macA, VLAN: vlan, PCP: pcp, VLANID: vid, SrcIP: src, DstIP: dst,
				SrcPort: sport, DstPort: dport, DSCP: dscp, TTL: ttl, IPID: ipid, ICRC: icrc},
			d: DataSpec{Opcode: op, DestQP: qp, PSN: psn, AckReq: ackReq, SendTS: ts, INT: intStack, PayloadLen: payload},
		}
		if a := buildBoth(&c); !a.same() {
			t.Fatal(&a)
		}
	})
}

func BenchmarkDataTemplate(b *testing.B) {
	for _, c := range templateCases()[:3] {
		b.Run(c.name, func(b *testing.B) {
			var tm DataTemplate
			tm.Init(&c.ep, c.d.DestQP, c.d.INT)
			buf := make([]byte, 2048)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tm.Build(buf, uint16(i), c.d.Opcode, uint32(i), c.d.AckReq, int64(i), c.d.PayloadLen)
			}
		})
	}
}
