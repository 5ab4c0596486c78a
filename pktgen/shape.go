package pktgen

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ccbed/ccbed/config"
)

// ShapeConfig shapes a port's stream over time ([ports.shape]); it needs
// the port's rate (rate_gbps or rate_mpps), which it modulates, and takes
// one of on/off bursts, Poisson departures or a rate schedule. Every shape
// is exact in the long run: on/off and the schedule refill the port's
// token bucket by the integral of their rate over the time elapsed, and
// Poisson departures are drawn at the mean rate. Times are from the
// stream's first poll.
type ShapeConfig struct {
	// OnUs and OffUs: bursts of OnUs microseconds at the port's rate, then
	// OffUs of silence, repeating (both > 0, set together).
	OnUs  float64 `toml:"on_us"`
	OffUs float64 `toml:"off_us"`
	// Poisson: packets leave with exponential gaps (a Poisson process) at
	// the port's rate on average: with rate_gbps the mean gap after a frame
	// is its L1 bits at the rate; with rate_mpps 1/rate. A loop stalled
	// longer than bucket_packets mean gaps loses the departures beyond them.
	Poisson bool `toml:"poisson"`
	// Seed seeds the Poisson gaps (default 1): a run repeats.
	Seed uint64 `toml:"seed"`
	// Schedule is a list of [t_s, rate] steps: from t_s seconds on the
	// stream runs at rate (in the port's unit: Gb/s L1 with rate_gbps, Mpps
	// with rate_mpps; at most the port's rate, its line rate; 0 pauses
	// it); before the first step at the port's rate. Times strictly
	// increase.
	Schedule [][]float64 `toml:"schedule"`
	// Ramp makes the schedule's rate move linearly from each step's rate
	// to the next's instead of jumping (after the last step it stays).
	Ramp bool `toml:"ramp"`
}

// Shaped reports whether the shape does anything.
func (s *ShapeConfig) Shaped() bool {
	return s.OnUs != 0 || s.OffUs != 0 || s.Poisson || len(s.Schedule) > 0
}

// MaxShapeSteps bounds a schedule's steps.
const MaxShapeSteps = 1 << 16

// validate returns "key: message" errors; line is the port's rate in its
// unit (0: none).
func (s *ShapeConfig) validate(line float64, unit string) error {
	if !s.Shaped() {
		if s.Ramp || s.Seed != 0 {
			return fmt.Errorf("shape: ramp or seed without a schedule or poisson")
		}
		return nil
	}
	if line == 0 {
		return fmt.Errorf("shape: a shape modulates the port's rate: set rate_gbps or rate_mpps")
	}
	kinds := 0
	for _, b := range []bool{s.OnUs != 0 || s.OffUs != 0, s.Poisson, len(s.Schedule) > 0} {
		if b {
			kinds++
		}
	}
	if kinds > 1 {
		return fmt.Errorf("shape: give one of on_us/off_us, poisson and schedule")
	}
	if (s.OnUs != 0) != (s.OffUs != 0) {
		return fmt.Errorf("shape: set on_us and off_us together")
	}
	if s.OnUs != 0 || s.OffUs != 0 {
		for _, f := range []struct {
			key string
			v   float64
		}{{"on_us", s.OnUs}, {"off_us", s.OffUs}} {
			if err := config.Float(f.v, 1e-3, 3.6e9); err != nil {
				return fmt.Errorf("shape.%s: %v", f.key, err)
			}
		}
	}
	if s.Ramp && len(s.Schedule) == 0 {
		return fmt.Errorf("shape.ramp: needs a schedule")
	}
	if s.Seed != 0 && !s.Poisson {
		return fmt.Errorf("shape.seed: seeds poisson only")
	}
	if len(s.Schedule) > MaxShapeSteps {
		return fmt.Errorf("shape.schedule: %d steps, at most %d", len(s.Schedule), MaxShapeSteps)
	}
	prev := -1.0
	for i, st := range s.Schedule {
		if len(st) != 2 {
			return fmt.Errorf("shape.schedule: step %d: %d numbers, want [t_s, rate]", i, len(st))
		}
		if err := config.Time(st[0], "s"); err != nil {
			return fmt.Errorf("shape.schedule: step %d: time: %v", i, err)
		}
		if st[0] <= prev {
			return fmt.Errorf("shape.schedule: step %d: time %g s not after the previous step's %g s", i, st[0], prev)
		}
		prev = st[0]
		if err := config.Float(st[1], 0, line); err != nil {
			return fmt.Errorf("shape.schedule: step %d: rate: %v (the port's %s %g is its line rate)", i, err, unit, line)
		}
	}
	return nil
}

// shapeStep is one step of a schedule in the Generator's units: from at ns
// after the start, rate units per second.
type shapeStep struct {
	at   int64
	rate int64
}

// shaper is a Generator's shape state.
type shaper struct {
	onNs, periodNs int64 // on/off; periodNs 0: none
	steps          []shapeStep
	ramp           bool
	seg            int // steps[seg] is the last step at or before the last refill (-1: before the first)

	poisson bool
	rng     *rand.Rand
	due     int   // departures due and not yet built
	next    int64 // the next departure, drawn
	capNs   int64 // how far departures may lag behind now
}

// newShaper converts s for a stream of rate units a second (bits, or
// packets when perPacket) whose token bucket holds bucketCost.
func newShaper(s *ShapeConfig, perPacket bool, bucketCost int64, rate int64) *shaper {
	if !s.Shaped() {
		return nil
	}
	sh := &shaper{seg: -1, ramp: s.Ramp, poisson: s.Poisson}
	if s.OnUs > 0 {
		sh.onNs = int64(math.Round(s.OnUs * 1e3))
		sh.periodNs = sh.onNs + int64(math.Round(s.OffUs*1e3))
	}
	unit := 1e9 // Gb/s to bits/s
	if perPacket {
		unit = 1e6 // Mpps to packets/s
	}
	for _, st := range s.Schedule {
		sh.steps = append(sh.steps, shapeStep{int64(math.Round(st[0] * 1e9)), int64(math.Round(st[1] * unit))})
	}
	if s.Poisson {
		seed := s.Seed
		if seed == 0 {
			seed = 1
		}
		sh.rng = rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		sh.capNs = bucketCost / rate
	}
	return sh
}

// rateAt is the schedule's rate at t ns after the start (base before the
// first step), for step k = the last step at or before t.
func (sh *shaper) rateAt(t int64, k int, base int64) float64 {
	if k < 0 {
		return float64(base)
	}
	s := sh.steps[k]
	if !sh.ramp || k+1 == len(sh.steps) {
		return float64(s.rate)
	}
	n := sh.steps[k+1]
	return float64(s.rate) + float64(n.rate-s.rate)*float64(t-s.at)/float64(n.at-s.at)
}

// credit is the tokens the shape's rate earns from t0 to t1 (ns after the
// start; t0 <= t1), at most room: the integral of the rate. base is the
// port's rate (units a second).
func (sh *shaper) credit(t0, t1 int64, base, room int64) int64 {
	if room <= 0 {
		return 0
	}
	if sh.periodNs > 0 {
		on := sh.onTime(t1) - sh.onTime(t0)
		if on > 0 && on > room/base {
			return room
		}
		return on * base
	}
	// Schedule: walk the segments [t0, t1] crosses.
	var sum float64
	for t := t0; t < t1; {
		for sh.seg+1 < len(sh.steps) && sh.steps[sh.seg+1].at <= t {
			sh.seg++
		}
		end := t1
		if sh.seg+1 < len(sh.steps) {
			end = min(end, sh.steps[sh.seg+1].at)
		}
		sum += (sh.rateAt(t, sh.seg, base) + sh.rateAt(end, sh.seg, base)) / 2 * float64(end-t)
		if sum >= float64(room) {
			return room
		}
		t = end
	}
	return int64(sum)
}

// onTime is the time on/off bursts were on from the start to t.
func (sh *shaper) onTime(t int64) int64 {
	return t/sh.periodNs*sh.onNs + min(t%sh.periodNs, sh.onNs)
}

// grantPoisson draws departures up to now (at most max due) and returns
// the number due; g's schedule gives the frames' costs.
func (g *Generator) grantPoisson(now int64, max int) int {
	sh := g.shape
	if sh.next < now-sh.capNs {
		sh.next = now - sh.capNs // a stalled loop loses what is beyond a bucket
	}
	pos := wrap(g.pos+sh.due, len(g.sched))
	for sh.due < max && sh.next <= now {
		c := g.classes[g.sched[pos]].cost
		sh.due++
		sh.next += int64(sh.rng.ExpFloat64() * float64(c) / float64(g.rate))
		if pos++; pos == len(g.sched) {
			pos = 0
		}
	}
	return min(sh.due, max)
}
