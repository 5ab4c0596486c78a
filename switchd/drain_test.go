package switchd

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDrainDataMatchesGeneralLoop: Transmit's drainData lane gives, frame for
// frame, what its general loop (dequeueData per frame) gives: the same frames
// in the same order with the same bytes (ECN marks, INT records), the same
// counters, samples and CP state, under every kind of CP hook (none, marking
// at dequeue, INT stamping, RoCC's flow table and rate messages, P4QCN's
// feedback at enqueue), shared and static buffers, PFC, a propagation delay,
// and out slices of every size.
func TestDrainDataMatchesGeneralLoop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scheme string
		mod    func(c *Config)
	}{
		{"none", "none", nil},
		{"dcqcn", "dcqcn", nil},
		{"hpcc", "hpcc", nil},
		{"rocc", "rocc", nil},
		{"p4qcn", "p4qcn", nil},
		{"static-buffer", "dcqcn", func(c *Config) { c.Buffer.Mode = BufferStatic }},
		{"pfc", "none", func(c *Config) { c.PFC.Enabled = true; c.PFC.XOFFBytes = 20_000 }},
		{"delay", "hpcc", func(c *Config) {
			for i := range c.Ports {
				c.Ports[i].DelayUs = 1
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(4, 10)
			c.CC.Scheme = tc.scheme
			c.Switch.DecrementTTL = false
			c.Telemetry.SampleUs = 5
			if tc.mod != nil {
				tc.mod(&c)
			}
			ref, lane := newHarness(t, c), newHarness(t, c)
			ref.e.noDrain = true
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
					f := dataFrame(t, src, dst, uint32(rng.IntN(8)), 64+rng.IntN(1000), tc.scheme == "hpcc")
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
			if a, b := ref.e.Snapshot(), lane.e.Snapshot(); !reflect.DeepEqual(a, b) {
				t.Fatalf("counters differ:\n general %+v\n drain   %+v", a, b)
			}
			var sa, sb []Sample
			ref.e.Samples().Drain(func(s *Sample) { sa = append(sa, *s) })
			lane.e.Samples().Drain(func(s *Sample) { sb = append(sb, *s) })
			if len(sa) == 0 || !reflect.DeepEqual(sa, sb) {
				t.Fatal("samples differ")
			}
		})
	}
}

// txN is tx with an out slice of n items.
func (h *harness) txN(now int64, p, n int) [][]byte {
	out := h.out
	h.out = out[:n]
	defer func() { h.out = out }()
	return h.tx(now, p)
}
