package pcapw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
)

// Direction is the way a frame crossed the interface it was captured on,
// as an Enhanced Packet Block's epb_flags bits 0-1 say it (pcapng draft,
// section "Enhanced Packet Block Flags Word"): DirUnknown (0, information
// not available), DirInbound (1), DirOutbound (2).
type Direction uint8

// The directions.
const (
	DirUnknown  Direction = 0
	DirInbound  Direction = 1
	DirOutbound Direction = 2
)

// String names the direction as Wireshark's frame.packet_flags_direction
// field shows it.
func (d Direction) String() string {
	switch d {
	case DirInbound:
		return "inbound"
	case DirOutbound:
		return "outbound"
	}
	return "unknown"
}

// pcapng option codes the writer and reader use (pcapng draft, sections
// "Options", "Section Header Block", "Interface Description Block" and
// "Enhanced Packet Block").
const (
	ngOptEnd         = 0 // opt_endofopt
	ngOptComment     = 1 // opt_comment
	ngOptUserAppl    = 4 // shb_userappl
	ngOptOS          = 3 // shb_os
	ngOptIfName      = 2 // if_name
	ngOptIfDesc      = 3 // if_description
	ngOptEPBFlags    = 2 // epb_flags
	ngMaxOptionBytes = 0xffff
	// ngEPBFixed is an EPB's header (type, length, interface, time,
	// lengths) and ngEPBTail its flags option, end of options and trailing
	// length.
	ngEPBFixed = 28
	ngEPBTail  = 8 + 4 + 4
)

// More errors of the pcapng writer.
var (
	// ErrInterface: a frame of an interface not added, or more interfaces
	// than a reader takes.
	ErrInterface = errors.New("pcapw: pcapng: no such interface")
	// ErrOption: an option longer than pcapng's 65535 bytes.
	ErrOption = errors.New("pcapw: pcapng: option longer than 65535 bytes")
)

// NgSection is what a pcapng file's Section Header Block says of the
// capture: the application that wrote it (shb_userappl) and the operating
// system (shb_os); an empty string leaves its option out.
type NgSection struct {
	UserAppl string
	OS       string
}

// NgInterface describes one interface of a pcapng file (an Interface
// Description Block): its name (if_name, as Wireshark's
// frame.interface_name shows it), a description (if_description), and the
// most bytes kept of its frames (0: DefaultSnaplen). Its link type is
// Ethernet and its timestamps count nanoseconds (if_tsresol 9).
type NgInterface struct {
	Name, Description string
	Snaplen           int
}

// NgPacket is one frame for NgWriter.Append: captured on interface
// Interface (the index AddInterface returned) at TimeNs nanoseconds since
// the capture clock's epoch, crossing it in direction Dir; Data holds its
// first bytes (at most the interface's snap length of them are kept) and
// WireLen its length on the wire (less than len(Data): len(Data)). Comment,
// when not empty, is written as the block's opt_comment.
type NgPacket struct {
	Interface int
	TimeNs    int64
	Data      []byte
	WireLen   int
	Dir       Direction
	Comment   string
}

// NgWriter writes a pcapng file (one section, little-endian): a Section
// Header Block, an Interface Description Block per AddInterface, and an
// Enhanced Packet Block per frame with its direction in epb_flags. Append
// copies the frame into a buffer and allocates nothing. Errors are sticky,
// as Writer's. Not safe for concurrent use.
type NgWriter struct {
	bw     *bufio.Writer
	file   *os.File
	ifaces []ngOut
	frames uint64
	hdr    [ngEPBFixed]byte
	err    error
}

// ngOut is an interface the writer added: its snap length and frames.
type ngOut struct {
	snaplen int
	frames  uint64
}

// NewNgWriter writes a Section Header Block for s to w and returns a
// writer that appends blocks after it. Close flushes; it does not close w.
func NewNgWriter(w io.Writer, s NgSection) (*NgWriter, error) {
	nw := &NgWriter{bw: bufio.NewWriterSize(w, bufferBytes)}
	b := binary.LittleEndian.AppendUint32(nil, ngByteOrderMagic)
	b = binary.LittleEndian.AppendUint16(b, 1) // version 1.0
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, math.MaxUint64) // section length not given
	var err error
	if b, err = appendNgOption(b, ngOptUserAppl, s.UserAppl); err != nil {
		return nil, err
	}
	if b, err = appendNgOption(b, ngOptOS, s.OS); err != nil {
		return nil, err
	}
	if err := nw.writeBlock(ngSHB, b); err != nil {
		return nil, err
	}
	return nw, nil
}

// CreateNg creates (or truncates) the file at path and returns an NgWriter
// on it; Close flushes and closes the file.
func CreateNg(path string, s NgSection) (*NgWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewNgWriter(f, s)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// appendNgOption appends option code with value v to b, padded to 32 bits,
// or nothing for an empty v.
func appendNgOption(b []byte, code uint16, v string) ([]byte, error) {
	if v == "" {
		return b, nil
	}
	if len(v) > ngMaxOptionBytes {
		return b, ErrOption
	}
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b, nil
}

// writeBlock writes a block of type typ with body b (a multiple of 4 bytes
// long, options included; writeBlock adds the end of options).
func (w *NgWriter) writeBlock(typ uint32, b []byte) error {
	if w.err != nil {
		return w.err
	}
	total := uint32(12 + len(b) + 4)
	var h [8]byte
	binary.LittleEndian.PutUint32(h[0:], typ)
	binary.LittleEndian.PutUint32(h[4:], total)
	w.bw.Write(h[:])
	w.bw.Write(b)
	binary.LittleEndian.PutUint32(h[0:], ngOptEnd)
	binary.LittleEndian.PutUint32(h[4:], total)
	if _, err := w.bw.Write(h[:]); err != nil {
		w.err = err
	}
	return w.err
}

// AddInterface writes an Interface Description Block for in and returns
// its index, which Append's frames name. It may be called between frames.
func (w *NgWriter) AddInterface(in NgInterface) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	snap := in.Snaplen
	if snap == 0 {
		snap = DefaultSnaplen
	}
	if snap < 0 || snap > MaxSnaplen {
		return 0, ErrSnaplen
	}
	if len(w.ifaces) >= maxNgInterfaces {
		return 0, ErrInterface
	}
	b := binary.LittleEndian.AppendUint16(nil, LinkTypeEthernet)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(snap))
	var err error
	if b, err = appendNgOption(b, ngOptIfName, in.Name); err != nil {
		return 0, err
	}
	if b, err = appendNgOption(b, ngOptIfDesc, in.Description); err != nil {
		return 0, err
	}
	b = append(b, ngOptTSResol, 0, 1, 0, 9, 0, 0, 0) // if_tsresol 9: nanoseconds
	if err := w.writeBlock(ngIDB, b); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, ngOut{snaplen: snap})
	return len(w.ifaces) - 1, nil
}

// zeros pads a block to 32 bits.
var zeros [4]byte

// Append writes one Enhanced Packet Block for p. It copies the frame and
// allocates nothing. It returns ErrInterface for an interface not added,
// ErrTimestamp for a negative time, ErrFrameLen or ErrOption for lengths
// pcapng cannot hold (writing nothing: the writer stays usable), and the
// sticky error once a write has failed.
func (w *NgWriter) Append(p NgPacket) error {
	if w.err != nil {
		return w.err
	}
	if p.Interface < 0 || p.Interface >= len(w.ifaces) {
		return ErrInterface
	}
	if p.TimeNs < 0 {
		return ErrTimestamp
	}
	wireLen := max(p.WireLen, len(p.Data))
	if uint64(wireLen) > math.MaxUint32 {
		return ErrFrameLen
	}
	if len(p.Comment) > ngMaxOptionBytes {
		return ErrOption
	}
	in := &w.ifaces[p.Interface]
	incl := min(len(p.Data), in.snaplen)
	pad := -incl & 3
	cpad := -len(p.Comment) & 3
	opts := 8 // epb_flags
	if p.Comment != "" {
		opts += 4 + len(p.Comment) + cpad
	}
	total := ngEPBFixed + incl + pad + opts + 8
	le := binary.LittleEndian
	h := w.hdr[:]
	le.PutUint32(h[0:], ngEPB)
	le.PutUint32(h[4:], uint32(total))
	le.PutUint32(h[8:], uint32(p.Interface))
	ts := uint64(p.TimeNs)
	le.PutUint32(h[12:], uint32(ts>>32))
	le.PutUint32(h[16:], uint32(ts))
	le.PutUint32(h[20:], uint32(incl))
	le.PutUint32(h[24:], uint32(wireLen))
	w.bw.Write(h)
	w.bw.Write(p.Data[:incl])
	w.bw.Write(zeros[:pad])
	if p.Comment != "" {
		le.PutUint16(h[0:], ngOptComment)
		le.PutUint16(h[2:], uint16(len(p.Comment)))
		w.bw.Write(h[:4])
		w.bw.WriteString(p.Comment)
		w.bw.Write(zeros[:cpad])
	}
	le.PutUint16(h[0:], ngOptEPBFlags)
	le.PutUint16(h[2:], 4)
	le.PutUint32(h[4:], uint32(p.Dir&3))
	le.PutUint32(h[8:], ngOptEnd)
	le.PutUint32(h[12:], uint32(total))
	if _, err := w.bw.Write(h[:16]); err != nil {
		w.err = err
		return err
	}
	in.frames++
	w.frames++
	return nil
}

// Frames is the number of frames appended; FramesOf those of one interface.
func (w *NgWriter) Frames() uint64 { return w.frames }

// FramesOf is the number of frames appended for interface i.
func (w *NgWriter) FramesOf(i int) uint64 {
	if i < 0 || i >= len(w.ifaces) {
		return 0
	}
	return w.ifaces[i].frames
}

// Flush writes the buffered blocks to the underlying writer.
func (w *NgWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// Close flushes, closes the file when CreateNg opened it, and returns the
// first error the writer met. Later calls return ErrClosed; a second Close
// returns nil.
func (w *NgWriter) Close() error {
	if w.err == ErrClosed {
		return nil
	}
	err := closeFile(w.Flush(), &w.file)
	w.err = ErrClosed
	return err
}

// Port is one captured port's way into a capture file: a pcap file of its
// own (NewPcapPort) or an interface of a pcapng file it may share with other
// ports (NewNgPort). Append allocates nothing. A Port is used from the
// goroutine that writes its file.
type Port struct {
	pcap   *Writer
	ng     *NgWriter
	iface  int
	frames uint64
}

// NewPcapPort is a port whose frames go to w, a pcap file that cannot say
// their direction.
func NewPcapPort(w *Writer) *Port { return &Port{pcap: w} }

// NewNgPort is a port whose frames go to interface iface of w.
func NewNgPort(w *NgWriter, iface int) *Port { return &Port{ng: w, iface: iface} }

// Append writes a frame of wireLen bytes, its first bytes head, that
// crossed the port in direction dir at ns nanoseconds, as
// Writer.AppendPrefix does (a pcap file drops dir).
func (p *Port) Append(ns int64, head []byte, wireLen int, dir Direction) error {
	var err error
	if p.ng != nil {
		err = p.ng.Append(NgPacket{Interface: p.iface, TimeNs: ns, Data: head, WireLen: wireLen, Dir: dir})
	} else {
		err = p.pcap.AppendPrefix(ns, head, wireLen)
	}
	if err == nil {
		p.frames++
	}
	return err
}

// Frames is the number of frames the port appended.
func (p *Port) Frames() uint64 { return p.frames }
