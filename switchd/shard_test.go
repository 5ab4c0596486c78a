package switchd

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

func TestShardTxErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups [][]int
		want   string
	}{
		{"no shard", nil, "0 tx shards"},
		{"empty shard", [][]int{{0, 1, 2, 3}, {}}, "shard 1 has no port"},
		{"port twice", [][]int{{0, 1}, {1, 2, 3}}, "port 1 out of range or in two shards"},
		{"port out of range", [][]int{{0, 1}, {2, 3, 4}}, "port 4 out of range"},
		{"port missing", [][]int{{0, 1}, {2}}, "port 3 in no tx shard"},
	} {
		c := testSpec(4, 10)
		h := newHarness(t, c)
		err := h.e.ShardTx(tc.groups)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
	c := testSpec(4, 10)
	c.PFC.Enabled = true
	if err := newHarness(t, c).e.ShardTx([][]int{{0, 1, 2, 3}}); err != nil {
		t.Errorf("one shard with PFC: %v", err)
	}
	c = testSpec(MaxPFCShards+1, 10)
	c.PFC.Enabled = true
	var groups [][]int
	for p := range c.Ports {
		groups = append(groups, []int{p})
	}
	if err := newHarness(t, c).e.ShardTx(groups); err == nil || !strings.Contains(err.Error(), "with PFC: at most 8") {
		t.Errorf("%d shards with PFC: error %v, want at most %d", len(groups), err, MaxPFCShards)
	}
}

// TestShardedRoCC runs RoCC's congested port 3 (TestCPHooks' traffic) in its
// own tx shard: its rate messages to the sources, which leave by ports 0-2 of
// the other shard, cross the mailbox and reach every source; each shard's
// samples and buffer are its own.
func TestShardedRoCC(t *testing.T) {
	c := testSpec(4, 10)
	c.CC.Scheme = "rocc"
	setRoCCT(&c, 40_000)
	h := newHarness(t, c)
	pool := h.e.tx[0].buf.pool
	if err := h.e.ShardTx([][]int{{0, 1, 2}, {3}}); err != nil {
		t.Fatal(err)
	}
	if got := h.e.tx[1].buf.pool; got != pool/4 {
		t.Errorf("shard of 1 port of 4: buffer %d, want %d", got, pool/4)
	}
	rates := map[int]int{}
	data := 0
	drive(h, 2_000_000, false, func(now int64, p int, out [][]byte) {
		for _, b := range out {
			switch f := decode(t, b); {
			case f.Kind == wire.KindRoCCRate:
				if f.IP.Dst() != hostIP(p) {
					t.Fatalf("rate message to %x left by port %d", f.IP.Dst(), p)
				}
				rates[p]++
			case p == 3:
				data++
			}
		}
	})
	for s := 0; s < 3; s++ {
		if rates[s] == 0 {
			t.Errorf("source %d got no rate message across the shards", s)
		}
	}
	if data == 0 {
		t.Fatal("no data left port 3")
	}
	if c := counters0(h.e, 3); c.RoCCRateSent == 0 || c.FairRateGbps <= 0 || c.FairRateGbps >= 10 {
		t.Errorf("port 3: fair rate %v Gb/s, %d rate messages", c.FairRateGbps, c.RoCCRateSent)
	}
	for k, r := range h.e.SampleRings() {
		n := r.Drain(func(s *Sample) {
			if (s.Port == 3) != (k == 1) {
				t.Fatalf("shard %d sampled port %d", k, s.Port)
			}
		})
		if n == 0 {
			t.Errorf("shard %d wrote no samples", k)
		}
	}
}

// TestShardedPFC: with the egress ports dealt over two tx shards ({0, 1},
// {2, 3}), frames of ingress port 0 queued on port 3 (shard 1) pause port 0
// (shard 0's) once shard 1's count crosses XOFF, at shard 0's next service,
// and resume it once that count falls below XON; with both shards' counts
// over XOFF (shard 0's own count pausing port 0 at the frame), one pause, and
// no XON until both have drained. Static and shared buffers.
func TestShardedPFC(t *testing.T) {
	for _, mode := range []string{BufferStatic, BufferShared} {
		t.Run(mode, func(t *testing.T) {
			c := testSpec(4, 10)
			c.PFC.Enabled = true
			c.PFC.XOFFBytes = 20_000
			c.Buffer.Mode = mode
			c.Buffer.Alpha = 1.0 / 64 // shared: a threshold of ~90 KB in each shard's slice
			c.DecrementTTL = false
			over := 40 // frames of ~1 KB past a shard's XOFF threshold
			if mode == BufferShared {
				over = 150
			}
			h := newHarness(t, c)
			if err := h.e.ShardTx([][]int{{0, 1}, {2, 3}}); err != nil {
				t.Fatal(err)
			}
			isPFC := func(f []byte, quanta bool) bool {
				d := decode(t, f)
				return d.Kind == wire.KindPFC && d.PFC.Enabled(3) && (d.PFC.PauseQuanta(3) != 0) == quanta
			}
			pauses := func(now int64) (xoff, xon int) {
				for _, f := range h.tx(now, 0) {
					switch {
					case isPFC(f, true):
						xoff++
					case isPFC(f, false):
						xon++
					default:
						t.Fatalf("port 0 sent a frame that is not PFC")
					}
				}
				return
			}
			// Frames of ~1 KB to port 3 past XOFF, 10 to port 1, none sent
			// yet.
			for i := 0; i < over; i++ {
				h.inject(0, 0, dataFrame(t, 0, 3, 1, 1000, false))
			}
			for i := 0; i < 10; i++ {
				h.inject(0, 0, dataFrame(t, 0, 1, 1, 1000, false))
			}
			if w := h.e.pfcWant[0].Load(); w&(1<<(8+3)) == 0 || w&(1<<3) != 0 {
				t.Fatalf("pfcWant[0] %#x: want shard 1's priority 3 only", w)
			}
			if xoff, xon := pauses(0); xoff != 1 || xon != 0 {
				t.Fatalf("port 0 sent %d XOFF, %d XON at its shard's service, want 1 XOFF", xoff, xon)
			}
			// Port 3 drains (10 Gb/s: ~0.85 us a frame) while port 1 holds
			// its 10 frames: shard 1's want goes, shard 0's count (10 KB)
			// stays under XOFF: XON once shard 1 is below XON.
			var xonAt int64 = -1
			for now := int64(1000); now < 1_000_000 && xonAt < 0; now += 500 {
				h.tx(now, 3)
				xoff, xon := pauses(now)
				if xoff > 0 && now < h.e.eg[0].refreshNs {
					t.Fatalf("a second XOFF at %d ns, before the refresh", now)
				}
				if xon > 0 {
					xonAt = now
				}
			}
			if xonAt < 0 {
				t.Fatal("no XON after port 3 drained")
			}
			if q := h.e.tx[1].acct[0][3].in; q >= c.PFC.XOFFBytes-c.PFC.XONOffsetBytes && mode == BufferStatic {
				t.Fatalf("XON with shard 1 holding %d B of port 0", q)
			}
			// Both shards past XOFF: one pause; port 3 drained, shard 0
			// still wants it: no XON; port 1 drained: XON.
			for i := 0; i < over; i++ {
				h.inject(xonAt, 0, dataFrame(t, 0, 1, 1, 1000, false))
				h.inject(xonAt, 0, dataFrame(t, 0, 3, 1, 1000, false))
			}
			// Shard 0 owns port 0: its own want took effect at the frame.
			if h.e.eg[0].xoff&(1<<3) == 0 {
				t.Fatal("shard 0's count crossed XOFF, port 0 not yet in XOFF")
			}
			if xoff, _ := pauses(xonAt); xoff != 1 {
				t.Fatalf("%d XOFF with both shards over the threshold, want 1", xoff)
			}
			now := xonAt
			for ; h.e.QueueBytes(3) > 0; now += 500 {
				h.tx(now, 3)
				if _, xon := pauses(now); xon > 0 {
					t.Fatalf("XON at %d ns while shard 0 still holds %d B of port 0", now, h.e.QueueBytes(1))
				}
			}
			got := false
			for ; now < xonAt+10_000_000 && !got; now += 500 {
				h.tx(now, 1)
				_, xon := pauses(now)
				got = xon > 0
			}
			if !got {
				t.Fatal("no XON after port 1 drained")
			}
			pc := counters0(h.e, 0)
			if pc.PausesSent != 2 || pc.ResumesSent != 2 || pc.PFCOnsets != 2 {
				t.Errorf("port 0: %d pauses, %d resumes, %d onsets sent, want 2, 2, 2", pc.PausesSent, pc.ResumesSent, pc.PFCOnsets)
			}
			if h.e.pfcWant[0].Load() != 0 || h.e.eg[0].xoff != 0 {
				t.Error("port 0 still wanted in XOFF with every queue empty")
			}
		})
	}
}
