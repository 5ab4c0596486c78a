package wire

import "encoding/binary"

// UDP constants.
const (
	UDPLen       = 8    // UDP header
	RoCEv2Port   = 4791 // IANA RoCEv2 destination port
	udpProtoWord = IPProtoUDP
)

// UDP is a view of a UDP header (RFC 768):
//
//	0 source port   2 destination port   4 length   6 checksum (0: none)
//
// RoCEv2 allows checksum 0, and ccbed's builders send 0 (the ICRC protects the
// transport). Check IsValid before any other method.
type UDP []byte

// IsValid reports whether b holds a header whose length field fits in b.
func (b UDP) IsValid() bool {
	if len(b) < UDPLen {
		return false
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	return n >= UDPLen && n <= len(b)
}

// SrcPort returns the source port.
func (b UDP) SrcPort() uint16 { return binary.BigEndian.Uint16(b[0:]) }

// DstPort returns the destination port.
func (b UDP) DstPort() uint16 { return binary.BigEndian.Uint16(b[2:]) }

// Length returns the length of header plus payload.
func (b UDP) Length() int { return int(binary.BigEndian.Uint16(b[4:])) }

// Checksum returns the checksum field (0: not computed).
func (b UDP) Checksum() uint16 { return binary.BigEndian.Uint16(b[6:]) }

// SetSrcPort sets the source port.
func (b UDP) SetSrcPort(p uint16) { binary.BigEndian.PutUint16(b[0:], p) }

// SetDstPort sets the destination port.
func (b UDP) SetDstPort(p uint16) { binary.BigEndian.PutUint16(b[2:], p) }

// SetLength sets the length field.
func (b UDP) SetLength(n int) { binary.BigEndian.PutUint16(b[4:], uint16(n)) }

// SetChecksum stores a checksum (0 means none).
func (b UDP) SetChecksum(c uint16) { binary.BigEndian.PutUint16(b[6:], c) }

// Payload returns the bytes after the header, up to the length field.
func (b UDP) Payload() []byte { return b[UDPLen:b.Length()] }

// ComputeChecksum returns the checksum over the IPv4 pseudo-header of src and dst,
// the header (checksum counted as zero) and the payload; a computed 0 is sent as
// 0xffff (RFC 768).
func (b UDP) ComputeChecksum(src, dst uint32) uint16 {
	n := b.Length()
	s := uint64(src>>16) + uint64(src&0xffff) + uint64(dst>>16) + uint64(dst&0xffff) +
		udpProtoWord + uint64(n)
	s = sum16(b[:6], s)
	s = sum16(b[UDPLen:n], s)
	c := ^fold(s)
	if c == 0 {
		c = 0xffff
	}
	return c
}

// VerifyChecksum reports whether the checksum is 0 (none) or correct.
func (b UDP) VerifyChecksum(src, dst uint32) bool {
	c := b.Checksum()
	return c == 0 || c == b.ComputeChecksum(src, dst)
}

// encodeUDP writes a header with checksum 0 for a payload of payloadLen bytes.
func encodeUDP(b []byte, src, dst uint16, payloadLen int) {
	binary.BigEndian.PutUint16(b[0:], src)
	binary.BigEndian.PutUint16(b[2:], dst)
	binary.BigEndian.PutUint16(b[4:], uint16(UDPLen+payloadLen))
	b[6], b[7] = 0, 0
}
