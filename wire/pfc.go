package wire

import "encoding/binary"

// PFC constants (IEEE 802.1Qbb).
const (
	MACCtlOpPause = 0x0001 // 802.3x PAUSE
	MACCtlOpPFC   = 0x0101 // 802.1Qbb priority-based flow control
	PFCLen        = 20     // opcode (2) + class-enable vector (2) + 8 timers (16)
	PFCPriorities = 8
	// PFCMaxQuanta is the longest pause, in quanta of 512 bit times.
	PFCMaxQuanta = 0xffff
)

// PFCDst is the reserved multicast address MAC control frames go to.
var PFCDst = MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}

// PFC is a view of a MAC control PFC body, after the Ethernet header (EtherType
// 0x8808):
//
//	0 opcode 0x0101   2 class-enable vector (low byte: bit i enables priority i)
//	4 pause time of priority 0 ... 18 priority 7, in quanta of 512 bit times (0: resume)
//
// Check IsValid before any other method.
type PFC []byte

// IsValid reports whether b holds a whole body with the PFC opcode.
func (b PFC) IsValid() bool {
	return len(b) >= PFCLen && binary.BigEndian.Uint16(b) == MACCtlOpPFC
}

// ClassEnable returns the class-enable vector.
func (b PFC) ClassEnable() uint8 { return b[3] }

// Enabled reports whether the frame carries a pause time for priority p.
func (b PFC) Enabled(p int) bool { return b[3]>>uint(p)&1 != 0 }

// PauseQuanta returns the pause time of priority p (0-7) in quanta.
func (b PFC) PauseQuanta(p int) uint16 { return binary.BigEndian.Uint16(b[4+2*p:]) }

// SetPause enables priority p with a pause time of q quanta (0: resume).
func (b PFC) SetPause(p int, q uint16) {
	b[3] |= 1 << uint(p)
	binary.BigEndian.PutUint16(b[4+2*p:], q)
}

// QuantaNs converts a pause time in quanta to ns at a line rate in bits/s: one
// quantum is 512 bit times.
func QuantaNs(q uint16, linkBps float64) int64 {
	return int64(float64(q) * 512 * 1e9 / linkBps)
}
