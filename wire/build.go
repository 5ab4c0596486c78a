package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// Endpoints is the Ethernet / IPv4 / UDP part a builder writes: who sends to whom.
// A builder reads it and does not keep it.
type Endpoints struct {
	DstMAC, SrcMAC MAC
	VLAN           bool   // add an 802.1Q tag
	PCP            uint8  // 802.1Q priority (with VLAN)
	VLANID         uint16 // 802.1Q VLAN id (with VLAN)
	SrcIP, DstIP   uint32 // host byte order
	SrcPort        uint16 // UDP source port (per QP, for ECMP)
	DstPort        uint16 // UDP destination port; 0 means RoCEv2Port
	DSCP           uint8  // IPv4 DSCP (the ECN bits are set by the packet kind)
	TTL            uint8  // 0 means DefaultTTL
	IPID           uint16 // IPv4 identification
	ICRC           bool   // compute the RoCEv2 ICRC; else the trailer is zero
}

// DataSpec describes a data packet for BuildData.
type DataSpec struct {
	Opcode uint8  // SEND / WRITE First, Middle, Last, Only
	DestQP uint32 // receiver's QP (24 bits)
	PSN    uint32 // packet sequence number (24 bits)
	AckReq bool
	SendTS int64 // ns, written in the DataHeader
	// INT reserves an empty INT stack after the BTH (HPCC) and sets FlagINT.
	INT bool
	// PayloadLen is the payload after the BTH (and INT stack): the 8-byte
	// DataHeader and the application bytes. It must be at least DataHeaderLen.
	PayloadLen int
}

// DataFrameLen returns the frame length BuildData produces for ep and d.
func DataFrameLen(ep *Endpoints, d *DataSpec) int {
	n := ethLen(ep) + IPv4MinLen + UDPLen + BTHLen + d.PayloadLen + ICRCLen
	if d.INT {
		n += INTLen
	}
	return n
}

// BuildData writes a data packet into b and returns its length: Ethernet / IPv4
// (ECN = ECT(0)) / UDP / BTH / [empty INT stack] / DataHeader / payload / ICRC.
// The application payload bytes after the DataHeader are left as they are in b.
// It fails with ErrShortBuffer when b is too small and ErrPayloadLen when
// d.PayloadLen is below DataHeaderLen or the packet exceeds 65535 IPv4 bytes.
func BuildData(b []byte, ep *Endpoints, d *DataSpec) (int, error) {
	if d.PayloadLen < DataHeaderLen || d.PayloadLen > 0xffff-IPv4MinLen-UDPLen-BTHLen-INTLen-ICRCLen {
		return 0, ErrPayloadLen
	}
	n := DataFrameLen(ep, d)
	if len(b) < n {
		return 0, ErrShortBuffer
	}
	var flags uint8
	rest := d.PayloadLen
	if d.INT {
		flags = FlagINT
		rest += INTLen
	}
	off, bth := encodeRoCEHeaders(b, ep, ECNECT0, rest)
	encodeBTH(b[bth:], d.Opcode, false, d.DestQP, d.AckReq, flags, d.PSN)
	p := bth + BTHLen
	if d.INT {
		clear(b[p : p+INTLen])
		p += INTLen
	}
	DataHeader(b[p:]).SetSendTS(d.SendTS)
	finishRoCE(b[off:n], ep)
	return n, nil
}

// AckSpec describes an ACK or NAK for BuildAck.
type AckSpec struct {
	DestQP   uint32 // the data sender's QP
	PSN      uint32 // PSN acknowledged (ACK) or expected (NAK: resend from here)
	Syndrome uint8  // SyndromeAckNoCred, SyndromeNAKSeq, ...
	MSN      uint32 // message sequence number
	// EchoINT appends Fields.INT after the ACK extension (HPCC) with FlagINT set,
	// and PathID as the stack's pathID.
	EchoINT bool
	PathID  uint16
}

// AckFrameLen returns the frame length BuildAck produces for ep and a.
func AckFrameLen(ep *Endpoints, a *AckSpec) int {
	n := ethLen(ep) + IPv4MinLen + UDPLen + BTHLen + AETHLen + AckExtLen + ICRCLen
	if a.EchoINT {
		n += INTLen
	}
	return n
}

// BuildAck writes an ACK or NAK into b and returns its length: Ethernet / IPv4
// (not ECN-capable) / UDP / BTH (Acknowledge, FlagAckExt) / AETH / AckExt from f /
// [INT echo of f.INT] / ICRC.
func BuildAck(b []byte, ep *Endpoints, a *AckSpec, f *ccalgo.AckFields) (int, error) {
	n := AckFrameLen(ep, a)
	if len(b) < n {
		return 0, ErrShortBuffer
	}
	off, bth := ackHeaders(b, ep, a)
	ackBody(b[bth+BTHLen:], a, f, a.EchoINT)
	finishRoCE(b[off:n], ep)
	return n, nil
}

// ackHeaders writes an ACK's Ethernet, IPv4, UDP and BTH headers (BuildAck,
// AckTemplate.Init) and returns the offsets of the IPv4 header and the BTH.
func ackHeaders(b []byte, ep *Endpoints, a *AckSpec) (ipOff, bthOff int) {
	flags := uint8(FlagAckExt)
	rest := AETHLen + AckExtLen
	if a.EchoINT {
		flags |= FlagINT
		rest += INTLen
	}
	off, bth := encodeRoCEHeaders(b, ep, ECNNotECT, rest)
	encodeBTH(b[bth:], OpAcknowledge, false, a.DestQP, false, flags, a.PSN)
	return off, bth
}

// ackBody writes what follows an ACK's BTH into b: the AETH of a, the ACK
// extension from f and, with echoINT, f.INT as an INT stack.
func ackBody(b []byte, a *AckSpec, f *ccalgo.AckFields, echoINT bool) {
	AETH(b).SetSyndrome(a.Syndrome)
	AETH(b).SetMSN(a.MSN)
	AckExt(b[AETHLen:]).SetFields(f)
	if echoINT {
		INT(b[AETHLen+AckExtLen:]).SetStack(&f.INT, a.PathID)
	}
}

// CNPFrameLen returns the frame length BuildCNP produces for ep.
func CNPFrameLen(ep *Endpoints) int {
	return ethLen(ep) + IPv4MinLen + UDPLen + BTHLen + CNPPadLen + ICRCLen
}

// BuildCNP writes a RoCEv2 CNP into b and returns its length: Ethernet / IPv4
// (ECT(0), as ConnectX NICs send CNPs) / UDP / BTH (opcode 0x81, BECN, DestQP = destQP, PSN 0) / 16
// reserved bytes / ICRC (InfiniBand Architecture Specification Vol. 1, Annex
// A17, CNP).
func BuildCNP(b []byte, ep *Endpoints, destQP uint32) (int, error) {
	n := CNPFrameLen(ep)
	if len(b) < n {
		return 0, ErrShortBuffer
	}
	off, bth := encodeRoCEHeaders(b, ep, ECNECT0, CNPPadLen)
	encodeBTH(b[bth:], OpCNP, true, destQP, false, 0, 0)
	clear(b[bth+BTHLen : bth+BTHLen+CNPPadLen])
	finishRoCE(b[off:n], ep)
	return n, nil
}

// FeedbackFrameLen returns the frame length BuildFeedback produces for ep and kind
// (0 for an unknown kind).
func FeedbackFrameLen(ep *Endpoints, kind ccalgo.FeedbackKind) int {
	switch kind {
	case ccalgo.FeedbackRoCCRate:
		return ethLen(ep) + IPv4MinLen + RoCCRateLen
	case ccalgo.FeedbackP4QCN, ccalgo.FeedbackQCN:
		return ethLen(ep) + IPv4MinLen + UDPLen + BTHLen + FeedbackMsgLen + ICRCLen
	}
	return 0
}

// BuildFeedback writes the packet a switch CP sends for fb into b and returns its
// length. ep addresses it from the switch to the flow's source (ep.DstIP should be
// fb.Flow.SrcIP). RoCC: Ethernet / IPv4 (protocol ICMP) / RoCCRate (type 253).
// P4QCN and QCN: Ethernet / IPv4 (ECN = 11) / UDP / BTH (OpP4QCNFeedback or
// OpQCNFeedback, DestQP = fb.Flow.DestQP) / FeedbackMsg / ICRC.
func BuildFeedback(b []byte, ep *Endpoints, fb *ccalgo.Feedback) (int, error) {
	n := FeedbackFrameLen(ep, fb.Kind)
	if n == 0 {
		return 0, ErrUnknownFeedback
	}
	if len(b) < n {
		return 0, ErrShortBuffer
	}
	el := encodeEthernet(b, ep.DstMAC, ep.SrcMAC, ep.VLAN, ep.PCP, ep.VLANID, EtherTypeIPv4)
	if fb.Kind == ccalgo.FeedbackRoCCRate {
		encodeIPv4(b[el:], ep.DSCP<<2|ECNNotECT, ep.IPID, ttl(ep), IPProtoICMP, ep.SrcIP, ep.DstIP, RoCCRateLen)
		RoCCRate(b[el+IPv4MinLen:]).encode(fb)
		return n, nil
	}
	op := uint8(OpP4QCNFeedback)
	if fb.Kind == ccalgo.FeedbackQCN {
		op = OpQCNFeedback
	}
	off, bth := encodeRoCEHeaders(b, ep, ECNCE, FeedbackMsgLen)
	encodeBTH(b[bth:], op, false, fb.Flow.DestQP, false, 0, 0)
	FeedbackMsg(b[bth+BTHLen:]).SetFeedback(fb)
	finishRoCE(b[off:n], ep)
	return n, nil
}

// BuildPFC writes an 802.1Qbb PFC frame into b and returns its length (60, the
// Ethernet minimum without FCS): destination 01:80:C2:00:00:01, source src,
// EtherType 0x8808, opcode 0x0101, class-enable vector enable, and quanta[i] as
// the pause time of each enabled priority i (0 for the others; 0 means resume).
func BuildPFC(b []byte, src MAC, enable uint8, quanta *[PFCPriorities]uint16) (int, error) {
	if len(b) < MinFrameLen {
		return 0, ErrShortBuffer
	}
	encodeEthernet(b, PFCDst, src, false, 0, 0, EtherTypeMACCtl)
	p := b[EthernetLen:MinFrameLen]
	clear(p)
	binary.BigEndian.PutUint16(p, MACCtlOpPFC)
	p[3] = enable
	for i := 0; i < PFCPriorities; i++ {
		if enable>>uint(i)&1 != 0 {
			binary.BigEndian.PutUint16(p[4+2*i:], quanta[i])
		}
	}
	return MinFrameLen, nil
}

func ethLen(ep *Endpoints) int {
	if ep.VLAN {
		return EthernetLen + VLANTagLen
	}
	return EthernetLen
}

func ttl(ep *Endpoints) uint8 {
	if ep.TTL == 0 {
		return DefaultTTL
	}
	return ep.TTL
}

// encodeRoCEHeaders writes Ethernet, IPv4 (with ecn) and UDP headers for a RoCEv2
// packet whose BTH is followed by rest bytes before the ICRC. It returns the
// offsets of the IPv4 header and of the BTH.
func encodeRoCEHeaders(b []byte, ep *Endpoints, ecn uint8, rest int) (ipOff, bthOff int) {
	el := encodeEthernet(b, ep.DstMAC, ep.SrcMAC, ep.VLAN, ep.PCP, ep.VLANID, EtherTypeIPv4)
	udpLen := UDPLen + BTHLen + rest + ICRCLen
	encodeIPv4(b[el:], ep.DSCP<<2|ecn, ep.IPID, ttl(ep), IPProtoUDP, ep.SrcIP, ep.DstIP, udpLen)
	dport := ep.DstPort
	if dport == 0 {
		dport = RoCEv2Port
	}
	encodeUDP(b[el+IPv4MinLen:], ep.SrcPort, dport, udpLen-UDPLen)
	return el, el + IPv4MinLen + UDPLen
}

// finishRoCE writes the ICRC trailer of the IPv4 packet ip: computed with ep.ICRC,
// else zero.
func finishRoCE(ip []byte, ep *Endpoints) {
	if ep.ICRC {
		SetICRC(ip)
		return
	}
	clear(ip[len(ip)-ICRCLen:])
}
