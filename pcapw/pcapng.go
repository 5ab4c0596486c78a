package pcapw

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// pcapng (the IETF draft "PCAP Next Generation Capture File Format", what
// Wireshark writes by default): a file is blocks, each a type, a total
// length, a body and the length again. NgReader reads the blocks that
// carry frames (Enhanced, Simple and the obsolete Packet Block) and the
// Section Header and Interface Description blocks they need (byte order,
// link type, snap length, timestamp resolution); it skips every other
// block.
const (
	ngSHB = 0x0A0D0D0A // Section Header Block
	ngIDB = 1          // Interface Description Block
	ngPB  = 2          // Packet Block (obsolete)
	ngSPB = 3          // Simple Packet Block
	ngEPB = 6          // Enhanced Packet Block
	// ngByteOrderMagic opens a section's body, in the section's byte order.
	ngByteOrderMagic = 0x1A2B3C4D
	// MaxNgBlock bounds a pcapng block's length: a frame of MaxSnaplen and
	// its headers and options, with room to spare.
	MaxNgBlock = 2*MaxSnaplen + 4096
	// maxNgInterfaces bounds the interfaces of a section.
	maxNgInterfaces = 1 << 10
	ngOptTSResol    = 9 // if_tsresol
)

// ngInterface is what an Interface Description Block says.
type ngInterface struct {
	name     string // if_name
	linkType uint32
	snaplen  int
	// A timestamp counts units of 10^-pow10 s, or of 2^-pow2 s when pow2 > 0.
	pow10, pow2 int
}

// NgReader reads a pcapng file.
type NgReader struct {
	r      *bufio.Reader
	order  binary.ByteOrder
	ifaces []ngInterface
	body   []byte // the current block's body, reused
}

// NewNgReader reads the first Section Header Block from r.
func NewNgReader(r io.Reader) (*NgReader, error) {
	nr := &NgReader{r: bufio.NewReaderSize(r, bufferBytes)}
	typ, err := nr.block()
	if err != nil {
		return nil, err
	}
	if typ != ngSHB {
		return nil, fmt.Errorf("%w: pcapng: first block of type %#x, want a section header", ErrFormat, typ)
	}
	return nr, nil
}

// block reads the next block into nr.body and returns its type; a section
// header sets the byte order and forgets the previous section's interfaces.
func (nr *NgReader) block() (uint32, error) {
	var h [12]byte
	if _, err := io.ReadFull(nr.r, h[:8]); err != nil {
		if err == io.EOF {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%w: pcapng: block header: %v", ErrFormat, err)
	}
	order := nr.order
	typ := binary.LittleEndian.Uint32(h[0:]) // a section header's type reads the same both ways
	if typ == ngSHB {
		if _, err := io.ReadFull(nr.r, h[8:12]); err != nil {
			return 0, fmt.Errorf("%w: pcapng: section header: %v", ErrFormat, err)
		}
		switch {
		case binary.LittleEndian.Uint32(h[8:]) == ngByteOrderMagic:
			order = binary.LittleEndian
		case binary.BigEndian.Uint32(h[8:]) == ngByteOrderMagic:
			order = binary.BigEndian
		default:
			return 0, fmt.Errorf("%w: pcapng: byte-order magic %#x", ErrFormat, binary.LittleEndian.Uint32(h[8:]))
		}
		nr.order, nr.ifaces = order, nr.ifaces[:0]
	}
	if order == nil {
		return 0, fmt.Errorf("%w: pcapng: a block before the section header", ErrFormat)
	}
	typ = order.Uint32(h[0:])
	total := order.Uint32(h[4:])
	if total < 12 || total%4 != 0 || total > MaxNgBlock {
		return 0, fmt.Errorf("%w: pcapng: block of type %#x of %d bytes", ErrFormat, typ, total)
	}
	n := int(total) - 12 // the body
	if typ == ngSHB {
		if n < 4 {
			return 0, fmt.Errorf("%w: pcapng: section header of %d bytes", ErrFormat, total)
		}
		n -= 4 // its byte-order magic is read
	}
	if cap(nr.body) < n {
		nr.body = make([]byte, n)
	}
	nr.body = nr.body[:n]
	if _, err := io.ReadFull(nr.r, nr.body); err != nil {
		return 0, fmt.Errorf("%w: pcapng: block body: %v", ErrFormat, err)
	}
	if _, err := io.ReadFull(nr.r, h[:4]); err != nil || order.Uint32(h[:4]) != total {
		return 0, fmt.Errorf("%w: pcapng: block of type %#x: trailing length does not match %d", ErrFormat, typ, total)
	}
	return typ, nil
}

// Next reads the next frame, its data into buf when it fits (a new slice
// otherwise). It returns io.EOF after the last one, and ErrFormat for a
// malformed block or a frame of an interface not described.
func (nr *NgReader) Next(buf []byte) (Record, error) {
	for {
		typ, err := nr.block()
		if err != nil {
			return Record{}, err
		}
		b, o := nr.body, nr.order
		var iface int
		var ts uint64
		var incl, orig uint32
		var data []byte
		var dir Direction
		var comment string
		switch typ {
		case ngIDB:
			if err := nr.addInterface(b); err != nil {
				return Record{}, err
			}
			continue
		case ngEPB, ngPB:
			if len(b) < 20 {
				return Record{}, fmt.Errorf("%w: pcapng: packet block of %d bytes", ErrFormat, len(b))
			}
			if typ == ngEPB {
				iface = int(o.Uint32(b[0:]))
			} else {
				iface = int(o.Uint16(b[0:]))
			}
			ts = uint64(o.Uint32(b[4:]))<<32 | uint64(o.Uint32(b[8:]))
			incl, orig = o.Uint32(b[12:]), o.Uint32(b[16:])
			if uint64(incl) > uint64(len(b)-20) || incl > orig {
				return Record{}, fmt.Errorf("%w: pcapng: record of %d of %d bytes in a %d-byte block", ErrFormat, incl, orig, len(b))
			}
			data = b[20 : 20+incl]
			if typ == ngEPB {
				var err error
				if dir, comment, err = nr.epbOptions(b[min(len(b), 20+int(incl+3)&^3):]); err != nil {
					return Record{}, err
				}
			}
		case ngSPB:
			if len(b) < 4 || len(nr.ifaces) == 0 {
				return Record{}, fmt.Errorf("%w: pcapng: simple packet block of %d bytes (%d interfaces)", ErrFormat, len(b), len(nr.ifaces))
			}
			orig = o.Uint32(b[0:])
			incl = uint32(min(uint64(orig), uint64(len(b)-4)))
			if s := nr.ifaces[0].snaplen; s > 0 && int(incl) > s {
				incl = uint32(s)
			}
			data = b[4 : 4+incl]
		default:
			continue
		}
		if iface >= len(nr.ifaces) {
			return Record{}, fmt.Errorf("%w: pcapng: frame of interface %d, %d described", ErrFormat, iface, len(nr.ifaces))
		}
		in := &nr.ifaces[iface]
		if cap(buf) < len(data) {
			buf = make([]byte, len(data))
		}
		buf = buf[:len(data)]
		copy(buf, data)
		return Record{TimeNs: in.nanos(ts), OrigLen: int(orig), Data: buf, LinkType: in.linkType,
			Interface: iface, Dir: dir, Comment: comment}, nil
	}
}

// epbOptions reads an Enhanced Packet Block's options: the direction bits of
// epb_flags and the first opt_comment.
func (nr *NgReader) epbOptions(opts []byte) (Direction, string, error) {
	o := nr.order
	var dir Direction
	var comment string
	for len(opts) >= 4 {
		code, n := o.Uint16(opts[0:]), int(o.Uint16(opts[2:]))
		if code == ngOptEnd {
			break
		}
		if 4+n > len(opts) {
			return 0, "", fmt.Errorf("%w: pcapng: packet option %d of %d bytes", ErrFormat, code, n)
		}
		switch {
		case code == ngOptEPBFlags && n == 4:
			dir = Direction(o.Uint32(opts[4:]) & 3)
		case code == ngOptComment && comment == "":
			comment = string(opts[4 : 4+n])
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	return dir, comment, nil
}

// InterfaceName is the if_name of interface i of the current section ("" when
// it has none or i is not described yet).
func (nr *NgReader) InterfaceName(i int) string {
	if i < 0 || i >= len(nr.ifaces) {
		return ""
	}
	return nr.ifaces[i].name
}

// addInterface reads an Interface Description Block's body.
func (nr *NgReader) addInterface(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: pcapng: interface block of %d bytes", ErrFormat, len(b))
	}
	if len(nr.ifaces) >= maxNgInterfaces {
		return fmt.Errorf("%w: pcapng: more than %d interfaces", ErrFormat, maxNgInterfaces)
	}
	o := nr.order
	in := ngInterface{linkType: uint32(o.Uint16(b[0:])), snaplen: int(o.Uint32(b[4:])), pow10: 6}
	for opts := b[8:]; len(opts) >= 4; {
		code, n := o.Uint16(opts[0:]), int(o.Uint16(opts[2:]))
		if code == 0 {
			break
		}
		if 4+n > len(opts) {
			return fmt.Errorf("%w: pcapng: interface option %d of %d bytes", ErrFormat, code, n)
		}
		if code == ngOptIfName {
			in.name = string(opts[4 : 4+n])
		}
		if code == ngOptTSResol && n >= 1 {
			v := int(opts[4])
			if v&0x80 != 0 {
				in.pow2, in.pow10 = v&0x7f, 0
			} else {
				in.pow10 = v
			}
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	nr.ifaces = append(nr.ifaces, in)
	return nil
}

// nanos converts a timestamp of the interface's resolution to ns.
func (in *ngInterface) nanos(ts uint64) int64 {
	var ns float64
	switch {
	case in.pow2 > 0:
		ns = float64(ts) / math.Ldexp(1, in.pow2) * 1e9
	case in.pow10 <= 9:
		return int64(ts * uint64(math.Pow10(9-in.pow10)))
	default:
		ns = float64(ts) / math.Pow10(in.pow10-9)
	}
	return int64(min(ns, math.MaxInt64))
}

// CaptureReader reads the frames of a capture, pcap or pcapng.
type CaptureReader interface {
	// Next reads the next frame as Reader.Next does.
	Next(buf []byte) (Record, error)
}

// NewCaptureReader reads a pcap (Reader) or pcapng (NgReader) file from r,
// by its first four bytes.
func NewCaptureReader(r io.Reader) (CaptureReader, error) {
	br := bufio.NewReaderSize(r, bufferBytes)
	head, err := br.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if binary.LittleEndian.Uint32(head) == ngSHB {
		return NewNgReader(br)
	}
	return NewReader(br)
}
