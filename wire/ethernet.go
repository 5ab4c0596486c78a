package wire

import "encoding/binary"

// MAC is an Ethernet address.
type MAC [6]byte

// Ethernet header sizes and EtherTypes.
const (
	EthernetLen     = 14     // untagged Ethernet header
	VLANTagLen      = 4      // one 802.1Q tag
	EtherTypeIPv4   = 0x0800 // IPv4
	EtherTypeVLAN   = 0x8100 // 802.1Q tag protocol identifier
	EtherTypeMACCtl = 0x8808 // MAC control (PAUSE, PFC)
	MinFrameLen     = 60     // minimum Ethernet frame without FCS
)

// Ethernet is a view of an Ethernet header, optionally 802.1Q tagged:
//
//	0  destination MAC (6)
//	6  source MAC (6)
//	12 EtherType (2), or 0x8100 then TCI (2: PCP 3 bits, DEI 1, VID 12) then EtherType (2)
//
// Check IsValid before any other method.
type Ethernet []byte

// IsValid reports whether e holds a whole header, including the VLAN tag when the
// outer EtherType announces one.
func (e Ethernet) IsValid() bool {
	if len(e) < EthernetLen {
		return false
	}
	return !e.HasVLAN() || len(e) >= EthernetLen+VLANTagLen
}

// Dst returns the destination address.
func (e Ethernet) Dst() MAC { return MAC(e[0:6]) }

// Src returns the source address.
func (e Ethernet) Src() MAC { return MAC(e[6:12]) }

// SetDst sets the destination address.
func (e Ethernet) SetDst(m MAC) { copy(e[0:6], m[:]) }

// SetSrc sets the source address.
func (e Ethernet) SetSrc(m MAC) { copy(e[6:12], m[:]) }

// HasVLAN reports whether the frame carries an 802.1Q tag.
func (e Ethernet) HasVLAN() bool { return binary.BigEndian.Uint16(e[12:]) == EtherTypeVLAN }

// HeaderLen is 14, or 18 with a VLAN tag.
func (e Ethernet) HeaderLen() int {
	if e.HasVLAN() {
		return EthernetLen + VLANTagLen
	}
	return EthernetLen
}

// EtherType returns the type of the payload (the inner one of a tagged frame).
func (e Ethernet) EtherType() uint16 {
	return binary.BigEndian.Uint16(e[e.HeaderLen()-2:])
}

// PCP returns the 802.1Q priority code point, 0 for an untagged frame.
func (e Ethernet) PCP() uint8 {
	if !e.HasVLAN() {
		return 0
	}
	return e[14] >> 5
}

// VLANID returns the 802.1Q VLAN identifier, 0 for an untagged frame.
func (e Ethernet) VLANID() uint16 {
	if !e.HasVLAN() {
		return 0
	}
	return binary.BigEndian.Uint16(e[14:]) & 0x0fff
}

// SetPCP sets the priority of a tagged frame; it does nothing on an untagged one.
func (e Ethernet) SetPCP(pcp uint8) {
	if e.HasVLAN() {
		e[14] = e[14]&0x1f | pcp<<5
	}
}

// Payload returns the bytes after the header.
func (e Ethernet) Payload() []byte { return e[e.HeaderLen():] }

// encodeEthernet writes an Ethernet header (tagged when vlan) with EtherType et at
// the start of b, which must be long enough, and returns its length.
func encodeEthernet(b []byte, dst, src MAC, vlan bool, pcp uint8, vid uint16, et uint16) int {
	copy(b[0:6], dst[:])
	copy(b[6:12], src[:])
	if vlan {
		binary.BigEndian.PutUint16(b[12:], EtherTypeVLAN)
		binary.BigEndian.PutUint16(b[14:], uint16(pcp&7)<<13|vid&0x0fff)
		binary.BigEndian.PutUint16(b[16:], et)
		return EthernetLen + VLANTagLen
	}
	binary.BigEndian.PutUint16(b[12:], et)
	return EthernetLen
}
