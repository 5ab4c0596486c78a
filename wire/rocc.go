package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// RoCC rate message constants.
const (
	ICMPTypeRoCCRate = 253 // RFC 4727 experimental type; RoCC Section IV-B uses it
	ICMPCodeRoCCRate = 0
	RoCCRateVersion  = 1
	RoCCRateLen      = 36 // ICMP header (8) + body (28)
)

// RoCCRate is a view of ccbed's RoCC rate message, the whole ICMP message (IPv4
// protocol 1) a switch CP sends to a flow's source (RoCC Section III-B, III-D;
// Section IV-B: "the reserved ICMP type 253"):
//
//	0  type 253      1 code 0      2 ICMP checksum (over the whole message)
//	4  version 1     5 reserved (3)
//	8  fair rate in units of Delta_F (uint32)
//	12 Delta_F in bits/s (uint32; 10 Mb/s = 10,000,000 by default)
//	16 CP id: the switch's IPv4 address or configured id (uint32)
//	20 flow source IPv4   24 flow destination IPv4
//	28 flow UDP source port   30 flow UDP destination port
//	32 flow protocol (17)     33 flow BTH destination QP (24 bits)
//
// RoCC's paper fixes the content (fair rate in multiples of Delta_F and the headers
// needed to identify the flow) but not the layout; this layout is ccbed's.
// Check IsValid before any other method.
type RoCCRate []byte

// IsValid reports whether b holds a whole message of type 253 code 0 version 1.
func (b RoCCRate) IsValid() bool {
	return len(b) >= RoCCRateLen && b[0] == ICMPTypeRoCCRate && b[1] == ICMPCodeRoCCRate &&
		b[4] == RoCCRateVersion
}

// Checksum returns the ICMP checksum field.
func (b RoCCRate) Checksum() uint16 { return binary.BigEndian.Uint16(b[2:]) }

// ComputeChecksum returns the ICMP checksum the message should carry.
func (b RoCCRate) ComputeChecksum() uint16 {
	s := sum16(b[:2], 0)
	return ^fold(sum16(b[4:RoCCRateLen], s))
}

// VerifyChecksum reports whether the ICMP checksum is correct.
func (b RoCCRate) VerifyChecksum() bool { return fold(sum16(b[:RoCCRateLen], 0)) == 0xffff }

// UpdateChecksum recomputes and stores the checksum; call it after setters.
func (b RoCCRate) UpdateChecksum() { binary.BigEndian.PutUint16(b[2:], b.ComputeChecksum()) }

// RateUnits returns the fair rate in units of Delta_F.
func (b RoCCRate) RateUnits() uint32 { return binary.BigEndian.Uint32(b[8:]) }

// DeltaFBps returns Delta_F in bits/s.
func (b RoCCRate) DeltaFBps() uint32 { return binary.BigEndian.Uint32(b[12:]) }

// RateBps returns the fair rate in bits/s (RateUnits * Delta_F).
func (b RoCCRate) RateBps() float64 { return float64(b.RateUnits()) * float64(b.DeltaFBps()) }

// CPID returns the sending CP's id.
func (b RoCCRate) CPID() uint32 { return binary.BigEndian.Uint32(b[16:]) }

// Flow returns the flow the rate applies to.
func (b RoCCRate) Flow() ccalgo.FlowKey {
	return ccalgo.FlowKey{
		SrcIP:   binary.BigEndian.Uint32(b[20:]),
		DstIP:   binary.BigEndian.Uint32(b[24:]),
		SrcPort: binary.BigEndian.Uint16(b[28:]),
		DstPort: binary.BigEndian.Uint16(b[30:]),
		DestQP:  uint32(b[33])<<16 | uint32(b[34])<<8 | uint32(b[35]),
	}
}

// SetRateUnits sets the fair rate in units of Delta_F.
func (b RoCCRate) SetRateUnits(u uint32) { binary.BigEndian.PutUint32(b[8:], u) }

// SetDeltaFBps sets Delta_F in bits/s.
func (b RoCCRate) SetDeltaFBps(d uint32) { binary.BigEndian.PutUint32(b[12:], d) }

// SetCPID sets the CP id.
func (b RoCCRate) SetCPID(id uint32) { binary.BigEndian.PutUint32(b[16:], id) }

// SetFlow sets the flow identifier.
func (b RoCCRate) SetFlow(k *ccalgo.FlowKey) {
	binary.BigEndian.PutUint32(b[20:], k.SrcIP)
	binary.BigEndian.PutUint32(b[24:], k.DstIP)
	binary.BigEndian.PutUint16(b[28:], k.SrcPort)
	binary.BigEndian.PutUint16(b[30:], k.DstPort)
	b[32] = IPProtoUDP
	b[33], b[34], b[35] = byte(k.DestQP>>16), byte(k.DestQP>>8), byte(k.DestQP)
}

// Feedback reads the message into fb (Kind FeedbackRoCCRate).
func (b RoCCRate) Feedback(fb *ccalgo.Feedback) {
	*fb = ccalgo.Feedback{
		Kind:      ccalgo.FeedbackRoCCRate,
		Flow:      b.Flow(),
		CPID:      b.CPID(),
		RateUnits: b.RateUnits(),
		DeltaFBps: float64(b.DeltaFBps()),
		RateBps:   b.RateBps(),
	}
}

// encode writes a whole message from fb, checksum included. Delta_F is rounded
// to whole bits/s.
func (b RoCCRate) encode(fb *ccalgo.Feedback) {
	b[0], b[1], b[2], b[3] = ICMPTypeRoCCRate, ICMPCodeRoCCRate, 0, 0
	b[4], b[5], b[6], b[7] = RoCCRateVersion, 0, 0, 0
	b.SetRateUnits(fb.RateUnits)
	b.SetDeltaFBps(uint32(fb.DeltaFBps + 0.5))
	b.SetCPID(fb.CPID)
	b.SetFlow(&fb.Flow)
	b.UpdateChecksum()
}
