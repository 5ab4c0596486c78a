package switchd

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/ccalgo/rocc"
	"github.com/ccbed/ccbed/wire"
)

// Test topology: host i (10.0.i.1, MAC 02:00:00:00:00:0i) hangs off port pi
// (MAC 02:00:00:00:ff:0i); routes 10.0.i.0/24 -> pi.
//
//	h0 -- p0 +--------+ p1 -- h1
//	         | switch |
//	h2 -- p2 +--------+ p3 -- h3
func hostIP(i int) uint32 { return 0x0a000001 | uint32(i)<<8 }

func hostMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0, byte(i)} }

func portMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0xff, byte(i)} }

func testSpec(nports int, linkGbps float64) Spec {
	c := DefaultSpec()
	for i := 0; i < nports; i++ {
		c.Ports = append(c.Ports, PortSpec{
			Name: fmt.Sprintf("p%d", i), MAC: portMAC(i), PeerMAC: hostMAC(i), LinkBps: linkGbps * 1e9, BufferBytes: 1 << 20,
		})
		c.Routes = append(c.Routes, Route{Addr: 0x0a000000 | uint32(i)<<8, Len: 24, Ports: []int{i}})
	}
	return c
}

// staticPFCSpec is testSpec(3, 10) with a static buffer and PFC on: XOFF
// at 20,000 bytes of an ingress priority, XON 5,000 below it.
func staticPFCSpec() Spec {
	c := testSpec(3, 10)
	c.Buffer.Mode = BufferStatic
	c.PFC.Enabled = true
	c.PFC.XOFFBytes = 20_000
	c.PFC.XONOffsetBytes = 5_000
	return c
}

// harness drives an engine with Go byte slices as frames.
type harness struct {
	tb     testing.TB
	e      *Engine
	meta   Meta
	out    []TxItem
	frames map[Handle][]byte
	// noDrain makes tx skip Transmit's drainData lane and inject skip
	// Enqueue's lean paths (the general loop and enqueue are the reference
	// drainData, Enqueue's lean path and enqueueLossless must match).
	noDrain bool
}

func newHarness(tb testing.TB, c Spec) *harness {
	tb.Helper()
	e, err := New(&c)
	if err != nil {
		tb.Fatal(err)
	}
	return &harness{tb: tb, e: e, out: make([]TxItem, 64), frames: map[Handle][]byte{}}
}

// dataFrame builds a RoCEv2 data packet from host src to host dst.
func dataFrame(tb testing.TB, src, dst int, qp uint32, payload int, withINT bool) []byte {
	tb.Helper()
	b := make([]byte, 2048)
	ep := wire.Endpoints{DstMAC: portMAC(src), SrcMAC: hostMAC(src), SrcIP: hostIP(src), DstIP: hostIP(dst),
		SrcPort: uint16(49152 + src), IPID: 1}
	n, err := wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpWriteOnly, DestQP: qp, PSN: 1, PayloadLen: payload, INT: withINT})
	if err != nil {
		tb.Fatal(err)
	}
	return b[:n]
}

// handleOf names a test frame by its address, as the DPDK adapter names mbufs.
func handleOf(b []byte) Handle { return Handle(uintptr(unsafe.Pointer(&b[0]))) }

// inject classifies and enqueues a frame received on port in; it reports
// whether the engine kept it.
func (h *harness) inject(now int64, in int, frame []byte) bool {
	if !h.e.Classify(in, frame, &h.meta) {
		return false
	}
	hd := handleOf(frame)
	enq := h.e.Enqueue
	if h.noDrain {
		enq = h.e.enqueue
	}
	if !enq(now, &h.meta, frame, hd) {
		return false
	}
	h.frames[hd] = frame
	return true
}

// tx runs Service and Transmit on port p and returns copies of the frames sent.
func (h *harness) tx(now int64, p int) [][]byte {
	h.e.Service(now)
	n := h.e.transmit(now, p, h.out, !h.noDrain)
	var res [][]byte
	for _, it := range h.out[:n] {
		res = append(res, append([]byte(nil), it.Frame...))
		if it.H != 0 {
			if _, ok := h.frames[it.H]; !ok {
				h.tb.Fatalf("port %d sent an unknown handle", p)
			}
			delete(h.frames, it.H)
		}
	}
	return res
}

func decode(tb testing.TB, b []byte) *wire.Frame {
	tb.Helper()
	var f wire.Frame
	if err := wire.Decode(b, &f); err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return &f
}

func counters0(e *Engine, p int) PortCounters {
	e.PublishEgress()
	e.PublishIngress()
	return e.Snapshot().Ports[p]
}

var _ = ccalgo.Never

// setRoCCT gives every port of c RoCC's defaults for its link with period
// tNs.
func setRoCCT(c *Spec, tNs int64) {
	for i := range c.Ports {
		p := rocc.DefaultParams(c.Env(i))
		p.T = tNs
		c.Ports[i].Params = p
	}
}
