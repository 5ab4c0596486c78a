package fabrictest

import "github.com/ccbed/ccbed/fabric"

// QueuePeak returns the largest queue sample of switch sw's port in
// (from, to] and the time of its first occurrence; 0 and 0 when no sample
// there is above 0.
func QueuePeak(r *fabric.Result, sw, port int, from, to int64) (peak, at int64) {
	for i := range r.Samples {
		s := &r.Samples[i]
		t := s.TNs - r.T0Ns
		if s.Switch == sw && s.Port == port && t > from && t <= to && s.QueueBytes > peak {
			peak, at = s.QueueBytes, t
		}
	}
	return peak, at
}

// QueueBelow returns the time of the first queue sample of switch sw's port
// in (from, to] below limit bytes (a port's samples are in time order, as
// the drivers record them); -1 when none is. After QueuePeak, with from its
// time, it is when the peak drained.
func QueueBelow(r *fabric.Result, sw, port int, from, to int64, limit float64) int64 {
	for i := range r.Samples {
		s := &r.Samples[i]
		t := s.TNs - r.T0Ns
		if s.Switch == sw && s.Port == port && t > from && t <= to && float64(s.QueueBytes) < limit {
			return t
		}
	}
	return -1
}
