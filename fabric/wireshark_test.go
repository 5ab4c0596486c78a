package fabric_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/internal/tsharktest"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// schemeFeedback is the frame kind each scheme's feedback travels as, where
// it has one of its own, as s0 sends it to sender h0 in TestWiresharkSchemes.
var schemeFeedback = map[string]string{
	"dcqcn": "cnp", "rocc": "rocc-rate", "p4qcn": "p4qcn-fb", "qcn": "qcn-fb",
}

// TestWiresharkSchemes captures every port of switch s0 in a short 3-to-1
// run of every scheme (PFC on, a small buffer) in pcapng and has tshark
// decode each scheme's file with deploy/wireshark/ccbed.lua: every frame's
// ccbed.kind must be the kind wire.Decode finds, its interface the port's
// name (s0:p0..s0:p3) and its direction the one the file records, with no
// Lua error; each run must hold data, ACKs and its scheme's own feedback
// kind (sent toward h0), HPCC's ACKs an echoed INT stack of one hop, and
// some run a PFC pause.
func TestWiresharkSchemes(t *testing.T) {
	dir := t.TempDir()
	kinds := map[string]map[string]int{} // scheme, ccbed.kind: frames
	echoed := map[string]bool{}          // scheme: an ACK echoes a one-hop INT stack
	toH0 := map[string]map[string]bool{} // scheme, kind: s0.p0 sent one
	var f wire.Frame
	for _, s := range ccalgo.Schemes() {
		spec := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: s.Name, ExpectedFlows: 3, MTU: 1000,
			BufferBytes: 400_000, PFC: fabric.PFC{Enabled: true}, Buffer: switchd.BufferConfig{SizeBytes: 300_000},
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 3}, {ID: 2, Src: 1, Dst: 3}, {ID: 3, Src: 2, Dst: 3}}}
		_, files := simulateCaptureFormat(t, spec, 400_000, []string{"s0"}, filepath.Join(dir, s.Name), 0, fabric.FormatPcapng)
		recs, err := pcapw.ReadFile(files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		rows := tsharktest.Fields(t, files[0].Path, append(tsharktest.PluginArgs(t), "-E", "occurrence=f"),
			[]string{"ccbed.kind", "ccbed.int.nhop", "_ws.expert.message", "frame.interface_name", "frame.packet_flags_direction"})
		if len(rows) != len(recs) {
			t.Fatalf("%s: tshark printed %d lines for %d frames", s.Name, len(rows), len(recs))
		}
		kinds[s.Name], toH0[s.Name] = map[string]int{}, map[string]bool{}
		for i, r := range recs {
			if err := wire.Decode(r.Data, &f); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			got, kind := rows[i], f.Kind.String()
			iface := fmt.Sprintf("s0:p%d", r.Interface)
			if got["ccbed.kind"] != kind || strings.Contains(got["_ws.expert.message"], "Lua") {
				t.Errorf("%s frame %d: ccbed.kind %q, want %q (%s)", s.Name, i+1, got["ccbed.kind"], kind, got["_ws.expert.message"])
			}
			dir, err := strconv.ParseUint(got["frame.packet_flags_direction"], 0, 8) // 0x00000001 in tshark 4
			if got["frame.interface_name"] != iface || err != nil || pcapw.Direction(dir) != r.Dir {
				t.Errorf("%s frame %d: interface %q direction %q, want %q %d", s.Name, i+1,
					got["frame.interface_name"], got["frame.packet_flags_direction"], iface, r.Dir)
			}
			kinds[s.Name][got["ccbed.kind"]]++
			if r.Interface == 0 && r.Dir == pcapw.DirOutbound {
				toH0[s.Name][kind] = true
			}
			if got["ccbed.kind"] == "ack" && got["ccbed.int.nhop"] == "1" {
				echoed[s.Name] = true
			}
		}
	}
	pfc := false
	for _, s := range ccalgo.Schemes() {
		k := kinds[s.Name]
		var names []string
		for n, c := range k {
			names = append(names, fmt.Sprintf("%s %d", n, c))
		}
		sort.Strings(names)
		t.Logf("%-6s %s", s.Name, strings.Join(names, ", "))
		for _, want := range []string{"data", "ack", schemeFeedback[s.Name]} {
			if want != "" && k[want] == 0 {
				t.Errorf("%s: no %s frame at s0", s.Name, want)
			}
		}
		if fb := schemeFeedback[s.Name]; fb != "" && !toH0[s.Name][fb] {
			t.Errorf("%s: s0.p0 sent h0 no %s frame", s.Name, fb)
		}
		pfc = pfc || k["pfc"] > 0
	}
	if !echoed["hpcc"] {
		t.Error("hpcc: no ACK echoes a one-hop INT stack")
	}
	if !pfc {
		t.Error("no run holds a PFC pause")
	}
}
