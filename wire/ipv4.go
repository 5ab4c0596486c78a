package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// IPv4 constants.
const (
	IPv4MinLen      = 20 // header without options
	IPProtoICMP     = 1
	IPProtoUDP      = 17
	DefaultTTL      = 64
	ipv4FlagDF      = 0x4000
	ipv4FragOffMask = 0x1fff
	ipv4FlagMF      = 0x2000
)

// ECN codepoints (RFC 3168) of the IPv4 TOS byte's two low bits.
const (
	ECNNotECT = 0 // 00: not ECN-capable
	ECNECT1   = 1 // 01: ECT(1); ccbed's TCD "UE" mark (TCD: Zhang et al., "Congestion Detection in Lossless Networks", SIGCOMM 2021)
	ECNECT0   = 2 // 10: ECT(0); what ccbed data packets leave the sender with
	ECNCE     = 3 // 11: congestion experienced
)

// MarkFromECN maps an ECN codepoint to the ccalgo mark it stands for: 11 is CE,
// 01 is TCD's UE, anything else none.
func MarkFromECN(ecn uint8) ccalgo.Mark {
	switch ecn & 3 {
	case ECNCE:
		return ccalgo.MarkCE
	case ECNECT1:
		return ccalgo.MarkUE
	}
	return ccalgo.MarkNone
}

// ECNForMark is the codepoint a switch writes to apply mark m to an ECN-capable
// packet: CE 11, UE 01, none ECT(0) 10.
func ECNForMark(m ccalgo.Mark) uint8 {
	switch m {
	case ccalgo.MarkCE:
		return ECNCE
	case ccalgo.MarkUE:
		return ECNECT1
	}
	return ECNECT0
}

// IPv4 is a view of an IPv4 header (RFC 791):
//
//	0  version 4 | IHL 4     1  DSCP 6 | ECN 2    2  total length
//	4  identification        6  flags 3 | fragment offset 13
//	8  TTL   9 protocol      10 header checksum
//	12 source address        16 destination address   20 options (IHL > 5)
//
// Check IsValid before any other method.
type IPv4 []byte

// IsValid reports whether b holds a well-formed header: version 4, IHL >= 5, the
// header and the total length within b.
func (b IPv4) IsValid() bool {
	if len(b) < IPv4MinLen || b[0]>>4 != 4 {
		return false
	}
	hl := int(b[0]&0xf) * 4
	tl := int(binary.BigEndian.Uint16(b[2:]))
	return hl >= IPv4MinLen && hl <= tl && tl <= len(b)
}

// HeaderLen returns the header length in bytes (IHL * 4).
func (b IPv4) HeaderLen() int { return int(b[0]&0xf) * 4 }

// TOS returns the whole TOS byte (DSCP << 2 | ECN).
func (b IPv4) TOS() uint8 { return b[1] }

// DSCP returns the differentiated services code point.
func (b IPv4) DSCP() uint8 { return b[1] >> 2 }

// ECN returns the ECN codepoint.
func (b IPv4) ECN() uint8 { return b[1] & 3 }

// SetECN sets the ECN codepoint and updates the checksum incrementally (RFC 1624),
// as a switch marking CE does.
func (b IPv4) SetECN(ecn uint8) {
	old := binary.BigEndian.Uint16(b[0:])
	b[1] = b[1]&^3 | ecn&3
	b.updateChecksum(old, binary.BigEndian.Uint16(b[0:]))
}

// TotalLength returns the length of header plus payload.
func (b IPv4) TotalLength() int { return int(binary.BigEndian.Uint16(b[2:])) }

// ID returns the identification field.
func (b IPv4) ID() uint16 { return binary.BigEndian.Uint16(b[4:]) }

// IsFragment reports whether the packet is a fragment (MF set or offset non-zero).
func (b IPv4) IsFragment() bool {
	return binary.BigEndian.Uint16(b[6:])&(ipv4FlagMF|ipv4FragOffMask) != 0
}

// TTL returns the time to live.
func (b IPv4) TTL() uint8 { return b[8] }

// DecTTL decrements the TTL and updates the checksum incrementally (RFC 1624,
// Eqn. 3: HC' = ~(~HC + ~m + m')). It reports false, changing nothing, when the
// TTL is already 0 or 1 (the packet must be dropped).
func (b IPv4) DecTTL() bool {
	if b[8] <= 1 {
		return false
	}
	b[8]--
	// RFC 1624's HC' = ~(~HC + ~m + m') with m' = m - 0x0100 (the TTL is
	// the word's high byte and at least 2): ~m + m' is 0xFEFF, and one
	// fold carries the sum back into 16 bits (updateChecksum16 gives the
	// same bits, TestDecTTLMatchesUpdate).
	s := uint32(^binary.BigEndian.Uint16(b[10:])) + 0xFEFF
	binary.BigEndian.PutUint16(b[10:], ^uint16(s&0xffff+s>>16))
	return true
}

// Protocol returns the payload's protocol number.
func (b IPv4) Protocol() uint8 { return b[9] }

// Checksum returns the header checksum field.
func (b IPv4) Checksum() uint16 { return binary.BigEndian.Uint16(b[10:]) }

// SetChecksum stores a header checksum.
func (b IPv4) SetChecksum(c uint16) { binary.BigEndian.PutUint16(b[10:], c) }

// ComputeChecksum returns the checksum the header should carry (the field itself
// counted as zero).
func (b IPv4) ComputeChecksum() uint16 {
	hl := b.HeaderLen()
	s := sum16(b[:10], 0)
	s = sum16(b[12:hl], s)
	return ^fold(s)
}

// VerifyChecksum reports whether the header checksum is correct.
func (b IPv4) VerifyChecksum() bool { return fold(sum16(b[:b.HeaderLen()], 0)) == 0xffff }

// Src returns the source address (host byte order).
func (b IPv4) Src() uint32 { return binary.BigEndian.Uint32(b[12:]) }

// Dst returns the destination address (host byte order).
func (b IPv4) Dst() uint32 { return binary.BigEndian.Uint32(b[16:]) }

// Payload returns the bytes between the header and the total length.
func (b IPv4) Payload() []byte { return b[b.HeaderLen():b.TotalLength()] }

// updateChecksum applies RFC 1624 Eqn. 3 for one 16-bit word that went from old
// to new.
func (b IPv4) updateChecksum(old, new uint16) {
	b.SetChecksum(updateChecksum16(b.Checksum(), old, new))
}

// encodeIPv4 writes a 20-byte header for a payload of payloadLen bytes and
// computes its checksum. b must be long enough.
func encodeIPv4(b []byte, tos uint8, id uint16, ttl, proto uint8, src, dst uint32, payloadLen int) {
	b[0] = 0x45
	b[1] = tos
	binary.BigEndian.PutUint16(b[2:], uint16(IPv4MinLen+payloadLen))
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], ipv4FlagDF)
	b[8] = ttl
	b[9] = proto
	b[10], b[11] = 0, 0
	binary.BigEndian.PutUint32(b[12:], src)
	binary.BigEndian.PutUint32(b[16:], dst)
	// The checksum from the values just written, not from reading the
	// header back: the same big-endian words sum16 would add.
	sum := uint64(0x45)<<8 | uint64(tos)
	sum += uint64(uint16(IPv4MinLen+payloadLen)) + uint64(id) + ipv4FlagDF + (uint64(ttl)<<8 | uint64(proto))
	sum += uint64(src>>16) + uint64(src&0xffff) + uint64(dst>>16) + uint64(dst&0xffff)
	IPv4(b).SetChecksum(^fold(sum))
}

// sum16 adds b as big-endian 16-bit words (an odd last byte padded with zero) to s,
// without folding; callers fold before the sum could overflow (frames are < 64 KiB,
// so 32 bits plus the 64-bit accumulator never overflow).
func sum16(b []byte, s uint64) uint64 {
	for len(b) >= 8 {
		s += uint64(binary.BigEndian.Uint16(b)) + uint64(binary.BigEndian.Uint16(b[2:])) +
			uint64(binary.BigEndian.Uint16(b[4:])) + uint64(binary.BigEndian.Uint16(b[6:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	return s
}

// fold reduces a ones' complement sum to 16 bits.
func fold(s uint64) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// updateChecksum16 is RFC 1624 Eqn. 3: HC' = ~(~HC + ~m + m').
func updateChecksum16(hc, old, new uint16) uint16 {
	s := uint64(^hc) + uint64(^old) + uint64(new)
	return ^fold(s)
}

// The setters below do not touch the checksum: call SetChecksum(ComputeChecksum())
// after the last one (SetECN and DecTTL update it themselves).

// SetDSCP sets the differentiated services code point, keeping the ECN bits.
func (b IPv4) SetDSCP(dscp uint8) { b[1] = dscp<<2 | b[1]&3 }

// SetTotalLength sets the total length field.
func (b IPv4) SetTotalLength(n int) { binary.BigEndian.PutUint16(b[2:], uint16(n)) }

// SetID sets the identification field.
func (b IPv4) SetID(id uint16) { binary.BigEndian.PutUint16(b[4:], id) }

// SetTTL sets the time to live.
func (b IPv4) SetTTL(ttl uint8) { b[8] = ttl }

// SetProtocol sets the payload's protocol number.
func (b IPv4) SetProtocol(p uint8) { b[9] = p }

// SetSrc sets the source address (host byte order).
func (b IPv4) SetSrc(a uint32) { binary.BigEndian.PutUint32(b[12:], a) }

// SetDst sets the destination address (host byte order).
func (b IPv4) SetDst(a uint32) { binary.BigEndian.PutUint32(b[16:], a) }
