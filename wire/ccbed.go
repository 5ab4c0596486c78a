package wire

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/ccalgo"
)

// Sizes of ccbed's own headers.
const (
	DataHeaderLen = 8  // send timestamp at the start of a data packet's payload
	AckExtLen     = 28 // ACK extension after the AETH, without the INT echo
)

// DataHeader is a view of ccbed's data header, the first bytes of every data
// packet's payload (after the BTH and the INT stack if any): the sender's 64-bit
// send timestamp in ns (big endian), used for RTT and one-way delay (RCC, TIMELY)
// and echoed in the ACK. It is ccbed's, not RoCEv2's: a RoCE stack sees it as
// payload. Check IsValid first.
type DataHeader []byte

// IsValid reports whether b holds a whole data header.
func (b DataHeader) IsValid() bool { return len(b) >= DataHeaderLen }

// SendTS returns the send timestamp (ns).
func (b DataHeader) SendTS() int64 { return int64(binary.BigEndian.Uint64(b)) }

// SetSendTS sets the send timestamp (ns).
func (b DataHeader) SetSendTS(ts int64) { binary.BigEndian.PutUint64(b, uint64(ts)) }

// AckExt is a view of ccbed's ACK extension, after the AETH of every ccbed ACK and
// NAK (BTH FlagAckExt), carrying ccalgo.AckFields back to the sender:
//
//	0  echo timestamp: the acknowledged data packet's send timestamp, ns (8)
//	8  mark: echoed ccalgo.Mark, 0 none, 1 UE, 2 CE (1)
//	9  reserved (3)
//	12 active flows N (RCC, Section III-G) (4)
//	16 window in bytes assigned by the receiver (RCC), 0 none (8, signed)
//	24 bytes received in the last round B_R (RCC, Section III-G) (4)
//	28 INT stack echo, INTLen bytes, when BTH FlagINT is set (HPCC)
//
// Check IsValid before any other method.
type AckExt []byte

// IsValid reports whether b holds the fixed part of an extension.
func (b AckExt) IsValid() bool { return len(b) >= AckExtLen }

// EchoTS returns the echoed send timestamp (ns).
func (b AckExt) EchoTS() int64 { return int64(binary.BigEndian.Uint64(b)) }

// Mark returns the echoed mark; an unknown value reads as the most severe, CE.
func (b AckExt) Mark() ccalgo.Mark {
	if m := ccalgo.Mark(b[8]); m <= ccalgo.MarkCE {
		return m
	}
	return ccalgo.MarkCE
}

// ActiveFlows returns RCC's number of active messages N.
func (b AckExt) ActiveFlows() uint32 { return binary.BigEndian.Uint32(b[12:]) }

// Window returns RCC's assigned window in bytes (0: none).
func (b AckExt) Window() int64 { return int64(binary.BigEndian.Uint64(b[16:])) }

// RecvBytes returns RCC's bytes received in the last round.
func (b AckExt) RecvBytes() uint32 { return binary.BigEndian.Uint32(b[24:]) }

// SetEchoTS sets the echoed timestamp.
func (b AckExt) SetEchoTS(ts int64) { binary.BigEndian.PutUint64(b, uint64(ts)) }

// SetMark sets the echoed mark.
func (b AckExt) SetMark(m ccalgo.Mark) { b[8] = uint8(m) }

// SetActiveFlows sets N.
func (b AckExt) SetActiveFlows(n uint32) { binary.BigEndian.PutUint32(b[12:], n) }

// SetWindow sets the assigned window.
func (b AckExt) SetWindow(w int64) { binary.BigEndian.PutUint64(b[16:], uint64(w)) }

// SetRecvBytes sets B_R.
func (b AckExt) SetRecvBytes(n uint32) { binary.BigEndian.PutUint32(b[24:], n) }

// Fields reads the extension into f, except f.INT (read the INT view that follows
// when BTH FlagINT is set).
func (b AckExt) Fields(f *ccalgo.AckFields) {
	f.EchoTS = b.EchoTS()
	f.Mark = b.Mark()
	f.ActiveFlows = b.ActiveFlows()
	f.Window = b.Window()
	f.RecvBytes = b.RecvBytes()
}

// SetFields writes the fixed part from f (f.INT goes in the INT view after it).
func (b AckExt) SetFields(f *ccalgo.AckFields) {
	b.SetEchoTS(f.EchoTS)
	b[8], b[9], b[10], b[11] = uint8(f.Mark), 0, 0, 0
	b.SetActiveFlows(f.ActiveFlows)
	b.SetWindow(f.Window)
	b.SetRecvBytes(f.RecvBytes)
}
