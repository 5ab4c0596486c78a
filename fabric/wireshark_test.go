package fabric_test

import (
	"fmt"
	"path/filepath"
	"sort"
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
// it has one of its own, as the sender's port sees it in TestWiresharkSchemes.
var schemeFeedback = map[string]string{
	"dcqcn": "cnp", "rocc": "rocc-rate", "p4qcn": "p4qcn-fb", "qcn": "qcn-fb",
}

// TestWiresharkSchemes captures sender h0's port in a short 3-to-1 run of
// every scheme (PFC on, a small buffer), puts every frame of every run in one
// pcap and has tshark decode it with deploy/wireshark/ccbed.lua: every frame's
// ccbed.kind must be the kind wire.Decode finds, with no Lua error; each run
// must hold data, ACKs and its scheme's own feedback kind, HPCC's ACKs an
// echoed INT stack of one hop, and some run a PFC pause.
func TestWiresharkSchemes(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "schemes.pcap")
	w, err := pcapw.Create(all, 0)
	if err != nil {
		t.Fatal(err)
	}
	type frame struct {
		scheme, kind string
	}
	var frames []frame
	var f wire.Frame
	for i, s := range ccalgo.Schemes() {
		spec := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: s.Name, ExpectedFlows: 3, MTU: 1000,
			BufferBytes: 400_000, PFC: fabric.PFC{Enabled: true}, Buffer: switchd.BufferConfig{SizeBytes: 300_000},
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 3}, {ID: 2, Src: 1, Dst: 3}, {ID: 3, Src: 2, Dst: 3}}}
		_, files := simulateCapture(t, spec, 400_000, []string{"h0"}, filepath.Join(dir, s.Name), 0)
		recs, err := pcapw.ReadFile(files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := wire.Decode(r.Data, &f); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			frames = append(frames, frame{s.Name, f.Kind.String()})
			if err := w.Append(int64(i)*1e9+r.TimeNs, r.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows := tsharktest.Fields(t, all, append(tsharktest.PluginArgs(t), "-E", "occurrence=f"),
		[]string{"ccbed.kind", "ccbed.int.nhop", "_ws.expert.message"})
	if len(rows) != len(frames) {
		t.Fatalf("tshark printed %d lines for %d frames", len(rows), len(frames))
	}
	kinds := map[string]map[string]int{} // scheme, ccbed.kind: frames
	echoed := map[string]bool{}          // scheme: an ACK echoes a one-hop INT stack
	for i, fr := range frames {
		got := rows[i]
		if got["ccbed.kind"] != fr.kind || strings.Contains(got["_ws.expert.message"], "Lua") {
			t.Errorf("%s frame %d: ccbed.kind %q, want %q (%s)", fr.scheme, i+1, got["ccbed.kind"], fr.kind, got["_ws.expert.message"])
		}
		if kinds[fr.scheme] == nil {
			kinds[fr.scheme] = map[string]int{}
		}
		kinds[fr.scheme][got["ccbed.kind"]]++
		if got["ccbed.kind"] == "ack" && got["ccbed.int.nhop"] == "1" {
			echoed[fr.scheme] = true
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
				t.Errorf("%s: no %s frame at h0", s.Name, want)
			}
		}
		pfc = pfc || k["pfc"] > 0
	}
	if !echoed["hpcc"] {
		t.Error("hpcc: no ACK echoes a one-hop INT stack")
	}
	if !pfc {
		t.Error("no run sent h0 a PFC pause")
	}
}
