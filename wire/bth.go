package wire

import "encoding/binary"

// RoCEv2 header sizes (InfiniBand Architecture Specification Vol. 1, Chapter 9
// and Annex A17, RoCEv2).
const (
	BTHLen      = 12 // base transport header
	AETHLen     = 4  // ACK extended transport header
	ICRCLen     = 4  // invariant CRC trailer
	CNPPadLen   = 16 // reserved bytes after a CNP's BTH
	DefaultPKey = 0xffff
)

// BTH opcodes ccbed uses (RC transport, plus CNP and ccbed's feedback opcodes).
const (
	OpSendFirst   = 0x00
	OpSendMiddle  = 0x01
	OpSendLast    = 0x02
	OpSendOnly    = 0x04
	OpWriteFirst  = 0x06
	OpWriteMiddle = 0x07
	OpWriteLast   = 0x08
	OpWriteOnly   = 0x0a
	OpAcknowledge = 0x11
	OpCNP         = 0x81
	// OpP4QCNFeedback and OpQCNFeedback are ccbed's own, taken from the opcode range
	// 0xC0-0xFF that the InfiniBand specification leaves to manufacturers, so that no
	// RoCE stack mistakes them for a transport packet or a CNP.
	OpP4QCNFeedback = 0xc0
	OpQCNFeedback   = 0xc1
)

// Flags ccbed keeps in the reserved low 7 bits of BTH byte 8 (after AckReq). The
// RoCEv2 ICRC covers these bits, so a switch that sets them must recompute it.
const (
	// FlagINT: an INT stack (INTLen bytes) follows the BTH of a data packet, or the
	// ACK extension of an ACK/NAK.
	FlagINT = 0x40
	// FlagAckExt: the ccbed ACK extension (AckExtLen bytes) follows the AETH.
	FlagAckExt = 0x20
)

// IsDataOpcode reports whether op is a SEND or RDMA WRITE opcode (a data packet).
func IsDataOpcode(op uint8) bool {
	return op <= OpSendOnly && op != 0x03 || op >= OpWriteFirst && op <= OpWriteOnly && op != 0x09
}

// IsFirstOpcode reports whether op starts a message (SEND/WRITE First or Only).
func IsFirstOpcode(op uint8) bool {
	return op == OpSendFirst || op == OpSendOnly || op == OpWriteFirst || op == OpWriteOnly
}

// IsLastOpcode reports whether op ends a message (SEND/WRITE Last or Only).
func IsLastOpcode(op uint8) bool {
	return op == OpSendLast || op == OpSendOnly || op == OpWriteLast || op == OpWriteOnly
}

// BTH is a view of the RoCEv2 base transport header:
//
//	0  opcode                    1  SE 1 | MigReq 1 | PadCnt 2 | TVer 4
//	2  P_Key (2)                 4  FECN 1 | BECN 1 | reserved 6
//	5  DestQP (3)                8  AckReq 1 | reserved 7 (ccbed flags)
//	9  PSN (3)
//
// Check IsValid before any other method.
type BTH []byte

// IsValid reports whether b holds a whole BTH.
func (b BTH) IsValid() bool { return len(b) >= BTHLen }

// Opcode returns the opcode.
func (b BTH) Opcode() uint8 { return b[0] }

// SE returns the solicited-event bit.
func (b BTH) SE() bool { return b[1]&0x80 != 0 }

// MigReq returns the migration-request bit.
func (b BTH) MigReq() bool { return b[1]&0x40 != 0 }

// PadCount returns the number of pad bytes at the end of the payload.
func (b BTH) PadCount() uint8 { return b[1] >> 4 & 3 }

// TVer returns the transport header version.
func (b BTH) TVer() uint8 { return b[1] & 0xf }

// PKey returns the partition key.
func (b BTH) PKey() uint16 { return binary.BigEndian.Uint16(b[2:]) }

// FECN returns the forward explicit congestion notification bit.
func (b BTH) FECN() bool { return b[4]&0x80 != 0 }

// BECN returns the backward explicit congestion notification bit.
func (b BTH) BECN() bool { return b[4]&0x40 != 0 }

// DestQP returns the 24-bit destination queue pair.
func (b BTH) DestQP() uint32 { return uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7]) }

// AckReq returns the acknowledge-request bit.
func (b BTH) AckReq() bool { return b[8]&0x80 != 0 }

// Flags returns the ccbed flags (FlagINT, FlagAckExt) of the reserved bits.
func (b BTH) Flags() uint8 { return b[8] & 0x7f }

// PSN returns the 24-bit packet sequence number.
func (b BTH) PSN() uint32 { return uint32(b[9])<<16 | uint32(b[10])<<8 | uint32(b[11]) }

// SetOpcode sets the opcode.
func (b BTH) SetOpcode(op uint8) { b[0] = op }

// SetSE sets the solicited-event bit.
func (b BTH) SetSE(v bool) { b[1] = setBit(b[1], 0x80, v) }

// SetMigReq sets the migration-request bit.
func (b BTH) SetMigReq(v bool) { b[1] = setBit(b[1], 0x40, v) }

// SetPadCount sets the pad count (0-3).
func (b BTH) SetPadCount(n uint8) { b[1] = b[1]&^0x30 | (n&3)<<4 }

// SetTVer sets the transport header version.
func (b BTH) SetTVer(v uint8) { b[1] = b[1]&^0xf | v&0xf }

// SetPKey sets the partition key.
func (b BTH) SetPKey(k uint16) { binary.BigEndian.PutUint16(b[2:], k) }

// SetFECN sets the FECN bit.
func (b BTH) SetFECN(v bool) { b[4] = setBit(b[4], 0x80, v) }

// SetBECN sets the BECN bit.
func (b BTH) SetBECN(v bool) { b[4] = setBit(b[4], 0x40, v) }

// SetDestQP sets the destination queue pair (low 24 bits of qp).
func (b BTH) SetDestQP(qp uint32) { b[5], b[6], b[7] = byte(qp>>16), byte(qp>>8), byte(qp) }

// SetAckReq sets the acknowledge-request bit.
func (b BTH) SetAckReq(v bool) { b[8] = setBit(b[8], 0x80, v) }

// SetFlags sets the ccbed flags (low 7 bits of byte 8), keeping AckReq.
func (b BTH) SetFlags(f uint8) { b[8] = b[8]&0x80 | f&0x7f }

// SetPSN sets the packet sequence number (low 24 bits of psn).
func (b BTH) SetPSN(psn uint32) { b[9], b[10], b[11] = byte(psn>>16), byte(psn>>8), byte(psn) }

// Payload returns the bytes after the BTH.
func (b BTH) Payload() []byte { return b[BTHLen:] }

func setBit(x, bit byte, v bool) byte {
	if v {
		return x | bit
	}
	return x &^ bit
}

// AETH syndromes (InfiniBand Architecture Specification Vol. 1, Chapter 9): the top 3 bits say what the AETH is.
const (
	SyndromeACK       = 0x00 // ACK; low 5 bits: credit count
	SyndromeRNRNAK    = 0x20 // receiver not ready; low 5 bits: timer
	SyndromeNAK       = 0x60 // NAK; low 5 bits: NAK code
	SyndromeTypeMask  = 0xe0
	CreditsUnlimited  = 0x1f // ACK credit count "invalid / unlimited"
	NAKPSNSeqError    = 0x00 // NAK code: PSN sequence error (go-back-N)
	SyndromeAckNoCred = SyndromeACK | CreditsUnlimited
	// SyndromeNAKSeq is the whole syndrome of a PSN sequence error NAK (0x60).
	SyndromeNAKSeq = SyndromeNAK | NAKPSNSeqError
)

// AETH is a view of the ACK extended transport header: syndrome (1) | MSN (3).
// Check IsValid before any other method.
type AETH []byte

// IsValid reports whether b holds a whole AETH.
func (b AETH) IsValid() bool { return len(b) >= AETHLen }

// Syndrome returns the syndrome byte.
func (b AETH) Syndrome() uint8 { return b[0] }

// IsACK reports whether the syndrome is an ACK.
func (b AETH) IsACK() bool { return b[0]&SyndromeTypeMask == SyndromeACK }

// IsNAK reports whether the syndrome is a NAK (not RNR).
func (b AETH) IsNAK() bool { return b[0]&SyndromeTypeMask == SyndromeNAK }

// Code returns the syndrome's low 5 bits (credit count, RNR timer or NAK code).
func (b AETH) Code() uint8 { return b[0] & 0x1f }

// MSN returns the 24-bit message sequence number.
func (b AETH) MSN() uint32 { return uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) }

// SetSyndrome sets the syndrome byte.
func (b AETH) SetSyndrome(s uint8) { b[0] = s }

// SetMSN sets the message sequence number (low 24 bits of msn).
func (b AETH) SetMSN(msn uint32) { b[1], b[2], b[3] = byte(msn>>16), byte(msn>>8), byte(msn) }

// encodeBTH writes a BTH with P_Key 0xFFFF, TVer 0 and no SE/MigReq/pad.
func encodeBTH(b []byte, op uint8, becn bool, destQP uint32, ackReq bool, flags uint8, psn uint32) {
	b[0] = op
	b[1] = 0
	b[2], b[3] = 0xff, 0xff
	b[4] = 0
	if becn {
		b[4] = 0x40
	}
	BTH(b).SetDestQP(destQP)
	b[8] = flags & 0x7f
	if ackReq {
		b[8] |= 0x80
	}
	BTH(b).SetPSN(psn)
}
