package switchd

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// prioFrame is dataFrame with the IPv4 DSCP of priority prio (class selector
// prio << 3), for switches with priority_from = "dscp".
func prioFrame(tb testing.TB, src, dst int, qp uint32, payload int, prio uint8) []byte {
	tb.Helper()
	b := make([]byte, 2048)
	ep := wire.Endpoints{DstMAC: portMAC(src), SrcMAC: hostMAC(src), SrcIP: hostIP(src), DstIP: hostIP(dst),
		SrcPort: uint16(49152 + src), IPID: 1, DSCP: prio << 3}
	n, err := wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpWriteOnly, DestQP: qp, PSN: 1, PayloadLen: payload})
	if err != nil {
		tb.Fatal(err)
	}
	return b[:n]
}

// TestPausedPriorityBlocksOnlyItself: a pause of priority 3 holds priority 3's
// queue and no other. With one FIFO per port (the old engine) the paused
// frame at the head held the priority-1 frames behind it too.
func TestPausedPriorityBlocksOnlyItself(t *testing.T) {
	c := testSpec(3, 10)
	c.PriorityFromDSCP = true
	h := newHarness(t, c)
	for i := 0; i < 4; i++ {
		h.inject(0, 0, prioFrame(t, 0, 2, 1, 1000, 3))
	}
	for i := 0; i < 4; i++ {
		h.inject(0, 1, prioFrame(t, 1, 2, 2, 1000, 1))
	}
	h.inject(0, 2, pfcFrame(2, 3, 0xffff))
	var sent [][]byte
	for now := int64(0); now < 100_000; now += 1000 {
		sent = append(sent, h.tx(now, 2)...)
	}
	if len(sent) != 4 {
		t.Fatalf("%d frames sent while priority 3 is paused, want the 4 of priority 1", len(sent))
	}
	for _, f := range sent {
		if p := decode(t, f).IP.DSCP() >> 3; p != 1 {
			t.Fatalf("a frame of priority %d left while paused", p)
		}
	}
	if q := h.e.QueueBytes(2); q == 0 {
		t.Fatal("priority 3's frames left despite the pause")
	}
	h.inject(100_000, 2, pfcFrame(2, 3, 0))
	if out := h.tx(200_000, 2); len(out) != 4 {
		t.Fatalf("%d frames after XON, want priority 3's 4", len(out))
	}
}

// TestScheduling: strict priorities go first; the others share the link by
// their DWRR weights, in bytes.
func TestScheduling(t *testing.T) {
	c := testSpec(3, 10)
	c.PriorityFromDSCP = true
	c.Queues.Strict = []uint8{6}
	c.Queues.Weights = []int{1, 1, 3, 1, 1, 1, 1, 1}
	h := newHarness(t, c)
	const n = 200
	for i := 0; i < n; i++ {
		h.inject(0, 0, prioFrame(t, 0, 2, 1, 1000, 1))
		h.inject(0, 1, prioFrame(t, 1, 2, 2, 1000, 2))
	}
	for i := 0; i < 10; i++ {
		h.inject(0, 0, prioFrame(t, 0, 2, 3, 1000, 6))
	}
	var order []uint8
	for now := int64(0); len(order) < 2*n+10 && now < 1e9; now += 5000 {
		for _, f := range h.tx(now, 2) {
			order = append(order, decode(t, f).IP.DSCP()>>3)
		}
	}
	for i := 0; i < 10; i++ {
		if order[i] != 6 {
			t.Fatalf("frame %d has priority %d: the strict priority 6 should go first (%v)", i, order[i], order[:12])
		}
	}
	var got [8]int
	for _, p := range order[10:210] { // both weighted queues still backlogged
		got[p]++
	}
	if r := float64(got[2]) / float64(got[1]); r < 2.9 || r > 3.1 {
		t.Errorf("priority 2 : priority 1 = %d : %d = %.2f, want 3 (their weights)", got[2], got[1], r)
	}
}

// sharedConfig is a 3-port switch with a small shared buffer and PFC on
// priority 3, port 2 paused by its peer so that port 0's frames stay inside.
func sharedConfig() Spec {
	c := testSpec(3, 10)
	c.PFC.Enabled = true
	c.Buffer.SizeBytes = 1 << 20
	c.Ports[2].BufferBytes = 0
	for i := range c.Ports {
		c.Ports[i].BufferBytes = 0
	}
	return c
}

// TestSharedBufferPFC: a lossless ingress pauses upstream when its shared
// bytes reach alpha x the free buffer, then fills its headroom, then drops
// (counted); it resumes once its headroom is empty and its shared bytes are
// resume_offset under the threshold.
func TestSharedBufferPFC(t *testing.T) {
	c := sharedConfig()
	h := newHarness(t, c)
	b := &c.Buffer
	hdrm, rsrv := c.reserved()
	pool := b.SizeBytes - hdrm - rsrv
	h.inject(0, 2, pfcFrame(2, 3, 0xffff))
	size := int64(len(dataFrame(t, 0, 2, 1, 1000, false)))
	// One ingress alone: S = its bytes beyond the reserve, and XOFF when
	// S >= alpha (pool - S), that is S >= alpha pool / (1 + alpha).
	xoffAt := b.Alpha * float64(pool) / (1 + b.Alpha)
	headroom := c.Headroom(0)
	var xoff int64 = -1
	kept, dropped := int64(0), 0
	for i := int64(1); i < 2000; i++ {
		if !h.inject(0, 0, dataFrame(t, 0, 2, 1, 1000, false)) {
			dropped++
			continue
		}
		kept++
		if out := h.tx(0, 0); len(out) > 0 && xoff < 0 {
			xoff = kept * size
			if f := decode(t, out[0]); f.Kind != wire.KindPFC || f.PFC.PauseQuanta(3) == 0 {
				t.Fatal("the frame out of the ingress port is not an XOFF")
			}
		}
	}
	if xoff < 0 {
		t.Fatal("no XOFF")
	}
	if s := float64(xoff - b.ReserveBytes); s < xoffAt || s >= xoffAt+float64(size) {
		t.Errorf("XOFF with %d B shared, want the first frame at or above alpha pool / (1 + alpha) = %.0f B", xoff-b.ReserveBytes, xoffAt)
	}
	// From XOFF on every frame goes into the headroom, until it is full.
	if inHdrm := h.e.eg[0].acct[3].hdrm; inHdrm > headroom || inHdrm <= headroom-size {
		t.Errorf("%d B in the headroom, want it full: %d B", inHdrm, headroom)
	}
	pc := counters0(h.e, 0)
	if pc.DropHeadroom != uint64(dropped) || dropped == 0 {
		t.Errorf("headroom drops counted %d, dropped %d (want > 0: the test overfills it)", pc.DropHeadroom, dropped)
	}
	// Resume port 2 and drain: XON once the headroom is empty and the shared
	// bytes are resume_offset under the threshold.
	h.inject(1000, 2, pfcFrame(2, 3, 0))
	var xon bool
	// 100 ns steps: at most one frame leaves per step, so the XON is checked
	// after every frame.
	for now := int64(1000); now < 100_000_000 && !xon; now += 100 {
		h.tx(now, 2)
		if out := h.tx(now, 0); len(out) > 0 {
			g := &h.e.eg[0]
			sh := h.e.tx[0].buf.sharedOf(&g.acct, 3)
			thr := h.e.tx[0].buf.threshold()
			if g.acct[3].hdrm != 0 || (sh != 0 && sh+b.ResumeOffsetBytes > thr) {
				t.Fatalf("XON with %d B in headroom, %d B shared, threshold %d B", g.acct[3].hdrm, sh, thr)
			}
			// One frame earlier the shared bytes were a frame higher and
			// the threshold alpha x a frame lower.
			if float64(sh+b.ResumeOffsetBytes+size)+b.Alpha*float64(size) <= float64(thr) {
				t.Fatalf("XON late: %d B shared, threshold %d B", sh, thr)
			}
			xon = true
		}
	}
	if !xon {
		t.Fatal("no XON")
	}
	for now := int64(100_000_000); h.e.QueueBytes(2) > 0; now += 1_000_000 {
		h.tx(now, 2)
	}
	if u := h.e.tx[0].buf.used; u != 0 {
		t.Errorf("%d B of the shared pool still in use with every queue empty", u)
	}
	if g := &h.e.eg[0]; g.acct[3].in != 0 || g.acct[3].hdrm != 0 {
		t.Errorf("ingress still holds %d B (+%d B headroom) with every queue empty", g.acct[3].in, g.acct[3].hdrm)
	}
}

// TestLossyDynamicThreshold: without PFC an egress queue grows to alpha x the
// free buffer, alpha B / (1 + alpha) alone, and then drops at the tail.
func TestLossyDynamicThreshold(t *testing.T) {
	c := sharedConfig()
	c.PFC.Enabled = false
	h := newHarness(t, c)
	h.inject(0, 2, pfcFrame(2, 3, 0xffff)) // honoured even with PFC generation off
	size := int64(len(dataFrame(t, 0, 2, 1, 1000, false)))
	for i := 0; i < 2000; i++ {
		h.inject(0, 0, dataFrame(t, 0, 2, 1, 1000, false))
	}
	want := c.Buffer.Alpha * float64(c.Buffer.SizeBytes) / (1 + c.Buffer.Alpha)
	if q := float64(h.e.QueueBytes(2)); q > want || q < want-float64(size) {
		t.Errorf("queue %.0f B, want the last frame under alpha B / (1 + alpha) = %.0f B", q, want)
	}
	if pc := counters0(h.e, 2); pc.DropBuffer == 0 || pc.DropHeadroom != 0 {
		t.Errorf("drops: buffer %d, headroom %d; want tail drops only", pc.DropBuffer, pc.DropHeadroom)
	}
}

func TestBufferConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		mod       func(c *Spec)
	}{
		{"mode", "buffer.mode", func(c *Spec) { c.Buffer.Mode = "dynamic" }},
		{"alpha", "buffer.alpha", func(c *Spec) { c.Buffer.Alpha = 0 }},
		{"size", "buffer.size_bytes", func(c *Spec) { c.Buffer.SizeBytes = 100 }},
		{"headroom eats the buffer", "buffer.size_bytes", func(c *Spec) {
			c.PFC.Enabled = true
			c.Buffer.HeadroomBytes = 400_000
		}},
		{"lossless twice", "pfc.priorities", func(c *Spec) { c.PFC.Priorities = []uint8{3, 3} }},
		{"lossless 8", "pfc.priorities", func(c *Spec) { c.PFC.Priorities = []uint8{8} }},
		{"strict 9", "queues.strict", func(c *Spec) { c.Queues.Strict = []uint8{9} }},
		{"weights count", "queues.weights", func(c *Spec) { c.Queues.Weights = []int{1, 2} }},
		{"weight 0", "queues.weights", func(c *Spec) { c.Queues.Weights = []int{1, 0, 1, 1, 1, 1, 1, 1} }},
		{"quantum", "queues.quantum_bytes", func(c *Spec) { c.Queues.QuantumBytes = 1 }},
		{"headroom", "ports[1].headroom_bytes", func(c *Spec) { c.Ports[1].HeadroomBytes = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sharedConfig()
			tc.mod(&c)
			err := c.Check()
			if err == nil || !strings.HasPrefix(err.Error(), "switchd: "+tc.key+":") {
				t.Fatalf("error %v, want one about %s", err, tc.key)
			}
		})
	}
}

func TestHeadroomBytes(t *testing.T) {
	// 100 Gb/s, 1 us of cable: 12.5 KB in flight each way, 3 frames of 1100 B.
	if h := HeadroomBytes(100e9, 1000, 1100, 0); h != 2*12500+3*1100 {
		t.Errorf("headroom %d B", h)
	}
	c := sharedConfig()
	c.Ports[1].HeadroomBytes = 7777
	if h := c.Headroom(1); h != 7777 {
		t.Errorf("port's own headroom ignored: %d", h)
	}
	c.Buffer.HeadroomBytes = 5555
	if h := c.Headroom(0); h != 5555 {
		t.Errorf("buffer.headroom_bytes ignored: %d", h)
	}
}

// TestThresholdDyadic: the integer threshold of a dyadic alpha equals the
// float product's floor for every free size, and a non-dyadic alpha keeps the
// float product.
func TestThresholdDyadic(t *testing.T) {
	for _, alpha := range []float64{0.125, 0.5, 1, 2, 1.0 / 16, 0.375, 8, 0.3, 1.0 / 3} {
		b := sharedBuffer{on: true}
		b.setAlpha(alpha)
		if dy := alpha*1024 == float64(int64(alpha*1024)); dy != (b.alphaShift >= 0) {
			t.Errorf("alpha %v: dyadic form %d / 2^%d", alpha, b.alphaNum, b.alphaShift)
		}
		for _, free := range []int64{0, 1, 7, 8, 4095, 12 << 20, 12<<20 + 3, 1<<40 - 1, 1 << 41} {
			b.pool, b.used = free, 0
			if got, want := b.threshold(), int64(alpha*float64(free)); got != want {
				t.Errorf("alpha %v free %d: threshold %d, float %d", alpha, free, got, want)
			}
		}
		b.pool, b.used = 100, 200 // over-used: no free room
		if th := b.threshold(); th != 0 {
			t.Errorf("alpha %v: threshold %d with the pool over-used", alpha, th)
		}
	}
}

// TestLeastFreeAbove0: minFree is the least free pool whose dynamic threshold
// is above 0 (ingressAdd's fast path relies on it), for dyadic alphas and
// others.
func TestLeastFreeAbove0(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		want  int64
	}{
		{1.0 / 8, 8}, {0.5, 2}, {1, 1}, {2, 1}, {16, 1}, {1.0 / 3, 3}, {0.3, 4}, {1.0 / 1024, 1024}, {1e-7, 10_000_000},
	} {
		var s sharedBuffer
		s.setAlpha(tc.alpha)
		m := s.leastFreeAbove0()
		if m != tc.want || s.thresholdOf(m) <= 0 || s.thresholdOf(m-1) > 0 {
			t.Errorf("alpha %g: least free %d (threshold %d, one less %d), want %d", tc.alpha, m, s.thresholdOf(m), s.thresholdOf(m-1), tc.want)
		}
	}
	var s sharedBuffer // alpha 0: the threshold is never above 0
	if m := s.leastFreeAbove0(); m != math.MaxInt64 {
		t.Errorf("alpha 0: least free %d, want MaxInt64", m)
	}
}

// TestAdmitAddMatchesSteps: admitAdd, the one-shard shared buffer's fused
// admission and count, admits exactly what admitLossless admits, leaves the
// counts add leaves, and calls for XOFF exactly when shouldPause does, over
// random counts, frame sizes and alphas (dyadic and not), near the reserve,
// the headroom and the threshold.
func TestAdmitAddMatchesSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 200_000; i++ {
		var b sharedBuffer
		b.on = true
		b.setAlpha([]float64{0.125, 0.5, 1, 2, 1.0 / 3, 0}[rng.IntN(6)])
		b.pool = 1 + rng.Int64N(1<<20)
		b.used = rng.Int64N(b.pool + 4096)
		b.reserve = rng.Int64N(8192)
		b.minFree = b.leastFreeAbove0()
		var g ingressAcct
		g.setHeadroom(rng.Int64N(64 << 10))
		p := uint8(rng.IntN(8))
		g[p].in = rng.Int64N(b.reserve + 1<<16)
		if rng.IntN(3) == 0 {
			g[p].hdrm = rng.Int64N(g[p].headroom + 1)
		}
		l := 64 + rng.Int64N(9000)
		b2, g2 := b, g
		ok, pause := b.admitAdd(&g, p, l)
		want := b2.admitLossless(&g2, p, l)
		wantPause := false
		if want {
			b2.add(&g2, p, l)
			wantPause = b2.shouldPause(&g2, p)
		}
		if ok != want || pause != wantPause || g != g2 || b != b2 {
			t.Fatalf("case %d (l %d, prio %d): admitAdd %v/%v %+v used %d, steps %v/%v %+v used %d",
				i, l, p, ok, pause, g, b.used, want, wantPause, g2, b2.used)
		}
	}
}
