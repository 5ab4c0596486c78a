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

// TestQPSrcPort: FlowLabel and FlowLabelSrcPort compute what Linux's
// rdma_calc_flow_label and rdma_flow_label_to_udp_sport do (values worked
// out separately from the kernel's formulas); QPSrcPort is the same from
// either end and spreads the flows of a fabric whose hosts all number
// their QPs alike over the RoCEv2 range.
func TestQPSrcPort(t *testing.T) {
	for _, tc := range []struct {
		l, r, fl uint32
		port     uint16
	}{
		{0x11, 0x22, 0x242, 0xc242},
		{0x123456, 0xabcdef, 0xac3e3, 0xc3c8},
		{0xffffff, 0xffffff, 0xfff1e, 0xff21},
		{0, 5, 0, 0xc000},
	} {
		if fl := FlowLabel(tc.l, tc.r); fl != tc.fl || FlowLabel(tc.r, tc.l) != fl {
			t.Errorf("FlowLabel(%#x, %#x) = %#x, want %#x (either order)", tc.l, tc.r, fl, tc.fl)
		}
		if p := FlowLabelSrcPort(tc.fl); p != tc.port {
			t.Errorf("FlowLabelSrcPort(%#x) = %#x, want %#x", tc.fl, p, tc.port)
		}
	}
	// 32 hosts, each with a flow to every other on QP 0x400 (every host's
	// first QP): the ports are in range and all but a few distinct.
	ports := map[uint16]int{}
	for s := uint32(0); s < 32; s++ {
		for d := uint32(0); d < 32; d++ {
			if s == d {
				continue
			}
			src, dst := 0x0a000001+s, 0x0a000001+d
			p := QPSrcPort(src, dst, 0x400)
			if p < 0xc000 {
				t.Fatalf("port %#x below the RoCEv2 range", p)
			}
			if QPSrcPort(dst, src, 0x400) != p {
				t.Fatalf("%#x -> %#x: not the same port both ways", src, dst)
			}
			ports[p]++
		}
	}
	// 992 ordered pairs, 496 unordered (each port twice): a uniform draw
	// of 496 from 16384 ports repeats about 7 times.
	if len(ports) < 470 {
		t.Errorf("%d distinct source ports for 496 host pairs", len(ports))
	}
}

// TestWorkloadNeverToSelf: a host whose workload lists its own address
// among the destinations draws only the others, every one of them; a
// workload whose only destination is the host itself is an error.
func TestWorkloadNeverToSelf(t *testing.T) {
	const ipC = ipB + 1
	a := testConfig("h1", ipA, "none")
	a.Workloads = []Workload{{IDBase: 1000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"),
		Dsts: []uint32{ipA, ipB, ipC}, Load: 0.3, MaxFlows: 300}}
	e, err := NewEngine(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]int{}
	e.Arrivals(1<<62, func(x Arrival) { seen[x.Dst]++ })
	if seen[ipA] != 0 || len(seen) != 2 {
		t.Fatalf("destinations drawn %v: want both others, never %s", seen, wire.FormatIPv4(ipA))
	}
	a.Workloads[0].Dsts = []uint32{ipA}
	_, err = NewEngine(a, 0)
	if err == nil || !strings.Contains(err.Error(), "draws no flow to itself") {
		t.Fatalf("a workload to the host itself only: %v", err)
	}
}
