package fabric

import (
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

// Result is what a driver's run produced: the engines as they ended (their
// counters, samples, FCTs) and the switches' telemetry, on the engines' time
// base, in which the experiment's time 0 is T0Ns.
type Result struct {
	Clock     string
	Plan      *Plan
	T0Ns      int64
	EndNs     int64
	Switches  []*switchd.Engine
	Hosts     []*hostd.Engine
	Samples   []SwitchSample
	PFCEvents []SwitchPFCEvent // the switches' XOFF and XON events, each switch's in time order
	Events    int64            // events processed (virtual time): node wake-ups and frame arrivals
	WallNs    int64
	Interrupt bool
	// FrameBuffers is the most frame buffers the virtual driver held at once.
	FrameBuffers int
	// LinkLosses are the link directions that lost frames to the spec's
	// Failures (virtual time), by sending node and port.
	LinkLosses []LinkLoss
	// Parallel is what the parallel driver measured (nil: the serial
	// driver ran).
	Parallel *ParallelStats
}

// window selects samples with from < t <= to (experiment time, ns).
func (r *Result) inWindow(t, from, to int64) bool {
	t -= r.T0Ns
	return t > from && t <= to
}

// MeanQueue is the mean queue of switch sw's port over (from, to], bytes.
func (r *Result) MeanQueue(sw, port int, from, to int64) float64 {
	sum, n := 0.0, 0
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Switch == sw && s.Port == port && r.inWindow(s.TNs, from, to) {
			sum += float64(s.QueueBytes)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// MaxQueue is the largest queue sample of switch sw's port over (from, to].
func (r *Result) MaxQueue(sw, port int, from, to int64) int64 {
	var m int64
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Switch == sw && s.Port == port && r.inWindow(s.TNs, from, to) {
			m = max(m, s.QueueBytes)
		}
	}
	return m
}

// MeanFairRate is the mean fair rate of switch sw's port over (from, to],
// bits/s (RoCC; 0 when the port reports none).
func (r *Result) MeanFairRate(sw, port int, from, to int64) float64 {
	sum, n := 0.0, 0
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Switch == sw && s.Port == port && s.FairRateBps >= 0 && r.inWindow(s.TNs, from, to) {
			sum += s.FairRateBps
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Goodput is flow id's acknowledged payload rate over (from, to], bits/s:
// the payload its sender's rate samples whose periods end in the window
// acknowledged, over the window's length. It counts each sample's bytes, not
// its rate times a period, so it needs no sampling grid: a DPDK loop takes
// its samples when it polls, after their planned times.
func (r *Result) Goodput(id int64, from, to int64) float64 {
	var bytes int64
	for _, h := range r.Hosts {
		for _, s := range h.Samples() {
			if s.Flow == id && r.inWindow(s.T, from, to) {
				bytes += s.Bytes
			}
		}
	}
	return float64(bytes) * 8e9 / float64(to-from)
}

// FCTs returns every completed flow of every host.
func (r *Result) FCTs() []hostd.FCT {
	var out []hostd.FCT
	for _, h := range r.Hosts {
		out = append(out, h.FCTs()...)
	}
	return out
}

// Jain is Jain's fairness index of x: (sum x)^2 / (n sum x^2).
func Jain(x []float64) float64 {
	s, s2 := 0.0, 0.0
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(x)) * s2)
}

// MeanRate is flow id's mean sending rate (min of its RP's rate, its offered
// cap and the line rate) over the samples in (from, to], bits/s; 0 when it has
// none there.
func (r *Result) MeanRate(id int64, from, to int64) float64 {
	sum, n := 0.0, 0
	for _, h := range r.Hosts {
		for _, s := range h.Samples() {
			if s.Flow == id && r.inWindow(s.T, from, to) {
				sum += s.RateGbps
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum * 1e9 / float64(n)
}

// FCTOf returns flow id's completion record, false when it did not complete.
func (r *Result) FCTOf(id int64) (hostd.FCT, bool) {
	for _, h := range r.Hosts {
		for _, f := range h.FCTs() {
			if f.Flow == id {
				return f, true
			}
		}
	}
	return hostd.FCT{}, false
}

// Port returns switch sw's port counters at the end of the run.
func (r *Result) Port(sw, port int) switchd.PortCounters {
	return r.Switches[sw].Snapshot().Ports[port]
}
