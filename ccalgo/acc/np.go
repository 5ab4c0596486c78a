// ACC notification point: the receiver copies the TCD mark of each data packet into
// its ACK ("Revisiting Congestion Control for Lossless Ethernet", NSDI 2024,
// Section 4: "The receiver copies the TCD marking to the corresponding ACK";
// Section 5, rxe_responder; one ACK per data packet, as the testbed of Section
// 6.2 configured, sent at high priority, Section 4.3). The send timestamp is
// echoed too.
// ACC sends no CNP. Deviation: none; one ACK per packet is the host engine's
// setting (AckEvery = 1), which this NP does not see.

package acc

import "github.com/ccbed/ccbed/ccalgo"

// NP is ACC's notification point. It keeps no state.
type NP struct{}

var _ ccalgo.NotificationPoint = (*NP)(nil)

// NewNP returns an ACC notification point.
func NewNP() *NP { return &NP{} }

// OnData echoes the packet's TCD mark and send timestamp into ack; ACC never asks
// for a CNP.
func (*NP) OnData(_ int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.Mark = d.Mark
	return false
}
