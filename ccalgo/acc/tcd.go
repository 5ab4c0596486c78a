// TCD congestion point: ternary congestion detection at a switch egress port.
//
// Source: ACC ("Revisiting Congestion Control for Lossless Ethernet", NSDI 2024)
// Section 2.2 (ternary flow states, CE/UE marking, UE never overwrites CE) and
// Section 6.1 (queue threshold 2 MTU, max(T_on) = 24 us); the TCD paper
// ("Congestion Detection in Lossless Networks", SIGCOMM 2021) was not at hand,
// so the state machine is the project's definition of it:
//
//	queue <= threshold                                    -> non-congestion, no mark
//	queue >  threshold, ON continuously >= max(T_on)      -> congestion,     CE (ECN 11)
//	queue >  threshold, OFF (paused) within last max(T_on) -> undetermined,  UE (ECN 01)
//
// evaluated for every data packet in one hook, Params.MarkAt: at dequeue (the
// default) on the queue the packet leaves behind, or at enqueue on the queue it
// finds (itself excluded). The other hook does nothing, and PacketHooks says so,
// so that the switch skips it.
//
// Deviations and choices:
//   - "ON since" is the later of PortState.LastOff and the last time this CP itself
//     saw PortState.Paused set (in its marking hook or its timer). LastOff may be
//     stamped when a pause starts; a pause observed later than that must also end
//     the ON period, so the CP keeps its own record of the latest paused instant.
//     The hook that does not mark records nothing: PortState.LastOff is the last
//     time the port was paused, so the CP's own record only refines it, and the
//     marking hook and the timer keep it.
//   - The CP only returns UE; the engine applies Mark.Max, so an upstream CE is
//     never lowered ("UE can only be marked when the packet is not marked with CE").

package acc

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// TCDState is the ternary state of an egress port.
type TCDState uint8

// TCD port states (ACC Section 2.2).
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
	atEnqueue  bool  // classify and mark in OnEnqueue, else in OnDequeue
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
	return &CP{threshold: p.QueueThresholdBytes, maxTOn: p.MaxTOnNs,
		atEnqueue: p.MarkAt == ccalgo.MarkAtEnqueue, lastPaused: math.MinInt64}, nil
}

// State returns the state computed at the last marking call.
func (c *CP) State() TCDState { return c.state }

func (c *CP) notePause(now int64, port *ccalgo.PortState) {
	if port.Paused && now > c.lastPaused {
		c.lastPaused = now
	}
}

// Classify returns the TCD state of port at now, with queueBytes in its queue,
// without marking anything.
func (c *CP) Classify(now int64, port *ccalgo.PortState, queueBytes int64) TCDState {
	if queueBytes <= c.threshold {
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

// PacketHooks reports that only the hook of Params.MarkAt does work
// (ccalgo.PacketHooks).
func (c *CP) PacketHooks() (enqueue, dequeue bool) { return c.atEnqueue, !c.atEnqueue }

// FlowBlind reports that the hooks never read the packet's flow (ccalgo.FlowBlind).
func (*CP) FlowBlind() bool { return true }

// OnEnqueue classifies the port and marks the arriving packet when MarkAt is
// "enqueue", on the queue it finds (port.QueueBytes without the packet);
// otherwise it does nothing.
func (c *CP) OnEnqueue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	if !c.atEnqueue {
		return ccalgo.Verdict{}
	}
	return c.mark(now, pkt, port, max(port.QueueBytes-int64(pkt.WireBytes), 0))
}

// OnDequeue classifies the port and marks the leaving packet when MarkAt is
// "dequeue", on the queue it leaves behind (port.QueueBytes); otherwise it does
// nothing.
func (c *CP) OnDequeue(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, _ ccalgo.FeedbackSink) ccalgo.Verdict {
	if c.atEnqueue {
		return ccalgo.Verdict{}
	}
	return c.mark(now, pkt, port, port.QueueBytes)
}

// mark marks pkt CE (congestion) or UE (undetermined) for the port's state with
// queueBytes queued.
func (c *CP) mark(now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, queueBytes int64) ccalgo.Verdict {
	c.notePause(now, port)
	c.state = c.Classify(now, port, queueBytes)
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
