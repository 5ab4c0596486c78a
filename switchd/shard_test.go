package switchd

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

func TestShardTxErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pfc    bool
		groups [][]int
		want   string
	}{
		{"no shard", false, nil, "0 tx shards"},
		{"empty shard", false, [][]int{{0, 1, 2, 3}, {}}, "shard 1 has no port"},
		{"port twice", false, [][]int{{0, 1}, {1, 2, 3}}, "port 1 out of range or in two shards"},
		{"port out of range", false, [][]int{{0, 1}, {2, 3, 4}}, "port 4 out of range"},
		{"port missing", false, [][]int{{0, 1}, {2}}, "port 3 in no tx shard"},
		{"pfc", true, [][]int{{0, 1}, {2, 3}}, "PFC needs one tx+CC lcore"},
	} {
		c := testConfig(4, 10)
		c.PFC.Enabled = tc.pfc
		h := newHarness(t, c)
		err := h.e.ShardTx(tc.groups)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
	c := testConfig(4, 10)
	c.PFC.Enabled = true
	if err := newHarness(t, c).e.ShardTx([][]int{{0, 1, 2, 3}}); err != nil {
		t.Errorf("one shard with PFC: %v", err)
	}
}

// TestShardedRoCC runs RoCC's congested port 3 (TestCPHooks' traffic) in its
// own tx shard: its rate messages to the sources, which leave by ports 0-2 of
// the other shard, cross the mailbox and reach every source; each shard's
// samples and buffer are its own.
func TestShardedRoCC(t *testing.T) {
	c := testConfig(4, 10)
	c.CC.Scheme = "rocc"
	c.CC.Params = map[string]map[string]any{"rocc": {"t_ns": int64(40_000)}}
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
