package wire

import (
	"encoding/binary"
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// INT stack sizes (HPCC Section 4.1, Figure 7).
const (
	INTHeaderLen = 2                                          // nHop 4 bits | pathID 12 bits
	INTHopLen    = 8                                          // one hop record
	INTLen       = INTHeaderLen + ccalgo.MaxINTHops*INTHopLen // 42 bytes for 5 hops
)

// linkSpeeds maps the 4-bit B field to a line rate in bits/s. HPCC says only that B
// is "the type of speed of the egress port (e.g. 40Gbps, 100Gbps, etc.)"; this
// table is ccbed's. Code 0 means unknown.
var linkSpeeds = [16]float64{
	0, 1e9, 2.5e9, 5e9, 10e9, 20e9, 25e9, 40e9,
	50e9, 56e9, 100e9, 200e9, 400e9, 800e9, 1.6e12, 0,
}

// LinkSpeedCode returns the B code of a line rate: the exact match when there is
// one (ok true), else the code of the nearest table rate on a log scale (ok false;
// code 0 for a rate <= 0). Switches
// should check ok once when configured, not per packet.
func LinkSpeedCode(bps float64) (code uint8, ok bool) {
	for c := 1; c < len(linkSpeeds); c++ {
		if linkSpeeds[c] == bps && bps != 0 {
			return uint8(c), true
		}
	}
	best, bestDiff := uint8(0), math.Inf(1)
	for c := 1; c < len(linkSpeeds); c++ {
		if r := linkSpeeds[c]; r != 0 && bps > 0 {
			if d := math.Abs(math.Log(r / bps)); d < bestDiff {
				best, bestDiff = uint8(c), d
			}
		}
	}
	return best, false
}

// LinkSpeedBps returns the line rate of B code c (0 for unknown codes).
func LinkSpeedBps(c uint8) float64 { return linkSpeeds[c&0xf] }

// INT is a view of ccbed's HPCC INT stack, always INTLen bytes (room for
// ccalgo.MaxINTHops hops, padded by the sender as in HPCC's "INT padding"):
//
//	0   nHop 4 bits | pathID 12 bits (XOR of the 12-bit switch ids)
//	2   hop 0: B 4 | TS 24 (ns) | txBytes 20 (128 B units) | qLen 16 (80 B units)
//	10  hop 1 ... up to hop 4 at 34
//
// Deviation from HPCC Figure 7: the stack sits right after the BTH, not between the
// UDP header and the BTH, so that standard RoCEv2 dissectors still find the BTH at
// its usual offset (ccbed's choice); BTH FlagINT says it is there. In an ACK
// the echoed stack follows the ACK extension. Check IsValid before other methods.
type INT []byte

// IsValid reports whether b holds a whole stack with at most MaxINTHops hops.
func (b INT) IsValid() bool { return len(b) >= INTLen && int(b[0]>>4) <= ccalgo.MaxINTHops }

// NHops returns the number of hop records.
func (b INT) NHops() int { return int(b[0] >> 4) }

// PathID returns the XOR of the switch ids along the path.
func (b INT) PathID() uint16 { return binary.BigEndian.Uint16(b) & 0x0fff }

// Reset empties the stack (nHop and pathID 0), as the sender does.
func (b INT) Reset() { b[0], b[1] = 0, 0 }

// Hop decodes hop record i (0 <= i < NHops) into ccalgo's units: bytes, ns, bits/s.
func (b INT) Hop(i int) ccalgo.INTHop {
	v := binary.BigEndian.Uint64(b[INTHeaderLen+i*INTHopLen:])
	return ccalgo.INTHop{
		LinkBps: linkSpeeds[v>>60],
		TS:      uint32(v>>36) & (ccalgo.INTTSWrap - 1),
		TxBytes: uint32(v>>16&(1<<20-1)) * ccalgo.INTTxBytesUnit,
		QLen:    uint32(v&0xffff) * ccalgo.INTQLenUnit,
	}
}

// Push appends a hop record as a switch does at dequeue: nHop + 1, pathID ^=
// switchID (12 bits), fields converted to wire units (TS and txBytes wrap, qLen
// saturates at ccalgo.INTQLenMax, txBytes and qLen round down to their units, B is
// LinkSpeedCode's nearest code). It reports false, changing nothing, on a full
// stack.
func (b INT) Push(h *ccalgo.INTHop, switchID uint16) bool {
	code, _ := LinkSpeedCode(h.LinkBps)
	return b.PushCode(code, h, switchID)
}

// PushCode is Push with the B code of h.LinkBps given (LinkSpeedCode's, found
// once per port where Push looks it up per packet); h.LinkBps is not read.
func (b INT) PushCode(code uint8, h *ccalgo.INTHop, switchID uint16) bool {
	n := b.NHops()
	if n >= ccalgo.MaxINTHops {
		return false
	}
	b.putHop(n, code, h)
	hdr := binary.BigEndian.Uint16(b)
	hdr = uint16(n+1)<<12 | (hdr^switchID)&0x0fff
	binary.BigEndian.PutUint16(b, hdr)
	return true
}

func (b INT) putHop(i int, code uint8, h *ccalgo.INTHop) {
	q := h.QLen / ccalgo.INTQLenUnit
	if q > 0xffff {
		q = 0xffff
	}
	v := uint64(code&0xf)<<60 |
		uint64(h.TS&(ccalgo.INTTSWrap-1))<<36 |
		uint64(h.TxBytes/ccalgo.INTTxBytesUnit&(1<<20-1))<<16 |
		uint64(q)
	binary.BigEndian.PutUint64(b[INTHeaderLen+i*INTHopLen:], v)
}

// Stack decodes every hop into s (s.NHops = NHops()).
func (b INT) Stack(s *ccalgo.INTStack) {
	n := b.NHops()
	s.NHops = uint8(n)
	for i := 0; i < n; i++ {
		s.Hops[i] = b.Hop(i)
	}
}

// SetStack writes s (as the receiver echoing it in an ACK does) with the given
// pathID; hop slots beyond s.NHops are zeroed. s.NHops above MaxINTHops is clamped.
func (b INT) SetStack(s *ccalgo.INTStack, pathID uint16) {
	n := int(s.NHops)
	if n > ccalgo.MaxINTHops {
		n = ccalgo.MaxINTHops
	}
	binary.BigEndian.PutUint16(b, uint16(n)<<12|pathID&0x0fff)
	for i := 0; i < ccalgo.MaxINTHops; i++ {
		if i < n {
			code, _ := LinkSpeedCode(s.Hops[i].LinkBps)
			b.putHop(i, code, &s.Hops[i])
		} else {
			binary.BigEndian.PutUint64(b[INTHeaderLen+i*INTHopLen:], 0)
		}
	}
}
