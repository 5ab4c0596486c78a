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

// RoCCRateTemplate is the frame of one switch's RoCC rate messages
// (Ethernet, IPv4, RoCCRate), built once by Init, so that Build writes a
// message by copying it and patching what changes from message to message:
// the MAC addresses, the IPv4 destination and header checksum (from a sum
// kept in the template, not recomputed over the header), and the message's
// rate, Delta_F, CP id and flow, with its ICMP checksum summed from those
// values rather than read back. Build's output is byte for byte
// BuildFeedback's for the same endpoints and feedback (a differential test
// and a fuzz target check it); a switch CP sends one to every flow of its
// table each T (RoCC Section III-C), where BuildFeedback's encoding was most
// of a message's cost.
//
// The zero value builds nothing (Build fails with ErrShortBuffer until
// Init). A template holds no references: copying it copies it.
type RoCCRateTemplate struct {
	hdr    [EthernetLen + VLANTagLen + IPv4MinLen + RoCCRateLen]byte
	n      uint8  // frame bytes
	ip     uint8  // offset of the IPv4 header
	ipSum  uint32 // IPv4 header's 16-bit words summed, destination and checksum as 0
	msgSum uint32 // the message's words summed, checksum, rate, Delta_F, CP id and flow as 0
}

// Init builds the template from ep: its VLAN tag, DSCP, TTL, IPID and
// source address. Build takes the MAC addresses and the destination; the
// UDP ports and ICRC do not apply to an ICMP message.
func (t *RoCCRateTemplate) Init(ep *Endpoints) {
	*t = RoCCRateTemplate{}
	e := *ep
	e.DstMAC, e.SrcMAC, e.DstIP = MAC{}, MAC{}, 0
	n, _ := BuildFeedback(t.hdr[:], &e, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate})
	off := ethLen(&e)
	t.n, t.ip = uint8(n), uint8(off)
	ip := t.hdr[off : off+IPv4MinLen]
	ip[10], ip[11] = 0, 0
	t.ipSum = uint32(sum16(ip, 0))
	m := t.hdr[off+IPv4MinLen : n]
	m[2], m[3] = 0, 0
	t.msgSum = uint32(sum16(m, 0))
}

// Len is the length of the frames Build writes (0 before Init).
func (t *RoCCRateTemplate) Len() int { return int(t.n) }

// Build writes into b the rate message of fb (a FeedbackRoCCRate: its
// RateUnits, DeltaFBps, CPID and Flow) from srcMAC to dstMAC, addressed to
// dstIP (the flow's source, fb.Flow.SrcIP), and returns its length: what
// BuildFeedback writes for the template's endpoints with those addresses.
// It fails with ErrShortBuffer when b is shorter than Len (or before Init).
func (t *RoCCRateTemplate) Build(b []byte, dstMAC, srcMAC *MAC, dstIP uint32, fb *ccalgo.Feedback) (int, error) {
	var r RoCCRates
	t.Rates(&r, fb)
	return r.Build(b, dstMAC, srcMAC, dstIP, &fb.Flow)
}

// RoCCRates is a RoCCRateTemplate with one fair-rate computation's rate,
// Delta_F and CP id written in (Rates): a CP's messages of one computation
// (RoCC Section III-C, one to every flow of its table) differ only in
// their flow and addresses, so Build writes those and sums only their share
// of the checksum. The zero value builds nothing (Build fails with
// ErrShortBuffer); it holds no references.
type RoCCRates struct{ t RoCCRateTemplate }

// Rates sets r to t with fb's RateUnits, DeltaFBps and CPID written in.
func (t *RoCCRateTemplate) Rates(r *RoCCRates, fb *ccalgo.Feedback) {
	r.t = *t
	if t.n == 0 {
		return
	}
	m := (*[RoCCRateLen]byte)(r.t.hdr[int(t.ip)+IPv4MinLen:])
	df := uint32(fb.DeltaFBps + 0.5)
	binary.BigEndian.PutUint32(m[8:], fb.RateUnits)
	binary.BigEndian.PutUint32(m[12:], df)
	binary.BigEndian.PutUint32(m[16:], fb.CPID)
	r.t.msgSum = uint32(fold(uint64(t.msgSum) + words32(fb.RateUnits) + words32(df) + words32(fb.CPID)))
}

// Build writes into b the rate message of r's computation for flow k from
// srcMAC to dstMAC, addressed to dstIP (k.SrcIP), and returns its length:
// RoCCRateTemplate.Build's frame for a Feedback of r's rate, Delta_F and CP
// id and of flow k. It fails with ErrShortBuffer when b is shorter than the
// template's Len (or r is unset).
func (r *RoCCRates) Build(b []byte, dstMAC, srcMAC *MAC, dstIP uint32, k *ccalgo.FlowKey) (int, error) {
	t := &r.t
	n := int(t.n)
	if n == 0 || len(b) < n {
		return 0, ErrShortBuffer
	}
	// Two fixed-size copies, 64 bytes and the last 16 (they overlap; n is
	// 70, or 74 with a VLAN tag): moves the compiler writes out, where one
	// copy of n bytes is a call to memmove.
	*(*[64]byte)(b) = *(*[64]byte)(t.hdr[:])
	*(*[16]byte)(b[n-16:]) = *(*[16]byte)(t.hdr[n-16:])
	*(*MAC)(b[0:]) = *dstMAC
	*(*MAC)(b[6:]) = *srcMAC
	// The IPv4 header and the message, through one array (one length check).
	p := (*[IPv4MinLen + RoCCRateLen]byte)(b[t.ip:])
	binary.BigEndian.PutUint32(p[16:], dstIP)
	binary.BigEndian.PutUint16(p[10:], ^fold(uint64(t.ipSum)+words32(dstIP)))
	m := p[IPv4MinLen:]
	binary.BigEndian.PutUint32(m[20:], k.SrcIP)
	binary.BigEndian.PutUint32(m[24:], k.DstIP)
	binary.BigEndian.PutUint16(m[28:], k.SrcPort)
	binary.BigEndian.PutUint16(m[30:], k.DstPort)
	m[33], m[34], m[35] = byte(k.DestQP>>16), byte(k.DestQP>>8), byte(k.DestQP) // m[32]: the protocol, in the template
	s := uint64(t.msgSum) + words32(k.SrcIP) + words32(k.DstIP) + uint64(k.SrcPort) + uint64(k.DstPort) +
		uint64(k.DestQP>>16&0xff) + uint64(k.DestQP&0xffff)
	binary.BigEndian.PutUint16(m[2:], ^fold(s))
	return n, nil
}

// words32 is the sum of v's two 16-bit halves (its share of a checksum).
func words32(v uint32) uint64 { return uint64(v>>16) + uint64(v&0xffff) }
