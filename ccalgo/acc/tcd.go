// TCD congestion point: ternary congestion detection at a switch egress port.
//
// Source: papers/acc.md Section 2.2 (ternary flow states, CE/UE marking, UE never
// overwrites CE) and Section 6.1 (queue threshold 2 MTU, max(T_on) = 24 us);
// specs/tcd.md, the project's definition of the state machine (the TCD paper,
// SIGCOMM'21, was not at hand):
//
//	queue <= threshold                                    -> non-congestion, no mark
//	queue >  threshold, ON continuously >= max(T_on)      -> congestion,     CE (ECN 11)
//	queue >  threshold, OFF (paused) within last max(T_on) -> undetermined,  UE (ECN 01)
//
// evaluated for every data packet at dequeue.
//
// Deviations and choices:
//   - "ON since" is the later of PortState.LastOff and the last time this CP itself
//     saw PortState.Paused set (at enqueue, dequeue or timer). LastOff may be
//     stamped when a pause starts; a pause observed later than that must also end
//     the ON period, so the CP keeps its own record of the latest paused instant.
//   - The CP only returns UE; the engine applies Mark.Max, so an upstream CE is
//     never lowered (tcd.md: "UE never overwrites CE").

package acc

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// TCDState is the ternary state of an egress port.
type TCDState uint8

// TCD port states (papers/acc.md Section 2.2).
const (
	NonCongestion TCDState = iota
	Undetermined
	Congestion
)

// String names the state.
func (s TCDState) String() string {
	switch s {
	case NonCongestion:
		return "non-congestion"
	case Undetermined:
		return "undetermined"
	case Congestion:
		return "congestion"
	}
	return "TCDState(?)"
}

// CP is TCD's congestion point for one egress port. It has no timer and emits no
// feedback; it only marks.
type CP struct {
	ccalgo.CPBase
	threshold  int64
	maxTOn     int64
	lastPaused int64 // latest time this CP saw the port paused; math.MinInt64 if never
	state      TCDState

	// MarkedCE and MarkedUE count the packets this CP marked.
	MarkedCE, MarkedUE uint64
}

var _ ccalgo.CongestionPoint = (*CP)(nil)

// NewCP builds a TCD congestion point from p.
func NewCP(p *Params) (*CP, error) {
	if err := p.validateCP(); err != nil {
		return nil, err
	}
	return &CP{threshold: p.QueueThresholdBytes, maxTOn: p.MaxTOnNs, lastPaused: math.MinInt64}, nil
}

// State returns the state computed at the last dequeue.
func (c *CP) State() TCDState { return c.state }

func (c *CP) notePause(now int64, port *ccalgo.PortState) {
	if port.Paused && now > c.lastPaused {
		c.lastPaused = now
	}
}

// Classify returns the TCD state of port at now without marking anything.
func (c *CP) Classify(now int64, port *ccalgo.PortState) TCDState {
	if port.QueueBytes <= c.threshold {
		return NonCongestion
	}
	if port.Paused {
		return Undetermined
	}
	off := port.LastOff
	if c.lastPaused > off {
		off = c.lastPaused
	}
	// ON continuously since off; compare without overflowing on MinInt64.
	if off > now-c.maxTOn {
		return Undetermined
	}
	return Congestion
}

// PacketHooks reports that both per-packet hooks do work (ccalgo.PacketHooks).
func (*CP) PacketHooks() (enqueue, dequeue bool) { return true, true }

// OnEnqueue records a pause seen at enqueue; marking happens at dequeue.
func (c *CP) OnEnqueue(now int64, _ *ccalgo.DataPacket, port *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	c.notePause(now, port)
	return ccalgo.Verdict{}
}

// OnDequeue classifies the port and marks the leaving packet CE (congestion) or
// UE (undetermined).
func (c *CP) OnDequeue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	c.notePause(now, port)
	c.state = c.Classify(now, port)
	switch c.state {
	case Congestion:
		c.MarkedCE++
		return ccalgo.Verdict{Mark: ccalgo.MarkCE}
	case Undetermined:
		if pkt.Mark != ccalgo.MarkCE {
			c.MarkedUE++
		}
		return ccalgo.Verdict{Mark: ccalgo.MarkUE}
	}
	return ccalgo.Verdict{}
}

// OnTimer records a pause seen by the engine's timer call; TCD has no periodic work.
func (c *CP) OnTimer(now int64, port *ccalgo.PortState, _ ccalgo.FeedbackSink) {
	c.notePause(now, port)
}
