package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// sample is a trace of two nodes and three records, one of every shape.
func sample(t testing.TB) ([]byte, []Record) {
	t.Helper()
	recs := []Record{
		{TimeNs: 1, Kind: Enqueue, Prio: 3, Node: 1, Port: 2, FrameBytes: 1048, QueueBytes: 1048,
			Flow: Flow{SrcIP: 0x0a000001, DstIP: 0x0a000004, SrcPort: 0xc123, DstPort: wire.RoCEv2Port, QP: 0xabcdef}},
		{TimeNs: 1 << 40, Kind: PFCPause, Prio: 7, Node: 0, Port: 65535, QueueBytes: 1<<32 - 1},
		{TimeNs: -5, Kind: PFCResume},
	}
	b, err := AppendHeader(nil, []string{"s0", "leaf-1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		b = AppendRecord(b, &recs[i])
	}
	return b, recs
}

// TestRoundTrip: what AppendHeader and AppendRecord write, the Reader reads
// back, field for field, then io.EOF; the header's bytes are the diagram's.
func TestRoundTrip(t *testing.T) {
	b, recs := sample(t)
	want := []byte("CCBTRACE\x01\x00\x28\x00\x02\x00\x00\x00\x02s0\x06leaf-1")
	if !bytes.HasPrefix(b, want) || len(b) != len(want)+len(recs)*RecordSize {
		t.Fatalf("header % x: want % x then %d records", b[:len(want)], want, len(recs))
	}
	// Record 0's flow source is at offset 20, little-endian.
	if got := binary.LittleEndian.Uint32(b[len(want)+20:]); got != 0x0a000001 {
		t.Fatalf("record 0's source at offset 20: %#x", got)
	}
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if n := rd.Nodes(); len(n) != 2 || n[0] != "s0" || n[1] != "leaf-1" {
		t.Fatalf("nodes %q", n)
	}
	for i := range recs {
		var r Record
		if err := rd.Next(&r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if r != recs[i] {
			t.Fatalf("record %d: %+v, want %+v", i, r, recs[i])
		}
	}
	var r Record
	if err := rd.Next(&r); err != io.EOF {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}
}

// TestReaderRejects: every kind of malformed input is an error that says
// what is wrong.
func TestReaderRejects(t *testing.T) {
	good, _ := sample(t)
	hdr := len(good) - 3*RecordSize
	rec0 := hdr
	set := func(off int, v ...byte) []byte {
		b := append([]byte(nil), good...)
		copy(b[off:], v)
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string // in the error of NewReader or of a Next
	}{
		{"empty", nil, "ends in the header"},
		{"short header", good[:10], "ends in the header"},
		{"magic", set(0, 'X'), "not a ccbed trace"},
		{"version", set(8, 2), "version 2"},
		{"record size", set(10, 32), "record size 32"},
		{"no node", set(12, 0, 0), "names no node"},
		{"reserved header", set(14, 1), "reserved field"},
		{"empty name", set(16, 0), "empty name"},
		{"name cut", good[:19], "node 1's name length"},
		{"name cut inside", good[:21], "node 1's name"},
		{"record cut", good[:hdr+RecordSize+7], "record 1 cut short: 7 of 40"},
		{"kind 0", set(rec0+8, 0), "unknown kind 0"},
		{"kind 7", set(rec0+8, 7), "unknown kind 7"},
		{"priority", set(rec0+9, 8), "priority 8"},
		{"node", set(rec0+10, 2, 0), "node 2, the header names 2"},
		{"qp", set(rec0+35, 1), "wider than 24 bits"},
		{"reserved record", set(rec0+39, 1), "reserved field 0x1000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readAll(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v: want one saying %q", err, tc.want)
			}
		})
	}
	if err := readAll(good); err != nil {
		t.Fatalf("the good trace: %v", err)
	}
}

// readAll reads a trace to its end: nil, or the first error.
func readAll(b []byte) error {
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	var r Record
	for {
		if err := rd.Next(&r); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestAppendHeaderRejects: names a header cannot hold.
func TestAppendHeaderRejects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []string
	}{
		{"none", nil},
		{"empty name", []string{"s0", ""}},
		{"long name", []string{strings.Repeat("x", 256)}},
	} {
		if _, err := AppendHeader(nil, tc.nodes); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestAppendRecordAllocs: appending to a buffer with room allocates nothing.
func TestAppendRecordAllocs(t *testing.T) {
	buf := make([]byte, 0, 64*RecordSize)
	r := Record{TimeNs: 7, Kind: Dequeue, Node: 1}
	if n := testing.AllocsPerRun(1000, func() {
		buf = AppendRecord(buf[:0], &r)
		FlowOf(&r.Flow, nil, 0)
	}); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

// TestKinds: names parse back to their kinds; an unknown one is an error
// that lists the known.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want KindMask
		err  string
	}{
		{"", AllKinds, ""},
		{"drop", 1 << Drop, ""},
		{"enqueue, dequeue,pfc_pause", 1<<Enqueue | 1<<Dequeue | 1<<PFCPause, ""},
		{"ecn_mark,pfc_resume", 1<<ECNMark | 1<<PFCResume, ""},
		{"dropp", 0, "unknown event kind \"dropp\": want one of enqueue, dequeue, drop, ecn_mark, pfc_pause, pfc_resume"},
	} {
		m, err := ParseKinds(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || m != tc.want {
			t.Errorf("%q: %b, %v: want %b", tc.in, m, err, tc.want)
		}
	}
	for k := Enqueue; k < numKinds; k++ {
		if m, err := ParseKinds(k.String()); err != nil || !m.Has(k) || m != 1<<k {
			t.Errorf("kind %d %q: %b %v", k, k, m, err)
		}
	}
	if Kind(9).String() != "kind(9)" {
		t.Errorf("Kind(9) is %q", Kind(9))
	}
}

// TestFlowOf: the flow of each kind of frame the switch queues.
func TestFlowOf(t *testing.T) {
	roce := make([]byte, wire.EthernetLen+20+wire.UDPLen+wire.BTHLen)
	ip := roce[wire.EthernetLen:]
	ip[0], ip[9] = 0x45, 17
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 4})
	binary.BigEndian.PutUint16(ip[20:], 0xc001)
	binary.BigEndian.PutUint16(ip[22:], wire.RoCEv2Port)
	binary.BigEndian.PutUint32(ip[20+wire.UDPLen+4:], 0xff123456) // the BTH's reserved byte, then the QP
	frag := append([]byte(nil), roce...)
	frag[wire.EthernetLen+7] = 1 // fragment offset 1
	tcp := append([]byte(nil), roce...)
	tcp[wire.EthernetLen+9] = 6
	udp := append([]byte(nil), roce...)
	binary.BigEndian.PutUint16(udp[wire.EthernetLen+22:], 5201)
	addrs := Flow{SrcIP: 0x0a000001, DstIP: 0x0a000004}
	for _, tc := range []struct {
		name  string
		frame []byte
		want  Flow
	}{
		{"rocev2", roce, Flow{SrcIP: 0x0a000001, DstIP: 0x0a000004, SrcPort: 0xc001, DstPort: wire.RoCEv2Port, QP: 0x123456}},
		{"udp", udp, Flow{SrcIP: 0x0a000001, DstIP: 0x0a000004, SrcPort: 0xc001, DstPort: 5201}},
		{"fragment", frag, addrs},
		{"not udp", tcp, addrs},
		{"bth cut", roce[:len(roce)-1], Flow{SrcIP: 0x0a000001, DstIP: 0x0a000004, SrcPort: 0xc001, DstPort: wire.RoCEv2Port}},
		{"ip cut", roce[:wire.EthernetLen+19], Flow{}},
	} {
		var f Flow
		f.QP = 99
		FlowOf(&f, tc.frame, wire.EthernetLen)
		if f != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, f, tc.want)
		}
	}
}

// FuzzReader: the reader never panics, and whatever it accepts re-encodes
// to the same bytes.
func FuzzReader(f *testing.F) {
	good, _ := sample(f)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, in []byte) {
		rd, err := NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		out, err := AppendHeader(nil, rd.Nodes())
		if err != nil {
			t.Fatalf("the reader accepted nodes %q AppendHeader refuses: %v", rd.Nodes(), err)
		}
		var r Record
		for {
			err := rd.Next(&r)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return
			}
			out = AppendRecord(out, &r)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("re-encoded\n% x\nread from\n% x", out, in)
		}
	})
}
