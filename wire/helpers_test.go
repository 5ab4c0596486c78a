package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// Test addressing: host A 10.0.0.1 sends to host B 10.0.0.2 through a switch
// 10.0.0.254.
const (
	ipA  = 0x0a000001
	ipB  = 0x0a000002
	ipSw = 0x0a0000fe
)

var (
	macA  = MAC{0x02, 0, 0, 0, 0, 0x01}
	macB  = MAC{0x02, 0, 0, 0, 0, 0x02}
	macSw = MAC{0x02, 0, 0, 0, 0, 0xfe}
)

// epAB addresses a packet from A to B; epBA the way back; epSwA from the switch to A.
func epAB() Endpoints {
	return Endpoints{DstMAC: macB, SrcMAC: macA, SrcIP: ipA, DstIP: ipB, SrcPort: 0xc001, DSCP: 26, IPID: 7, ICRC: true}
}

func epBA() Endpoints {
	return Endpoints{DstMAC: macA, SrcMAC: macB, SrcIP: ipB, DstIP: ipA, SrcPort: 0xc002, DSCP: 46, ICRC: true}
}

func epSwA() Endpoints {
	return Endpoints{DstMAC: macA, SrcMAC: macSw, SrcIP: ipSw, DstIP: ipA, SrcPort: 0xc0fe, DSCP: 46, ICRC: true}
}

var testFlow = ccalgo.FlowKey{SrcIP: ipA, DstIP: ipB, SrcPort: 0xc001, DstPort: RoCEv2Port, DestQP: 0xabc}

// testINT is a two-hop stack whose values are exact in wire units.
func testINT() ccalgo.INTStack {
	var s ccalgo.INTStack
	s.Push(ccalgo.INTHop{LinkBps: 10e9, TS: 0xabcdef, TxBytes: 128 * 0xfedcb, QLen: 80 * 937})
	s.Push(ccalgo.INTHop{LinkBps: 100e9, TS: 12345, TxBytes: 128 * 3, QLen: 0})
	return s
}

func testAckFields() ccalgo.AckFields {
	return ccalgo.AckFields{
		EchoTS: 1_234_567_890_123, Mark: ccalgo.MarkUE, INT: testINT(),
		Window: 75_000, ActiveFlows: 3, RecvBytes: 123_456,
	}
}

// builtFrame is one packet of each format, as the builders write it.
type builtFrame struct {
	name  string
	kind  Kind
	frame []byte
}

func builtFrames(tb testing.TB) []builtFrame {
	tb.Helper()
	var out []builtFrame
	add := func(name string, kind Kind, n int, err error, b []byte) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, builtFrame{name, kind, b[:n]})
	}
	ep := epAB()
	back := epBA()
	sw := epSwA()

	b := make([]byte, 2048)
	n, err := BuildData(b, &ep, &DataSpec{Opcode: OpSendFirst, DestQP: 0xabc, PSN: 0x123456, AckReq: true, SendTS: 1_000_000_007, PayloadLen: 1024})
	add("data", KindData, n, err, b)

	b = make([]byte, 2048)
	n, err = BuildData(b, &ep, &DataSpec{Opcode: OpWriteOnly, DestQP: 0xabc, PSN: 0xffffff, SendTS: 42, INT: true, PayloadLen: 64})
	s := INT(b[EthernetLen+IPv4MinLen+UDPLen+BTHLen:])
	st := testINT()
	s.Push(&st.Hops[0], 0x123)
	s.Push(&st.Hops[1], 0x456)
	SetICRC(b[EthernetLen:n])
	add("data+INT", KindData, n, err, b)

	ep2 := ep
	ep2.VLAN, ep2.PCP, ep2.VLANID = true, 3, 100
	b = make([]byte, 2048)
	n, err = BuildData(b, &ep2, &DataSpec{Opcode: OpSendOnly, DestQP: 1, PSN: 2, SendTS: 3, PayloadLen: 100})
	add("data VLAN", KindData, n, err, b)

	f := testAckFields()
	b = make([]byte, 256)
	n, err = BuildAck(b, &back, &AckSpec{DestQP: 0xabc, PSN: 0x123456, Syndrome: SyndromeAckNoCred, MSN: 9}, &f)
	add("ack", KindAck, n, err, b)

	b = make([]byte, 256)
	n, err = BuildAck(b, &back, &AckSpec{DestQP: 0xabc, PSN: 0x123456, Syndrome: SyndromeAckNoCred, MSN: 9, EchoINT: true, PathID: 0x123 ^ 0x456}, &f)
	add("ack+INT", KindAck, n, err, b)

	b = make([]byte, 256)
	n, err = BuildAck(b, &back, &AckSpec{DestQP: 0xabc, PSN: 77, Syndrome: SyndromeNAKSeq, MSN: 8}, &f)
	add("nak", KindNak, n, err, b)

	b = make([]byte, 256)
	n, err = BuildCNP(b, &back, 0xabc)
	add("cnp", KindCNP, n, err, b)

	b = make([]byte, 256)
	n, err = BuildFeedback(b, &sw, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: testFlow, CPID: ipSw, RateUnits: 333, DeltaFBps: 10e6})
	add("rocc rate", KindRoCCRate, n, err, b)

	b = make([]byte, 256)
	n, err = BuildFeedback(b, &sw, &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN, Flow: testFlow, CPID: ipSw, QOff: 50_000, QDelta: -3_000})
	add("p4qcn", KindP4QCN, n, err, b)

	b = make([]byte, 256)
	n, err = BuildFeedback(b, &sw, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Flow: testFlow, CPID: ipSw, Fb: 63, QOff: 26_000, QDelta: 1_500})
	add("qcn", KindQCN, n, err, b)

	b = make([]byte, 128)
	q := [PFCPriorities]uint16{3: PFCMaxQuanta, 5: 0}
	n, err = BuildPFC(b, macSw, 1<<3|1<<5, &q)
	add("pfc", KindPFC, n, err, b)
	return out
}
