package pcapw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/internal/tsharktest"
	"github.com/google/gopacket/pcapgo"
)

// frame returns n bytes 0, 1, 2, ... (mod 256).
func frame(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestFileHeader checks the 24 header bytes for each snap length, and that
// out-of-range snap lengths are refused.
func TestFileHeader(t *testing.T) {
	for _, tc := range []struct {
		snaplen, want int
		err           error
	}{
		{0, DefaultSnaplen, nil},
		{1, 1, nil},
		{128, 128, nil},
		{MaxSnaplen, MaxSnaplen, nil},
		{-1, 0, ErrSnaplen},
		{MaxSnaplen + 1, 0, ErrSnaplen},
	} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, tc.snaplen)
		if !errors.Is(err, tc.err) {
			t.Fatalf("snaplen %d: error %v, want %v", tc.snaplen, err, tc.err)
		}
		if err != nil {
			continue
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// a1b23c4d little-endian, version 2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET.
		want := []byte{0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}
		binary.LittleEndian.PutUint32(want[16:], uint32(tc.want))
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("snaplen %d: header % x, want % x", tc.snaplen, buf.Bytes(), want)
		}
		if w.Snaplen() != tc.want {
			t.Errorf("snaplen %d: Snaplen() = %d", tc.snaplen, w.Snaplen())
		}
	}
}

// TestAppendRecords checks each record's header bytes and the bytes kept:
// seconds and nanoseconds split, truncation to the snap length with the
// length on the wire kept.
func TestAppendRecords(t *testing.T) {
	for _, tc := range []struct {
		name          string
		snaplen, flen int
		ns            int64
		sec, frac     uint32
		incl          int
	}{
		{"zero", 0, 64, 0, 0, 0, 64},
		{"1 ns", 0, 64, 1, 0, 1, 64},
		{"just under 1 s", 0, 1500, 999_999_999, 0, 999_999_999, 1500},
		{"1 s", 0, 60, 1_000_000_000, 1, 0, 60},
		{"late", 0, 60, 4_000_000_000_123_456_789, 4_000_000_000, 123_456_789, 60},
		{"last", 0, 60, maxTimeNs, 1<<32 - 1, 999_999_999, 60},
		{"truncated", 54, 1086, 5, 0, 5, 54},
		{"shorter than snaplen", 54, 40, 5, 0, 5, 40},
		{"snaplen 1", 1, 64, 5, 0, 5, 1},
		{"empty frame", 0, 0, 7, 0, 7, 0},
		{"jumbo", 0, 9018, 7, 0, 7, 9018},
		{"beyond 64 KiB", 0, 70_000, 7, 0, 7, DefaultSnaplen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, tc.snaplen)
			if err != nil {
				t.Fatal(err)
			}
			f := frame(tc.flen)
			if err := w.Append(tc.ns, f); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.Frames() != 1 {
				t.Errorf("Frames() = %d", w.Frames())
			}
			b := buf.Bytes()[FileHeaderLen:]
			le := binary.LittleEndian
			if len(b) != RecordHeaderLen+tc.incl {
				t.Fatalf("record of %d bytes, want %d", len(b), RecordHeaderLen+tc.incl)
			}
			if s, fr, in, or := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]); s != tc.sec || fr != tc.frac || int(in) != tc.incl || int(or) != tc.flen {
				t.Errorf("record header %d s %d ns, %d of %d bytes; want %d s %d ns, %d of %d", s, fr, in, or, tc.sec, tc.frac, tc.incl, tc.flen)
			}
			if !bytes.Equal(b[RecordHeaderLen:], f[:tc.incl]) {
				t.Error("record data differs from the frame's first bytes")
			}
		})
	}
}

// TestAppendPrefix: a record of a frame the caller kept only the head of
// says the frame's whole length and holds at most the snap length of the head.
func TestAppendPrefix(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		snaplen, head, wireLen int
		incl, orig             uint32
	}{
		{"head of a long frame", 0, 96, 1086, 96, 1086},
		{"head beyond the snap length", 64, 96, 1086, 64, 1086},
		{"whole frame", 0, 60, 60, 60, 60},
		{"wire length too short", 0, 60, 10, 60, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, tc.snaplen)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AppendPrefix(9, frame(tc.head), tc.wireLen); err != nil {
				t.Fatal(err)
			}
			w.Close()
			b := buf.Bytes()[FileHeaderLen:]
			if in, or := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:]); in != tc.incl || or != tc.orig ||
				len(b) != RecordHeaderLen+int(tc.incl) || !bytes.Equal(b[RecordHeaderLen:], frame(int(tc.incl))) {
				t.Errorf("record of %d of %d bytes (%d in the file), want %d of %d", in, or, len(b)-RecordHeaderLen, tc.incl, tc.orig)
			}
		})
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errDisk
	}
	f.n -= len(p)
	return len(p), nil
}

func TestAppendErrors(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []int64{-1, maxTimeNs + 1} {
		if err := w.Append(ns, frame(60)); err != ErrTimestamp {
			t.Errorf("Append at %d: %v, want ErrTimestamp", ns, err)
		}
	}
	if err := w.Append(3, frame(60)); err != nil || w.Frames() != 1 {
		t.Fatalf("after a refused time: %v, %d frames", err, w.Frames())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Append(4, frame(60)); err != ErrClosed {
		t.Errorf("Append after Close: %v", err)
	}

	// A failed write sticks: nothing more is written, and Close reports it.
	fw := &failWriter{n: FileHeaderLen + 100}
	w, err = NewWriter(fw, 0)
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for i := 0; i < 200 && first == nil; i++ {
		first = w.Append(int64(i), frame(1500))
	}
	if first == nil {
		first = w.Flush()
	}
	if !errors.Is(first, errDisk) {
		t.Fatalf("first error %v, want %v", first, errDisk)
	}
	if err := w.Append(1e9, frame(60)); !errors.Is(err, errDisk) {
		t.Errorf("Append after a failure: %v", err)
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close after a failure: %v", err)
	}

	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir.pcap"), 0); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}

// TestAppendAllocatesNothing: the capture path's per-frame call.
func TestAppendAllocatesNothing(t *testing.T) {
	w, err := NewWriter(io.Discard, 128)
	if err != nil {
		t.Fatal(err)
	}
	f := frame(1086)
	ns := int64(0)
	if a := testing.AllocsPerRun(10000, func() {
		ns += 850
		if err := w.Append(ns, f); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Append allocates %v times per frame", a)
	}
	w, _ = NewWriter(io.Discard, 0)
	if a := testing.AllocsPerRun(10000, func() { w.Append(ns, f) }); a != 0 {
		t.Errorf("Append of whole frames allocates %v times per frame", a)
	}
}

// TestCreateReadFile writes a file with Create, reads it back with ReadFile
// and with gopacket's independent reader (pcapgo).
func TestCreateReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcap")
	w, err := Create(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	lens := []int{60, 100, 101, 1086, 0}
	for i, n := range lens {
		if err := w.Append(int64(i)*1_234_567_891, frame(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(lens) {
		t.Fatalf("%d records, want %d", len(recs), len(lens))
	}
	for i, r := range recs {
		if r.TimeNs != int64(i)*1_234_567_891 || r.OrigLen != lens[i] || !bytes.Equal(r.Data, frame(min(lens[i], 100))) {
			t.Errorf("record %d: %d ns, %d of %d bytes", i, r.TimeNs, len(r.Data), r.OrigLen)
		}
	}

	// gopacket's reader agrees.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := pcapgo.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if gr.Snaplen() != 100 || gr.LinkType() != 1 {
		t.Errorf("pcapgo: snaplen %d, link type %v", gr.Snaplen(), gr.LinkType())
	}
	for i := range lens {
		data, ci, err := gr.ReadPacketData()
		if err != nil {
			t.Fatalf("pcapgo record %d: %v", i, err)
		}
		if ci.Timestamp.UnixNano() != int64(i)*1_234_567_891 || ci.Length != lens[i] || !bytes.Equal(data, frame(min(lens[i], 100))) {
			t.Errorf("pcapgo record %d: %v, %d of %d bytes", i, ci.Timestamp.UnixNano(), len(data), ci.Length)
		}
	}
	if _, _, err := gr.ReadPacketData(); err != io.EOF {
		t.Errorf("pcapgo after the last record: %v", err)
	}
}

// TestReaderFormats reads microsecond and big-endian files, and refuses bad
// ones.
func TestReaderFormats(t *testing.T) {
	rec := func(o binary.ByteOrder, sec, frac, incl, orig uint32, data []byte) []byte {
		b := make([]byte, RecordHeaderLen)
		o.PutUint32(b, sec)
		o.PutUint32(b[4:], frac)
		o.PutUint32(b[8:], incl)
		o.PutUint32(b[12:], orig)
		return append(b, data...)
	}
	hdr := func(o binary.ByteOrder, magic uint32, major uint16, snaplen uint32) []byte {
		b := make([]byte, FileHeaderLen)
		o.PutUint32(b, magic)
		o.PutUint16(b[4:], major)
		o.PutUint16(b[6:], 4)
		o.PutUint32(b[16:], snaplen)
		o.PutUint32(b[20:], 1)
		return b
	}
	be, le := binary.BigEndian, binary.LittleEndian
	for _, tc := range []struct {
		name   string
		file   []byte
		wantNs int64
		err    bool
	}{
		{"micro LE", append(hdr(le, MagicMicros, 2, 64), rec(le, 2, 5, 3, 3, []byte{1, 2, 3})...), 2_000_005_000, false},
		{"nano BE", append(hdr(be, MagicNanos, 2, 64), rec(be, 2, 5, 3, 9, []byte{1, 2, 3})...), 2_000_000_005, false},
		{"bad magic", append(hdr(le, 0x0a0d0d0a, 2, 64), rec(le, 2, 5, 3, 3, []byte{1, 2, 3})...), 0, true},
		{"bad version", append(hdr(le, MagicNanos, 3, 64), rec(le, 2, 5, 3, 3, []byte{1, 2, 3})...), 0, true},
		{"short header", hdr(le, MagicNanos, 2, 64)[:20], 0, true},
		{"incl > orig", append(hdr(le, MagicNanos, 2, 64), rec(le, 2, 5, 3, 2, []byte{1, 2, 3})...), 0, true},
		{"huge incl", append(hdr(le, MagicNanos, 2, 64), rec(le, 2, 5, 1<<30, 1<<30, nil)...), 0, true},
		{"fraction >= 1 s", append(hdr(le, MagicNanos, 2, 64), rec(le, 2, 1e9, 3, 3, []byte{1, 2, 3})...), 0, true},
		{"cut data", append(hdr(le, MagicNanos, 2, 64), rec(le, 2, 5, 3, 3, []byte{1})...), 0, true},
		{"cut record header", append(hdr(le, MagicNanos, 2, 64), 1, 2, 3), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.file))
			if err == nil {
				var rec Record
				rec, err = r.Next(nil)
				if err == nil && (rec.TimeNs != tc.wantNs || !bytes.Equal(rec.Data, []byte{1, 2, 3})) {
					t.Errorf("record %+v, want %d ns", rec, tc.wantNs)
				}
				if err == nil {
					if _, eof := r.Next(nil); eof != io.EOF {
						t.Errorf("after the last record: %v", eof)
					}
				}
			}
			if (err != nil) != tc.err {
				t.Errorf("error %v, want error %v", err, tc.err)
			}
			if err != nil && !errors.Is(err, ErrFormat) {
				t.Errorf("error %v is not ErrFormat", err)
			}
		})
	}
}

// FuzzRoundTrip writes frames cut from the fuzzer's bytes at its times and
// snap length and reads them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(0), uint32(0), []byte("frame"), uint8(3))
	f.Add(uint64(1_999_999_999), uint32(54), bytes.Repeat([]byte{0xab}, 1500), uint8(200))
	f.Add(uint64(maxTimeNs), uint32(1), []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, ns uint64, snaplen uint32, data []byte, step uint8) {
		snap := int(snaplen % (MaxSnaplen + 1))
		var buf bytes.Buffer
		w, err := NewWriter(&buf, snap)
		if err != nil {
			t.Fatal(err)
		}
		if snap == 0 {
			snap = DefaultSnaplen
		}
		// Frames: data cut into pieces of step+1 bytes (and one empty frame).
		var frames [][]byte
		for rest := data; ; {
			n := min(len(rest), int(step)+1)
			frames = append(frames, rest[:n])
			rest = rest[n:]
			if n == 0 || len(rest) == 0 {
				break
			}
		}
		t0 := int64(ns % (maxTimeNs + 1))
		times := make([]int64, len(frames))
		for i, fr := range frames {
			times[i] = min(t0+int64(i)*int64(step), maxTimeNs)
			if err := w.Append(times[i], fr); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Nanos() || r.Snaplen() != snap || r.LinkType() != LinkTypeEthernet {
			t.Fatalf("header: nanos %v snaplen %d link %d", r.Nanos(), r.Snaplen(), r.LinkType())
		}
		for i, fr := range frames {
			rec, err := r.Next(nil)
			if err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if rec.TimeNs != times[i] || rec.OrigLen != len(fr) || !bytes.Equal(rec.Data, fr[:min(len(fr), snap)]) {
				t.Fatalf("record %d: %d ns, %d of %d bytes; wrote %d ns, %d bytes", i, rec.TimeNs, len(rec.Data), rec.OrigLen, times[i], len(fr))
			}
		}
		if _, err := r.Next(nil); err != io.EOF {
			t.Fatalf("after the last record: %v", err)
		}
	})
}

// FuzzReader: no input makes the reader panic or allocate without bound.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, 0)
	w.Append(5, frame(60))
	w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			if _, err := r.Next(nil); err != nil {
				return
			}
		}
	})
}

// TestTshark checks a file the Writer wrote with Wireshark's own reader:
// nanosecond resolution, every frame's time, length on the wire and bytes
// kept. It skips when tshark is not installed (scripts/setup.sh installs it).
func TestTshark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pcap")
	w, err := Create(path, 64)
	if err != nil {
		t.Fatal(err)
	}
	times := []int64{0, 1, 999_999_999, 1_000_000_000, 86_400_123_456_789}
	lens := []int{60, 64, 65, 1500, 14}
	for i := range times {
		if err := w.Append(times[i], frame(lens[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows := tsharktest.Fields(t, path, nil, []string{"frame.time_epoch", "frame.len", "frame.cap_len", "eth.dst"})
	if len(rows) != len(times) {
		t.Fatalf("tshark read %d frames, want %d", len(rows), len(times))
	}
	for i, f := range rows {
		sec, frac, _ := strings.Cut(f["frame.time_epoch"], ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		ns, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if err1 != nil || err2 != nil || s*1e9+ns != times[i] {
			t.Errorf("frame %d: time %s, want %d ns", i, f["frame.time_epoch"], times[i])
		}
		if f["frame.len"] != strconv.Itoa(lens[i]) || f["frame.cap_len"] != strconv.Itoa(min(lens[i], 64)) {
			t.Errorf("frame %d: len %s cap_len %s, want %d and %d", i, f["frame.len"], f["frame.cap_len"], lens[i], min(lens[i], 64))
		}
		if f["eth.dst"] != "00:01:02:03:04:05" {
			t.Errorf("frame %d: eth.dst %q", i, f["eth.dst"])
		}
	}
}

// BenchmarkAppend is the per-frame cost of a capture: a 1086-byte frame
// (a 1 KB RoCEv2 data frame) kept whole, and its first 128 bytes.
func BenchmarkAppend(b *testing.B) {
	for _, snap := range []int{0, 128} {
		b.Run("snaplen="+strconv.Itoa(snap), func(b *testing.B) {
			b.ReportAllocs()
			w, _ := NewWriter(io.Discard, snap)
			f := frame(1086)
			b.SetBytes(int64(len(f)))
			for i := 0; i < b.N; i++ {
				w.Append(int64(i)*850, f)
			}
		})
	}
}
