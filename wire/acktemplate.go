package wire

import "github.com/ccbed/ccbed/ccalgo"

// maxAckHeaders is the most header bytes an ACK has before its AETH:
// Ethernet with an 802.1Q tag, IPv4, UDP and the BTH.
const maxAckHeaders = EthernetLen + VLANTagLen + IPv4MinLen + UDPLen + BTHLen

// AckTemplate is the headers of the ACKs and NAKs one receiver sends for one
// flow (fixed endpoints, destination QP and INT echo choice), built once by
// Init so that Build writes an ACK by copying them and patching what changes
// from ACK to ACK: the PSN, the AETH, the ACK extension, the INT echo and the
// ICRC. Everything before the AETH is fixed for the flow, the IPv4 checksum
// included (the identification is ep.IPID, a constant). Build's output is
// byte for byte BuildAck's for the same fields (a differential test and a
// fuzz target check it); hosts use it on their rx path, where BuildAck's
// header encoding is most of an ACK's cost.
//
// The zero value matches nothing and builds nothing. A template holds no
// references: copying it copies it.
type AckTemplate struct {
	ep      Endpoints
	destQP  uint32
	echoINT bool
	n       uint8 // header bytes, Ethernet to the BTH; 0 before Init
	ip      uint8 // offset of the IPv4 header
	hdr     [maxAckHeaders]byte
}

// Matches reports whether t builds the ACKs of ep to QP destQP with (or
// without) the INT echo: whether Build may stand for BuildAck with them.
func (t *AckTemplate) Matches(ep *Endpoints, destQP uint32, echoINT bool) bool {
	return t.n != 0 && t.destQP == destQP && t.echoINT == echoINT && t.ep == *ep
}

// Init builds the template for ACKs of ep to QP destQP, with the INT echo when
// echoINT (AckSpec.EchoINT).
func (t *AckTemplate) Init(ep *Endpoints, destQP uint32, echoINT bool) {
	var b [maxAckHeaders + AETHLen + AckExtLen + INTLen + ICRCLen]byte
	a := AckSpec{DestQP: destQP, EchoINT: echoINT}
	_, bth := ackHeaders(b[:], ep, &a)
	*t = AckTemplate{ep: *ep, destQP: destQP, echoINT: echoINT, n: uint8(bth + BTHLen), ip: uint8(ethLen(ep))}
	copy(t.hdr[:], b[:t.n])
}

// Build writes an ACK or NAK into b and returns its length, as BuildAck would
// for the template's endpoints and an AckSpec of a's PSN, Syndrome, MSN and
// PathID with the template's DestQP and EchoINT (a's are not read), and f.
// It fails with ErrShortBuffer when b is too small or t was not built.
func (t *AckTemplate) Build(b []byte, a *AckSpec, f *ccalgo.AckFields) (int, error) {
	h := int(t.n)
	n := h + AETHLen + AckExtLen + ICRCLen
	if t.echoINT {
		n += INTLen
	}
	if h == 0 || len(b) < n {
		return 0, ErrShortBuffer
	}
	copy(b[:h], t.hdr[:h])
	BTH(b[h-BTHLen : h]).SetPSN(a.PSN)
	ackBody(b[h:], a, f, t.echoINT)
	finishRoCE(b[t.ip:n], &t.ep)
	return n, nil
}
