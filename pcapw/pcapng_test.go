package pcapw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
)

// ngFile builds pcapng blocks in one byte order.
type ngFile struct {
	o   binary.ByteOrder
	buf bytes.Buffer
}

func (f *ngFile) block(typ uint32, body []byte) {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	total := uint32(12 + len(body))
	var w [4]byte
	f.o.PutUint32(w[:], typ)
	f.buf.Write(w[:])
	f.o.PutUint32(w[:], total)
	f.buf.Write(w[:])
	f.buf.Write(body)
	f.buf.Write(w[:])
}

func (f *ngFile) u16(b []byte, v uint16) []byte {
	return f.o.(binary.AppendByteOrder).AppendUint16(b, v)
}
func (f *ngFile) u32(b []byte, v uint32) []byte {
	return f.o.(binary.AppendByteOrder).AppendUint32(b, v)
}

func (f *ngFile) section() {
	b := f.u32(nil, ngByteOrderMagic)
	b = f.u16(b, 1)
	b = f.u16(b, 0)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // section length unknown
	f.block(ngSHB, b)
}

// iface adds an interface; tsresol < 0: no option (microseconds).
func (f *ngFile) iface(link uint16, snap uint32, tsresol int) {
	b := f.u16(nil, link)
	b = f.u16(b, 0)
	b = f.u32(b, snap)
	b = f.u16(b, 2) // an option to skip: if_name "eth0"
	b = f.u16(b, 4)
	b = append(b, "eth0"...)
	if tsresol >= 0 {
		b = f.u16(b, ngOptTSResol)
		b = f.u16(b, 1)
		b = append(b, byte(tsresol), 0, 0, 0)
	}
	b = f.u32(b, 0) // opt_endofopt
	f.block(ngIDB, b)
}

func (f *ngFile) epb(iface uint32, ts uint64, data []byte, orig uint32) {
	b := f.u32(nil, iface)
	b = f.u32(b, uint32(ts>>32))
	b = f.u32(b, uint32(ts))
	b = f.u32(b, uint32(len(data)))
	b = f.u32(b, orig)
	f.block(ngEPB, append(b, data...))
}

// TestNgReader reads hand-built pcapng files of both byte orders: frames
// of Enhanced and Simple Packet Blocks, timestamps of microsecond,
// nanosecond and binary resolutions, two interfaces of different link
// types, unknown blocks skipped, a second section; then malformed ones.
func TestNgReader(t *testing.T) {
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		f := &ngFile{o: o}
		f.section()
		f.iface(LinkTypeEthernet, 0, -1) // microseconds
		f.iface(113, 128, 9)             // nanoseconds, Linux cooked
		f.block(0x0BAD, []byte{1, 2, 3})
		f.epb(0, 1_500_000, frame(60), 60)       // 1.5 s
		f.epb(1, 2_000_000_123, frame(100), 200) // 2.000000123 s, cut short
		f.block(ngSPB, append(f.u32(nil, 64), frame(64)...))
		f.section()                           // a new section forgets the interfaces
		f.iface(LinkTypeEthernet, 0, 0x80|10) // 2^-10 s
		f.epb(0, 3*1024+512, frame(70), 70)   // 3.5 s
		want := []Record{
			{TimeNs: 1_500_000_000, OrigLen: 60, Data: frame(60), LinkType: LinkTypeEthernet},
			{TimeNs: 2_000_000_123, OrigLen: 200, Data: frame(100), LinkType: 113},
			{TimeNs: 0, OrigLen: 64, Data: frame(64), LinkType: LinkTypeEthernet},
			{TimeNs: 3_500_000_000, OrigLen: 70, Data: frame(70), LinkType: LinkTypeEthernet},
		}
		r, err := NewCaptureReader(bytes.NewReader(f.buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			got, err := r.Next(nil)
			if err != nil {
				t.Fatalf("%v: record %d: %v", o, i, err)
			}
			if got.TimeNs != w.TimeNs || got.OrigLen != w.OrigLen || !bytes.Equal(got.Data, w.Data) || got.LinkType != w.LinkType {
				t.Fatalf("%v: record %d: %d ns orig %d %d bytes link %d, want %d %d %d %d", o, i,
					got.TimeNs, got.OrigLen, len(got.Data), got.LinkType, w.TimeNs, w.OrigLen, len(w.Data), w.LinkType)
			}
		}
		if _, err := r.Next(nil); err != io.EOF {
			t.Fatalf("%v: after the last record: %v", o, err)
		}
	}
	bad := func(build func(f *ngFile)) []byte {
		f := &ngFile{o: binary.LittleEndian}
		build(f)
		return f.buf.Bytes()
	}
	for name, b := range map[string][]byte{
		"no section":      bad(func(f *ngFile) { f.iface(1, 0, -1) }),
		"undescribed":     bad(func(f *ngFile) { f.section(); f.epb(0, 0, frame(60), 60) }),
		"caplen too long": bad(func(f *ngFile) { f.section(); f.iface(1, 0, -1); f.epb(0, 0, frame(60), 10) }),
		"trailer": bad(func(f *ngFile) {
			f.section()
			f.iface(1, 0, -1)
			f.epb(0, 0, frame(60), 60)
			f.buf.Bytes()[f.buf.Len()-1] ^= 1
		}),
		"cut": bad(func(f *ngFile) {
			f.section()
			f.iface(1, 0, -1)
			f.epb(0, 0, frame(60), 60)
			f.buf.Truncate(f.buf.Len() - 6)
		}),
	} {
		r, err := NewCaptureReader(bytes.NewReader(b))
		for i := 0; err == nil && i < 10; i++ {
			_, err = r.Next(nil)
		}
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// TestNgEditcap converts a file the Writer wrote to pcapng with
// Wireshark's editcap and reads both back: the same frames, times and
// lengths. It skips when editcap is not installed.
func TestNgEditcap(t *testing.T) {
	editcap, err := exec.LookPath("editcap")
	if err != nil {
		t.Skip("editcap not installed")
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "a.pcapng")
	w, err := Create(src, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := w.Append(int64(i)*1_234_567+89, frame(60+7*i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(editcap, "-F", "pcapng", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("editcap: %v\n%s", err, out)
	}
	a, err := ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 50 || len(b) != len(a) {
		t.Fatalf("%d and %d records, want 50", len(a), len(b))
	}
	for i := range a {
		if a[i].TimeNs != b[i].TimeNs || a[i].OrigLen != b[i].OrigLen || !bytes.Equal(a[i].Data, b[i].Data) || b[i].LinkType != LinkTypeEthernet {
			t.Fatalf("record %d: pcap %d ns %d/%d bytes, pcapng %d ns %d/%d bytes link %d", i,
				a[i].TimeNs, len(a[i].Data), a[i].OrigLen, b[i].TimeNs, len(b[i].Data), b[i].OrigLen, b[i].LinkType)
		}
	}
}

// FuzzNgReader: no input makes the pcapng reader panic or allocate
// without bound, and what it returns is consistent.
func FuzzNgReader(f *testing.F) {
	g := &ngFile{o: binary.LittleEndian}
	g.section()
	g.iface(LinkTypeEthernet, 0, 9)
	g.epb(0, 5, frame(60), 60)
	g.block(ngSPB, append(g.u32(nil, 64), frame(64)...))
	f.Add(g.buf.Bytes())
	f.Add([]byte{})
	var nb bytes.Buffer // NgWriter's: options on every block
	nw, _ := NewNgWriter(&nb, NgSection{UserAppl: "ccbed"})
	nw.AddInterface(NgInterface{Name: "s0:p1", Description: "link to h1"})
	nw.Append(NgPacket{TimeNs: 7, Data: frame(61), Dir: DirOutbound, Comment: "x"})
	nw.Close()
	f.Add(nb.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewNgReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for range 1000 {
			rec, err := r.Next(nil)
			if err != nil {
				return
			}
			if len(rec.Data) > rec.OrigLen || len(rec.Data) > MaxNgBlock || rec.Dir > DirOutbound+1 {
				t.Fatalf("a record of %d bytes of %d", len(rec.Data), rec.OrigLen)
			}
		}
	})
}
