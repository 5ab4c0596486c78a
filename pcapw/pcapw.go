// Package pcapw writes packet captures in the classic libpcap file format (the
// .pcap of tcpdump and Wireshark) with nanosecond timestamps: a 24-byte file
// header (magic 0xa1b23c4d, version 2.4, the snap length, LINKTYPE_ETHERNET),
// then per frame a 16-byte record header (seconds, nanoseconds, bytes kept,
// bytes on the wire) and the frame's first bytes. It is pure Go and off the
// dataplane: the fabric's drivers (fabric.Virtual, fabric/dpdkrun) tap their
// links with it when a run asks for a capture (docs/capture.md).
//
// Writer.Append copies a frame into a buffered writer and allocates nothing;
// the caller keeps its frame. Errors are sticky: after a write fails, every
// call returns that error and writes nothing more. Reader reads the files
// back (either byte order, micro- or nanosecond timestamps) for tests and
// tools, NgReader pcapng files (pcapng.go), and ReadFile either. A Writer
// or a Reader is not safe for concurrent use.
package pcapw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// The file format's constants.
const (
	// MagicNanos is the magic number of a file with nanosecond timestamps
	// (the one Writer writes); MagicMicros that of microsecond ones.
	MagicNanos  = 0xa1b23c4d
	MagicMicros = 0xa1b2c3d4
	// VersionMajor and VersionMinor are the format's version, 2.4.
	VersionMajor = 2
	VersionMinor = 4
	// LinkTypeEthernet is LINKTYPE_ETHERNET: every record is an Ethernet
	// frame without its FCS.
	LinkTypeEthernet = 1
	// FileHeaderLen and RecordHeaderLen are the headers' sizes in bytes.
	FileHeaderLen   = 24
	RecordHeaderLen = 16
	// DefaultSnaplen keeps whole frames (up to 64 KiB); MaxSnaplen is the
	// largest snap length libpcap and Wireshark accept.
	DefaultSnaplen = 65535
	MaxSnaplen     = 262144
	// bufferBytes is the Writer's buffer.
	bufferBytes = 64 << 10
)

// Errors. They are built once, so returning one allocates nothing.
var (
	// ErrSnaplen: a snap length outside 0..MaxSnaplen.
	ErrSnaplen = errors.New("pcapw: snap length out of range 1..262144 (0: whole frames)")
	// ErrTimestamp: a time before 0 or beyond the format's 2^32 s. Append
	// writes nothing and the Writer stays usable.
	ErrTimestamp = errors.New("pcapw: timestamp out of range 0..2^32 s")
	// ErrFrameLen: a frame longer than the format's 32-bit length.
	ErrFrameLen = errors.New("pcapw: frame longer than 2^32-1 bytes")
	// ErrClosed: the Writer was closed.
	ErrClosed = errors.New("pcapw: writer closed")
	// ErrFormat: not a pcap file, or a record whose lengths make no sense.
	ErrFormat = errors.New("pcapw: not a valid pcap file")
)

// maxTimeNs is the latest time a record can carry.
const maxTimeNs = (1<<32)*1_000_000_000 - 1

// Writer appends frames to a pcap file through a buffer.
type Writer struct {
	bw      *bufio.Writer
	file    *os.File // closed by Close when the Writer created it
	snaplen int
	hdr     [RecordHeaderLen]byte
	frames  uint64
	err     error
}

// NewWriter writes the file header to w and returns a Writer that appends
// records after it. snaplen is the most bytes kept of a frame (0:
// DefaultSnaplen). Close flushes the buffer; it does not close w.
func NewWriter(w io.Writer, snaplen int) (*Writer, error) {
	if snaplen == 0 {
		snaplen = DefaultSnaplen
	}
	if snaplen < 0 || snaplen > MaxSnaplen {
		return nil, ErrSnaplen
	}
	pw := &Writer{bw: bufio.NewWriterSize(w, bufferBytes), snaplen: snaplen}
	var h [FileHeaderLen]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], MagicNanos)
	le.PutUint16(h[4:], VersionMajor)
	le.PutUint16(h[6:], VersionMinor)
	// h[8:16]: time zone offset and timestamp accuracy, 0 as everyone writes.
	le.PutUint32(h[16:], uint32(snaplen))
	le.PutUint32(h[20:], LinkTypeEthernet)
	if _, err := pw.bw.Write(h[:]); err != nil {
		return nil, err
	}
	return pw, nil
}

// Create creates (or truncates) the file at path and returns a Writer on it;
// Close flushes and closes the file.
func Create(path string, snaplen int) (*Writer, error) {
	if snaplen < 0 || snaplen > MaxSnaplen {
		return nil, ErrSnaplen
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, snaplen)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// Append writes one record: frame (at most the snap length of it, with its
// whole length as the length on the wire) at ns nanoseconds since the epoch
// of the capture's clock. It copies the frame and allocates nothing. It
// returns ErrTimestamp (and writes nothing) for a time outside the format's
// range, and the Writer's sticky error once a write has failed.
func (w *Writer) Append(ns int64, frame []byte) error {
	return w.AppendPrefix(ns, frame, len(frame))
}

// AppendPrefix is Append for a frame of wireLen bytes of which the caller
// kept only the first, head (a capture that copied part of each frame): the
// record holds at most the snap length of head and says wireLen bytes were on
// the wire. A wireLen shorter than head counts as len(head).
func (w *Writer) AppendPrefix(ns int64, head []byte, wireLen int) error {
	if w.err != nil {
		return w.err
	}
	if ns < 0 || ns > maxTimeNs {
		return ErrTimestamp
	}
	wireLen = max(wireLen, len(head))
	if uint64(wireLen) > math.MaxUint32 {
		return ErrFrameLen
	}
	incl := min(len(head), w.snaplen)
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], uint32(ns/1_000_000_000))
	le.PutUint32(w.hdr[4:], uint32(ns%1_000_000_000))
	le.PutUint32(w.hdr[8:], uint32(incl))
	le.PutUint32(w.hdr[12:], uint32(wireLen))
	if _, err := w.bw.Write(w.hdr[:]); err != nil {
		w.err = err
		return err
	}
	if _, err := w.bw.Write(head[:incl]); err != nil {
		w.err = err
		return err
	}
	w.frames++
	return nil
}

// Frames is the number of records appended.
func (w *Writer) Frames() uint64 { return w.frames }

// Snaplen is the most bytes kept of a frame.
func (w *Writer) Snaplen() int { return w.snaplen }

// Flush writes the buffered records to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Close flushes the buffer, closes the file when Create opened it, and
// returns the first error the Writer met. Later calls of any method return
// ErrClosed; a second Close returns nil.
func (w *Writer) Close() error {
	if w.err == ErrClosed {
		return nil
	}
	err := closeFile(w.Flush(), &w.file)
	w.err = ErrClosed
	return err
}

// closeFile closes *file when a writer created it (and forgets it), and
// returns err, or else the error of the close.
func closeFile(err error, file **os.File) error {
	if *file != nil {
		if cerr := (*file).Close(); err == nil {
			err = cerr
		}
		*file = nil
	}
	return err
}

// Record is one frame read back from a capture.
type Record struct {
	// TimeNs is the record's time in nanoseconds since the capture clock's
	// epoch (a microsecond file's times times 1000).
	TimeNs int64
	// OrigLen is the frame's length on the wire; Data holds its first
	// min(OrigLen, snap length) bytes.
	OrigLen int
	Data    []byte
	// LinkType is the link type of the frame's file (pcap) or interface
	// (pcapng): LinkTypeEthernet for Ethernet frames.
	LinkType uint32
	// Interface is the pcapng interface the frame was captured on (0 in a
	// pcap file); Dir its direction there (epb_flags; DirUnknown in a pcap
	// file); Comment the first opt_comment of its block.
	Interface int
	Dir       Direction
	Comment   string
}

// Reader reads a pcap file of either byte order and timestamp resolution.
type Reader struct {
	r        *bufio.Reader
	order    binary.ByteOrder
	nanos    bool
	snaplen  int
	linkType uint32
	hdr      [RecordHeaderLen]byte
}

// NewReader reads the file header from r.
func NewReader(r io.Reader) (*Reader, error) {
	pr := &Reader{r: bufio.NewReaderSize(r, bufferBytes)}
	var h [FileHeaderLen]byte
	if _, err := io.ReadFull(pr.r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: file header: %v", ErrFormat, err)
	}
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch o.Uint32(h[0:]) {
		case MagicNanos:
			pr.order, pr.nanos = o, true
		case MagicMicros:
			pr.order = o
		}
		if pr.order != nil {
			break
		}
	}
	if pr.order == nil {
		return nil, fmt.Errorf("%w: magic %#x", ErrFormat, binary.LittleEndian.Uint32(h[0:]))
	}
	if major := pr.order.Uint16(h[4:]); major != VersionMajor {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, major)
	}
	pr.snaplen = int(pr.order.Uint32(h[16:]))
	pr.linkType = pr.order.Uint32(h[20:]) & 0x0fffffff // the top bits are the FCS flags
	if pr.snaplen > MaxSnaplen {
		pr.snaplen = MaxSnaplen // what Wireshark does with a larger one
	}
	return pr, nil
}

// Nanos reports whether the file's timestamps are in nanoseconds.
func (r *Reader) Nanos() bool { return r.nanos }

// Snaplen is the file header's snap length.
func (r *Reader) Snaplen() int { return r.snaplen }

// LinkType is the file header's link type (LinkTypeEthernet for ccbed's).
func (r *Reader) LinkType() uint32 { return r.linkType }

// Next reads the next record, its data into buf when it fits (a new slice
// otherwise). It returns io.EOF after the last record, and ErrFormat for a
// record cut short or longer than the snap length allows.
func (r *Reader) Next(buf []byte) (Record, error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		if err == io.EOF {
			return Record{}, io.EOF
		}
		return Record{}, fmt.Errorf("%w: record header: %v", ErrFormat, err)
	}
	o := r.order
	sec, frac := int64(o.Uint32(r.hdr[0:])), int64(o.Uint32(r.hdr[4:]))
	incl, orig := o.Uint32(r.hdr[8:]), o.Uint32(r.hdr[12:])
	if !r.nanos {
		frac *= 1000
	}
	if frac >= 1_000_000_000 || incl > orig || incl > MaxSnaplen {
		return Record{}, fmt.Errorf("%w: record of %d of %d bytes, fraction %d", ErrFormat, incl, orig, frac)
	}
	if cap(buf) < int(incl) {
		buf = make([]byte, incl)
	}
	buf = buf[:incl]
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return Record{}, fmt.Errorf("%w: record data: %v", ErrFormat, err)
	}
	return Record{TimeNs: sec*1_000_000_000 + frac, OrigLen: int(orig), Data: buf, LinkType: r.linkType}, nil
}

// ReadFile reads every record of the pcap or pcapng file at path.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := NewCaptureReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Record
	for {
		rec, err := r.Next(nil)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("%s: record %d: %w", path, len(out), err)
		}
		out = append(out, rec)
	}
}
