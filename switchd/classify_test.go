package switchd

import (
	"encoding/binary"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// classifyPair is two engines built from one spec: Classify (with its fast
// path) runs on a, classify (the general path alone) on b, each on its own
// copy of a frame.
type classifyPair struct {
	a, b *Engine
}

func newClassifyPair(tb testing.TB, c Spec) classifyPair {
	tb.Helper()
	a, err := New(&c)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := New(&c)
	if err != nil {
		tb.Fatal(err)
	}
	return classifyPair{a, b}
}

// check fails unless both paths give the same answer, Meta, frame bytes,
// ingress counters and checked source for frame received on port in.
func (p classifyPair) check(t *testing.T, name string, in int, frame []byte) {
	t.Helper()
	fa, fb := append([]byte(nil), frame...), append([]byte(nil), frame...)
	var ma, mb Meta
	oka, okb := p.a.Classify(in, fa, &ma), p.b.classify(in, fb, &mb)
	ia, ib := &p.a.ing[in], &p.b.ing[in]
	if oka != okb || ma != mb || string(fa) != string(fb) || ia.c != ib.c || ia.lastSrc != ib.lastSrc || ia.lastOK != ib.lastOK {
		t.Fatalf("%s (port %d): Classify %v %+v, classify %v %+v; frames equal %v, counters equal %v (frame % x)",
			name, in, oka, ma, okb, mb, string(fa) == string(fb), ia.c == ib.c, frame)
	}
}

// TestClassifyFastPathMatches runs frames through Classify's fast path and
// the general path on engines of several specs (trust, TTL, DSCP
// priorities, ECMP, a missing route): built data frames (with and without
// INT, from each host to each, a source the port does not lead to, TTL 1),
// every truncation, and every header byte changed with and without a
// repaired IPv4 checksum.
func TestClassifyFastPathMatches(t *testing.T) {
	specs := map[string]func(c *Spec){
		"trust all":      func(c *Spec) {},
		"trust topology": func(c *Spec) { topology(c) },
		"no ttl, dscp": func(c *Spec) {
			topology(c)
			c.DecrementTTL, c.PriorityFromDSCP = false, true
		},
		"ecmp": func(c *Spec) {
			// Host 3's block over ports 2 and 3, host 1's route gone.
			c.Routes = c.Routes[:1:1]
			c.Routes = append(c.Routes, Route{Addr: 0x0a000200, Len: 24, Ports: []int{2}}, Route{Addr: 0x0a000300, Len: 24, Ports: []int{2, 3}})
		},
	}
	for name, set := range specs {
		t.Run(name, func(t *testing.T) {
			c := testSpec(4, 10)
			set(&c)
			p := newClassifyPair(t, c)
			var frames [][]byte
			for src := 0; src < 4; src++ {
				for dst := 0; dst < 4; dst++ {
					frames = append(frames, dataFrame(t, src, dst, 7, 64, false), dataFrame(t, src, dst, 7, 200, true))
				}
			}
			ttl1 := dataFrame(t, 0, 1, 7, 64, false)
			ip := wire.IPv4(ttl1[wire.EthernetLen:])
			ip[8] = 1
			ip.SetChecksum(ip.ComputeChecksum())
			frames = append(frames, ttl1)
			for k, f := range frames {
				// Each frame on its host's port and on the next one (a
				// source the port does not lead to).
				src := int(binary.BigEndian.Uint32(f[wire.EthernetLen+12:])>>8) & 3
				for _, in := range []int{src, (src + 1) & 3} {
					p.check(t, "built", in, f)
					if k%5 != 0 {
						continue
					}
					for n := 0; n < len(f); n++ {
						p.check(t, "truncated", in, f[:n])
					}
					b := make([]byte, len(f))
					for i := 0; i < min(len(f), 120); i++ {
						for _, x := range []byte{0x01, 0x40, 0xff} {
							copy(b, f)
							b[i] ^= x
							p.check(t, "flipped", in, b)
							fixIPv4Header(b)
							p.check(t, "flipped+fixed", in, b)
						}
					}
				}
			}
		})
	}
}

// topology makes every port of c face a host under trust "topology".
func topology(c *Spec) {
	c.Trust = TrustTopology
	for i := range c.Ports {
		c.Ports[i].Faces = FacesHost
	}
}

// fixIPv4Header recomputes an untagged frame's IPv4 header checksum where
// the header is whole, so that changes reach the layers behind it.
func fixIPv4Header(b []byte) {
	if len(b) < wire.EthernetLen+wire.IPv4MinLen {
		return
	}
	ip := wire.IPv4(b[wire.EthernetLen:])
	if hl := ip.HeaderLen(); hl >= wire.IPv4MinLen && hl <= len(ip) {
		ip.SetChecksum(ip.ComputeChecksum())
	}
}

// FuzzClassifyFastPath checks Classify's fast path against the general path
// on any frame, on a host-facing port of a switch with an ECMP route.
func FuzzClassifyFastPath(f *testing.F) {
	f.Add(dataFrame(f, 0, 1, 1, 64, false))
	f.Add(dataFrame(f, 0, 3, 2, 100, true))
	f.Add(dataFrame(f, 1, 0, 2, 100, true))
	c := testSpec(4, 10)
	topology(&c)
	c.Routes[3].Ports = []int{2, 3}
	p := newClassifyPair(f, c)
	f.Fuzz(func(t *testing.T, in []byte) {
		p.check(t, "fuzz", 0, in)
		fixIPv4Header(in)
		p.check(t, "fuzz+fixed", 0, in)
	})
}
