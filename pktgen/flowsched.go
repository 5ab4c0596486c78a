package pktgen

import (
	"fmt"
	"io"
	"math"

	"github.com/ccbed/ccbed/pacer"
)

// flowScheduler gives a stream's flows their own rates ([[ports.flow]]): one
// token bucket a flow in a pacer.Scheduler (its QPs are the flows, each with
// an unlimited backlog and no window), which hands out the next packet to the
// flow whose bucket made it eligible first, then round robin among the
// eligible ones. A flow with rate_gbps pays each frame's L1 bytes (frame +
// L1Overhead) at its rate in bits; a flow with rate_mpps pays one unit a
// packet at 8 x its packet rate (the bucket counts bytes, a packet is "one
// byte"); a flow with neither is unlimited and takes what the others leave.
// Buckets use deficit pacing (pacer.TokenBucket): a flow may send while it is
// not in debt, so its long-run rate is exact, and a flow served late catches
// up by at most its burst (bucket_packets of the largest frame).
//
// Flows are picked at Grant, when the number of packets the port's cap allows
// is known, so that the picks of a burst can be handed to the C builder at
// once (dpdk.TxGen.Picks); Build and advance consume them in order. A pick not
// built (the mempool was empty) stays first in line for the next Grant: its
// tokens were taken, and it leaves late instead of never.
type flowScheduler struct {
	s     *pacer.Scheduler
	rates []float64 // bits/s of each bucket (math.Inf(1): unlimited)
	burst []int64   // bucket depth, bytes (units for packet-rated flows)
	perPk []bool    // packet-rated: a packet costs one unit
	picks []uint16  // picked, not yet built: picks[head:]
	head  int
	// Per flow: packets built and their frame bytes (no FCS).
	packets, bytes []uint64
}

func newFlowScheduler(flows []FlowConfig, maxFrame, bucketPackets, maxBurst int) (*flowScheduler, error) {
	n := len(flows)
	s, err := pacer.NewScheduler(pacer.Config{MaxQPs: n, MaxPacketBytes: int64(maxFrame + L1Overhead)}, 0)
	if err != nil {
		return nil, err
	}
	fs := &flowScheduler{s: s, rates: make([]float64, n), burst: make([]int64, n), perPk: make([]bool, n),
		picks: make([]uint16, 0, maxBurst), packets: make([]uint64, n), bytes: make([]uint64, n)}
	for i, f := range flows {
		switch {
		case f.RateGbps > 0:
			fs.rates[i] = f.RateGbps * 1e9
			fs.burst[i] = int64(bucketPackets) * int64(maxFrame+L1Overhead)
		case f.RateMpps > 0:
			fs.rates[i] = f.RateMpps * 1e6 * 8
			fs.burst[i] = int64(bucketPackets)
			fs.perPk[i] = true
		default:
			fs.rates[i] = math.Inf(1)
		}
	}
	return fs, nil
}

// start sets every bucket up empty at now, with an unlimited backlog.
func (fs *flowScheduler) start(now int64) {
	for i := range fs.rates {
		fs.s.Reset(i, fs.rates[i], fs.burst[i], now)
		fs.s.SetBacklog(i, pacer.UnlimitedBacklog, now)
	}
}

// fill picks flows at now until want picks are pending or no flow is
// eligible, and returns the number pending. g's schedule gives the sizes:
// pending pick j is the frame at schedule position g.pos+j.
func (fs *flowScheduler) fill(now int64, want int, g *Generator) int {
	have := len(fs.picks) - fs.head
	if have >= want {
		return want
	}
	if fs.head > 0 {
		copy(fs.picks, fs.picks[fs.head:])
		fs.picks = fs.picks[:have]
		fs.head = 0
	}
	pos := (g.pos + have) % len(g.sched)
	for len(fs.picks) < want {
		q, ok := fs.s.Next(now)
		if !ok {
			break
		}
		cost := int64(1)
		if !fs.perPk[q] {
			cost = int64(g.classes[g.sched[pos]].size + L1Overhead)
		}
		fs.s.OnSent(q, cost, now)
		fs.picks = append(fs.picks, uint16(q))
		if pos++; pos == len(g.sched) {
			pos = 0
		}
	}
	return len(fs.picks)
}

// pending is the picks not yet built, in order.
func (fs *flowScheduler) pending() []uint16 { return fs.picks[fs.head:] }

// take consumes the first pick, a frame of size bytes, and returns its flow.
func (fs *flowScheduler) take(size int) int {
	f := fs.picks[fs.head]
	fs.head++
	if fs.head == len(fs.picks) {
		fs.picks, fs.head = fs.picks[:0], 0
	}
	fs.packets[f]++
	fs.bytes[f] += uint64(size)
	return int(f)
}

// FlowSummary is what one flow of a stream built over a run, beside the
// rate it was given (0: none). Packets counts frames built: a burst the
// port refused at the very end is in it.
type FlowSummary struct {
	Flow     int     `json:"flow"`
	RateGbps float64 `json:"rate_gbps,omitempty"`
	RateMpps float64 `json:"rate_mpps,omitempty"`
	Packets  uint64  `json:"tx_packets"`
	Bytes    uint64  `json:"tx_bytes"`
	Mpps     float64 `json:"tx_mpps"`
	L1Gbps   float64 `json:"tx_l1_gbps"` // L1, as PortSummary.TxL1Gbps
}

// flowSummaries are g's flows over dt seconds: every flow with flow
// rates, else the tracked ones (flow_stats) of a stream of several flows.
func flowSummaries(g *Generator, pc *PortConfig, dt float64) []FlowSummary {
	st := g.FlowStats()
	if st == nil && g.NumFlows() > 1 {
		for f := range min(pc.TrackedFlows(), g.NumFlows()) {
			st = append(st, g.FlowCount(f))
		}
	}
	if st == nil {
		return nil
	}
	out := make([]FlowSummary, len(st))
	for f, s := range st {
		out[f] = FlowSummary{Flow: f, Packets: s.Packets, Bytes: s.Bytes}
		if f < len(pc.Flow) {
			out[f].RateGbps, out[f].RateMpps = pc.Flow[f].RateGbps, pc.Flow[f].RateMpps
		}
		if dt > 0 {
			out[f].Mpps = float64(s.Packets) / dt / 1e6
			_, out[f].L1Gbps = gbps(s.Packets, s.Bytes, dt)
		}
	}
	return out
}

// writeFlows writes one line a flow under its port's line of WriteText.
func writeFlows(w io.Writer, flows []FlowSummary) {
	for _, f := range flows {
		target := "no cap"
		switch {
		case f.RateGbps > 0:
			target = fmt.Sprintf("rate %g Gb/s L1", f.RateGbps)
		case f.RateMpps > 0:
			target = fmt.Sprintf("rate %g Mpps", f.RateMpps)
		}
		fmt.Fprintf(w, "        flow %d: tx %d pkts %.3f Mpps %.3f Gb/s L1 (%s)\n", f.Flow, f.Packets, f.Mpps, f.L1Gbps, target)
	}
}
