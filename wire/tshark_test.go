package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/tsharktest"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// writePcap writes frames to a pcap file in dir and returns its path.
func writePcap(tb testing.TB, dir string, frames []builtFrame) string {
	tb.Helper()
	path := filepath.Join(dir, "ccbed.pcap")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		tb.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	for i, fr := range frames {
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(fr.frame), Length: len(fr.frame)}
		if err := w.WritePacket(ci, fr.frame); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestTshark writes one packet of each format to a pcap and checks that tshark
// (Wireshark's dissectors, with their default settings) decodes RoCEv2 packets as
// InfiniBand BTH on UDP 4791 (protocol RRoCE) with the right opcode, QP and PSN, the rate message
// as ICMP type 253 with a good checksum, and PFC as MAC control.
func TestTshark(t *testing.T) {
	frames := builtFrames(t)
	path := writePcap(t, t.TempDir(), frames)
	fields := []string{
		"infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.aeth.syndrome",
		"infiniband.aeth.msn", "icmp.type", "icmp.code", "icmp.checksum.status", "macc.opcode", "macc.cbfc.enbv",
		"macc.cbfc.pause_time.c3", "ip.dsfield.ecn", "ip.checksum.status", "_ws.expert.severity", "_ws.col.Protocol",
	}
	rows := tsharktest.Fields(t, path, []string{"-o", "ip.check_checksum:TRUE", "-E", "occurrence=f"}, fields)
	if len(rows) != len(frames) {
		t.Fatalf("tshark printed %d lines for %d packets", len(rows), len(frames))
	}
	// Expected values per packet, by field name ("" = field absent).
	want := map[string]map[string]string{
		"data":      {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "0", "infiniband.bth.destqp": "0x000abc", "infiniband.bth.psn": "1193046", "ip.dsfield.ecn": "2"},
		"data+INT":  {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "10", "infiniband.bth.psn": "16777215"},
		"data VLAN": {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "4", "infiniband.bth.psn": "2"},
		"ack":       {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "17", "infiniband.bth.psn": "1193046", "infiniband.aeth.syndrome": "31", "infiniband.aeth.msn": "9"},
		"ack+INT":   {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "17", "infiniband.aeth.syndrome": "31"},
		"nak":       {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "17", "infiniband.bth.psn": "77", "infiniband.aeth.syndrome": "96"},
		"cnp":       {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "129", "infiniband.bth.destqp": "0x000abc", "infiniband.bth.psn": "0"},
		"rocc rate": {"_ws.col.Protocol": "ICMP", "icmp.type": "253", "icmp.code": "0", "icmp.checksum.status": "1", "infiniband.bth.opcode": ""},
		"p4qcn":     {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "192", "infiniband.bth.destqp": "0x000abc", "ip.dsfield.ecn": "3"},
		"qcn":       {"_ws.col.Protocol": "RRoCE", "infiniband.bth.opcode": "193"},
		"pfc":       {"_ws.col.Protocol": "MAC CTRL", "macc.opcode": "0x0101", "macc.cbfc.enbv": "0x0028", "macc.cbfc.pause_time.c3": "65535", "infiniband.bth.opcode": ""},
	}
	for i, fr := range frames {
		got := rows[i]
		vals := make([]string, len(fields))
		for j, f := range fields {
			vals[j] = got[f]
		}
		t.Logf("%-10s %s", fr.name, strings.Join(vals, "|"))
		if got["ip.checksum.status"] != "" && got["ip.checksum.status"] != "1" {
			t.Errorf("%s: IPv4 checksum status %q (1 = good)", fr.name, got["ip.checksum.status"])
		}
		if sev := got["_ws.expert.severity"]; sev != "" && sev != "2097152" { // chat
			t.Errorf("%s: Wireshark expert info of severity %s", fr.name, sev)
		}
		w, ok := want[fr.name]
		if !ok {
			t.Errorf("%s: no expectation", fr.name)
			continue
		}
		for f, v := range w {
			if got[f] != v {
				t.Errorf("%s: %s = %q, want %q", fr.name, f, got[f], v)
			}
		}
	}
}
