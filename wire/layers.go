package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// gopacket layer types of ccbed's formats, numbered in 1900-1909 (gopacket leaves
// numbers above 1000 to users).
var (
	LayerTypeBTH        = gopacket.RegisterLayerType(1900, gopacket.LayerTypeMetadata{Name: "RoCEv2 BTH", Decoder: gopacket.DecodeFunc(decodeAs[BTHLayer])})
	LayerTypeAETH       = gopacket.RegisterLayerType(1901, gopacket.LayerTypeMetadata{Name: "RoCEv2 AETH", Decoder: gopacket.DecodeFunc(decodeAs[AETHLayer])})
	LayerTypeAckExt     = gopacket.RegisterLayerType(1902, gopacket.LayerTypeMetadata{Name: "ccbed ACK extension", Decoder: gopacket.DecodeFunc(decodeAs[AckExtLayer])})
	LayerTypeINT        = gopacket.RegisterLayerType(1903, gopacket.LayerTypeMetadata{Name: "HPCC INT", Decoder: gopacket.DecodeFunc(decodeAs[INTLayer])})
	LayerTypeDataHeader = gopacket.RegisterLayerType(1904, gopacket.LayerTypeMetadata{Name: "ccbed data header", Decoder: gopacket.DecodeFunc(decodeAs[DataHeaderLayer])})
	LayerTypeRoCCRate   = gopacket.RegisterLayerType(1905, gopacket.LayerTypeMetadata{Name: "RoCC rate", Decoder: gopacket.DecodeFunc(decodeAs[RoCCRateLayer])})
	LayerTypeFeedback   = gopacket.RegisterLayerType(1906, gopacket.LayerTypeMetadata{Name: "ccbed feedback", Decoder: gopacket.DecodeFunc(decodeAs[FeedbackLayer])})
	LayerTypePFC        = gopacket.RegisterLayerType(1907, gopacket.LayerTypeMetadata{Name: "MAC control PFC", Decoder: gopacket.DecodeFunc(decodeAs[PFCLayer])})
	LayerTypeCNP        = gopacket.RegisterLayerType(1908, gopacket.LayerTypeMetadata{Name: "RoCEv2 CNP", Decoder: gopacket.DecodeFunc(decodeAs[CNPLayer])})
)

func init() {
	layers.RegisterUDPPortLayerType(RoCEv2Port, LayerTypeBTH)
	layers.EthernetTypeMetadata[EtherTypeMACCtl] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeAs[PFCLayer]), Name: "MACControl", LayerType: LayerTypePFC,
	}
	// gopacket's IPv4 layer hands its payload to LayerTypeICMPv4's decoder:
	// replace it with one that knows type 253 and decodes the rest as before.
	gopacket.OverrideLayerType(int(layers.LayerTypeICMPv4), gopacket.LayerTypeMetadata{
		Name: "ICMPv4", Decoder: gopacket.DecodeFunc(decodeICMPv4),
	})
	layers.IPProtocolMetadata[layers.IPProtocolICMPv4].DecodeWith = gopacket.DecodeFunc(decodeICMPv4)
}

// decodingLayer is a gopacket layer that can also decode itself.
type decodingLayer interface {
	gopacket.Layer
	DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error
	NextLayerType() gopacket.LayerType
}

func decodeWith(l decodingLayer, data []byte, p gopacket.PacketBuilder) error {
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	next := l.NextLayerType()
	if next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(next)
}

// decodeAs decodes data as a new layer of type T and goes on with the
// layer that follows: the gopacket decoder of each of wire's layers.
func decodeAs[T any, P interface {
	*T
	decodingLayer
}](data []byte, p gopacket.PacketBuilder) error {
	return decodeWith(P(new(T)), data, p)
}

// header splits data into a header of n bytes and its payload, or, when
// data is shorter, marks df truncated and returns bad.
func header(data []byte, n int, df gopacket.DecodeFeedback, bad error) (layers.BaseLayer, error) {
	if len(data) < n {
		df.SetTruncated()
		return layers.BaseLayer{}, bad
	}
	return layers.BaseLayer{Contents: data[:n], Payload: data[n:]}, nil
}

// nextIfFits is t when a header of n bytes fits in rest, else a payload
// (none when rest is empty).
func nextIfFits(rest []byte, n int, t gopacket.LayerType) gopacket.LayerType {
	if len(rest) >= n {
		return t
	}
	return nextOrZero(rest, gopacket.LayerTypePayload)
}

func nextOrZero(rest []byte, t gopacket.LayerType) gopacket.LayerType {
	if len(rest) == 0 {
		return gopacket.LayerTypeZero
	}
	return t
}

// BTHLayer is the gopacket layer of a RoCEv2 BTH, decoded from a UDP payload to
// port 4791. Its payload stops before the ICRC trailer, which it keeps in ICRC.
type BTHLayer struct {
	layers.BaseLayer
	Opcode   uint8
	SE       bool
	MigReq   bool
	PadCount uint8
	TVer     uint8
	PKey     uint16
	FECN     bool
	BECN     bool
	DestQP   uint32
	AckReq   bool
	Flags    uint8 // ccbed's FlagINT, FlagAckExt
	PSN      uint32
	ICRC     uint32 // as ComputeICRC returns it (the trailer read little-endian)
}

// LayerType returns LayerTypeBTH.
func (l *BTHLayer) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (l *BTHLayer) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// DecodeFromBytes decodes a BTH and strips the ICRC from the payload.
func (l *BTHLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < BTHLen+ICRCLen {
		df.SetTruncated()
		return ErrBadBTH
	}
	b := BTH(data)
	*l = BTHLayer{
		BaseLayer: layers.BaseLayer{Contents: data[:BTHLen], Payload: data[BTHLen : len(data)-ICRCLen]},
		Opcode:    b.Opcode(), SE: b.SE(), MigReq: b.MigReq(), PadCount: b.PadCount(), TVer: b.TVer(),
		PKey: b.PKey(), FECN: b.FECN(), BECN: b.BECN(), DestQP: b.DestQP(), AckReq: b.AckReq(),
		Flags: b.Flags(), PSN: b.PSN(),
		ICRC: binary.LittleEndian.Uint32(data[len(data)-ICRCLen:]),
	}
	return nil
}

// NextLayerType follows the opcode and flags: AETH, INT, data header, CNP,
// feedback, or payload.
func (l *BTHLayer) NextLayerType() gopacket.LayerType {
	switch {
	case IsDataOpcode(l.Opcode) && l.Flags&FlagINT != 0:
		return LayerTypeINT
	case IsDataOpcode(l.Opcode):
		return LayerTypeDataHeader
	case l.Opcode == OpAcknowledge:
		return LayerTypeAETH
	case l.Opcode == OpCNP:
		return LayerTypeCNP
	case l.Opcode == OpP4QCNFeedback || l.Opcode == OpQCNFeedback:
		return LayerTypeFeedback
	}
	return nextOrZero(l.Payload, gopacket.LayerTypePayload)
}

// AETHLayer is the gopacket layer of an AETH. A ccbed ACK extension follows when
// the payload holds one (BTH FlagAckExt).
type AETHLayer struct {
	layers.BaseLayer
	Syndrome uint8
	MSN      uint32
}

// LayerType returns LayerTypeAETH.
func (l *AETHLayer) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (l *AETHLayer) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// DecodeFromBytes decodes an AETH.
func (l *AETHLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, AETHLen, df, ErrBadBTH)
	if err != nil {
		return err
	}
	a := AETH(data)
	*l = AETHLayer{
		BaseLayer: base,
		Syndrome:  a.Syndrome(), MSN: a.MSN(),
	}
	return nil
}

// NextLayerType is LayerTypeAckExt when an extension fits in the payload.
func (l *AETHLayer) NextLayerType() gopacket.LayerType {
	return nextIfFits(l.Payload, AckExtLen, LayerTypeAckExt)
}

// AckExtLayer is the gopacket layer of ccbed's ACK extension.
type AckExtLayer struct {
	layers.BaseLayer
	EchoTS      int64
	Mark        ccalgo.Mark
	ActiveFlows uint32
	Window      int64
	RecvBytes   uint32
}

// LayerType returns LayerTypeAckExt.
func (l *AckExtLayer) LayerType() gopacket.LayerType { return LayerTypeAckExt }

// CanDecode returns LayerTypeAckExt.
func (l *AckExtLayer) CanDecode() gopacket.LayerClass { return LayerTypeAckExt }

// DecodeFromBytes decodes an ACK extension.
func (l *AckExtLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, AckExtLen, df, ErrBadBTH)
	if err != nil {
		return err
	}
	x := AckExt(data)
	*l = AckExtLayer{
		BaseLayer: base,
		EchoTS:    x.EchoTS(), Mark: x.Mark(), ActiveFlows: x.ActiveFlows(), Window: x.Window(),
		RecvBytes: x.RecvBytes(),
	}
	return nil
}

// NextLayerType is LayerTypeINT when an echoed INT stack fits in the payload.
func (l *AckExtLayer) NextLayerType() gopacket.LayerType {
	return nextIfFits(l.Payload, INTLen, LayerTypeINT)
}

// INTLayer is the gopacket layer of an HPCC INT stack. In a data packet the data
// header follows it.
type INTLayer struct {
	layers.BaseLayer
	PathID uint16
	Stack  ccalgo.INTStack
}

// LayerType returns LayerTypeINT.
func (l *INTLayer) LayerType() gopacket.LayerType { return LayerTypeINT }

// CanDecode returns LayerTypeINT.
func (l *INTLayer) CanDecode() gopacket.LayerClass { return LayerTypeINT }

// DecodeFromBytes decodes an INT stack.
func (l *INTLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, INTLen, df, ErrBadINT)
	if err != nil {
		return err
	}
	s := INT(data)
	if !s.IsValid() {
		return ErrBadINT
	}
	*l = INTLayer{BaseLayer: base, PathID: s.PathID()}
	s.Stack(&l.Stack)
	return nil
}

// NextLayerType is the data header when one fits in the payload.
func (l *INTLayer) NextLayerType() gopacket.LayerType {
	return nextIfFits(l.Payload, DataHeaderLen, LayerTypeDataHeader)
}

// DataHeaderLayer is the gopacket layer of ccbed's data header (send timestamp).
type DataHeaderLayer struct {
	layers.BaseLayer
	SendTS int64
}

// LayerType returns LayerTypeDataHeader.
func (l *DataHeaderLayer) LayerType() gopacket.LayerType { return LayerTypeDataHeader }

// CanDecode returns LayerTypeDataHeader.
func (l *DataHeaderLayer) CanDecode() gopacket.LayerClass { return LayerTypeDataHeader }

// DecodeFromBytes decodes a data header.
func (l *DataHeaderLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, DataHeaderLen, df, ErrBadBTH)
	if err != nil {
		return err
	}
	*l = DataHeaderLayer{
		BaseLayer: base,
		SendTS:    DataHeader(data).SendTS(),
	}
	return nil
}

// NextLayerType is the application payload, if any.
func (l *DataHeaderLayer) NextLayerType() gopacket.LayerType {
	return nextOrZero(l.Payload, gopacket.LayerTypePayload)
}

// CNPLayer is the gopacket layer of a CNP's 16 reserved bytes.
type CNPLayer struct {
	layers.BaseLayer
}

// LayerType returns LayerTypeCNP.
func (l *CNPLayer) LayerType() gopacket.LayerType { return LayerTypeCNP }

// CanDecode returns LayerTypeCNP.
func (l *CNPLayer) CanDecode() gopacket.LayerClass { return LayerTypeCNP }

// DecodeFromBytes decodes the reserved bytes.
func (l *CNPLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, CNPPadLen, df, ErrBadBTH)
	if err != nil {
		return err
	}
	*l = CNPLayer{base}
	return nil
}

// NextLayerType is LayerTypeZero: nothing follows.
func (l *CNPLayer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// FeedbackLayer is the gopacket layer of a P4QCN / QCN feedback body.
type FeedbackLayer struct {
	layers.BaseLayer
	CPID         uint32
	SrcIP, DstIP uint32
	SrcPort      uint16
	DstPort      uint16
	Fb           uint8
	QOff, QDelta int32
}

// LayerType returns LayerTypeFeedback.
func (l *FeedbackLayer) LayerType() gopacket.LayerType { return LayerTypeFeedback }

// CanDecode returns LayerTypeFeedback.
func (l *FeedbackLayer) CanDecode() gopacket.LayerClass { return LayerTypeFeedback }

// DecodeFromBytes decodes a feedback body.
func (l *FeedbackLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	base, err := header(data, FeedbackMsgLen, df, ErrBadBTH)
	if err != nil {
		return err
	}
	var fb ccalgo.Feedback
	m := FeedbackMsg(data)
	m.Feedback(&fb, 0, 0)
	*l = FeedbackLayer{
		BaseLayer: base,
		CPID:      fb.CPID, SrcIP: fb.Flow.SrcIP, DstIP: fb.Flow.DstIP, SrcPort: fb.Flow.SrcPort,
		DstPort: fb.Flow.DstPort, Fb: fb.Fb, QOff: fb.QOff, QDelta: fb.QDelta,
	}
	return nil
}

// NextLayerType is LayerTypeZero: nothing follows.
func (l *FeedbackLayer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// RoCCRateLayer is the gopacket layer of a RoCC rate message body: the ICMP
// payload after the 8-byte ICMP header of a type 253 message (ccbed hooks
// gopacket's ICMPv4 decoder for that type and leaves the others to it). The
// message's version byte is the high byte of the ICMPv4 layer's Id.
type RoCCRateLayer struct {
	layers.BaseLayer
	RateUnits uint32
	DeltaFBps uint32
	CPID      uint32
	Flow      ccalgo.FlowKey
}

// LayerType returns LayerTypeRoCCRate.
func (l *RoCCRateLayer) LayerType() gopacket.LayerType { return LayerTypeRoCCRate }

// CanDecode returns LayerTypeRoCCRate.
func (l *RoCCRateLayer) CanDecode() gopacket.LayerClass { return LayerTypeRoCCRate }

// DecodeFromBytes decodes the body (bytes 8-35 of the ICMP message).
func (l *RoCCRateLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	const n = RoCCRateLen - 8
	base, err := header(data, n, df, ErrBadRoCCRate)
	if err != nil {
		return err
	}
	var m [RoCCRateLen]byte
	copy(m[8:], data[:n])
	r := RoCCRate(m[:])
	*l = RoCCRateLayer{
		BaseLayer: base,
		RateUnits: r.RateUnits(), DeltaFBps: r.DeltaFBps(), CPID: r.CPID(), Flow: r.Flow(),
	}
	return nil
}

// RateBps returns the fair rate in bits/s.
func (l *RoCCRateLayer) RateBps() float64 { return float64(l.RateUnits) * float64(l.DeltaFBps) }

// NextLayerType is LayerTypeZero: nothing follows.
func (l *RoCCRateLayer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// decodeICMPv4 replaces gopacket's ICMPv4 decoder: it decodes gopacket's ICMPv4
// layer as gopacket does, then a RoCCRateLayer for type 253 and a Payload for
// the other types (gopacket's own behaviour).
func decodeICMPv4(data []byte, p gopacket.PacketBuilder) error {
	icmp := &layers.ICMPv4{}
	if err := icmp.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(icmp)
	if icmp.TypeCode.Type() == ICMPTypeRoCCRate {
		return decodeAs[RoCCRateLayer](icmp.Payload, p)
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}

// PFCLayer is the gopacket layer of a MAC control frame (EtherType 0x8808): PFC
// (opcode 0x0101) with its class-enable vector and 8 pause times, or 802.3x PAUSE
// (opcode 0x0001) with its one pause time in Quanta[0].
type PFCLayer struct {
	layers.BaseLayer
	Opcode      uint16
	ClassEnable uint8
	Quanta      [PFCPriorities]uint16
}

// LayerType returns LayerTypePFC.
func (l *PFCLayer) LayerType() gopacket.LayerType { return LayerTypePFC }

// CanDecode returns LayerTypePFC.
func (l *PFCLayer) CanDecode() gopacket.LayerClass { return LayerTypePFC }

// DecodeFromBytes decodes a MAC control body; the rest of the frame is padding.
func (l *PFCLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 2 {
		df.SetTruncated()
		return ErrBadPFC
	}
	*l = PFCLayer{Opcode: binary.BigEndian.Uint16(data)}
	n := 2
	switch l.Opcode {
	case MACCtlOpPFC:
		if !PFC(data).IsValid() {
			df.SetTruncated()
			return ErrBadPFC
		}
		p := PFC(data)
		l.ClassEnable = p.ClassEnable()
		for i := range l.Quanta {
			l.Quanta[i] = p.PauseQuanta(i)
		}
		n = PFCLen
	case MACCtlOpPause:
		if len(data) < 4 {
			df.SetTruncated()
			return ErrBadPFC
		}
		l.Quanta[0] = binary.BigEndian.Uint16(data[2:])
		n = 4
	}
	l.BaseLayer = layers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	return nil
}

// NextLayerType is LayerTypeZero: the rest is padding.
func (l *PFCLayer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Compile-time checks that the layers decode in a gopacket.DecodingLayerParser.
var (
	_ gopacket.DecodingLayer = (*BTHLayer)(nil)
	_ gopacket.DecodingLayer = (*AETHLayer)(nil)
	_ gopacket.DecodingLayer = (*AckExtLayer)(nil)
	_ gopacket.DecodingLayer = (*INTLayer)(nil)
	_ gopacket.DecodingLayer = (*DataHeaderLayer)(nil)
	_ gopacket.DecodingLayer = (*CNPLayer)(nil)
	_ gopacket.DecodingLayer = (*FeedbackLayer)(nil)
	_ gopacket.DecodingLayer = (*RoCCRateLayer)(nil)
	_ gopacket.DecodingLayer = (*PFCLayer)(nil)
)
