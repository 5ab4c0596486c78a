package wire

import "encoding/binary"

// Kind is what Decode found a frame to be.
type Kind uint8

// Frame kinds.
const (
	KindOther    Kind = iota // anything ccbed does not handle (forwarded or dropped by the caller)
	KindData                 // RoCEv2 SEND / WRITE data packet
	KindAck                  // Acknowledge with an ACK syndrome
	KindNak                  // Acknowledge with a NAK or RNR NAK syndrome
	KindCNP                  // RoCEv2 CNP (opcode 0x81)
	KindRoCCRate             // RoCC rate message (ICMP type 253)
	KindP4QCN                // P4QCN feedback packet (OpP4QCNFeedback)
	KindQCN                  // QCN-like feedback packet (OpQCNFeedback)
	KindPFC                  // 802.1Qbb PFC frame
)

var kindNames = [...]string{"other", "data", "ack", "nak", "cnp", "rocc-rate", "p4qcn-fb", "qcn-fb", "pfc"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Frame is what Decode found in a frame: the kind and views of the headers it
// has, all aliasing the frame's bytes (nil when absent). The caller owns it and
// reuses it from frame to frame.
type Frame struct {
	Kind Kind
	Eth  Ethernet
	IP   IPv4
	UDP  UDP
	BTH  BTH
	AETH AETH   // ACK, NAK
	Ext  AckExt // ACK, NAK with FlagAckExt
	// INT is the INT stack of a data packet (after the BTH) or the echoed one of
	// an ACK (after Ext), when FlagINT is set.
	INT INT
	// Payload of a data packet: after the BTH and INT, up to the ICRC; it starts
	// with the DataHeader.
	Payload  []byte
	Data     DataHeader  // data packets
	Rate     RoCCRate    // KindRoCCRate: the whole ICMP message
	Feedback FeedbackMsg // KindP4QCN, KindQCN
	PFC      PFC         // KindPFC: the MAC control body
}

// Decode classifies an Ethernet frame (without FCS) and fills f with views of its
// headers, at fixed offsets and without allocating. It checks what it reads:
// header lengths, IPv4 version, lengths and header checksum, UDP length, the
// presence of what BTH opcode and flags announce, INT hop count, ICMP checksum of
// rate messages. It does not check the UDP checksum or the ICRC (VerifyICRC). A
// frame that is well formed but not ccbed's is KindOther with a nil error; a
// malformed one returns one of the package's error values (f.Kind is then
// KindOther and the views are partial).
func Decode(frame []byte, f *Frame) error {
	*f = Frame{}
	if len(frame) < EthernetLen {
		return ErrTruncated
	}
	e := Ethernet(frame)
	if !e.IsValid() {
		return ErrTruncated
	}
	f.Eth = e
	pl := e.Payload()
	switch e.EtherType() {
	case EtherTypeMACCtl:
		if len(pl) < 2 || binary.BigEndian.Uint16(pl) != MACCtlOpPFC {
			return nil
		}
		if len(pl) < PFCLen {
			return ErrBadPFC
		}
		f.PFC = PFC(pl)
		f.Kind = KindPFC
		return nil
	case EtherTypeIPv4:
	default:
		return nil
	}
	ip := IPv4(pl)
	if len(ip) < IPv4MinLen {
		return ErrTruncated
	}
	if !ip.IsValid() {
		return ErrBadIPv4
	}
	if !checksumOK(ip[:ip.HeaderLen()]) {
		return ErrIPv4Checksum
	}
	if ip.IsFragment() {
		return ErrFragment
	}
	f.IP = ip
	switch ip.Protocol() {
	case IPProtoICMP:
		return decodeICMP(ip.Payload(), f)
	case IPProtoUDP:
		return decodeUDP(ip.Payload(), f)
	}
	return nil
}

func decodeICMP(p []byte, f *Frame) error {
	if len(p) < 1 || p[0] != ICMPTypeRoCCRate {
		return nil
	}
	r := RoCCRate(p)
	if !r.IsValid() {
		return ErrBadRoCCRate
	}
	if !checksumOK(r[:RoCCRateLen]) {
		return ErrICMPChecksum
	}
	f.Rate = r
	f.Kind = KindRoCCRate
	return nil
}

func decodeUDP(p []byte, f *Frame) error {
	u := UDP(p)
	if !u.IsValid() || u.Length() != len(p) {
		return ErrBadUDP
	}
	f.UDP = u
	if u.DstPort() != RoCEv2Port {
		return nil
	}
	r := u.Payload()
	if len(r) < BTHLen+ICRCLen {
		return ErrBadBTH
	}
	bth := BTH(r)
	f.BTH = bth
	body := r[BTHLen : len(r)-ICRCLen]
	op := bth.Opcode()
	flags := bth.Flags()
	switch {
	case IsDataOpcode(op):
		if flags&FlagINT != 0 {
			if len(body) < INTLen {
				return ErrBadBTH
			}
			if !INT(body).IsValid() {
				return ErrBadINT
			}
			f.INT = INT(body[:INTLen])
			body = body[INTLen:]
		}
		if len(body) < DataHeaderLen {
			return ErrBadBTH
		}
		f.Payload = body
		f.Data = DataHeader(body[:DataHeaderLen])
		f.Kind = KindData
	case op == OpAcknowledge:
		if len(body) < AETHLen {
			return ErrBadBTH
		}
		a := AETH(body[:AETHLen])
		body = body[AETHLen:]
		if flags&FlagAckExt != 0 {
			if len(body) < AckExtLen {
				return ErrBadBTH
			}
			f.Ext = AckExt(body[:AckExtLen])
			body = body[AckExtLen:]
			if flags&FlagINT != 0 {
				if len(body) < INTLen {
					return ErrBadBTH
				}
				if !INT(body).IsValid() {
					return ErrBadINT
				}
				f.INT = INT(body[:INTLen])
			}
		}
		f.AETH = a
		switch a.Syndrome() & SyndromeTypeMask {
		case SyndromeACK:
			f.Kind = KindAck
		case SyndromeNAK, SyndromeRNRNAK:
			f.Kind = KindNak
		}
	case op == OpCNP:
		if len(body) < CNPPadLen {
			return ErrBadBTH
		}
		f.Kind = KindCNP
	case op == OpP4QCNFeedback || op == OpQCNFeedback:
		if len(body) < FeedbackMsgLen {
			return ErrBadBTH
		}
		f.Feedback = FeedbackMsg(body[:FeedbackMsgLen])
		f.Kind = KindP4QCN
		if op == OpQCNFeedback {
			f.Kind = KindQCN
		}
	}
	return nil
}
