package wire

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/tsharktest"
)

// wiresharkFields are the fields of deploy/wireshark/ccbed.lua the tests check.
var wiresharkFields = []string{
	"ccbed.kind", "ccbed.flags", "ccbed.flags.int", "ccbed.flags.ackext", "ccbed.data.send_ts",
	"ccbed.int.nhop", "ccbed.int.path_id", "ccbed.int.hop.b", "ccbed.int.hop.link_bps", "ccbed.int.hop.ts",
	"ccbed.int.hop.tx_units", "ccbed.int.hop.tx_bytes", "ccbed.int.hop.qlen_units", "ccbed.int.hop.qlen_bytes",
	"ccbed.ack.echo_ts", "ccbed.ack.mark", "ccbed.ack.active_flows", "ccbed.ack.window", "ccbed.ack.recv_bytes",
	"ccbed.cp_id", "ccbed.flow.src", "ccbed.flow.dst", "ccbed.flow.sport", "ccbed.flow.dport", "ccbed.flow.proto",
	"ccbed.flow.qp", "ccbed.rocc.version", "ccbed.rocc.rate_units", "ccbed.rocc.delta_f_bps", "ccbed.rocc.rate_bps",
	"ccbed.fb.fb", "ccbed.fb.qoff", "ccbed.fb.qdelta", "_ws.col.Protocol", "_ws.expert.message",
}

// wiresharkProtocols is the Protocol column the plugin leaves for each kind:
// Wireshark's for the standard kinds, ccbed for its own messages (which
// Wireshark calls "Unknown ICMP" and "Unknown OpCode").
var wiresharkProtocols = map[Kind]string{
	KindData: "RRoCE", KindAck: "RRoCE", KindNak: "RRoCE", KindCNP: "RRoCE",
	KindRoCCRate: "ccbed", KindP4QCN: "ccbed", KindQCN: "ccbed", KindPFC: "MAC CTRL",
}

// allSpeedFrames returns data frames whose INT hops carry every B code 0..15,
// so that the plugin's link speed table is checked against linkSpeeds.
func allSpeedFrames(t *testing.T) []builtFrame {
	ep := epAB()
	var out []builtFrame
	for first := 0; first < 16; first += ccalgo.MaxINTHops {
		b := make([]byte, 256)
		n, err := BuildData(b, &ep, &DataSpec{Opcode: OpWriteFirst, DestQP: 0xabc, PSN: uint32(first), SendTS: int64(first) << 40, INT: true, PayloadLen: 16})
		if err != nil {
			t.Fatal(err)
		}
		s := INT(b[EthernetLen+IPv4MinLen+UDPLen+BTHLen:])
		for c := first; c < first+ccalgo.MaxINTHops && c < 16; c++ {
			h := ccalgo.INTHop{
				TS:      uint32(c*1_000_003) % ccalgo.INTTSWrap,
				TxBytes: ccalgo.INTTxBytesUnit * uint32(c*70_001%(1<<20)),
				QLen:    ccalgo.INTQLenUnit * uint32(c*4_099%(1<<16)),
			}
			s.PushCode(uint8(c), &h, uint16(0x100+c))
		}
		SetICRC(b[EthernetLen:n])
		out = append(out, builtFrame{fmt.Sprintf("data+INT codes %d..", first), KindData, b[:n]})
	}
	return out
}

// wantWireshark returns what the plugin should show for a frame, from wire's
// own decoding of it: every field of wiresharkFields, "" when absent, several
// occurrences joined by ','.
func wantWireshark(t *testing.T, frame []byte) map[string]string {
	var f Frame
	if err := Decode(frame, &f); err != nil {
		t.Fatal(err)
	}
	w := make(map[string]string, len(wiresharkFields))
	for _, k := range wiresharkFields {
		w[k] = ""
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	b01 := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	ip := func(a uint32) string { return fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff) }
	w["ccbed.kind"] = f.Kind.String()
	w["_ws.col.Protocol"] = wiresharkProtocols[f.Kind]
	if f.BTH != nil {
		w["ccbed.flags"] = fmt.Sprintf("0x%02x", f.BTH.Flags())
		w["ccbed.flags.int"] = b01(f.BTH.Flags()&FlagINT != 0)
		w["ccbed.flags.ackext"] = b01(f.BTH.Flags()&FlagAckExt != 0)
	}
	if f.Data != nil {
		w["ccbed.data.send_ts"] = u(uint64(f.Data.SendTS()))
	}
	if f.INT != nil {
		w["ccbed.int.nhop"] = u(uint64(f.INT.NHops()))
		w["ccbed.int.path_id"] = fmt.Sprintf("0x%04x", f.INT.PathID())
		var b, bps, ts, txu, tx, qu, q []string
		for i := 0; i < f.INT.NHops(); i++ {
			h := f.INT.Hop(i)
			b = append(b, u(uint64(f.INT[INTHeaderLen+i*INTHopLen]>>4)))
			bps = append(bps, u(uint64(h.LinkBps)))
			ts = append(ts, u(uint64(h.TS)))
			txu = append(txu, u(uint64(h.TxBytes/ccalgo.INTTxBytesUnit)))
			tx = append(tx, u(uint64(h.TxBytes)))
			qu = append(qu, u(uint64(h.QLen/ccalgo.INTQLenUnit)))
			q = append(q, u(uint64(h.QLen)))
		}
		for k, v := range map[string][]string{"b": b, "link_bps": bps, "ts": ts, "tx_units": txu, "tx_bytes": tx, "qlen_units": qu, "qlen_bytes": q} {
			w["ccbed.int.hop."+k] = strings.Join(v, ",")
		}
	}
	if f.Ext != nil {
		w["ccbed.ack.echo_ts"] = u(uint64(f.Ext.EchoTS()))
		w["ccbed.ack.mark"] = u(uint64(f.Ext.Mark()))
		w["ccbed.ack.active_flows"] = u(uint64(f.Ext.ActiveFlows()))
		w["ccbed.ack.window"] = strconv.FormatInt(f.Ext.Window(), 10)
		w["ccbed.ack.recv_bytes"] = u(uint64(f.Ext.RecvBytes()))
	}
	flow := func(cp uint32, k ccalgo.FlowKey) {
		w["ccbed.cp_id"] = fmt.Sprintf("0x%08x", cp)
		w["ccbed.flow.src"], w["ccbed.flow.dst"] = ip(k.SrcIP), ip(k.DstIP)
		w["ccbed.flow.sport"], w["ccbed.flow.dport"] = u(uint64(k.SrcPort)), u(uint64(k.DstPort))
	}
	if f.Rate != nil {
		flow(f.Rate.CPID(), f.Rate.Flow())
		w["ccbed.flow.proto"] = u(IPProtoUDP)
		w["ccbed.flow.qp"] = fmt.Sprintf("0x%06x", f.Rate.Flow().DestQP)
		w["ccbed.rocc.version"] = u(RoCCRateVersion)
		w["ccbed.rocc.rate_units"] = u(uint64(f.Rate.RateUnits()))
		w["ccbed.rocc.delta_f_bps"] = u(uint64(f.Rate.DeltaFBps()))
		w["ccbed.rocc.rate_bps"] = u(uint64(f.Rate.RateBps()))
	}
	if f.Feedback != nil {
		var fb ccalgo.Feedback
		f.Feedback.Feedback(&fb, 0, 0)
		flow(fb.CPID, fb.Flow)
		w["ccbed.fb.fb"] = u(uint64(fb.Fb))
		w["ccbed.fb.qoff"] = strconv.FormatInt(int64(fb.QOff), 10)
		w["ccbed.fb.qdelta"] = strconv.FormatInt(int64(fb.QDelta), 10)
	}
	return w
}

// TestWiresharkPlugin writes one frame of each kind (builtFrames) and data
// frames whose INT hops use every link speed code to a pcap, has tshark decode
// it with deploy/wireshark/ccbed.lua, and checks every ccbed.* field of every
// frame against wire's own decoding of it (fields absent where wire has no
// such header). The same file holds the frames cut short at a few lengths
// (as a short snap length leaves them), on which the plugin must decode what
// is there and report no Lua error.
func TestWiresharkPlugin(t *testing.T) {
	frames := append(builtFrames(t), allSpeedFrames(t)...)
	all := frames
	for _, n := range []int{40, 60, 70, 100} {
		for _, fr := range frames {
			if n < len(fr.frame) {
				all = append(all, builtFrame{fmt.Sprintf("%s cut to %d B", fr.name, n), fr.kind, fr.frame[:n]})
			}
		}
	}
	rows := tsharktest.Fields(t, writePcap(t, t.TempDir(), all), tsharktest.PluginArgs(t), wiresharkFields)
	if len(rows) != len(all) {
		t.Fatalf("tshark printed %d lines for %d frames", len(rows), len(all))
	}
	for i, fr := range all {
		got := rows[i]
		if strings.Contains(got["_ws.expert.message"], "Lua") {
			t.Errorf("%s: %s", fr.name, got["_ws.expert.message"])
		}
		if i >= len(frames) {
			continue
		}
		for k, v := range wantWireshark(t, fr.frame) {
			if k != "_ws.expert.message" && got[k] != v {
				t.Errorf("%s: %s = %q, want %q", fr.name, k, got[k], v)
			}
		}
	}
}
