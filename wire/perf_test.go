package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// hotPaths are the per-packet operations of the package, each run on a reused
// buffer; TestZeroAllocs and BenchmarkHotPaths share them.
func hotPaths(tb testing.TB) []struct {
	name string
	fn   func()
} {
	tb.Helper()
	frames := map[string][]byte{}
	for _, fr := range builtFrames(tb) {
		frames[fr.name] = fr.frame
	}
	ep := epAB()
	epNoICRC := epAB()
	epNoICRC.ICRC = false
	back := epBA()
	sw := epSwA()
	buf := make([]byte, 2048)
	data := &DataSpec{Opcode: OpSendOnly, DestQP: 0xabc, PSN: 1, SendTS: 1, PayloadLen: 1024}
	dataINT := &DataSpec{Opcode: OpSendOnly, DestQP: 0xabc, PSN: 1, SendTS: 1, INT: true, PayloadLen: 1024}
	ack := &AckSpec{DestQP: 0xabc, PSN: 1, Syndrome: SyndromeAckNoCred, EchoINT: true}
	fields := testAckFields()
	rate := &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: testFlow, CPID: ipSw, RateUnits: 333, DeltaFBps: 10e6}
	p4 := &ccalgo.Feedback{Kind: ccalgo.FeedbackP4QCN, Flow: testFlow, CPID: ipSw}
	quanta := &[PFCPriorities]uint16{3: PFCMaxQuanta}
	var fr Frame
	var st ccalgo.INTStack
	var af ccalgo.AckFields
	var fb ccalgo.Feedback
	hop := ccalgo.INTHop{LinkBps: 100e9, TS: 5, TxBytes: 1 << 20, QLen: 8000}
	intBuf := INT(make([]byte, INTLen))
	ipBuf := append([]byte(nil), frames["data"][EthernetLen:]...)
	out := []struct {
		name string
		fn   func()
	}{
		{"BuildData/1024B", func() { BuildData(buf, &epNoICRC, data) }},
		{"BuildData/1024B+ICRC", func() { BuildData(buf, &ep, data) }},
		{"BuildData/1024B+INT", func() { BuildData(buf, &epNoICRC, dataINT) }},
		{"BuildAck/INT+ICRC", func() { BuildAck(buf, &back, ack, &fields) }},
		{"BuildCNP/ICRC", func() { BuildCNP(buf, &back, 0xabc) }},
		{"BuildFeedback/RoCCRate", func() { BuildFeedback(buf, &sw, rate) }},
		{"BuildFeedback/P4QCN+ICRC", func() { BuildFeedback(buf, &sw, p4) }},
		{"BuildPFC", func() { BuildPFC(buf, macSw, 1<<3, quanta) }},
		{"Decode/data", func() { Decode(frames["data"], &fr) }},
		{"Decode/data+INT", func() { Decode(frames["data+INT"], &fr); fr.INT.Stack(&st) }},
		{"Decode/ack+INT", func() { Decode(frames["ack+INT"], &fr); fr.Ext.Fields(&af); fr.INT.Stack(&af.INT) }},
		{"Decode/cnp", func() { Decode(frames["cnp"], &fr) }},
		{"Decode/rocc", func() { Decode(frames["rocc rate"], &fr); fr.Rate.Feedback(&fb) }},
		{"Decode/p4qcn", func() { Decode(frames["p4qcn"], &fr); fr.Feedback.Feedback(&fb, ccalgo.FeedbackP4QCN, 1) }},
		{"Decode/pfc", func() { Decode(frames["pfc"], &fr) }},
		{"Decode/malformed", func() { Decode(frames["data"][:30], &fr) }},
		{"INT.Push", func() { intBuf.Reset(); intBuf.Push(&hop, 7) }},
		{"IPv4.SetECN+DecTTL", func() { ip := IPv4(ipBuf); ip.SetECN(ECNCE); ip.SetTTL(64); ip.DecTTL() }},
		{"VerifyICRC/1024B", func() { VerifyICRC(frames["data"][EthernetLen:]) }},
	}
	return out
}

func TestZeroAllocs(t *testing.T) {
	for _, hp := range hotPaths(t) {
		if a := testing.AllocsPerRun(200, hp.fn); a != 0 {
			t.Errorf("%s: %v allocations per run, want 0", hp.name, a)
		}
	}
}

func BenchmarkHotPaths(b *testing.B) {
	for _, hp := range hotPaths(b) {
		b.Run(hp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hp.fn()
			}
		})
	}
}
