package wire

import "encoding/binary"

// maxDataHeaders is the largest header a data packet has before its
// application payload: Ethernet with an 802.1Q tag, IPv4, UDP, BTH, an INT
// stack and the DataHeader.
const maxDataHeaders = EthernetLen + VLANTagLen + IPv4MinLen + UDPLen + BTHLen + INTLen + DataHeaderLen

// DataTemplate is the headers of one sender's data packets (one QP: fixed
// endpoints, destination QP and INT choice), built once by Init so that
// Build writes a packet by copying them and patching only what changes from
// packet to packet: the IPv4 total length, identification and checksum (the
// checksum from a sum kept in the template, not recomputed over the header),
// the UDP length, the BTH opcode, AckReq and PSN, and the send timestamp.
// Build's output is byte for byte BuildData's for the same fields (a
// differential test and fuzz target check it); hosts use it on their tx path,
// where BuildData's header encoding is most of a packet's cost.
//
// The zero value builds nothing (Build fails with ErrShortBuffer until Init).
// A template holds no references: copying it copies it.
type DataTemplate struct {
	hdr   [maxDataHeaders]byte
	n     uint8  // header bytes, Ethernet to DataHeader
	ip    uint8  // offset of the IPv4 header
	icrc  bool   // compute the ICRC
	leave bool   // without icrc, leave the ICRC field as b holds it (LeaveICRC)
	ipSum uint32 // IPv4 header's 16-bit words summed, total length, id and checksum as 0
}

// LeaveICRC makes Build leave the 4 bytes of the ICRC field as it finds them
// in b, as it leaves the payload, when the template does not compute the ICRC
// (Endpoints.ICRC); false (Init's choice) zeroes them, as BuildData does. It is
// for a driver whose frames nobody reads past their headers (the virtual-time
// fabric without a capture): there zeroing the field is the one write to the
// frame's last cache line, a line nothing else touches.
func (t *DataTemplate) LeaveICRC(leave bool) { t.leave = leave }

// Init builds the template for data packets from ep (ep.IPID is ignored:
// Build takes the identification of each packet) to QP destQP, with an empty
// INT stack after the BTH when intStack (DataSpec.INT).
func (t *DataTemplate) Init(ep *Endpoints, destQP uint32, intStack bool) {
	*t = DataTemplate{icrc: ep.ICRC}
	b := t.hdr[:]
	var flags uint8
	rest := DataHeaderLen
	if intStack {
		flags = FlagINT
		rest += INTLen
	}
	e := *ep
	e.IPID = 0
	off, bth := encodeRoCEHeaders(b, &e, ECNECT0, rest)
	encodeBTH(b[bth:], OpSendMiddle, false, destQP, false, flags, 0)
	p := bth + BTHLen
	if intStack {
		clear(b[p : p+INTLen])
		p += INTLen
	}
	clear(b[p : p+DataHeaderLen])
	p += DataHeaderLen
	t.n, t.ip = uint8(p), uint8(off)
	ip := b[off : off+IPv4MinLen]
	ip[2], ip[3], ip[10], ip[11] = 0, 0, 0, 0
	t.ipSum = uint32(sum16(ip, 0))
}

// HeaderLen is the bytes a packet has before its application payload (0
// before Init).
func (t *DataTemplate) HeaderLen() int { return int(t.n) }

// Build writes a data packet into b and returns its length, as BuildData
// would for the template's endpoints with IPID ipID and a DataSpec of op,
// the template's destination QP, psn, ackReq, sendTS, its INT choice and
// payloadLen (the DataHeader and the application bytes, which are left as
// they are in b; the ICRC field too after LeaveICRC). It fails with
// BuildData's errors.
func (t *DataTemplate) Build(b []byte, ipID uint16, op uint8, psn uint32, ackReq bool, sendTS int64, payloadLen int) (int, error) {
	if payloadLen < DataHeaderLen || payloadLen > 0xffff-IPv4MinLen-UDPLen-BTHLen-INTLen-ICRCLen {
		return 0, ErrPayloadLen
	}
	h := int(t.n)
	n := h - DataHeaderLen + payloadLen + ICRCLen
	if h == 0 || len(b) < n {
		return 0, ErrShortBuffer
	}
	copy(b[:h], t.hdr[:h])
	ipo := int(t.ip)
	ip := b[ipo : ipo+IPv4MinLen+UDPLen+BTHLen]
	ipLen := n - ipo
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen))
	binary.BigEndian.PutUint16(ip[4:], ipID)
	binary.BigEndian.PutUint16(ip[10:], ^fold(uint64(t.ipSum)+uint64(uint16(ipLen))+uint64(ipID)))
	binary.BigEndian.PutUint16(ip[IPv4MinLen+4:], uint16(ipLen-IPv4MinLen))
	bth := ip[IPv4MinLen+UDPLen:]
	bth[0] = op
	if ackReq {
		bth[8] |= 0x80
	}
	bth[9], bth[10], bth[11] = byte(psn>>16), byte(psn>>8), byte(psn)
	binary.BigEndian.PutUint64(b[h-DataHeaderLen:], uint64(sendTS))
	if t.icrc {
		SetICRC(b[ipo:n])
	} else if !t.leave {
		clear(b[n-ICRCLen : n])
	}
	return n, nil
}
