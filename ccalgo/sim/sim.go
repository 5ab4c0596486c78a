// Package sim is ccbed's closed-loop, packet-level simulator in virtual time. It
// runs the very CongestionPoint, NotificationPoint and ReactionPoint code that
// switchd and hostd run, on a dumbbell with one bottleneck, so that every scheme
// can be tested end to end without DPDK and without reading a clock.
//
// Topology: N sender hosts, each with its own NIC link of HostBps to the switch
// (the flows of one host share that NIC round robin); one switch egress port of
// capacity LinkBps with a byte FIFO and the scheme's CP; one receiver host with the
// scheme's NP, which acknowledges data in order and sends a go-back-N NAK on a gap.
// Each sender flow is driven by its scheme's RP: it sends when its pacer allows
// (last send + wire bits / min(RateBps, MaxRateBps)), when bytes in flight are below
// WindowBytes and when now >= HaltUntil.
//
// Control packets (ACK, NAK, CNP, CP feedback) never queue behind data: they take
// propagation delay only. Feedback from the switch reaches the sender one LinkDelay
// after it was emitted; ACKs, NAKs and CNPs from the receiver take two.
//
// Timing model: every link is store-and-forward; serialization times are kept as
// exact fractions of a nanosecond between back-to-back packets (events fire at the
// next whole nanosecond), so long-run rates are exact.
//
// Losses happen only at the bottleneck's tail when BufferBytes > 0. The sender then
// recovers by go-back-N: the receiver NAKs the first out-of-order packet of a gap
// (again after NakInterval if the gap persists), and a retransmission timeout (RTO)
// covers a lost tail.
package sim

import (
	"errors"
	"fmt"
	"math"
)

// Flow is one sender queue pair of a simulation, all sending to the one receiver.
type Flow struct {
	Src        int     // sender host index (0-based); hosts are created as needed
	Start      int64   // ns
	Bytes      int64   // message size; 0 = unlimited (long-lived)
	MaxRateBps float64 // offered-rate cap of the application; 0 = no cap
}

// Config describes one simulation run. Zero values of the optional fields take the
// defaults named in their comments.
type Config struct {
	Scheme        string  // registered ccalgo scheme name; the test must import its package
	Params        any     // nil: scheme's DefaultParams(env); else a pointer of that type
	LinkBps       float64 // bottleneck C
	HostBps       float64 // sender NIC rate; 0 = LinkBps
	LinkDelay     int64   // one-way propagation per link, ns (default 1000)
	MTU           int     // payload bytes per data packet (default 1000)
	HeaderBytes   int     // per-packet wire overhead (default 62: Eth+IPv4+UDP+BTH+ts)
	BufferBytes   int64   // egress buffer; 0 = unlimited (no drops)
	AckEvery      int     // receiver ACKs every k-th packet and the last of a message (default 1)
	ExpectedFlows int     // Env.ExpectedFlows (default len(Flows))
	Flows         []Flow
	Duration      int64 // ns of virtual time
	SampleEvery   int64 // sampling interval of the time series (default 10 us)

	// RTO is the sender's retransmission timeout: with bytes outstanding and
	// neither an ACK advancing snd_una nor a send for RTO ns, it goes back to
	// snd_una. 0: 2 * (BaseRTT + time to drain BufferBytes) + 100 us when
	// BufferBytes > 0, none otherwise (nothing can be lost). Negative: none.
	RTO int64
	// NakInterval is how long the receiver waits before repeating a NAK for the
	// same gap. 0: 2 * (BaseRTT + time to drain BufferBytes).
	NakInterval int64
	// AckDelay bounds how long the receiver holds back an ACK when AckEvery > 1
	// (delayed-ACK timer, as NICs coalesce ACKs): an in-order packet that did not
	// trigger an ACK is acknowledged at most AckDelay later. 0: the base RTT.
	// Without it a window smaller than AckEvery packets would stall.
	AckDelay int64
	// PacingJitter spreads each flow's packet spacing uniformly over
	// [1 - j, 1 + j] times its paced gap (mean 1: the rate is unchanged), as
	// real NICs and hosts do; 0 paces exactly. Identical senders paced exactly
	// release in lock step, a synchrony no testbed has. Seed seeds it.
	PacingJitter float64
	Seed         uint64
}

// Result is what a run measured. Series are indexed by sample; sample k is taken at
// T[k] = (k+1) * SampleEvery.
type Result struct {
	T         []int64     // sample times, ns
	Queue     []int64     // bottleneck queue bytes at each sample
	FairRate  []float64   // CP's FairRateBps() if it implements ccalgo.FairRateReporter, else nil
	Goodput   [][]float64 // [flow][sample] payload bits/s delivered to the receiver in the interval
	RPRate    [][]float64 // [flow][sample] the RP's RateBps() at the sample
	Window    [][]int64   // [flow][sample] the RP's WindowBytes() at the sample
	Delivered []int64     // payload bytes delivered per flow
	FCT       []int64     // per flow: ns from Start to last byte ACKed; -1 if unfinished

	Drops, CNPs, Feedbacks, MarkedCE, MarkedUE, Dequeued int64
	MaxQueue                                             int64

	// Extra counters.
	NAKs          int64   // NAKs sent by the receiver
	Timeouts      int64   // RTO expiries at the senders
	Retransmitted []int64 // per flow: payload bytes sent again (go-back-N)
	Events        int64   // events processed
	BaseRTT       int64   // Env.BaseRTT given to the roles, ns
	SampleEvery   int64   // the sampling interval used, ns
}

// Defaults of Config.
const (
	DefaultLinkDelay   = 1000
	DefaultMTU         = 1000
	DefaultHeaderBytes = 62
	DefaultSampleEvery = 10_000
)

// Run simulates cfg and returns what it measured. It fails on an invalid
// configuration, an unknown scheme or parameters the scheme rejects.
func Run(cfg Config) (*Result, error) {
	s, err := newSim(cfg)
	if err != nil {
		return nil, err
	}
	s.run()
	return s.res, nil
}

// MeanGoodput is flow's mean goodput in bits/s over the sample intervals that lie
// inside [from, to).
func (r *Result) MeanGoodput(flow int, from, to int64) float64 {
	if flow < 0 || flow >= len(r.Goodput) {
		return 0
	}
	var sum float64
	n := 0
	for k, t := range r.T {
		if t-r.SampleEvery >= from && t <= to {
			sum += r.Goodput[flow][k]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// MeanQueue is the mean of the queue samples taken in [from, to), in bytes.
func (r *Result) MeanQueue(from, to int64) float64 {
	var sum float64
	n := 0
	for k, t := range r.T {
		if t >= from && t < to {
			sum += float64(r.Queue[k])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// MaxQueueIn is the largest queue sample taken in [from, to), in bytes.
func (r *Result) MaxQueueIn(from, to int64) int64 {
	var m int64
	for k, t := range r.T {
		if t >= from && t < to && r.Queue[k] > m {
			m = r.Queue[k]
		}
	}
	return m
}

// MeanRPRate is flow's mean RP rate sample in [from, to), bits/s.
func (r *Result) MeanRPRate(flow int, from, to int64) float64 {
	if flow < 0 || flow >= len(r.RPRate) {
		return 0
	}
	var sum float64
	n := 0
	for k, t := range r.T {
		if t >= from && t < to {
			sum += r.RPRate[flow][k]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// SettlingTime is the first sample time after which every later value of series
// stays within tol (a fraction of target) of target; -1 if never, that is when
// the last sample is outside the band.
func SettlingTime(t []int64, series []float64, target, tol float64) int64 {
	n := min(len(t), len(series))
	if n == 0 {
		return -1
	}
	band := math.Abs(target) * tol
	for i := n - 1; i >= 0; i-- {
		if math.Abs(series[i]-target) > band {
			if i == n-1 {
				return -1
			}
			return t[i+1]
		}
	}
	return t[0]
}

// Jain is Jain's fairness index (sum x)^2 / (n * sum x^2), in (0, 1]. It is 0 for
// an empty slice or all-zero values, so that a run that delivered nothing never
// looks fair.
func Jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if len(x) == 0 || s2 == 0 {
		return 0
	}
	return s * s / (float64(len(x)) * s2)
}

var errNoFlows = errors.New("sim: no flows")

func (c *Config) validate() error {
	switch {
	case len(c.Flows) == 0:
		return errNoFlows
	case !(c.LinkBps > 0):
		return fmt.Errorf("sim: LinkBps = %v, must be > 0", c.LinkBps)
	case c.HostBps < 0:
		return fmt.Errorf("sim: HostBps = %v, must be >= 0", c.HostBps)
	case c.Duration <= 0:
		return fmt.Errorf("sim: Duration = %d, must be > 0", c.Duration)
	case c.LinkDelay < 0, c.MTU < 0, c.HeaderBytes < 0, c.BufferBytes < 0,
		c.AckEvery < 0, c.SampleEvery < 0, c.ExpectedFlows < 0, c.NakInterval < 0, c.AckDelay < 0,
		c.PacingJitter < 0, c.PacingJitter >= 1:
		return errors.New("sim: negative LinkDelay, MTU, HeaderBytes, BufferBytes, AckEvery, SampleEvery, ExpectedFlows, NakInterval or AckDelay, or PacingJitter outside [0, 1)")
	}
	for i, f := range c.Flows {
		if f.Src < 0 || f.Start < 0 || f.Bytes < 0 || f.MaxRateBps < 0 {
			return fmt.Errorf("sim: flow %d: negative Src, Start, Bytes or MaxRateBps", i)
		}
	}
	return nil
}

func (c *Config) fillDefaults() {
	if c.HostBps == 0 {
		c.HostBps = c.LinkBps
	}
	if c.LinkDelay == 0 {
		c.LinkDelay = DefaultLinkDelay
	}
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.HeaderBytes == 0 {
		c.HeaderBytes = DefaultHeaderBytes
	}
	if c.AckEvery == 0 {
		c.AckEvery = 1
	}
	if c.ExpectedFlows == 0 {
		c.ExpectedFlows = len(c.Flows)
	}
	if c.SampleEvery == 0 {
		c.SampleEvery = DefaultSampleEvery
	}
}

// LongFlows returns n unlimited flows, flow i on its own host i, starting at
// i * stagger ns: the N-to-1 long-flow case of the papers' micro-benchmarks.
func LongFlows(n int, stagger int64) []Flow {
	f := make([]Flow, n)
	for i := range f {
		f[i] = Flow{Src: i, Start: int64(i) * stagger}
	}
	return f
}
