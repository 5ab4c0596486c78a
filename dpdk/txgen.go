package dpdk

/*
#include <stdlib.h>
#include <string.h>
#include "txgen.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrTxGenCursor is returned by TxGen.Send and Fill for a cursor outside the
// schedule or the flows (built once: the hot path compares, never allocates).
var ErrTxGenCursor = errors.New("dpdk: TxGen: cursor outside the schedule or the flows")

// TxGen builds and transmits bursts of frames from header templates in one cgo
// call a burst (txgen.c): it allocates the mbufs, copies into each the header
// template of its size class, patches the flow's addresses, ports, QP and tag, the
// IPv4 checksum, the sequence number and the send time, sets the lengths, and
// transmits. It is the per-packet work of pktgen's Generator.Build done in C,
// as dpdk-testpmd --forward-mode=txonly does it; the caller keeps the loop,
// the rate control and the counters, and passes the generator's position
// (TxGenCursor) with every call. Its memory is C memory, allocated once by
// NewTxGen; Send and Fill allocate nothing. A TxGen is for one lcore; Free it
// after use.
type TxGen struct {
	g *C.struct_ccbed_txgen
	// Picks is the flow of each packet of the next burst when Send or Fill
	// is told to use them (flows chosen by a scheduler rather than in
	// turn); C memory, MaxBurst entries.
	Picks []uint16
	// Lens is the frame length of each packet of the last burst, as long
	// as those packets are the caller's (C memory).
	Lens []uint16

	mem      unsafe.Pointer
	maxBurst int
}

// TxGenSpec is the plain data of a TxGen.
type TxGenSpec struct {
	// Classes are the frame sizes: each its length and header template.
	Classes []TxGenClass
	// Schedule is the class of each packet, cycling.
	Schedule []uint16
	// Flows are the values patched per packet (at least one).
	Flows []TxGenFlow
	// Offsets of the patched fields.
	Offsets TxGenOffsets
}

// TxGenClass is one frame size.
type TxGenClass struct {
	// Size is the frame length without FCS.
	Size int
	// Header is the start of the frame, copied into every packet of the
	// class (at most TxGenHeaderMax bytes); bytes of the frame after it keep
	// what the mbuf held, except those the copy's rounding up reaches.
	Header []byte
	// IPSum is the ones' complement sum of the IPv4 header's words without
	// the addresses and the checksum.
	IPSum uint32
}

// TxGenFlow is one flow's patched fields, in host byte order.
type TxGenFlow struct {
	SrcIP, DstIP     uint32
	SrcPort, DstPort uint16
	QP               uint32 // 24 bits
	IPSum            uint32 // ones' complement sum of the four address words
	Tag              uint16 // written at Offsets.Tag16 (pktgen: its stream and flow id)
}

// TxGenOffsets are the byte offsets of the patched fields; -1: absent.
type TxGenOffsets struct {
	IPv4     int // checksum at +10, source and destination address at +12, +16
	UDP      int // source and destination port at +0, +2
	Seq32    int // sequence number, low 32 bits, big endian
	Time64   int // send time in ns, big endian
	Time64b  int // a second copy of the send time
	QP24     int // the flow's QP number, 24 bits
	PSN24    int // sequence number, low 24 bits
	ZeroTail int // bytes cleared at the end of the frame (0: none)
	Tag16    int // the flow's Tag, 16 bits, big endian
}

// TxGenCursor is where the generator stands: the schedule position of the
// next packet, its flow (when cycling) and its sequence number. Packet i of a
// burst gets position Pos+i (mod the schedule's length), flow Flow+i (mod the
// flows) and sequence number Seq+i.
type TxGenCursor struct {
	Pos, Flow int
	Seq       uint64
}

// TxGenHeaderMax is the longest header template.
const TxGenHeaderMax = C.CCBED_TXGEN_HDR_MAX

// NewTxGen copies spec into C memory for bursts of up to maxBurst packets
// with mbufs from pool, sent on queue q of port p. The pool's mbufs must hold
// the largest frame and the rounded-up header copy.
func NewTxGen(pool *Mempool, p EthPort, q uint16, spec *TxGenSpec, maxBurst int) (*TxGen, error) {
	nc, ns, nf := len(spec.Classes), len(spec.Schedule), len(spec.Flows)
	switch {
	case pool == nil:
		return nil, fmt.Errorf("dpdk: NewTxGen: no mempool")
	case nc == 0 || ns == 0 || nf == 0:
		return nil, fmt.Errorf("dpdk: NewTxGen: %d classes, %d schedule entries, %d flows: want at least one each", nc, ns, nf)
	case nf > 1<<16:
		return nil, fmt.Errorf("dpdk: NewTxGen: %d flows, at most %d", nf, 1<<16)
	case maxBurst <= 0 || maxBurst > 1<<15:
		return nil, fmt.Errorf("dpdk: NewTxGen: burst %d out of range 1..%d", maxBurst, 1<<15)
	}
	hdr := 0
	for i, c := range spec.Classes {
		if len(c.Header) > TxGenHeaderMax || len(c.Header) > c.Size || c.Size > 0xffff {
			return nil, fmt.Errorf("dpdk: NewTxGen: class %d: a %d-byte header for a %d-byte frame (header at most %d)",
				i, len(c.Header), c.Size, TxGenHeaderMax)
		}
		hdr = max(hdr, len(c.Header))
	}
	for i, k := range spec.Schedule {
		if int(k) >= nc {
			return nil, fmt.Errorf("dpdk: NewTxGen: schedule entry %d names class %d of %d", i, k, nc)
		}
	}
	copyLen := 64
	for copyLen < hdr {
		copyLen += 16
	}
	if copyLen > 96 {
		copyLen = TxGenHeaderMax
	}
	room := pool.DataRoom() - MbufHeadroom
	maxEnd := 0
	o := &spec.Offsets
	for _, c := range spec.Classes {
		maxEnd = max(maxEnd, c.Size, copyLen)
		if o.ZeroTail > c.Size {
			return nil, fmt.Errorf("dpdk: NewTxGen: %d tail bytes to clear in a %d-byte frame", o.ZeroTail, c.Size)
		}
	}
	if maxEnd > room {
		return nil, fmt.Errorf("dpdk: NewTxGen: %d-byte frames (or header copies) do not fit the pool's %d-byte mbufs", maxEnd, room)
	}
	for _, f := range []struct {
		name string
		off  int
		len  int
	}{{"IPv4", o.IPv4, 20}, {"UDP", o.UDP, 4}, {"Seq32", o.Seq32, 4}, {"Time64", o.Time64, 8},
		{"Time64b", o.Time64b, 8}, {"QP24", o.QP24, 3}, {"PSN24", o.PSN24, 3}, {"Tag16", o.Tag16, 2}} {
		if f.off < -1 || f.off+f.len > hdr {
			return nil, fmt.Errorf("dpdk: NewTxGen: offset %s = %d outside the %d-byte header", f.name, f.off, hdr)
		}
	}

	// One block: the struct, the classes (64-byte aligned), the flows, the
	// schedule, the picks and the lengths.
	gSize := (C.size_t(unsafe.Sizeof(C.struct_ccbed_txgen{})) + 63) &^ 63
	cSize := C.size_t(nc) * C.size_t(unsafe.Sizeof(C.struct_ccbed_txgen_class{}))
	fSize := C.size_t(nf) * C.size_t(unsafe.Sizeof(C.struct_ccbed_txgen_flow{}))
	sSize := C.size_t(ns) * 2
	bSize := C.size_t(maxBurst) * 2
	var mem unsafe.Pointer
	if C.posix_memalign(&mem, 64, gSize+cSize+fSize+sSize+2*bSize) != 0 {
		return nil, fmt.Errorf("dpdk: NewTxGen: out of memory")
	}
	C.memset(mem, 0, gSize+cSize+fSize+sSize+2*bSize)
	t := &TxGen{g: (*C.struct_ccbed_txgen)(mem), mem: mem, maxBurst: maxBurst}
	classes := unsafe.Slice((*C.struct_ccbed_txgen_class)(unsafe.Add(mem, gSize)), nc)
	flows := unsafe.Slice((*C.struct_ccbed_txgen_flow)(unsafe.Add(mem, gSize+cSize)), nf)
	sched := unsafe.Slice((*uint16)(unsafe.Add(mem, gSize+cSize+fSize)), ns)
	t.Picks = unsafe.Slice((*uint16)(unsafe.Add(mem, gSize+cSize+fSize+sSize)), maxBurst)
	t.Lens = unsafe.Slice((*uint16)(unsafe.Add(mem, gSize+cSize+fSize+sSize+bSize)), maxBurst)
	for i, c := range spec.Classes {
		h := unsafe.Slice((*byte)(unsafe.Pointer(&classes[i].hdr[0])), TxGenHeaderMax)
		copy(h, c.Header)
		classes[i].ip_sum = C.uint32_t(c.IPSum)
		classes[i].size = C.uint16_t(c.Size)
	}
	for i, f := range spec.Flows {
		flows[i] = C.struct_ccbed_txgen_flow{src_ip: C.uint32_t(f.SrcIP), dst_ip: C.uint32_t(f.DstIP),
			src_port: C.uint16_t(f.SrcPort), dst_port: C.uint16_t(f.DstPort),
			qp: C.uint32_t(f.QP & 0xffffff), ip_sum: C.uint32_t(f.IPSum), tag: C.uint16_t(f.Tag)}
	}
	copy(sched, spec.Schedule)
	g := t.g
	g.mp = pool.c()
	g.classes = &classes[0]
	g.sched = (*C.uint16_t)(unsafe.Pointer(&sched[0]))
	g.flows = &flows[0]
	g.picks = (*C.uint16_t)(unsafe.Pointer(&t.Picks[0]))
	g.lens = (*C.uint16_t)(unsafe.Pointer(&t.Lens[0]))
	g.nsched, g.nflows = C.uint32_t(ns), C.uint32_t(nf)
	g.copy = C.uint16_t(copyLen)
	g.port, g.queue = C.uint16_t(p), C.uint16_t(q)
	g.off = C.struct_ccbed_txgen_offsets{ipv4: C.int16_t(o.IPv4), udp: C.int16_t(o.UDP), seq32: C.int16_t(o.Seq32),
		time64: C.int16_t(o.Time64), time64b: C.int16_t(o.Time64b), qp24: C.int16_t(o.QP24),
		psn24: C.int16_t(o.PSN24), zero_tail: C.int16_t(o.ZeroTail), tag16: C.int16_t(o.Tag16)}
	return t, nil
}

// MaxBurst is the longest burst Send and Fill take.
func (t *TxGen) MaxBurst() int { return t.maxBurst }

// Send allocates len(pkts) mbufs into pkts (all or none: ErrNoMbufs), builds
// them from cursor c, stamped now (with usePicks, packet i is of flow
// Picks[i] instead of c.Flow+i), and transmits them. It returns how many the
// driver took, their bytes and the bytes of all built frames; the rest,
// pkts[sent:], stay the caller's (retry or free them), their lengths in Lens.
// pkts should be a Burst's slice (C memory) of at most MaxBurst entries.
func (t *TxGen) Send(pkts []*Mbuf, now int64, c TxGenCursor, usePicks bool) (sent int, sentBytes, builtBytes uint64, err error) {
	n, err := t.burst(pkts, now, c, usePicks, true)
	return n, uint64(t.g.sent_bytes), uint64(t.g.built_bytes), err
}

// Fill is Send without the transmission: pkts hold the built frames, the
// caller's, and it returns their bytes.
func (t *TxGen) Fill(pkts []*Mbuf, now int64, c TxGenCursor, usePicks bool) (builtBytes uint64, err error) {
	_, err = t.burst(pkts, now, c, usePicks, false)
	return uint64(t.g.built_bytes), err
}

func (t *TxGen) burst(pkts []*Mbuf, now int64, c TxGenCursor, usePicks, tx bool) (int, error) {
	t.g.built_bytes, t.g.sent_bytes = 0, 0
	if len(pkts) == 0 {
		return 0, nil
	}
	if len(pkts) > t.maxBurst {
		pkts = pkts[:t.maxBurst]
	}
	if uint(c.Pos) >= uint(t.g.nsched) || uint(c.Flow) >= uint(t.g.nflows) {
		return 0, ErrTxGenCursor
	}
	up, txi := C.int(0), C.int(0)
	if usePicks {
		up = 1
	}
	if tx {
		txi = 1
	}
	n := C.ccbed_txgen_burst(t.g, mbufArray(pkts), C.uint16_t(len(pkts)), C.uint64_t(now), C.uint32_t(c.Pos),
		C.uint32_t(c.Flow), C.uint64_t(c.Seq), up, txi)
	if n < 0 {
		return 0, ErrNoMbufs
	}
	return int(n), nil
}

// Free releases the C memory (not any mbuf).
func (t *TxGen) Free() {
	if t.mem != nil {
		C.free(t.mem)
		t.mem, t.g, t.Picks, t.Lens = nil, nil, nil, nil
	}
}
