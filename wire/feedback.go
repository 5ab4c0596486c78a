package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// FeedbackMsgLen is the size of a FeedbackMsg.
const FeedbackMsgLen = 28

// FeedbackMsg is a view of the body of ccbed's switch-to-source feedback packets
// for P4QCN and QCN. Both travel as Ethernet / IPv4 with ECN = 11 (the P4QCN
// paper's "ECN field of FBP is set to 11", Section 3.1.2) / UDP to 4791 / BTH with
// opcode OpP4QCNFeedback or OpQCNFeedback and DestQP = the flow's destination QP /
// FeedbackMsg / ICRC, from the switch (CP) straight to the flow's source (RP):
//
//	0  CP id (4)
//	4  flow source IPv4   8 flow destination IPv4
//	12 flow UDP source port   14 flow UDP destination port
//	16 |Fb| quantised to 6 bits (QCN; 0 in P4QCN)   17 reserved (3)
//	20 Qoff bytes (int32)   24 Qdelta bytes (int32)
//
// The P4QCN paper only says the feedback packet is the cloned data packet with
// ECN = 11 and the destination rewritten to the source, identifying the flow by its
// addresses; ccbed uses a fixed small format instead, so the source can match the
// flow (5-tuple + QP) without parsing a reflected data packet. The QCN CNM is an
// 802.1Qau layer-2 frame; ccbed sends its content (Fb, Qoff, Qdelta) in this same
// layer-3 format so it crosses the IP switch. Check IsValid first.
type FeedbackMsg []byte

// IsValid reports whether b holds a whole message.
func (b FeedbackMsg) IsValid() bool { return len(b) >= FeedbackMsgLen }

// CPID returns the sending CP's id.
func (b FeedbackMsg) CPID() uint32 { return binary.BigEndian.Uint32(b) }

// Fb returns the quantised feedback |Fb| (6 bits).
func (b FeedbackMsg) Fb() uint8 { return b[16] & 0x3f }

// QOff returns Qoff in bytes.
func (b FeedbackMsg) QOff() int32 { return int32(binary.BigEndian.Uint32(b[20:])) }

// QDelta returns Qdelta in bytes.
func (b FeedbackMsg) QDelta() int32 { return int32(binary.BigEndian.Uint32(b[24:])) }

// Feedback reads the message into fb, with the given kind and the BTH's DestQP
// (the flow's destination QP).
func (b FeedbackMsg) Feedback(fb *ccalgo.Feedback, kind ccalgo.FeedbackKind, destQP uint32) {
	*fb = ccalgo.Feedback{
		Kind: kind,
		Flow: ccalgo.FlowKey{
			SrcIP:   binary.BigEndian.Uint32(b[4:]),
			DstIP:   binary.BigEndian.Uint32(b[8:]),
			SrcPort: binary.BigEndian.Uint16(b[12:]),
			DstPort: binary.BigEndian.Uint16(b[14:]),
			DestQP:  destQP,
		},
		CPID:   b.CPID(),
		Fb:     b.Fb(),
		QOff:   b.QOff(),
		QDelta: b.QDelta(),
	}
}

// SetFeedback writes fb's CPID, flow addresses and ports, Fb, QOff and QDelta.
func (b FeedbackMsg) SetFeedback(fb *ccalgo.Feedback) {
	binary.BigEndian.PutUint32(b, fb.CPID)
	binary.BigEndian.PutUint32(b[4:], fb.Flow.SrcIP)
	binary.BigEndian.PutUint32(b[8:], fb.Flow.DstIP)
	binary.BigEndian.PutUint16(b[12:], fb.Flow.SrcPort)
	binary.BigEndian.PutUint16(b[14:], fb.Flow.DstPort)
	b[16], b[17], b[18], b[19] = fb.Fb&0x3f, 0, 0, 0
	binary.BigEndian.PutUint32(b[20:], uint32(fb.QOff))
	binary.BigEndian.PutUint32(b[24:], uint32(fb.QDelta))
}
