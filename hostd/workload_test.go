package hostd

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// TestParseCDFHPCCFormat: the HPCC simulator's traffic-generator files
// (percentages ending at 100, a first point "0 0") read as they are; before,
// the first point's probability 0 was refused.
func TestParseCDFHPCCFormat(t *testing.T) {
	const hpcc = "0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n2000000 80\n5000000 90\n10000000 97\n30000000 100\n"
	c, err := ParseCDF("WebSearch_distribution.txt", hpcc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Prob[1] != 0.15 || c.Prob[len(c.Prob)-1] != 1 {
		t.Fatalf("probabilities %v", c.Prob)
	}
	if s := c.Sample(0.075); s != 5000 {
		t.Errorf("Sample(0.075) = %d, want 5000 (half way from 0 to 10 KB)", s)
	}
	if s := c.Sample(0); s < 1 {
		t.Errorf("Sample(0) = %d, want >= 1", s)
	}
	for _, bad := range []struct{ text, want string }{
		{"10000 15\n20000 50\n", "a percentage? then the last must be 100"},
		{"10000 0.5\n5000 1\n", "must not decrease"},
		{"10000 0.5\n10000 0.5\n20000 1\n", "must differ"},
		{"0 0.5\n10000 1\n", "size 0"},
	} {
		if _, err := ParseCDF("x.cdf", bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.text, err, bad.want)
		}
	}
}

// TestICRC: with icrc on, every frame a host builds (data, ACK) carries a
// correct RoCEv2 ICRC; off (the default), the trailer is zero.
func TestICRC(t *testing.T) {
	for _, on := range []bool{false, true} {
		a, b := oneFlow("none", 64<<10, 0)
		a.ICRC, b.ICRC = on, on
		v := newVnet(t, a, b)
		frames := 0
		v.onFrame = func(from int, fr *wire.Frame, raw []byte) bool {
			if fr.Kind != wire.KindData && fr.Kind != wire.KindAck {
				return true
			}
			frames++
			ip := raw[wire.EthernetLen:]
			if ok := wire.VerifyICRC(ip); ok != on {
				t.Errorf("icrc %v: a %v frame's ICRC verifies %v", on, fr.Kind, ok)
			}
			return true
		}
		v.run(2_000_000)
		if frames == 0 {
			t.Fatal("no frame seen")
		}
	}
}

// TestArrivalsAreTheRunsFlows: Arrivals on a fresh engine gives the flows a
// run of the same config posts (id, destination, size, start, priority),
// with two workloads drawing from the host's one generator.
func TestArrivalsAreTheRunsFlows(t *testing.T) {
	one := 1
	a := testConfig("h1", ipA, "none")
	a.MaxQPs = 64
	a.Workloads = []Workload{
		{IDBase: 1000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"), Dsts: []uint32{ipB}, Load: 0.2, MaxFlows: 40},
		{IDBase: 5000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"), Dsts: []uint32{ipB}, Load: 0.1, MaxFlows: 30, Priority: &one},
	}
	b := testConfig("h2", ipB, "none")
	fresh, err := NewEngine(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []Arrival
	fresh.Arrivals(1<<62, func(x Arrival) { want = append(want, x) })
	if len(want) != 70 {
		t.Fatalf("%d arrivals, want 40 + 30", len(want))
	}
	v := newVnet(t, a, b)
	got := map[int64]Arrival{}
	v.run(200_000_000)
	for _, f := range v.eng[0].FCTs() {
		got[f.Flow] = Arrival{ID: f.Flow, Dst: f.Dst, Size: f.SizeBytes, StartNs: f.StartNs}
	}
	if len(got) != len(want) {
		t.Fatalf("the run completed %d flows, Arrivals gave %d", len(got), len(want))
	}
	for _, w := range want {
		g := got[w.ID]
		if w.Priority != map[bool]uint8{true: 1, false: 3}[w.ID >= 5000] {
			t.Fatalf("arrival %+v: wrong priority", w)
		}
		w.Priority = 0
		if g != w {
			t.Fatalf("flow %d: the run posted %+v, Arrivals gave %+v", w.ID, g, w)
		}
	}
}
