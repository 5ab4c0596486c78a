package pktgen

import (
	"encoding/binary"

	"github.com/ccbed/ccbed/wire"
)

// StreamRx is what a Receiver saw of one stream.
type StreamRx struct {
	Packets  uint64 // pktgen packets of this stream received
	Bytes    uint64
	Lost     uint64 // sequence numbers skipped and not (yet) seen late
	Late     uint64 // packets that arrived after a higher sequence number (reordered or duplicated)
	Expected uint64 // highest sequence number seen + 1 (the packets the sender had sent by then)
}

// RxStats are a Receiver's counters.
type RxStats struct {
	Packets uint64 // every frame handed to Packet
	Bytes   uint64
	Other   uint64 // frames that are not pktgen packets (or are truncated)
	// NegLatency counts packets whose timestamp is later than the receive time
	// (sender and receiver clocks disagree); they are not in the histogram.
	NegLatency uint64
	// FlowsUntracked counts pktgen packets of flows beyond the tracked ones
	// (Receiver.Flows): beyond the first flow_stats (stream, flow) pairs
	// seen, or of a flow without a flow id (MaxFlowStats and above).
	FlowsUntracked uint64
	Streams        [MaxStreams]StreamRx
}

// FlowRx is what a Receiver saw of one flow of one stream.
type FlowRx struct {
	Stream, Flow   int
	Packets, Bytes uint64
	// Latency of the flow's packets, ns.
	Latency Histogram
}

// Receiver counts received pktgen packets: per stream, loss from sequence
// numbers and reordering; latency (receive time minus embedded send time) into a
// histogram. Sender and receiver must share a clock (one process, one
// lcore.TSCClock) for the latencies to mean something. Owned by one lcore.
type Receiver struct {
	stats RxStats
	next  [MaxStreams]uint64 // next expected (extended) sequence number
	lost  uint64             // Lost summed over the streams
	late  uint64             // Late summed over the streams
	// Latency holds receive time minus send time of every pktgen packet, ns.
	Latency Histogram
	// flows are the tracked flows in the order first seen (at most
	// cap(flows)); slot[stream][id] is 1 + the index of (stream, flow id
	// - 1) in flows, 0 untracked so far.
	flows []FlowRx
	slot  *[MaxStreams][MaxFlowStats + 1]uint16
}

// NewReceiver makes an empty receiver that tracks the first flowStats
// (stream, flow) pairs it sees (0: none; at most MaxFlowStats).
func NewReceiver(flowStats int) *Receiver {
	r := &Receiver{}
	if flowStats = min(flowStats, MaxFlowStats); flowStats > 0 {
		r.flows = make([]FlowRx, 0, flowStats)
		r.slot = new([MaxStreams][MaxFlowStats + 1]uint16)
	}
	return r
}

// Flows are the tracked flows, in the order first seen. Read them when
// the loops are stopped (or through Blaster.ReadLive while they run).
func (r *Receiver) Flows() []FlowRx { return r.flows }

// Packet accounts one received frame at time now (ns). It never fails: frames
// that are not pktgen's are counted as Other.
func (r *Receiver) Packet(frame []byte, now int64) {
	r.stats.Packets++
	r.stats.Bytes += uint64(len(frame))
	off, ok := headerOffset(frame)
	if !ok {
		r.stats.Other++
		return
	}
	h := frame[off : off+HeaderLen]
	if binary.BigEndian.Uint16(h) != Magic {
		r.stats.Other++
		return
	}
	tag := binary.BigEndian.Uint16(h[2:])
	stream := tag & (MaxStreams - 1)
	s := &r.stats.Streams[stream]
	s.Packets++
	s.Bytes += uint64(len(frame))
	// Extend the 32-bit sequence number around the one expected (serial
	// number arithmetic, RFC 1982): valid while reordering stays under 2^31.
	next := r.next[stream]
	seq := next + uint64(int64(int32(binary.BigEndian.Uint32(h[4:])-uint32(next))))
	switch {
	case seq == next:
		r.next[stream] = seq + 1
	case seq > next:
		s.Lost += seq - next
		r.lost += seq - next
		r.next[stream] = seq + 1
	default:
		s.Late++
		r.late++
		if s.Lost > 0 {
			s.Lost--
			r.lost--
		}
	}
	s.Expected = r.next[stream]
	var fl *FlowRx
	if id := tag >> streamBits; id != 0 && r.slot != nil {
		k := &r.slot[stream][id]
		if *k == 0 && len(r.flows) < cap(r.flows) {
			r.flows = r.flows[:len(r.flows)+1] // cap was allocated by NewReceiver
			fl = &r.flows[len(r.flows)-1]
			fl.Stream, fl.Flow = int(stream), int(id)-1
			*k = uint16(len(r.flows))
		} else if *k != 0 {
			fl = &r.flows[*k-1]
		}
	}
	if fl != nil {
		fl.Packets++
		fl.Bytes += uint64(len(frame))
	} else {
		r.stats.FlowsUntracked++
	}
	if d := now - int64(binary.BigEndian.Uint64(h[8:])); d >= 0 {
		r.Latency.Record(d)
		if fl != nil {
			fl.Latency.Record(d)
		}
	} else {
		r.stats.NegLatency++
	}
}

// headerOffset finds the pktgen header of an untagged IPv4/UDP frame: after
// the UDP header, or after BTH and DataHeader for RoCEv2 (UDP port 4791).
func headerOffset(f []byte) (int, bool) {
	if len(f) < udpHdrOff+HeaderLen ||
		binary.BigEndian.Uint16(f[12:]) != wire.EtherTypeIPv4 ||
		f[ipOff] != 0x45 || f[ipOff+9] != wire.IPProtoUDP {
		return 0, false
	}
	off := udpHdrOff
	if binary.BigEndian.Uint16(f[udpOff+2:]) == wire.RoCEv2Port {
		off = roceHdrOff
		if len(f) < off+HeaderLen {
			return 0, false
		}
	}
	return off, true
}

// Stats returns the counters.
func (r *Receiver) Stats() *RxStats { return &r.stats }
