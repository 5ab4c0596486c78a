// Package trace is ccbed's per-packet event trace, the counterpart of the
// HPCC ns-3 simulator's packet-level trace: one fixed-size binary record per
// event of a switch's data queues (a frame enqueued, dequeued for the wire or
// dropped, an ECN mark) and per PFC pause or resume the switch sends, with a
// file header that names the nodes.
//
// The package sits beside the engines: it reads no file and opens nothing.
// An engine hands each event to a Sink as a *Record it owns and reuses; the
// caller's sink encodes it (AppendRecord appends to a caller's buffer and
// allocates nothing) and decides where the bytes go. A Reader decodes a
// trace from any io.Reader and rejects malformed input with an error that
// says where.
//
// # Format (version 1)
//
// A trace is a header, then records until the end, all little-endian.
//
// Header:
//
//	offset  size  field
//	0       8     magic "CCBTRACE"
//	8       2     version (1)
//	10      2     record size in bytes (40)
//	12      2     node count N (at least 1)
//	14      2     reserved, 0
//	16      ...   N node names, each a 1-byte length L (1..255), then L
//	              bytes of UTF-8; a record's node is an index into them
//
// Record (RecordSize bytes):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                         time_ns (int64)                       |  0
//	+                                                               +
//	|                                                               |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     kind      |   priority    |            node               |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            port               |         frame_bytes           | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                   queue_bytes (uint32)                        | 16
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                   flow source IPv4 address                    | 20
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                flow destination IPv4 address                  | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      flow UDP source port     |  flow UDP destination port    | 28
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|       flow destination QP (24 bits)           |   0 (8 bits)  | 32
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                         reserved, 0                           | 36
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The IPv4 addresses are stored as numbers (10.0.0.1 is 0x0a000001), like
// every other field, little-endian.
//
// What the fields mean, by kind:
//   - Enqueue, Dequeue, Drop, ECNMark: port is the switch's egress port,
//     priority the data queue's (PFC priority), frame_bytes the frame's
//     length, queue_bytes the bytes in that priority's queue of the port
//     after the event (a drop leaves it as it was). A drop is a frame the
//     queue refused (buffer, shared-buffer or headroom limit). Only the data
//     queues are traced: control frames (CNPs, RoCC rate messages, QCN
//     feedback), which bypass them, and PFC frames are not.
//   - PFCPause, PFCResume: the switch sent XOFF (XON) for priority out of
//     ingress port port (pfc.csv's rows, one to one); queue_bytes is the
//     bytes of that priority that entered on the port and are still in the
//     switch, frame_bytes and the flow 0.
//
// A node's records are in the order its engine handled the events, so
// their times never decrease. Within one instant the order can differ from
// the causal one: the dequeues of a burst of frames one Transmit call sends
// are recorded after the ECN marks and PFC resumes the burst caused (the
// engine records them after its loop, not per frame).
//
// The flow is what the switch's congestion points key flows by
// (ccalgo.FlowKey): the IPv4 source and destination, the UDP ports and, for
// RoCEv2 (UDP destination port 4791), the BTH's destination QP; one RoCEv2
// queue pair. A frame that is not UDP (an ACK or NAK is, a fragment is not)
// has its addresses and zero ports and QP.
package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ccbed/ccbed/wire"
)

// Kind is what happened to a frame or a priority.
type Kind uint8

// Record kinds. The zero value is no kind (a reader rejects it).
const (
	// Enqueue: a frame entered an egress data queue.
	Enqueue Kind = iota + 1
	// Dequeue: a frame left its data queue for the wire.
	Dequeue
	// Drop: a data queue refused a frame.
	Drop
	// ECNMark: a congestion point set a queued frame's ECN field (CE, or
	// ccbed's UE mark).
	ECNMark
	// PFCPause: the switch sent XOFF for a priority of an ingress port.
	PFCPause
	// PFCResume: the switch sent XON for it.
	PFCResume
	numKinds
)

// kindNames are the kinds' names, as ParseKinds and String spell them.
var kindNames = [numKinds]string{"", "enqueue", "dequeue", "drop", "ecn_mark", "pfc_pause", "pfc_resume"}

// String is the kind's name ("enqueue", "ecn_mark", ...).
func (k Kind) String() string {
	if k == 0 || k >= numKinds {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// KindMask is a set of kinds: bit k is Kind k.
type KindMask uint8

// AllKinds holds every kind.
const AllKinds KindMask = 1<<numKinds - 2

// Has reports whether k is in the set.
func (m KindMask) Has(k Kind) bool { return m&(1<<k) != 0 }

// KindNames lists the kinds' names, in kind order.
func KindNames() []string { return append([]string(nil), kindNames[1:]...) }

// ParseKinds reads a comma-separated list of kind names ("drop,pfc_pause");
// "" is every kind. An unknown name is an error that lists the known ones.
func ParseKinds(s string) (KindMask, error) {
	if s == "" {
		return AllKinds, nil
	}
	var m KindMask
	for _, f := range strings.Split(s, ",") {
		k, err := parseKind(strings.TrimSpace(f))
		if err != nil {
			return 0, err
		}
		m |= 1 << k
	}
	return m, nil
}

// parseKind is the kind named name.
func parseKind(name string) (Kind, error) {
	for k := Enqueue; k < numKinds; k++ {
		if kindNames[k] == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("trace: unknown event kind %q: want one of %s", name, strings.Join(KindNames(), ", "))
}

// Flow is a frame's flow: what the switch's congestion points key flows by
// (see the package doc).
type Flow struct {
	SrcIP, DstIP     uint32
	SrcPort, DstPort uint16
	QP               uint32 // RoCEv2's destination QP (24 bits); 0 otherwise
}

// Record is one event.
type Record struct {
	TimeNs     int64
	Kind       Kind
	Prio       uint8
	Node, Port uint16
	FrameBytes uint16
	QueueBytes uint32
	Flow       Flow
}

// Sink receives an engine's events. The record is the engine's, valid
// during the call only; Record runs on the engine's goroutine and must not
// block.
type Sink interface {
	Record(r *Record)
}

// Layout constants.
const (
	// Magic opens every trace.
	Magic = "CCBTRACE"
	// Version is the format this package writes and reads.
	Version = 1
	// RecordSize is a record's size in bytes.
	RecordSize = 40
	// headerFixed is the header before the node names.
	headerFixed = 16
	// MaxNodes is the most nodes a header names.
	MaxNodes = 1<<16 - 1
	// maxNameLen is the longest node name.
	maxNameLen = 255
)

// AppendHeader appends a trace's header naming nodes (node i is records'
// Node i) to b. A name must be 1..255 bytes.
func AppendHeader(b []byte, nodes []string) ([]byte, error) {
	if len(nodes) == 0 || len(nodes) > MaxNodes {
		return b, fmt.Errorf("trace: %d nodes: want 1..%d", len(nodes), MaxNodes)
	}
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint16(b, Version)
	b = binary.LittleEndian.AppendUint16(b, RecordSize)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(nodes)))
	b = binary.LittleEndian.AppendUint16(b, 0)
	for i, n := range nodes {
		if len(n) == 0 || len(n) > maxNameLen {
			return b, fmt.Errorf("trace: node %d: name of %d bytes: want 1..%d", i, len(n), maxNameLen)
		}
		b = append(b, byte(len(n)))
		b = append(b, n...)
	}
	return b, nil
}

// AppendRecord appends r's encoding to b. It allocates only when b has no
// room for RecordSize more bytes.
func AppendRecord(b []byte, r *Record) []byte {
	n := len(b)
	if cap(b)-n < RecordSize {
		b = append(b, make([]byte, RecordSize)...)
	} else {
		b = b[:n+RecordSize]
	}
	putRecord((*[RecordSize]byte)(b[n:]), r)
	return b
}

// putRecord encodes r into p.
func putRecord(p *[RecordSize]byte, r *Record) {
	le := binary.LittleEndian
	le.PutUint64(p[0:], uint64(r.TimeNs))
	p[8], p[9] = uint8(r.Kind), r.Prio
	le.PutUint16(p[10:], r.Node)
	le.PutUint16(p[12:], r.Port)
	le.PutUint16(p[14:], r.FrameBytes)
	le.PutUint32(p[16:], r.QueueBytes)
	le.PutUint32(p[20:], r.Flow.SrcIP)
	le.PutUint32(p[24:], r.Flow.DstIP)
	le.PutUint16(p[28:], r.Flow.SrcPort)
	le.PutUint16(p[30:], r.Flow.DstPort)
	le.PutUint32(p[32:], r.Flow.QP)
	le.PutUint32(p[36:], 0)
}

// Reader decodes a trace.
type Reader struct {
	r     io.Reader
	nodes []string
	buf   [RecordSize]byte
	off   int64 // bytes of the input consumed
	n     int64 // records read
}

// NewReader reads the header of the trace in r. It fails on anything but a
// version-1 trace: a bad magic, another version or record size, a node
// table that is empty or cut short.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{r: r}
	var h [headerFixed]byte
	if err := rd.full(h[:], "header"); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch {
	case string(h[:8]) != Magic:
		return nil, fmt.Errorf("trace: not a ccbed trace (magic %q, want %q)", h[:8], Magic)
	case le.Uint16(h[8:]) != Version:
		return nil, fmt.Errorf("trace: version %d: this reader reads version %d", le.Uint16(h[8:]), Version)
	case le.Uint16(h[10:]) != RecordSize:
		return nil, fmt.Errorf("trace: record size %d: version %d's is %d", le.Uint16(h[10:]), Version, RecordSize)
	case le.Uint16(h[12:]) == 0:
		return nil, errors.New("trace: header names no node")
	case le.Uint16(h[14:]) != 0:
		return nil, fmt.Errorf("trace: header's reserved field is %#x, want 0", le.Uint16(h[14:]))
	}
	n := int(le.Uint16(h[12:]))
	rd.nodes = make([]string, n)
	var name [maxNameLen]byte
	for i := range rd.nodes {
		if err := rd.full(name[:1], fmt.Sprintf("node %d's name length", i)); err != nil {
			return nil, err
		}
		l := int(name[0])
		if l == 0 {
			return nil, fmt.Errorf("trace: node %d has an empty name (offset %d)", i, rd.off-1)
		}
		if err := rd.full(name[:l], fmt.Sprintf("node %d's name", i)); err != nil {
			return nil, err
		}
		rd.nodes[i] = string(name[:l])
	}
	return rd, nil
}

// full reads len(p) bytes, naming them in the error when the input
// ends first.
func (rd *Reader) full(p []byte, what string) error {
	k, err := io.ReadFull(rd.r, p)
	rd.off += int64(k)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fmt.Errorf("trace: input ends in the %s (offset %d, %d of %d bytes)", what, rd.off, k, len(p))
	case err != nil:
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

// Nodes are the header's node names: a record's Node indexes them.
func (rd *Reader) Nodes() []string { return rd.nodes }

// Next decodes the next record into r. It returns io.EOF at the end of the
// trace, and an error for a record cut short or one whose kind, node or
// reserved bits are not valid.
func (rd *Reader) Next(r *Record) error {
	k, err := io.ReadFull(rd.r, rd.buf[:])
	if err == io.EOF {
		return io.EOF
	}
	rd.off += int64(k)
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("trace: record %d cut short: %d of %d bytes (offset %d)", rd.n, k, RecordSize, rd.off-int64(k))
	} else if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	p, le := &rd.buf, binary.LittleEndian
	at := rd.off - RecordSize
	*r = Record{
		TimeNs: int64(le.Uint64(p[0:])), Kind: Kind(p[8]), Prio: p[9],
		Node: le.Uint16(p[10:]), Port: le.Uint16(p[12:]), FrameBytes: le.Uint16(p[14:]),
		QueueBytes: le.Uint32(p[16:]),
		Flow: Flow{SrcIP: le.Uint32(p[20:]), DstIP: le.Uint32(p[24:]), SrcPort: le.Uint16(p[28:]),
			DstPort: le.Uint16(p[30:]), QP: le.Uint32(p[32:])},
	}
	switch {
	case r.Kind == 0 || r.Kind >= numKinds:
		return fmt.Errorf("trace: record %d (offset %d): unknown kind %d", rd.n, at, p[8])
	case r.Prio > 7:
		return fmt.Errorf("trace: record %d (offset %d): priority %d, want 0..7", rd.n, at, r.Prio)
	case int(r.Node) >= len(rd.nodes):
		return fmt.Errorf("trace: record %d (offset %d): node %d, the header names %d", rd.n, at, r.Node, len(rd.nodes))
	case r.Flow.QP > 0xffffff:
		return fmt.Errorf("trace: record %d (offset %d): QP %#x wider than 24 bits", rd.n, at, r.Flow.QP)
	case le.Uint32(p[36:]) != 0:
		return fmt.Errorf("trace: record %d (offset %d): reserved field %#x, want 0", rd.n, at, le.Uint32(p[36:]))
	}
	rd.n++
	return nil
}

// FlowOf reads the flow of the IPv4 packet at frame[ipOff:] (see the
// package doc): its addresses, and for UDP that is not a fragment its ports
// and, for RoCEv2, the BTH's destination QP. Fields the frame is too short
// for stay 0.
func FlowOf(f *Flow, frame []byte, ipOff int) {
	*f = Flow{}
	if ipOff < 0 || len(frame) < ipOff+20 {
		return
	}
	ip := frame[ipOff:]
	be := binary.BigEndian
	f.SrcIP, f.DstIP = be.Uint32(ip[12:]), be.Uint32(ip[16:])
	hl := int(ip[0]&0xf) * 4
	// Protocol 17 (UDP), neither the MF flag nor an offset: a whole datagram's
	// first bytes.
	if ip[9] != 17 || be.Uint16(ip[6:])&0x3fff != 0 || hl < 20 || len(ip) < hl+8 {
		return
	}
	udp := ip[hl:]
	f.SrcPort, f.DstPort = be.Uint16(udp[0:]), be.Uint16(udp[2:])
	if f.DstPort == wire.RoCEv2Port && len(udp) >= wire.UDPLen+wire.BTHLen {
		f.QP = be.Uint32(udp[wire.UDPLen+4:]) & 0xffffff
	}
}
