package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func TestGopacketLayers(t *testing.T) {
	frames := map[string][]byte{}
	for _, tc := range builtFrames(t) {
		frames[tc.name] = tc.frame
	}
	eth, ip4, udp, icmp := layers.LayerTypeEthernet, layers.LayerTypeIPv4, layers.LayerTypeUDP, layers.LayerTypeICMPv4
	pay := gopacket.LayerTypePayload
	tests := []struct {
		name   string
		layers []gopacket.LayerType
		check  func(t *testing.T, p gopacket.Packet)
	}{
		{"data", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeDataHeader, pay}, func(t *testing.T, p gopacket.Packet) {
			b := p.Layer(LayerTypeBTH).(*BTHLayer)
			if b.Opcode != OpSendFirst || b.PSN != 0x123456 || b.DestQP != 0xabc || !b.AckReq || b.PKey != DefaultPKey {
				t.Errorf("BTH %+v", b)
			}
			if b.ICRC != ComputeICRC(p.Data()[EthernetLen:]) {
				t.Errorf("BTH layer ICRC %#x, computed %#x", b.ICRC, ComputeICRC(p.Data()[EthernetLen:]))
			}
			d := p.Layer(LayerTypeDataHeader).(*DataHeaderLayer)
			if d.SendTS != 1_000_000_007 || len(p.ApplicationLayer().Payload()) != 1024-DataHeaderLen {
				t.Errorf("data header %+v, app payload %d", d, len(p.ApplicationLayer().Payload()))
			}
		}},
		{"data+INT", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeINT, LayerTypeDataHeader, pay}, func(t *testing.T, p gopacket.Packet) {
			l := p.Layer(LayerTypeINT).(*INTLayer)
			if l.Stack != testINT() || l.PathID != 0x123^0x456 {
				t.Errorf("INT %+v", l)
			}
		}},
		{"data VLAN", []gopacket.LayerType{eth, layers.LayerTypeDot1Q, ip4, udp, LayerTypeBTH, LayerTypeDataHeader, pay}, func(t *testing.T, p gopacket.Packet) {
			if q := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); q.Priority != 3 || q.VLANIdentifier != 100 {
				t.Errorf("dot1q %+v", q)
			}
		}},
		{"ack", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeAETH, LayerTypeAckExt}, func(t *testing.T, p gopacket.Packet) {
			a := p.Layer(LayerTypeAETH).(*AETHLayer)
			x := p.Layer(LayerTypeAckExt).(*AckExtLayer)
			f := testAckFields()
			if a.Syndrome != SyndromeAckNoCred || a.MSN != 9 || x.EchoTS != f.EchoTS || x.Mark != f.Mark ||
				x.Window != f.Window || x.ActiveFlows != f.ActiveFlows || x.RecvBytes != f.RecvBytes {
				t.Errorf("AETH %+v ext %+v", a, x)
			}
		}},
		{"ack+INT", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeAETH, LayerTypeAckExt, LayerTypeINT}, func(t *testing.T, p gopacket.Packet) {
			if l := p.Layer(LayerTypeINT).(*INTLayer); l.Stack != testINT() {
				t.Errorf("INT echo %+v", l.Stack)
			}
		}},
		{"nak", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeAETH, LayerTypeAckExt}, func(t *testing.T, p gopacket.Packet) {
			if a := p.Layer(LayerTypeAETH).(*AETHLayer); a.Syndrome != SyndromeNAKSeq {
				t.Errorf("AETH %+v", a)
			}
		}},
		{"cnp", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeCNP}, func(t *testing.T, p gopacket.Packet) {
			if b := p.Layer(LayerTypeBTH).(*BTHLayer); b.Opcode != OpCNP || !b.BECN || b.DestQP != 0xabc {
				t.Errorf("BTH %+v", b)
			}
		}},
		{"rocc rate", []gopacket.LayerType{eth, ip4, icmp, LayerTypeRoCCRate}, func(t *testing.T, p gopacket.Packet) {
			i := p.Layer(icmp).(*layers.ICMPv4)
			r := p.Layer(LayerTypeRoCCRate).(*RoCCRateLayer)
			if i.TypeCode.Type() != ICMPTypeRoCCRate || i.Id>>8 != RoCCRateVersion || r.RateUnits != 333 ||
				r.DeltaFBps != 10e6 || r.RateBps() != 3.33e9 || r.CPID != ipSw || r.Flow != testFlow {
				t.Errorf("ICMP %v rate %+v", i.TypeCode, r)
			}
		}},
		{"p4qcn", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeFeedback}, func(t *testing.T, p gopacket.Packet) {
			f := p.Layer(LayerTypeFeedback).(*FeedbackLayer)
			if f.CPID != ipSw || f.SrcIP != ipA || f.DstIP != ipB || f.QOff != 50_000 || f.QDelta != -3_000 {
				t.Errorf("feedback %+v", f)
			}
			if p.Layer(ip4).(*layers.IPv4).TOS&3 != ECNCE {
				t.Error("feedback packet not ECN 11")
			}
		}},
		{"qcn", []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeFeedback}, func(t *testing.T, p gopacket.Packet) {
			if f := p.Layer(LayerTypeFeedback).(*FeedbackLayer); f.Fb != 63 {
				t.Errorf("feedback %+v", f)
			}
		}},
		{"pfc", []gopacket.LayerType{eth, LayerTypePFC}, func(t *testing.T, p gopacket.Packet) {
			l := p.Layer(LayerTypePFC).(*PFCLayer)
			want := [PFCPriorities]uint16{3: PFCMaxQuanta}
			if l.Opcode != MACCtlOpPFC || l.ClassEnable != 1<<3|1<<5 || l.Quanta != want {
				t.Errorf("PFC %+v", l)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr, ok := frames[tc.name]
			if !ok {
				t.Fatalf("no frame %q", tc.name)
			}
			p := gopacket.NewPacket(fr, layers.LayerTypeEthernet, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatalf("decode error: %v", el.Error())
			}
			got := p.Layers()
			if len(got) != len(tc.layers) {
				t.Fatalf("layers %v, want %v", layerTypes(got), tc.layers)
			}
			for i, l := range got {
				if l.LayerType() != tc.layers[i] {
					t.Fatalf("layers %v, want %v", layerTypes(got), tc.layers)
				}
			}
			tc.check(t, p)
		})
	}
}

func layerTypes(ls []gopacket.Layer) []gopacket.LayerType {
	out := make([]gopacket.LayerType, len(ls))
	for i, l := range ls {
		out[i] = l.LayerType()
	}
	return out
}

// TestGopacketICMPUnchanged checks that hooking ICMP type 253 leaves other ICMP
// messages to gopacket.
func TestGopacketICMPUnchanged(t *testing.T) {
	b := make([]byte, 128)
	ep := epSwA()
	n, err := BuildFeedback(b, &ep, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: testFlow})
	if err != nil {
		t.Fatal(err)
	}
	b[EthernetLen+IPv4MinLen] = 8 // echo request
	p := gopacket.NewPacket(b[:n], layers.LayerTypeEthernet, gopacket.Default)
	if p.Layer(LayerTypeRoCCRate) != nil || p.Layer(layers.LayerTypeICMPv4) == nil {
		t.Fatalf("echo request decoded as %v", layerTypes(p.Layers()))
	}
}

// TestDecodingLayerParser decodes a data packet with INT through gopacket's
// allocation-free parser, which uses the layers' NextLayerType.
func TestDecodingLayerParser(t *testing.T) {
	var (
		eth  layers.Ethernet
		ip   layers.IPv4
		udp  layers.UDP
		bth  BTHLayer
		in   INTLayer
		dh   DataHeaderLayer
		aeth AETHLayer
		ext  AckExtLayer
		pay  gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &udp, &bth, &in, &dh, &aeth, &ext, &pay)
	tests := []struct {
		name string
		want []gopacket.LayerType
	}{
		{"data+INT", []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeIPv4, layers.LayerTypeUDP, LayerTypeBTH, LayerTypeINT, LayerTypeDataHeader, gopacket.LayerTypePayload}},
		{"ack+INT", []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeIPv4, layers.LayerTypeUDP, LayerTypeBTH, LayerTypeAETH, LayerTypeAckExt, LayerTypeINT}},
	}
	frames := map[string][]byte{}
	for _, tc := range builtFrames(t) {
		frames[tc.name] = tc.frame
	}
	for _, tc := range tests {
		var got []gopacket.LayerType
		if err := parser.DecodeLayers(frames[tc.name], &got); err != nil {
			t.Fatalf("%s: %v (layers %v)", tc.name, err, got)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: layers %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: layers %v, want %v", tc.name, got, tc.want)
			}
		}
	}
	if dh.SendTS != 42 || in.Stack != testINT() {
		t.Errorf("data header %d, INT %+v", dh.SendTS, in.Stack)
	}
}
