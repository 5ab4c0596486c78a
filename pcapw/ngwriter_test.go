package pcapw

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/internal/tsharktest"
)

// ngCase is a frame of the pcapng tests and what reading it back gives.
type ngCase struct {
	name string
	p    NgPacket
	keep int // bytes kept
}

// ngCases are frames on two interfaces (snap lengths 0 and 64): every
// direction, padding of 0..3 bytes, a comment of each padding, a wire length
// beyond the bytes given, times at 0 and beyond 2^32 ns.
func ngCases() []ngCase {
	return []ngCase{
		{"inbound, whole", NgPacket{Interface: 0, TimeNs: 0, Data: frame(60), Dir: DirInbound}, 60},
		{"outbound, pad 3", NgPacket{Interface: 0, TimeNs: 1, Data: frame(61), Dir: DirOutbound}, 61},
		{"unknown, pad 2", NgPacket{Interface: 0, TimeNs: 999_999_999, Data: frame(62)}, 62},
		{"comment of 5", NgPacket{Interface: 1, TimeNs: 1_000_000_000, Data: frame(63), Dir: DirInbound, Comment: "hello"}, 63},
		{"snapped, comment of 8", NgPacket{Interface: 1, TimeNs: 5_000_000_123, Data: frame(1500), Dir: DirOutbound, Comment: "12345678"}, 64},
		{"head of a longer frame", NgPacket{Interface: 0, TimeNs: 86_400_123_456_789, Data: frame(14), WireLen: 1086, Dir: DirOutbound}, 14},
		{"empty frame", NgPacket{Interface: 1, TimeNs: 86_400_123_456_790, Data: nil, WireLen: 60, Dir: DirInbound}, 0},
	}
}

// writeNg writes ngCases to a pcapng file at path (two interfaces).
func writeNg(t *testing.T, path string) []ngCase {
	t.Helper()
	w, err := CreateNg(path, NgSection{UserAppl: "ccbed test", OS: "linux"})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range []NgInterface{{Name: "s0:p0", Description: "s0 port 0, link to h0"}, {Name: "s0:p1", Snaplen: 64}} {
		if got, err := w.AddInterface(in); err != nil || got != i {
			t.Fatalf("AddInterface %d: %d, %v", i, got, err)
		}
	}
	cases := ngCases()
	for _, c := range cases {
		if err := w.Append(c.p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if w.Frames() != uint64(len(cases)) || w.FramesOf(0) != 4 || w.FramesOf(1) != 3 {
		t.Errorf("frames %d (%d, %d), want %d (4, 3)", w.Frames(), w.FramesOf(0), w.FramesOf(1), len(cases))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestNgWriterRoundTrip writes frames with NgWriter and reads them back with
// NgReader: interface, time, bytes kept, length on the wire, direction,
// comment and interface names.
func TestNgWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcapng")
	cases := writeNg(t, path)
	raw, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != len(cases) {
		t.Fatalf("%d records, want %d", len(raw), len(cases))
	}
	for i, c := range cases {
		r := raw[i]
		wire := max(c.p.WireLen, len(c.p.Data))
		if r.Interface != c.p.Interface || r.TimeNs != c.p.TimeNs || r.OrigLen != wire || !bytes.Equal(r.Data, c.p.Data[:c.keep]) ||
			r.Dir != c.p.Dir || r.Comment != c.p.Comment || r.LinkType != LinkTypeEthernet {
			t.Errorf("%s: read iface %d t %d len %d/%d dir %v comment %q link %d, want iface %d t %d len %d/%d dir %v comment %q",
				c.name, r.Interface, r.TimeNs, len(r.Data), r.OrigLen, r.Dir, r.Comment, r.LinkType,
				c.p.Interface, c.p.TimeNs, c.keep, wire, c.p.Dir, c.p.Comment)
		}
	}
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nr, err := NewNgReader(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := nr.Next(nil); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if a, b := nr.InterfaceName(0), nr.InterfaceName(1); a != "s0:p0" || b != "s0:p1" {
		t.Errorf("interface names %q, %q", a, b)
	}
	if !bytes.Contains(f, []byte("ccbed test")) {
		t.Error("no shb_userappl in the file")
	}
}

// TestNgWriterErrors: frames the writer refuses leave it usable; a failed
// write sticks; Close twice is fine and later calls fail.
func TestNgWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewNgWriter(&buf, NgSection{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface(NgInterface{Snaplen: MaxSnaplen + 1}); err != ErrSnaplen {
		t.Errorf("snap length too large: %v", err)
	}
	if _, err := w.AddInterface(NgInterface{Name: strings.Repeat("x", 70000)}); err != ErrOption {
		t.Errorf("a name of 70000 bytes: %v", err)
	}
	if _, err := w.AddInterface(NgInterface{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    NgPacket
		want error
	}{
		{"no interface 1", NgPacket{Interface: 1, Data: frame(60)}, ErrInterface},
		{"negative interface", NgPacket{Interface: -1, Data: frame(60)}, ErrInterface},
		{"negative time", NgPacket{TimeNs: -1, Data: frame(60)}, ErrTimestamp},
		{"comment too long", NgPacket{Data: frame(60), Comment: strings.Repeat("c", 70000)}, ErrOption},
	} {
		if err := w.Append(c.p); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := w.Append(NgPacket{Data: frame(60)}); err != nil || w.Frames() != 1 {
		t.Fatalf("after refusals: %v, %d frames", err, w.Frames())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Append(NgPacket{Data: frame(60)}); err != ErrClosed {
		t.Errorf("Append after Close: %v", err)
	}
	fw, _ := NewNgWriter(&failWriter{n: 1000}, NgSection{})
	fw.AddInterface(NgInterface{})
	big := frame(1500)
	for range 100 { // past the buffer
		fw.Append(NgPacket{Data: big})
	}
	if err := fw.Close(); err != errDisk {
		t.Errorf("a failing writer: %v", err)
	}
}

// TestNgAppendAllocatesNothing: Append, with and without a comment, and
// Port.Append on both formats allocate nothing.
func TestNgAppendAllocatesNothing(t *testing.T) {
	w, _ := NewNgWriter(io.Discard, NgSection{})
	w.AddInterface(NgInterface{Name: "x"})
	f := frame(1086)
	pw, _ := NewWriter(io.Discard, 0)
	ports := []*Port{NewNgPort(w, 0), NewPcapPort(pw)}
	var ns int64
	allocs := testing.AllocsPerRun(1000, func() {
		ns += 850
		w.Append(NgPacket{TimeNs: ns, Data: f, Dir: DirInbound})
		w.Append(NgPacket{TimeNs: ns, Data: f[:100], WireLen: 1086, Dir: DirOutbound, Comment: "a comment"})
		for _, p := range ports {
			p.Append(ns, f, len(f), DirOutbound)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame", allocs)
	}
}

// TestNgTshark: Wireshark reads NgWriter's files: interface names,
// directions, comments, times and lengths.
func TestNgTshark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcapng")
	cases := writeNg(t, path)
	rows := tsharktest.Fields(t, path, nil, []string{"frame.interface_name", "frame.interface_description",
		"frame.packet_flags_direction", "frame.comment", "frame.time_epoch", "frame.len", "frame.cap_len"})
	if len(rows) != len(cases) {
		t.Fatalf("tshark read %d frames, want %d", len(rows), len(cases))
	}
	names := []string{"s0:p0", "s0:p1"}
	for i, c := range cases {
		f := rows[i]
		if f["frame.interface_name"] != names[c.p.Interface] {
			t.Errorf("%s: interface %q, want %q", c.name, f["frame.interface_name"], names[c.p.Interface])
		}
		if c.p.Interface == 0 && f["frame.interface_description"] != "s0 port 0, link to h0" {
			t.Errorf("%s: description %q", c.name, f["frame.interface_description"])
		}
		// tshark 4 prints the direction as 0x00000001
		if d, err := strconv.ParseUint(f["frame.packet_flags_direction"], 0, 8); err != nil || Direction(d) != c.p.Dir {
			t.Errorf("%s: direction %q, want %d (%v)", c.name, f["frame.packet_flags_direction"], c.p.Dir, c.p.Dir)
		}
		if f["frame.comment"] != c.p.Comment {
			t.Errorf("%s: comment %q, want %q", c.name, f["frame.comment"], c.p.Comment)
		}
		sec, frac, _ := strings.Cut(f["frame.time_epoch"], ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		ns, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if err1 != nil || err2 != nil || s*1e9+ns != c.p.TimeNs {
			t.Errorf("%s: time %s, want %d ns", c.name, f["frame.time_epoch"], c.p.TimeNs)
		}
		if f["frame.len"] != strconv.Itoa(max(c.p.WireLen, len(c.p.Data))) || f["frame.cap_len"] != strconv.Itoa(c.keep) {
			t.Errorf("%s: len %s cap_len %s", c.name, f["frame.len"], f["frame.cap_len"])
		}
	}
}

// FuzzNgRoundTrip: any frame, time, direction and comment NgWriter takes
// reads back the same through NgReader.
func FuzzNgRoundTrip(f *testing.F) {
	f.Add(int64(5), []byte{1, 2, 3}, uint16(1086), uint8(1), "c", uint16(0))
	f.Add(int64(1)<<40, frame(64), uint16(0), uint8(2), "", uint16(32))
	f.Fuzz(func(t *testing.T, ns int64, data []byte, wire uint16, dir uint8, comment string, snap uint16) {
		var buf bytes.Buffer
		w, err := NewNgWriter(&buf, NgSection{UserAppl: comment})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddInterface(NgInterface{Name: comment, Snaplen: int(snap)}); err != nil {
			t.Fatal(err)
		}
		p := NgPacket{TimeNs: ns, Data: data, WireLen: int(wire), Dir: Direction(dir & 3), Comment: comment}
		err = w.Append(p)
		if ns < 0 {
			if err != ErrTimestamp {
				t.Fatalf("time %d: %v", ns, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		r, err := NewNgReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next(nil)
		if err != nil {
			t.Fatal(err)
		}
		keep := len(data)
		if snap > 0 {
			keep = min(keep, int(snap))
		}
		if rec.TimeNs != ns || !bytes.Equal(rec.Data, data[:keep]) || rec.OrigLen != max(int(wire), len(data)) ||
			rec.Dir != p.Dir || rec.Comment != comment || r.InterfaceName(0) != comment {
			t.Fatalf("read %+v, want %+v", rec, p)
		}
		if _, err := r.Next(nil); err != io.EOF {
			t.Fatalf("after the frame: %v", err)
		}
	})
}
