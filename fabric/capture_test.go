package fabric_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/wire"
)

func TestCapturePorts(t *testing.T) {
	star := fabric.Star(4, 10e9, 1000)
	ls := fabric.LeafSpine(2, 2, 2, 10e9, 10e9, 1000) // h0-h3, leaf0, leaf1, spine0, spine1
	for _, tc := range []struct {
		name  string
		topo  *fabric.Topology
		names []string
		want  []string // port names, or the error's text
		err   bool
	}{
		{"switch port", star, []string{"s0.p3"}, []string{"s0.p3-h3.pcap"}, false},
		{"host", star, []string{"h2"}, []string{"h2-s0.p2.pcap"}, false},
		{"host port", star, []string{"h2.p0"}, []string{"h2-s0.p2.pcap"}, false},
		{"whole switch, in port order, once", star, []string{"s0", "s0.p1"}, []string{"s0.p0-h0.pcap", "s0.p1-h1.pcap", "s0.p2-h2.pcap", "s0.p3-h3.pcap"}, false},
		{"hosts before switches", star, []string{"s0.p0", "h0"}, []string{"h0-s0.p0.pcap", "s0.p0-h0.pcap"}, false},
		{"every host", star, []string{fabric.CaptureHosts}, []string{"h0-s0.p0.pcap", "h1-s0.p1.pcap", "h2-s0.p2.pcap", "h3-s0.p3.pcap"}, false},
		{"leaf uplinks", ls, []string{"leaf0.p2", "spine1.p1"}, []string{"leaf0.p2-spine0.p0.pcap", "spine1.p1-leaf1.p3.pcap"}, false},
		{"every switch", ls, []string{fabric.CaptureSwitches}, nil, false},
		{"none", star, nil, nil, false},
		{"no such switch", star, []string{"s1.p0"}, []string{`"s1.p0" names no host, switch or switch port`}, true},
		{"no such node", star, []string{"x"}, []string{`"x" names no host`}, true},
		{"port out of range", star, []string{"s0.p4"}, []string{`"s0.p4": s0 has ports 0..3`}, true},
		{"host port out of range", star, []string{"h1.p1"}, []string{`"h1.p1": h1 has ports 0..0`}, true},
		{"port not a number", star, []string{"s0.px"}, []string{`port "x" is not a number`}, true},
		{"port with a sign", star, []string{"s0.p+1"}, []string{`port "+1" is not a number`}, true},
		{"empty", star, []string{""}, []string{`"" names no host`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ports, err := tc.topo.CapturePorts(tc.names)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want[0]) {
					t.Fatalf("got %v, want an error with %q", err, tc.want[0])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ports {
				got = append(got, tc.topo.CaptureFileName(p))
			}
			if tc.name == "every switch" {
				if len(ports) != 2*4+2*2 { // leaves: 2 hosts + 2 spines; spines: 2 leaves
					t.Fatalf("%d ports: %v", len(ports), got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// rocc3to1 is RoCC 3-to-1 at 10 Gb/s with 1 us links: flows 1-3 from h0-h2
// to h3, flow 3 of 300 KB.
func rocc3to1() *fabric.Spec {
	s := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: "rocc", ExpectedFlows: 3, Exact: true,
		Params: roccQueues()}
	for f := 0; f < 3; f++ {
		s.Flows = append(s.Flows, fabric.Flow{ID: f + 1, Src: f, Dst: 3, StartNs: int64(f) * 100_000})
	}
	s.Flows[2].SizeBytes = 300_000
	return s
}

// simulateCapture runs spec for endNs in virtual time, capturing the named
// ports into dir when names is not nil, and returns the result and files.
func simulateCapture(tb testing.TB, spec *fabric.Spec, endNs int64, names []string, dir string, snaplen int) (*fabric.Result, []fabric.CaptureFile) {
	tb.Helper()
	return simulateCaptureFormat(tb, spec, endNs, names, dir, snaplen, fabric.FormatPcap)
}

// simulateCaptureFormat is simulateCapture writing files of format.
func simulateCaptureFormat(tb testing.TB, spec *fabric.Spec, endNs int64, names []string, dir string, snaplen int, format string) (*fabric.Result, []fabric.CaptureFile) {
	tb.Helper()
	p, err := spec.Plan()
	if err != nil {
		tb.Fatal(err)
	}
	v, err := fabric.NewVirtual(p)
	if err != nil {
		tb.Fatal(err)
	}
	if names != nil {
		ports, err := p.Topo.CapturePorts(names)
		if err != nil {
			tb.Fatal(err)
		}
		if err := v.Capture(&fabric.Capture{Ports: ports, Dir: dir, Snaplen: snaplen, Format: format}); err != nil {
			tb.Fatal(err)
		}
	}
	start := time.Now()
	if err := v.Run(context.Background(), endNs, nil); err != nil {
		tb.Fatal(err)
	}
	files, err := v.CloseCapture()
	if err != nil {
		tb.Fatal(err)
	}
	r := v.Result()
	r.WallNs = time.Since(start).Nanoseconds()
	return r, files
}

// record is a captured frame with its direction at the captured port.
type record struct {
	pcapw.Record
	tx bool // sent by the captured port
}

// readCapture reads a capture file and splits its records by direction:
// a frame is the port's own when its IPv4 source is from (frames without IPv4
// are not expected here).
func readCapture(tb testing.TB, path string, from func(src uint32) bool) (all, tx, rx []record) {
	tb.Helper()
	recs, err := pcapw.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var f wire.Frame
	for _, r := range recs {
		if err := wire.Decode(r.Data, &f); err != nil || f.IP == nil {
			tb.Fatalf("%s: a frame that is not ccbed's IPv4 (%v)", path, err)
		}
		rec := record{Record: r, tx: from(f.IP.Src())}
		all = append(all, rec)
		if rec.tx {
			tx = append(tx, rec)
		} else {
			rx = append(rx, rec)
		}
	}
	return all, tx, rx
}

// TestCaptureVirtual captures RoCC 3-to-1 in virtual time at the bottleneck
// (s0.p3, toward the receiver), at a sender (h0) and at the receiver (h3), and
// checks the files against the run: frame counts equal the ports' counters,
// times never decrease and end by the run's end, each flow's data frames are
// all there in PSN order and at least a serialisation time apart, and every
// frame's arrival time at the far end of its link is the wire model's (start
// when the wire is free, serialise at 10 Gb/s with 24 bytes of overhead,
// propagate 1 us, round up). Capturing changes nothing in the run.
func TestCaptureVirtual(t *testing.T) {
	const endNs = 3_000_000
	dir := t.TempDir()
	r, files := simulateCapture(t, rocc3to1(), endNs, []string{"s0.p3", "h0", "h3"}, dir, 0)
	topo := r.Plan.Topo
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.Path))
		if f.Dropped != 0 {
			t.Errorf("%s: %d dropped in virtual time", f.Path, f.Dropped)
		}
	}
	if want := []string{"h0-s0.p0.pcap", "h3-s0.p3.pcap", "s0.p3-h3.pcap"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	if files[2].Port != "s0.p3" || files[2].Peer != "h3" {
		t.Errorf("file %+v", files[2])
	}
	isHost := func(h int) func(uint32) bool { return func(src uint32) bool { return src == fabric.HostIP(h) } }
	notHost := func(h int) func(uint32) bool { return func(src uint32) bool { return src != fabric.HostIP(h) } }
	h0All, h0Tx, h0Rx := readCapture(t, files[0].Path, isHost(0))
	h3All, h3Tx, h3Rx := readCapture(t, files[1].Path, isHost(3))
	swAll, swTx, swRx := readCapture(t, files[2].Path, notHost(3))

	for i, all := range [][]record{h0All, h3All, swAll} {
		if uint64(len(all)) != files[i].Frames {
			t.Errorf("%s: %d records, Frames %d", files[i].Path, len(all), files[i].Frames)
		}
		for j := range all {
			if all[j].TimeNs > endNs || j > 0 && all[j].TimeNs < all[j-1].TimeNs {
				t.Fatalf("%s: record %d at %d ns after %d ns (end %d)", files[i].Path, j, all[j].TimeNs, all[j-1].TimeNs, endNs)
			}
			if all[j].OrigLen != len(all[j].Data) {
				t.Fatalf("%s: record %d truncated", files[i].Path, j)
			}
		}
	}

	// Counts: the switch port's counters, the hosts' frames sent and received.
	pc := r.Port(0, 3)
	if uint64(len(swTx)) != pc.TxPackets || uint64(len(swRx)) != pc.RxPackets {
		t.Errorf("s0.p3: captured %d sent, %d received; counters %d, %d", len(swTx), len(swRx), pc.TxPackets, pc.RxPackets)
	}
	for _, h := range []struct {
		i      int
		tx, rx []record
	}{{0, h0Tx, h0Rx}, {3, h3Tx, h3Rx}} {
		hrx, htx := r.Hosts[h.i].Counters()
		if uint64(len(h.tx)) != htx.DataFrames+htx.ControlFrames || uint64(len(h.rx)) != hrx.Frames {
			t.Errorf("h%d: captured %d sent, %d received; counters %d + %d sent, %d received", h.i,
				len(h.tx), len(h.rx), htx.DataFrames, htx.ControlFrames, hrx.Frames)
		}
	}
	t.Logf("h0 sent %d, received %d; s0.p3 sent %d, received %d; h3 sent %d, received %d",
		len(h0Tx), len(h0Rx), len(swTx), len(swRx), len(h3Tx), len(h3Rx))
	if len(h0Tx) < 1000 || len(swTx) < 2000 || len(h3Tx) < 1000 {
		t.Fatalf("too little traffic: h0 sent %d, s0.p3 %d, h3 %d", len(h0Tx), len(swTx), len(h3Tx))
	}

	// Flow 1's data frames at h0: every PSN once, in order, a serialisation
	// time apart at least.
	var f wire.Frame
	next := uint32(0)
	var last int64 = -1
	for _, rec := range h0Tx {
		if wire.Decode(rec.Data, &f) != nil || f.Kind != wire.KindData {
			t.Fatalf("h0 sent a %v frame", f.Kind)
		}
		if f.BTH.PSN() != next {
			t.Fatalf("h0: PSN %d, want %d", f.BTH.PSN(), next)
		}
		next++
		ser := int64(float64(rec.OrigLen+24) * 0.8) // ns at 10 Gb/s, rounded down
		if last >= 0 && rec.TimeNs-last < ser {
			t.Fatalf("h0: data frames %d ns apart, serialisation %d ns", rec.TimeNs-last, ser)
		}
		last = rec.TimeNs
	}

	// The wire model: what one end sent arrives at the other at the times
	// the model gives, byte for byte, except what is still on the wire at
	// the end.
	wireCheck := func(name string, sent, got []record) {
		t.Helper()
		free := 0.0
		k := 0
		for _, s := range sent {
			start := math.Max(float64(s.TimeNs), free)
			free = start + float64(s.OrigLen+24)*(8e9/10e9)
			at := int64(math.Ceil(free + 1000))
			if at > endNs {
				break
			}
			if k >= len(got) {
				t.Fatalf("%s: frame %d sent at %d ns, due at %d ns, not delivered", name, k, s.TimeNs, at)
			}
			if got[k].TimeNs != at || !bytes.Equal(got[k].Data, s.Data) {
				t.Fatalf("%s: frame %d sent at %d ns arrived at %d ns, want %d (same bytes: %v)", name, k, s.TimeNs, got[k].TimeNs, at, bytes.Equal(got[k].Data, s.Data))
			}
			k++
		}
		if k != len(got) {
			t.Fatalf("%s: %d frames delivered, %d due", name, len(got), k)
		}
	}
	wireCheck("s0.p3 -> h3", swTx, h3Rx)
	wireCheck("h3 -> s0.p3", h3Tx, swRx)

	// The same run without a capture: the same events, counters, samples
	// and FCTs.
	plain, _ := simulateCapture(t, rocc3to1(), endNs, nil, "", 0)
	if plain.Events != r.Events || !reflect.DeepEqual(plain.Samples, r.Samples) || !reflect.DeepEqual(plain.FCTs(), r.FCTs()) {
		t.Errorf("capture changed the run: %d events against %d, samples or FCTs differ", r.Events, plain.Events)
	}
	for i := range topo.Switches {
		if !reflect.DeepEqual(plain.Switches[i].Snapshot(), r.Switches[i].Snapshot()) {
			t.Errorf("capture changed switch %d's counters", i)
		}
	}
	for i := range topo.Hosts {
		arx, atx := plain.Hosts[i].Counters()
		brx, btx := r.Hosts[i].Counters()
		if arx != brx || atx != btx {
			t.Errorf("capture changed host %d's counters", i)
		}
	}

	// A snap length keeps the first bytes of the same frames at the same
	// times; the files are the same on every run.
	dir2 := t.TempDir()
	_, cut := simulateCapture(t, rocc3to1(), endNs, []string{"s0.p3"}, dir2, 54)
	short, err := pcapw.ReadFile(cut[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(short) != len(swAll) {
		t.Fatalf("snaplen 54: %d records, want %d", len(short), len(swAll))
	}
	for i, s := range short {
		w := swAll[i]
		if s.TimeNs != w.TimeNs || s.OrigLen != w.OrigLen || !bytes.Equal(s.Data, w.Data[:min(54, len(w.Data))]) {
			t.Fatalf("snaplen 54: record %d differs", i)
		}
	}
}

// TestCaptureVirtualPcapng captures every port of switch s0 and hosts h0
// and h3 of RoCC 3-to-1 in pcapng: one file per node, an interface per port
// named node:port, times never decreasing across the node's ports, each
// port's frames in each direction as many as its counters, the direction in
// epb_flags the one the frame's source address gives, and s0.p3's frames
// the same, at the same times, as in a pcap capture of the same run.
func TestCaptureVirtualPcapng(t *testing.T) {
	const endNs = 3_000_000
	dir := t.TempDir()
	r, files := simulateCaptureFormat(t, rocc3to1(), endNs, []string{"s0", "h0", "h3"}, dir, 0, fabric.FormatPcapng)
	var got []string
	for _, f := range files {
		got = append(got, f.Port+"@"+filepath.Base(f.Path))
	}
	want := []string{"h0@h0.pcapng", "h3@h3.pcapng", "s0.p0@s0.pcapng", "s0.p1@s0.pcapng", "s0.p2@s0.pcapng", "s0.p3@s0.pcapng"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ports and files %v, want %v", got, want)
	}
	recs, err := pcapw.ReadFile(filepath.Join(dir, "s0.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	var f wire.Frame
	counts := make([][2]uint64, 4) // per port: sent, received
	var p3 []pcapw.Record
	for i, rec := range recs {
		if i > 0 && rec.TimeNs < recs[i-1].TimeNs {
			t.Fatalf("record %d at %d ns after %d ns", i, rec.TimeNs, recs[i-1].TimeNs)
		}
		if err := wire.Decode(rec.Data, &f); err != nil || f.IP == nil {
			t.Fatalf("record %d: not ccbed's IPv4 (%v)", i, err)
		}
		// a port of s0 sends what host p did not
		tx := f.IP.Src() != fabric.HostIP(rec.Interface)
		if want := map[bool]pcapw.Direction{true: pcapw.DirOutbound, false: pcapw.DirInbound}[tx]; rec.Dir != want {
			t.Fatalf("record %d on s0.p%d from %#x: direction %v, want %v", i, rec.Interface, f.IP.Src(), rec.Dir, want)
		}
		if tx {
			counts[rec.Interface][0]++
		} else {
			counts[rec.Interface][1]++
		}
		if rec.Interface == 3 {
			p3 = append(p3, rec)
		}
	}
	for p, c := range counts {
		pc := r.Port(0, p)
		if c[0] != pc.TxPackets || c[1] != pc.RxPackets || files[2+p].Frames != c[0]+c[1] {
			t.Errorf("s0.p%d: captured %d sent, %d received (Frames %d); counters %d, %d", p, c[0], c[1], files[2+p].Frames, pc.TxPackets, pc.RxPackets)
		}
	}
	_, old := simulateCapture(t, rocc3to1(), endNs, []string{"s0.p3"}, t.TempDir(), 0)
	plain, err := pcapw.ReadFile(old[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != len(p3) {
		t.Fatalf("s0.p3: %d frames in pcapng, %d in pcap", len(p3), len(plain))
	}
	for i := range plain {
		if plain[i].TimeNs != p3[i].TimeNs || !bytes.Equal(plain[i].Data, p3[i].Data) {
			t.Fatalf("s0.p3 frame %d: pcapng at %d ns, pcap at %d ns (same bytes: %v)", i, p3[i].TimeNs, plain[i].TimeNs, bytes.Equal(plain[i].Data, p3[i].Data))
		}
	}
	for _, h := range []string{"h0", "h3"} {
		recs, err := pcapw.ReadFile(filepath.Join(dir, h+".pcapng"))
		if err != nil || len(recs) < 1000 {
			t.Fatalf("%s: %d frames, %v", h, len(recs), err)
		}
	}
}

// BenchmarkRoCC3to1Capture is BenchmarkRoCC3to1 with no capture, with the
// bottleneck port (s0.p3, both directions) captured whole (pcap and pcapng)
// and its first 128 bytes, and with every switch port captured (pcap and
// pcapng): the cost of a capture in
// virtual time (Mevents/s against "none"; the files go to the test's
// temporary directory).
func BenchmarkRoCC3to1Capture(b *testing.B) {
	for _, c := range []struct {
		name    string
		ports   []string
		snaplen int
		format  string
	}{
		{"none", nil, 0, ""},
		{"s0.p3", []string{"s0.p3"}, 0, fabric.FormatPcap},
		{"s0.p3-pcapng", []string{"s0.p3"}, 0, fabric.FormatPcapng},
		{"s0.p3-snaplen128", []string{"s0.p3"}, 128, fabric.FormatPcap},
		{"switches", []string{fabric.CaptureSwitches}, 0, fabric.FormatPcap},
		{"switches-pcapng", []string{fabric.CaptureSwitches}, 0, fabric.FormatPcapng},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var events, frames int64
			var wall float64
			cpu0 := processCPU(b)
			for i := 0; i < b.N; i++ {
				s := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: "rocc", ExpectedFlows: 3, Exact: true,
					Params: roccQueues()}
				for f := 0; f < 3; f++ {
					s.Flows = append(s.Flows, fabric.Flow{ID: f + 1, Src: f, Dst: 3})
				}
				r, files := simulateCaptureFormat(b, s, 40_000_000, c.ports, b.TempDir(), c.snaplen, c.format)
				wall += float64(r.WallNs)
				events += r.Events
				for _, f := range files {
					frames += int64(f.Frames)
				}
			}
			b.ReportMetric(float64(events)/wall*1e3, "Mevents/s")
			b.ReportMetric(float64(frames)/float64(b.N), "frames/op")
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(events), "cpu-ns/event")
		})
	}
}

func TestOpenCaptureErrors(t *testing.T) {
	topo := fabric.Star(2, 10e9, 1000)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		c    fabric.Capture
		want string
	}{
		{"twice", fabric.Capture{Ports: []fabric.CapturePort{{Node: 2, Port: 1}, {Node: 2, Port: 1}}, Dir: dir}, "s0.p1 listed twice"},
		{"no such port", fabric.Capture{Ports: []fabric.CapturePort{{Node: 0, Port: 1}}, Dir: dir}, "node 0 has no port 1"},
		{"no such node", fabric.Capture{Ports: []fabric.CapturePort{{Node: 3, Port: 0}}, Dir: dir}, "node 3 has no port 0"},
		{"snaplen", fabric.Capture{Dir: dir, Snaplen: -1}, "snap length"},
		{"format", fabric.Capture{Dir: dir, Format: "pcap-ng"}, `format "pcap-ng": want pcapng or pcap`},
		{"dir is a file", fabric.Capture{Ports: []fabric.CapturePort{{Node: 0, Port: 0}}, Dir: "capture_test.go"}, "capture_test.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := fabric.OpenCapture(topo, &tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				if s != nil {
					s.Close()
				}
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
