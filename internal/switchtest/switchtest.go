// Package switchtest holds the test topology that tests of switchd's
// users share (metrics, switchd/daemon), as switchd's own tests draw it:
// host i (10.0.i.1, MAC 02:00:00:00:00:0i) hangs off port pi (MAC
// 02:00:00:00:ff:0i), and 10.0.i.0/24 routes to pi. It is for tests only.
package switchtest

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// HostIP is host i's address, 10.0.i.1.
func HostIP(i int) uint32 { return 0x0a000001 | uint32(i)<<8 }

// HostMAC is host i's MAC, 02:00:00:00:00:0i.
func HostMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0, byte(i)} }

// PortMAC is port pi's MAC, 02:00:00:00:ff:0i.
func PortMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0xff, byte(i)} }

// DataFrame is an untagged RoCEv2 data packet (RDMA WRITE Only, PSN 1, UDP
// source port 49152) from host src to host dst's queue pair qp with payload
// bytes of payload, as host src sends it to its switch port.
func DataFrame(tb testing.TB, src, dst int, qp uint32, payload int) []byte {
	tb.Helper()
	b := make([]byte, 2048)
	ep := wire.Endpoints{DstMAC: PortMAC(src), SrcMAC: HostMAC(src), SrcIP: HostIP(src), DstIP: HostIP(dst), SrcPort: 49152, IPID: 1}
	n, err := wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpWriteOnly, DestQP: qp, PSN: 1, PayloadLen: payload})
	if err != nil {
		tb.Fatal(err)
	}
	return b[:n]
}
