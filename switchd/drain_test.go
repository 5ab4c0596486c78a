package switchd

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// TestDrainDataMatchesGeneralLoop: Transmit's drainData lane gives, frame for
// frame, what its general loop (dequeueData per frame) gives: the same frames
// in the same order with the same bytes (ECN marks, INT records), the same
// counters, samples and CP state, under every kind of CP hook (none, marking
// at dequeue, INT stamping, RoCC's flow table and rate messages, P4QCN's
// feedback at enqueue), shared and static buffers, PFC, a propagation delay,
// and out slices of every size. "rocc-mixed" adds a second priority and ACKs
// (frames of the data queues that no CP hook sees) to RoCC: its flow table
// then sees stale tags (one priority's queue emptying zeroes the counts of
// flows whose packets wait in the other's) and batches that end in an ACK.
func TestDrainDataMatchesGeneralLoop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scheme string
		mod    func(c *Spec)
		mixed  bool // priorities 0 and 3 (by DSCP), and one frame in four an ACK
	}{
		{"none", "none", nil, false},
		{"dcqcn", "dcqcn", nil, false},
		{"hpcc", "hpcc", nil, false},
		{"rocc", "rocc", nil, false},
		{"rocc-mixed", "rocc", func(c *Spec) { c.PriorityFromDSCP = true }, true},
		{"p4qcn", "p4qcn", nil, false},
		{"static-buffer", "dcqcn", func(c *Spec) { c.Buffer.Mode = BufferStatic }, false},
		{"pfc", "none", func(c *Spec) {
			c.PFC.Enabled = true
			c.PFC.XOFFBytes = 20_000
			c.Buffer.SizeBytes = 320_000 // the dynamic threshold pauses
		}, false},
		{"pfc-dcqcn", "dcqcn", func(c *Spec) {
			c.Buffer.Mode = BufferStatic
			c.PFC.Enabled = true
			c.PFC.XOFFBytes = 12_000
		}, false},
		{"pfc-static", "none", func(c *Spec) {
			c.Buffer.Mode = BufferStatic
			c.PFC.Enabled = true
			c.PFC.XOFFBytes = 8_000
		}, false},
		{"delay", "hpcc", func(c *Spec) {
			for i := range c.Ports {
				c.Ports[i].DelayNs = 1000
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testSpec(4, 10)
			c.CC.Scheme = tc.scheme
			c.DecrementTTL = false
			c.SampleNs = 5000
			if tc.mod != nil {
				tc.mod(&c)
			}
			ref, lane := newHarness(t, c), newHarness(t, c)
			ref.noDrain = true
			rng := rand.New(rand.NewPCG(1, 2))
			now := int64(0)
			sent := 0
			for step := 0; step < 20_000; step++ {
				now += int64(rng.IntN(400))
				for k := rng.IntN(6); k > 0; k-- {
					src, dst := rng.IntN(4), rng.IntN(4)
					if src == dst {
						continue
					}
					var f []byte
					switch {
					case !tc.mixed:
						f = dataFrame(t, src, dst, uint32(rng.IntN(8)), 64+rng.IntN(1000), tc.scheme == "hpcc")
					case rng.IntN(4) == 0:
						f = mixedAck(t, src, dst, uint32(rng.IntN(8)))
					default:
						f = prioFrame(t, src, dst, uint32(rng.IntN(8)), 64+rng.IntN(1000), uint8(3*rng.IntN(2)))
					}
					ref.inject(now, src, f)
					lane.inject(now, src, append([]byte(nil), f...))
				}
				p := rng.IntN(4)
				out := 1 + rng.IntN(24)
				a, b := ref.txN(now, p, out), lane.txN(now, p, out)
				if len(a) != len(b) {
					t.Fatalf("step %d port %d: general loop sent %d frames, drainData %d", step, p, len(a), len(b))
				}
				for i := range a {
					if !bytes.Equal(a[i], b[i]) {
						t.Fatalf("step %d port %d frame %d differs:\n general %x\n drain   %x", step, p, i, a[i], b[i])
					}
				}
				sent += len(a)
			}
			if sent < 10_000 {
				t.Fatalf("only %d frames sent: the scenario tests little", sent)
			}
			ref.e.PublishEgress()
			lane.e.PublishEgress()
			ref.e.PublishIngress()
			lane.e.PublishIngress()
			a, b := ref.e.Snapshot(), lane.e.Snapshot()
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("counters differ:\n general %+v\n drain   %+v", a, b)
			}
			if c.PFC.Enabled {
				// The lossless lane is tested only if pauses came and went.
				var xoff, xon uint64
				for _, pc := range a.Ports {
					xoff, xon = xoff+pc.PausesSent, xon+pc.ResumesSent
				}
				if xoff == 0 || xon == 0 {
					t.Fatalf("%d XOFF and %d XON frames sent: the scenario tests little", xoff, xon)
				}
			}
			var sa, sb []Sample
			ref.e.Samples().Drain(func(s *Sample) { sa = append(sa, *s) })
			lane.e.Samples().Drain(func(s *Sample) { sb = append(sb, *s) })
			if len(sa) == 0 || !reflect.DeepEqual(sa, sb) {
				t.Fatal("samples differ")
			}
			type tracker interface{ FlowsTracked() int }
			for p := range ref.e.eg {
				if a, ok := ref.e.eg[p].cp.(tracker); ok {
					if x, y := a.FlowsTracked(), lane.e.eg[p].cp.(tracker).FlowsTracked(); x != y {
						t.Fatalf("port %d: %d flows tracked after the general loop, %d after drainData", p, x, y)
					}
				}
			}
		})
	}
}

// mixedAck is an ACK from host src to host dst for QP qp, priority 3 by its
// DSCP: a frame of the data queues that no CP hook sees.
func mixedAck(tb testing.TB, src, dst int, qp uint32) []byte {
	tb.Helper()
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: portMAC(src), SrcMAC: hostMAC(src), SrcIP: hostIP(src), DstIP: hostIP(dst),
		SrcPort: uint16(49152 + src), DSCP: 3 << 3}
	n, err := wire.BuildAck(b, &ep, &wire.AckSpec{DestQP: qp, PSN: 1, Syndrome: wire.SyndromeAckNoCred}, &ccalgo.AckFields{})
	if err != nil {
		tb.Fatal(err)
	}
	return b[:n]
}

// txN is tx with an out slice of n items.
func (h *harness) txN(now int64, p, n int) [][]byte {
	out := h.out
	h.out = out[:n]
	defer func() { h.out = out }()
	return h.tx(now, p)
}

// TestTransmitFullOutKeepsOrder: without a propagation delay, the frames a
// Transmit could not fit into out (the shaper let them go: they wait on the
// delay line) leave first at the next call, ahead of frames queued since,
// and then frames go straight out again.
func TestTransmitFullOutKeepsOrder(t *testing.T) {
	c := testSpec(2, 100)
	c.DecrementTTL = false
	h := newHarness(t, c)
	var sent []uint32
	send := func(now int64, n int) {
		for _, f := range h.txN(now, 1, n) {
			sent = append(sent, decode(t, f).BTH.DestQP())
		}
	}
	for qp := uint32(0); qp < 5; qp++ {
		h.inject(0, 0, dataFrame(t, 0, 1, qp, 100, false))
	}
	send(1_000, 2) // 0 1 out, 2 3 4 on the line
	for qp := uint32(5); qp < 8; qp++ {
		h.inject(1_000, 0, dataFrame(t, 0, 1, qp, 100, false))
	}
	send(2_000, 4) // 2 3 4 from the line, then 5
	if h.e.eg[1].dl.Len() != 2 {
		t.Fatalf("%d frames on the line, want 2 (6 and 7)", h.e.eg[1].dl.Len())
	}
	send(3_000, 8)
	if want := []uint32{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(sent, want) {
		t.Fatalf("frames left in order %v, want %v", sent, want)
	}
	if h.e.eg[1].dl.Len() != 0 || h.e.Active() != 0 {
		t.Fatal("frames left behind")
	}
}
