package pktgen

import (
	"math"
	"testing"
)

// departures runs g in virtual time, polling every step ns until end, and
// returns each frame's send time and size.
func departures(g *Generator, step, end int64) (times []int64, sizes []int) {
	buf := make([]byte, 2048)
	for now := int64(0); now < end; now += step {
		for k := g.Grant(now, 32); k > 0; k-- {
			n := g.Build(buf, now)
			times = append(times, now)
			sizes = append(sizes, n)
		}
	}
	return times, sizes
}

// TestShapeOnOff: bursts of on_us at the port's rate, silence for off_us:
// no frame leaves in an off period (beyond the first poll, which collects
// the on period's last credit), each on period sends its rate x on_us
// within what the bucket carries over, and the whole run its rate x the
// time on within that.
func TestShapeOnOff(t *testing.T) {
	cases := []struct {
		name    string
		p       PortConfig
		perOn   float64 // frames an on period sends
		periods int
	}{
		{"1 Mpps 100/400 us", PortConfig{RateMpps: 1, BucketPackets: 1, Shape: ShapeConfig{OnUs: 100, OffUs: 400}}, 100, 20},
		{"10 Gb/s 5/5 us imix", PortConfig{RateGbps: 10, Mix: "imix", BucketPackets: 2, Shape: ShapeConfig{OnUs: 5, OffUs: 5}}, 0, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, 0)
			on, period := int64(c.p.Shape.OnUs*1e3), int64((c.p.Shape.OnUs+c.p.Shape.OffUs)*1e3)
			const step = 10
			times, sizes := departures(g, step, int64(c.periods)*period)
			per := make([]float64, c.periods) // frames, or L1 bits, of each period
			for i, tm := range times {
				if ph := tm % period; ph > on+step-1 {
					t.Fatalf("frame %d leaves at %d ns, %d ns into a period: in the off part", i, tm, ph)
				}
				if c.p.RateGbps > 0 {
					per[tm/period] += float64((sizes[i] + L1Overhead) * 8)
				} else {
					per[tm/period]++
				}
			}
			want, slack := c.perOn, 1.0
			if c.p.RateGbps > 0 {
				// Credit carries from one period to the next, up to the
				// bucket (2 of the largest frames).
				want, slack = c.p.RateGbps*float64(on), float64(2*(1514+L1Overhead)*8)
			}
			var total float64
			for k, n := range per {
				if math.Abs(n-want) > slack {
					t.Errorf("period %d: %.0f, want %.0f within %.0f", k, n, want, slack)
				}
				total += n
			}
			if n := float64(c.periods) * want; math.Abs(total-n) > slack {
				t.Errorf("total %.0f, want %.0f within %.0f: not exact in the long run", total, n, slack)
			}
		})
	}
}

// TestShapeSchedule: a schedule of steps (and of ramps) sends, by every
// time t, the integral of its rate up to t within a frame and the bucket.
func TestShapeSchedule(t *testing.T) {
	cases := []struct {
		name  string
		p     PortConfig
		end   float64 // s
		integ func(t float64) float64
	}{
		{"steps Gb/s", PortConfig{RateGbps: 10, Shape: ShapeConfig{Schedule: [][]float64{{0, 1}, {0.001, 5}, {0.002, 0}, {0.003, 10}}}}, 0.004,
			func(t float64) float64 { // bits
				r := []float64{1e9, 5e9, 0, 10e9}
				var s float64
				for k := range 4 {
					s += r[k] * math.Max(0, math.Min(t, float64(k+1)*1e-3)-float64(k)*1e-3)
				}
				return s
			}},
		{"late first step", PortConfig{RateMpps: 2, Shape: ShapeConfig{Schedule: [][]float64{{0.001, 0.5}}}}, 0.003,
			func(t float64) float64 { return 2e6*math.Min(t, 1e-3) + 0.5e6*math.Max(0, t-1e-3) }},
		{"ramp Mpps", PortConfig{RateMpps: 4, Shape: ShapeConfig{Ramp: true, Schedule: [][]float64{{0, 0}, {0.002, 4}, {0.003, 1}}}}, 0.004,
			func(t float64) float64 { // packets: 0 to 4 Mpps over 2 ms, down to 1 over 1 ms, then 1
				a := math.Min(t, 2e-3)
				s := 4e6 / 2e-3 * a * a / 2
				if t > 2e-3 {
					b := math.Min(t, 3e-3) - 2e-3
					s += 4e6*b - 3e6/1e-3*b*b/2
				}
				if t > 3e-3 {
					s += 1e6 * (t - 3e-3)
				}
				return s
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, 0)
			times, sizes := departures(g, 50, int64(c.end*1e9))
			bits := c.p.RateGbps > 0
			unit := 1.0
			if bits {
				unit = float64((c.p.Size + 64 + L1Overhead) * 8) // one frame of the default 64 B
			}
			slack := unit * float64(DefaultBurst+1) // the bucket and one frame
			var sent float64
			k := 0
			for ms := 0.25e-3; ms <= c.end; ms += 0.25e-3 {
				for ; k < len(times) && float64(times[k]) < ms*1e9; k++ {
					if bits {
						sent += float64((sizes[k] + L1Overhead) * 8)
					} else {
						sent++
					}
				}
				if want := c.integ(ms); sent > want+unit || sent < want-slack {
					t.Errorf("by %.2f ms: %.0f sent, the rate's integral %.0f (at most one frame over, a bucket under)", ms*1e3, sent, want)
				}
			}
		})
	}
}

// TestShapePoisson: with poisson the gaps between departures are
// exponential at the port's mean rate: their mean, their coefficient of
// variation (1) and the fractions above 1 and 3 means (e^-1, e^-3) within
// 5 standard errors of 100000 gaps.
func TestShapePoisson(t *testing.T) {
	for _, seed := range []uint64{0, 42} {
		g := newGen(t, PortConfig{RateMpps: 1, BucketPackets: 64, Shape: ShapeConfig{Poisson: true, Seed: seed}}, 0)
		times, _ := departures(g, 5, 100e6) // 0.1 s at 1 Mpps: ~1e5 gaps
		n := float64(len(times) - 1)
		var sum, sq, above1, above3 float64
		for i := 1; i < len(times); i++ {
			d := float64(times[i]-times[i-1]) / 1e3 // us; the mean is 1
			sum += d
			sq += d * d
			if d > 1 {
				above1++
			}
			if d > 3 {
				above3++
			}
		}
		mean := sum / n
		cv := math.Sqrt(sq/n-mean*mean) / mean
		checks := []struct {
			name      string
			got, want float64
			se        float64
		}{
			{"mean gap (us)", mean, 1, 1 / math.Sqrt(n)},
			{"coefficient of variation", cv, 1, 1 / math.Sqrt(n)},
			{"P(gap > mean)", above1 / n, math.Exp(-1), math.Sqrt(math.Exp(-1) * (1 - math.Exp(-1)) / n)},
			{"P(gap > 3 means)", above3 / n, math.Exp(-3), math.Sqrt(math.Exp(-3) * (1 - math.Exp(-3)) / n)},
		}
		for _, c := range checks {
			if math.Abs(c.got-c.want) > 5*c.se+0.005*c.want { // + the 5 ns polls' rounding
				t.Errorf("seed %d: %s = %.4f, want %.4f (standard error %.4f)", seed, c.name, c.got, c.want, c.se)
			}
		}
	}
}

// TestShapeConfig: shape keys are checked with the key and line.
func TestShapeConfig(t *testing.T) {
	// shaped is a 1 Gb/s port with a [ports.shape] table of keys.
	shaped := func(keys string) string { return "[[ports]]\nrate_gbps = 1\n[ports.shape]\n" + keys }
	checkConfigs(t, []configCase{
		{"on off", shaped("on_us = 10\noff_us = 90\n"), ""},
		{"schedule", "[[ports]]\nrate_mpps = 1\n[ports.shape]\nschedule = [[0, 0.5], [1, 1]]\nramp = true\n", ""},
		{"poisson", "[[ports]]\nrate_mpps = 1\n[ports.shape]\npoisson = true\nseed = 4\n", ""},
		{"no rate", "[[ports]]\n[ports.shape]\npoisson = true\n", ":2: ports[0].shape: a shape modulates"},
		{"two kinds", shaped("poisson = true\non_us = 3\noff_us = 3\n"), "give one of"},
		{"on without off", shaped("on_us = 3\n"), ":3: ports[0].shape: set on_us and off_us together"},
		{"negative on", shaped("on_us = -3\noff_us = 1\n"), ":4: ports[0].shape.on_us"},
		{"step above line", shaped("schedule = [[0, 2]]\n"), ":4: ports[0].shape.schedule: step 0: rate"},
		{"times back", shaped("schedule = [[1, 0.5], [0.5, 1]]\n"), "step 1: time 0.5 s not after"},
		{"step shape", shaped("schedule = [[1]]\n"), "step 0: 1 numbers"},
		{"ramp alone", shaped("ramp = true\n"), "ports[0].shape: ramp or seed"},
		{"seed without poisson", shaped("seed = 3\non_us = 1\noff_us = 1\n"), ":4: ports[0].shape.seed"},
	})
}

// TestShapeAllocs: shaped Grant and Build allocate nothing.
func TestShapeAllocs(t *testing.T) {
	for _, s := range []ShapeConfig{{OnUs: 3, OffUs: 5}, {Poisson: true}, {Ramp: true, Schedule: [][]float64{{0, 1}, {1, 5}}}} {
		g := newGen(t, PortConfig{RateGbps: 10, Mix: "imix", Shape: s}, 0)
		if a := burstAllocs(t, g, 1000); a != 0 {
			t.Fatalf("%+v: %.1f allocs per burst, want 0", s, a)
		}
	}
}
