package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// Summary is what Classify finds out about a frame: its kind and the offsets of
// the headers a switch needs, without views. Offsets are from the start of the
// frame; 0 means absent (no header of a frame starts at offset 0 but the
// Ethernet one).
type Summary struct {
	Kind Kind
	// IPOff is the IPv4 header: set (14, or 18 behind a VLAN tag) as soon as
	// the EtherType is IPv4, even when the IPv4 header then proves malformed.
	IPOff uint16
	// L4Off is the UDP header of a well-formed UDP datagram (Decode's f.UDP).
	L4Off uint16
	// INTOff is the INT stack of a data packet or the echoed one of an ACK
	// (Decode's f.INT).
	INTOff uint16
}

// Classify is Decode for the forwarding path: it runs the same checks in the
// same order and returns the same error and kind as Decode, but fills only a
// Summary of offsets instead of a Frame of views, reads each header field once
// at its fixed offset and verifies the checksums with word-wide loads. Use it
// where a frame is forwarded rather than consumed (the switch); use Decode
// where its fields are read. It does not allocate.
//
// As with Decode, a malformed frame returns one of the package's errors with
// s.Kind == KindOther; ErrFragment comes with IPOff set (a fragment is well
// formed IPv4 that ccbed does not parse further).
func Classify(frame []byte, s *Summary) error {
	*s = Summary{}
	if len(frame) < EthernetLen {
		return ErrTruncated
	}
	hl := EthernetLen
	et := binary.BigEndian.Uint16(frame[12:])
	if et == EtherTypeVLAN {
		if len(frame) < EthernetLen+VLANTagLen {
			return ErrTruncated
		}
		hl += VLANTagLen
		et = binary.BigEndian.Uint16(frame[16:])
	}
	switch et {
	case EtherTypeIPv4:
	case EtherTypeMACCtl:
		pl := frame[hl:]
		if len(pl) < 2 || binary.BigEndian.Uint16(pl) != MACCtlOpPFC {
			return nil
		}
		if len(pl) < PFCLen {
			return ErrBadPFC
		}
		s.Kind = KindPFC
		return nil
	default:
		return nil
	}
	s.IPOff = uint16(hl)
	ip := frame[hl:]
	if len(ip) < IPv4MinLen {
		return ErrTruncated
	}
	ihl := int(ip[0]&0xf) * 4
	tl := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[0]>>4 != 4 || ihl < IPv4MinLen || ihl > tl || tl > len(ip) {
		return ErrBadIPv4
	}
	if !checksumOK(ip[:ihl]) {
		return ErrIPv4Checksum
	}
	if binary.BigEndian.Uint16(ip[6:])&(ipv4FlagMF|ipv4FragOffMask) != 0 {
		return ErrFragment
	}
	p := ip[ihl:tl]
	switch ip[9] {
	case IPProtoICMP:
		if len(p) < 1 || p[0] != ICMPTypeRoCCRate {
			return nil
		}
		if len(p) < RoCCRateLen || p[1] != ICMPCodeRoCCRate || p[4] != RoCCRateVersion {
			return ErrBadRoCCRate
		}
		if !checksumOK(p[:RoCCRateLen]) {
			return ErrICMPChecksum
		}
		s.Kind = KindRoCCRate
		return nil
	case IPProtoUDP:
	default:
		return nil
	}
	if len(p) < UDPLen || int(binary.BigEndian.Uint16(p[4:])) != len(p) {
		return ErrBadUDP // a Length below UDPLen cannot equal len(p) >= UDPLen
	}
	l4 := hl + ihl
	s.L4Off = uint16(l4)
	if binary.BigEndian.Uint16(p[2:]) != RoCEv2Port {
		return nil
	}
	r := p[UDPLen:]
	if len(r) < BTHLen+ICRCLen {
		return ErrBadBTH
	}
	op, flags := r[0], r[8]&0x7f
	bodyOff := l4 + UDPLen + BTHLen // offset of the body in frame
	n := len(r) - BTHLen - ICRCLen  // body length
	body := r[BTHLen:]              // body plus the ICRC: index below n only
	switch {
	case IsDataOpcode(op):
		if flags&FlagINT != 0 {
			if n < INTLen {
				return ErrBadBTH
			}
			if int(body[0]>>4) > ccalgo.MaxINTHops {
				return ErrBadINT
			}
			s.INTOff = uint16(bodyOff)
			n -= INTLen
		}
		if n < DataHeaderLen {
			s.INTOff = 0
			return ErrBadBTH
		}
		s.Kind = KindData
	case op == OpAcknowledge:
		if n < AETHLen {
			return ErrBadBTH
		}
		syn := body[0]
		if flags&FlagAckExt != 0 {
			if n < AETHLen+AckExtLen {
				return ErrBadBTH
			}
			if flags&FlagINT != 0 {
				if n < AETHLen+AckExtLen+INTLen {
					return ErrBadBTH
				}
				if int(body[AETHLen+AckExtLen]>>4) > ccalgo.MaxINTHops {
					return ErrBadINT
				}
				s.INTOff = uint16(bodyOff + AETHLen + AckExtLen)
			}
		}
		switch syn & SyndromeTypeMask {
		case SyndromeACK:
			s.Kind = KindAck
		case SyndromeNAK, SyndromeRNRNAK:
			s.Kind = KindNak
		}
	case op == OpCNP:
		if n < CNPPadLen {
			return ErrBadBTH
		}
		s.Kind = KindCNP
	case op == OpP4QCNFeedback || op == OpQCNFeedback:
		if n < FeedbackMsgLen {
			return ErrBadBTH
		}
		s.Kind = KindP4QCN
		if op == OpQCNFeedback {
			s.Kind = KindQCN
		}
	}
	return nil
}

// DataMinLen is the shortest RoCEv2 data frame: an untagged Ethernet header,
// an IPv4 header without options, UDP, the BTH, ccbed's data header and the
// ICRC (66 bytes).
const DataMinLen = EthernetLen + IPv4MinLen + UDPLen + BTHLen + DataHeaderLen + ICRCLen

// Offsets in a frame that ClassifyData accepts.
const (
	dataIPOff  = EthernetLen
	dataL4Off  = dataIPOff + IPv4MinLen
	dataBTHOff = dataL4Off + UDPLen
	dataINTOff = dataBTHOff + BTHLen
)

// ClassifyData is Classify's fast path for the frame a switch forwards most:
// it reports true when frame is a well-formed RoCEv2 data packet in an
// untagged Ethernet frame and an IPv4 header without options, not a
// fragment, for which Classify returns nil with Kind KindData, IPOff
// EthernetLen and L4Off EthernetLen+IPv4MinLen; intOff is then Classify's
// INTOff (0: no INT stack). It reads each field at its fixed offset through
// one bounds check. On false the frame may still be any of the others:
// call Classify. It does not allocate.
func ClassifyData(frame []byte) (intOff uint16, ok bool) {
	if len(frame) < DataMinLen {
		return 0, false
	}
	h := (*[DataMinLen]byte)(frame)
	// IPv4 (EtherType 08 00, no VLAN tag), version 4 and IHL 5; the total
	// length within the frame, and the UDP datagram all of it after the
	// header: its Length then equals len(p) in Classify, and at least the
	// smallest data packet's (so the IPv4 total length holds the header).
	tl := int(binary.BigEndian.Uint16(h[dataIPOff+2:]))
	ul := int(binary.BigEndian.Uint16(h[dataL4Off+4:]))
	if h[12] != EtherTypeIPv4>>8 || h[13] != EtherTypeIPv4&0xff || h[dataIPOff] != 0x45 ||
		tl > len(frame)-EthernetLen || ul != tl-IPv4MinLen || ul < UDPLen+BTHLen+DataHeaderLen+ICRCLen {
		return 0, false
	}
	if !headerChecksumOK((*[IPv4MinLen]byte)(h[dataIPOff:])) {
		return 0, false
	}
	if binary.BigEndian.Uint16(h[dataIPOff+6:])&(ipv4FlagMF|ipv4FragOffMask) != 0 || h[dataIPOff+9] != IPProtoUDP ||
		binary.BigEndian.Uint16(h[dataL4Off+2:]) != RoCEv2Port || !IsDataOpcode(h[dataBTHOff]) {
		return 0, false
	}
	n := ul - UDPLen - BTHLen - ICRCLen // the body, as in Classify
	if h[dataBTHOff+8]&FlagINT != 0 {
		if n < INTLen || int(h[dataINTOff]>>4) > ccalgo.MaxINTHops {
			return 0, false
		}
		if n-INTLen < DataHeaderLen {
			return 0, false
		}
		return dataINTOff, true
	}
	return 0, true
}

// headerChecksumOK is checksumOK of an IPv4 header without options.
func headerChecksumOK(b *[IPv4MinLen]byte) bool {
	s := uint64(binary.LittleEndian.Uint32(b[0:])) + uint64(binary.LittleEndian.Uint32(b[4:])) +
		uint64(binary.LittleEndian.Uint32(b[8:])) + uint64(binary.LittleEndian.Uint32(b[12:])) +
		uint64(binary.LittleEndian.Uint32(b[16:]))
	s = s&0xffffffff + s>>32
	s = s&0xffffffff + s>>32
	s = s&0xffff + s>>16
	s = s&0xffff + s>>16
	return s == 0xffff
}

// checksumOK reports whether the Internet checksum (RFC 1071) over b, whose
// length is a multiple of 4, is correct: the ones' complement sum of its 16-bit
// words is 0xffff. It adds 32-bit native-order words into 64 bits and folds:
// the ones' complement sum does not depend on the byte order (RFC 1071 Section
// 2(B)) and 0xffff reads the same in both, so no byte swap is needed. A b of
// other length falls back to sum16.
func checksumOK(b []byte) bool {
	if len(b)&3 != 0 {
		return fold(sum16(b, 0)) == 0xffff
	}
	var s uint64
	if len(b) >= 20 { // the IPv4 header without options, unrolled
		s = uint64(binary.LittleEndian.Uint32(b)) + uint64(binary.LittleEndian.Uint32(b[4:])) +
			uint64(binary.LittleEndian.Uint32(b[8:])) + uint64(binary.LittleEndian.Uint32(b[12:])) +
			uint64(binary.LittleEndian.Uint32(b[16:]))
		b = b[20:]
	}
	for len(b) >= 4 {
		s += uint64(binary.LittleEndian.Uint32(b))
		b = b[4:]
	}
	s = s&0xffffffff + s>>32
	s = s&0xffffffff + s>>32
	s = s&0xffff + s>>16
	s = s&0xffff + s>>16
	return s == 0xffff
}
