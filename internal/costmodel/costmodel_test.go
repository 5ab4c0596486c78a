package costmodel

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(b), 1e-12) }

func TestLinePPS(t *testing.T) {
	for _, c := range []struct {
		gbps  float64
		frame int
		want  float64
	}{
		{100, 1500, 100e9 / (1520 * 8)}, // 8.22 Mpps
		{100, 64, 148.8095e6},           // the classic 64 B figure
		{25, 1024, 25e9 / (1044 * 8)},
		{40, 1500, 40e9 / (1520 * 8)},
	} {
		if got := LinePPS(c.gbps, c.frame); !near(got, c.want, 1e-6) {
			t.Errorf("LinePPS(%v, %d) = %v, want %v", c.gbps, c.frame, got, c.want)
		}
	}
}

func TestPortsOn(t *testing.T) {
	for _, c := range []struct {
		ports, lcores int
		want          []int
	}{
		{4, 1, []int{4}},
		{4, 3, []int{2, 1, 1}},
		{8, 6, []int{2, 2, 1, 1, 1, 1}},
		{8, 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{5, 2, []int{3, 2}},
	} {
		sum := 0
		for k, w := range c.want {
			if got := PortsOn(c.ports, c.lcores, k); got != w {
				t.Errorf("PortsOn(%d, %d, %d) = %d, want %d", c.ports, c.lcores, k, got, w)
			}
			sum += w
		}
		if sum != c.ports {
			t.Fatalf("table: %v deals %d ports, not %d", c.want, sum, c.ports)
		}
	}
}

// simple is a model whose figures are easy to follow by hand: 10 ns a
// packet on an rx lcore, 20 on a tx+CC lcore, nothing per poll.
func simple() Model {
	return Model{Rx: Side{PerPacket: 10}, Tx: Side{PerPacket: 20}, Burst: 32, BaseLcores: 2}
}

func TestSaturated(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     func(*Model)
		ports int
		l     Lcores
		want  float64 // Mpps
	}{
		// A tx lcore of 4 ports polls 4 x 32 frames in 2560 ns: 50 Mpps.
		{"1+1", nil, 4, Lcores{1, 1}, 50},
		{"2+2", nil, 4, Lcores{2, 2}, 100},
		// rx is not the bottleneck until it has 2x the tx side's ports.
		{"1+4", nil, 4, Lcores{1, 4}, 100},
		{"4+4", nil, 4, Lcores{4, 4}, 200},
		// 3 tx lcores: ports 0 and 3 on the first (2 ports: 25 Mpps
		// each), ports 1 and 2 alone (50 each).
		{"4+3", nil, 4, Lcores{4, 3}, 150},
		// 640 ns a poll on the tx side: 3200 ns for 128 frames.
		{"per poll", func(m *Model) { m.Tx.PerPoll = 640 }, 4, Lcores{1, 1}, 40},
		// Each of 2 rings costs 320 ns a poll: 1 port, 32 frames in
		// 640 + 640 ns: 25 Mpps per port.
		{"per ring", func(m *Model) { m.PerRing = 320 }, 4, Lcores{2, 4}, 100},
		// 6 lcores, 4 beyond the base: 1 + 0.25 * 4 = 2x every cost.
		{"contention", func(m *Model) { m.Contention = 0.25 }, 4, Lcores{2, 4}, 100},
		{"scale", func(m *Model) { m.Scale = 2 }, 4, Lcores{1, 1}, 25},
	} {
		m := simple()
		if c.m != nil {
			c.m(&m)
		}
		got, err := m.Saturated(c.ports, c.l)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !near(got, c.want, 1e-9) {
			t.Errorf("%s: Saturated(%d, %v) = %v Mpps, want %v", c.name, c.ports, c.l, got, c.want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		m    func(*Model)
		l    Lcores
		want string
	}{
		{"negative", func(m *Model) { m.Rx.PerPoll = -1 }, Lcores{1, 1}, "rx per poll"},
		{"NaN", func(m *Model) { m.Tx.PerPacket = math.NaN() }, Lcores{1, 1}, "tx per packet"},
		{"no cost", func(m *Model) { m.Rx.PerPacket = 0 }, Lcores{1, 1}, "no cost per packet"},
		{"burst", func(m *Model) { m.Burst = 0 }, Lcores{1, 1}, "burst"},
		{"no rx lcore", nil, Lcores{0, 1}, "lcores for 4 ports"},
		{"more tx lcores than ports", nil, Lcores{1, 5}, "lcores for 4 ports"},
	} {
		m := simple()
		if c.m != nil {
			c.m(&m)
		}
		_, err := m.Saturated(4, c.l)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Saturated: %v, want an error about %q", c.name, err, c.want)
		}
		_, _, err = m.Utilisation(Load{Ports: 4, Gbps: 100, FrameBytes: 1500}, c.l)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Utilisation: %v, want an error about %q", c.name, err, c.want)
		}
	}
	m := simple()
	if _, _, err := m.Utilisation(Load{Ports: 4, Gbps: 100, FrameBytes: 40}, Lcores{1, 1}); err == nil {
		t.Error("40 B frames: no error")
	}
	if _, _, err := m.Need(Load{Ports: 0, Gbps: 100, FrameBytes: 1500}); err == nil {
		t.Error("no port: no error")
	}
}

func TestUtilisation(t *testing.T) {
	m := simple()
	m.Tx.PerPoll = 320 // 10 ns a frame of a full burst
	// 100 GbE at 1500 B: 8.22 Mpps a port. One tx lcore of 4 ports:
	// 8.22e6 * (4 * 20 + 320 / 32) ns = 0.740.
	ld := Load{Ports: 4, Gbps: 100, FrameBytes: 1500}
	u, rx, err := m.Utilisation(ld, Lcores{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := ld.PPS() * 90e-9; !near(u, want, 1e-9) || rx {
		t.Errorf("Utilisation = %v (rx bound %v), want %v, tx bound", u, rx, want)
	}
	// Rx-bound once the tx side is spread: 4 ports x 10 ns against 1 x 30.
	if u, rx, _ := m.Utilisation(ld, Lcores{1, 4}); !rx || !near(u, ld.PPS()*40e-9, 1e-9) {
		t.Errorf("1 rx + 4 tx: %v (rx bound %v), want %v, rx bound", u, rx, ld.PPS()*40e-9)
	}
}

func TestNeed(t *testing.T) {
	m := simple()
	for _, c := range []struct {
		ld   Load
		want Lcores
	}{
		// 8.22 Mpps a port: 4 ports x 20 ns = 0.66 of a tx lcore.
		{Load{4, 100, 1500}, Lcores{1, 1}},
		// 148.8 Mpps a port: 2.98 per port on tx: more than one lcore
		// per port, none fits (below).
		// 25 GbE at 64 B, 37.2 Mpps a port: tx 0.74 per port alone, rx
		// 0.37: 2 ports per rx lcore.
		{Load{4, 25, 64}, Lcores{2, 4}},
	} {
		got, u, err := m.Need(c.ld)
		if err != nil {
			t.Fatalf("%+v: %v", c.ld, err)
		}
		if got != c.want || u > 1 {
			t.Errorf("Need(%+v) = %v (utilisation %.3f), want %v", c.ld, got, u, c.want)
		}
		// One lcore fewer on either side does not keep up.
		for _, l := range []Lcores{{got.Rx - 1, got.Tx}, {got.Rx, got.Tx - 1}} {
			if l.Rx < 1 || l.Tx < 1 {
				continue
			}
			if u, _, _ := m.Utilisation(c.ld, l); u <= 1 {
				t.Errorf("Need(%+v) = %v, but %v keeps up (%.3f)", c.ld, got, l, u)
			}
		}
	}
	if l, _, err := m.Need(Load{4, 100, 64}); err == nil {
		t.Errorf("4 x 100 GbE at 64 B: %v, want an error (a port alone needs 3 tx lcores)", l)
	}
	// More contention never needs fewer lcores.
	prev := 0
	for _, c := range []float64{0, 0.05, 0.1, 0.2} {
		m.Contention = c
		l, _, err := m.Need(Load{4, 40, 1024})
		if err != nil {
			t.Fatal(err)
		}
		if n := l.Rx + l.Tx; n < prev {
			t.Errorf("contention %v: %v lcores, fewer than %d with less", c, l, prev)
		} else {
			prev = n
		}
	}
}

func TestFitContention(t *testing.T) {
	m := simple()
	m.Contention = 0.04
	l := Lcores{6, 8}
	mpps, err := m.Saturated(8, l)
	if err != nil {
		t.Fatal(err)
	}
	m.Contention = 0
	got, err := FitContention(m, 8, l, mpps)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got, 0.04, 1e-6) {
		t.Errorf("FitContention = %v, want 0.04", got)
	}
	if _, err := FitContention(m, 8, l, 1e6); err == nil {
		t.Error("a rate above the costs' own: no error")
	}
}

func TestCalibrate(t *testing.T) {
	ms := Measured{RxEngine: 20, TxEngine: 30, NICRx: 1, NICTx: 2, RxPoll: 256, TxPoll: 128, PerRing: 128}
	want := ms
	want.HandoffRx, want.HandoffTx = 5, 12
	// What a 1 + 1 run of want measures: each side's per packet cost
	// and its share of the poll, full bursts of 4 ports.
	m := want.Model(32)
	rx := Sharded{BusyPerPacket: m.Rx.PerPacket + 256.0/128, PacketsPerPoll: 128}
	tx := Sharded{BusyPerPacket: m.Tx.PerPacket + 256.0/128, PacketsPerPoll: 128}
	if err := ms.Calibrate(rx, tx); err != nil {
		t.Fatal(err)
	}
	if !near(ms.HandoffRx, 5, 1e-9) || !near(ms.HandoffTx, 12, 1e-9) {
		t.Errorf("Calibrate: hand-off rx %v, tx %v, want 5, 12", ms.HandoffRx, ms.HandoffTx)
	}
	// A run faster than the stages (noise) gives 0, not a negative cost.
	if err := ms.Calibrate(Sharded{BusyPerPacket: 1, PacketsPerPoll: 128}, tx); err != nil || ms.HandoffRx != 0 {
		t.Errorf("Calibrate below the stages: %v, hand-off rx %v", err, ms.HandoffRx)
	}
	if err := ms.Calibrate(Sharded{}, tx); err == nil {
		t.Error("Calibrate with no packets: no error")
	}
}

func TestFitHandoff(t *testing.T) {
	ms := Measured{RxEngine: 20, TxEngine: 30, NICRx: 1, NICTx: 1, HandoffRx: 10, HandoffTx: 10}
	like := Model{Burst: 32, Scale: 1.5, BaseLcores: 2}
	// Hand-off 25 a side: tx 56 ns x 1.5 = 84 ns, 8 ports on one lcore.
	want := ms
	want.HandoffRx, want.HandoffTx = 25, 25
	m := want.Model(32)
	m.Scale, m.BaseLcores = 1.5, 2
	mpps, err := m.Saturated(8, Lcores{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !near(mpps, 1e3/84, 1e-9) {
		t.Fatalf("Saturated = %v, want %v", mpps, 1e3/84)
	}
	f, err := FitHandoff(ms, like, 8, Lcores{1, 1}, mpps)
	if err != nil {
		t.Fatal(err)
	}
	if !near(f, 2.5, 1e-6) {
		t.Errorf("FitHandoff = %v, want 2.5", f)
	}
	if _, err := FitHandoff(ms, like, 8, Lcores{1, 1}, 1e6); err == nil {
		t.Error("a rate no hand-off reaches: no error")
	}
	if _, err := FitHandoff(Measured{RxEngine: 1, TxEngine: 1}, like, 8, Lcores{1, 1}, 1); err == nil {
		t.Error("no hand-off: no error")
	}
}
