package switchtest

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// TestDataFrame: the frame decodes as the data packet it is said to be,
// from host src's MAC to port src's, host src's address to host dst's.
func TestDataFrame(t *testing.T) {
	var f wire.Frame
	if err := wire.Decode(DataFrame(t, 2, 5, 7, 256), &f); err != nil {
		t.Fatal(err)
	}
	if f.Kind != wire.KindData || f.Eth.Src() != HostMAC(2) || f.Eth.Dst() != PortMAC(2) || f.IP.Src() != HostIP(2) || f.IP.Dst() != 0x0a000501 ||
		f.UDP.SrcPort() != 49152 || f.BTH.DestQP() != 7 || f.BTH.PSN() != 1 || f.BTH.Opcode() != wire.OpWriteOnly {
		t.Errorf("decoded kind %v, %v > %v, %#x > %#x, port %d, QP %d, PSN %d, opcode %d", f.Kind, f.Eth.Src(), f.Eth.Dst(),
			f.IP.Src(), f.IP.Dst(), f.UDP.SrcPort(), f.BTH.DestQP(), f.BTH.PSN(), f.BTH.Opcode())
	}
}
