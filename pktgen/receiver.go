package pktgen

import (
	"encoding/binary"
	"math/bits"

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
	Streams    [MaxStreams]StreamRx
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
}

// NewReceiver makes an empty receiver.
func NewReceiver() *Receiver {
	r := &Receiver{}
	r.Latency.Reset()
	return r
}

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
	stream := binary.BigEndian.Uint16(h[2:])
	if binary.BigEndian.Uint16(h) != Magic || stream >= MaxStreams {
		r.stats.Other++
		return
	}
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
	if d := now - int64(binary.BigEndian.Uint64(h[8:])); d >= 0 {
		r.Latency.Record(d)
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

// Histogram bucket layout: values below 2*histSub ns are exact; above, each
// power of two is split into histSub buckets, so a percentile is within 1/histSub
// (1.6 %) of the true value.
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits) * histSub
)

// Histogram is a log-linear latency histogram in ns with exact count, sum, min
// and max. Record allocates nothing.
type Histogram struct {
	Count    uint64
	Sum      uint64 // ns
	Min, Max int64  // ns
	buckets  [histBuckets]uint64
}

// Reset empties the histogram.
func (h *Histogram) Reset() {
	*h = Histogram{Min: -1}
}

func histIndex(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1
	return (shift+1)*histSub + int(v>>uint(shift)) - histSub
}

// histRange is the [low, low+width) range of bucket i.
func histRange(i int) (low, width uint64) {
	if i < 2*histSub {
		return uint64(i), 1
	}
	shift := uint(i/histSub - 1)
	return uint64(i%histSub+histSub) << shift, 1 << shift
}

// Record adds one value (ns, >= 0).
func (h *Histogram) Record(v int64) {
	if v < 0 {
		v = 0
	}
	h.buckets[histIndex(uint64(v))]++
	h.Count++
	h.Sum += uint64(v)
	if h.Min < 0 || v < h.Min {
		h.Min = v
	}
	if v > h.Max {
		h.Max = v
	}
}

// Merge adds o's values into h.
func (h *Histogram) Merge(o *Histogram) {
	if o.Count == 0 {
		return
	}
	for i, n := range o.buckets {
		h.buckets[i] += n
	}
	h.Count += o.Count
	h.Sum += o.Sum
	if h.Min < 0 || o.Min < h.Min {
		h.Min = o.Min
	}
	h.Max = max(h.Max, o.Max)
}

// Mean is the average in ns (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return float64(h.Sum) / float64(h.Count)
}

// Quantile returns the q-quantile (0 < q <= 1) in ns: the middle of the bucket
// holding the ceil(q*Count)-th value, clamped to [Min, Max]; 0 when empty.
func (h *Histogram) Quantile(q float64) int64 {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(q * float64(h.Count))
	if float64(rank) < q*float64(h.Count) || rank == 0 {
		rank++
	}
	var cum uint64
	for i, n := range h.buckets {
		cum += n
		if cum >= rank {
			low, w := histRange(i)
			v := int64(low + w/2)
			return min(max(v, h.Min), h.Max)
		}
	}
	return h.Max
}

// LatencySummary is a Histogram's summary in microseconds.
type LatencySummary struct {
	Count uint64  `json:"count"`
	MinUs float64 `json:"min_us"`
	AvgUs float64 `json:"avg_us"`
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	MaxUs float64 `json:"max_us"`
}

// Summary summarises the histogram.
func (h *Histogram) Summary() LatencySummary {
	if h.Count == 0 {
		return LatencySummary{}
	}
	return LatencySummary{
		Count: h.Count,
		MinUs: float64(h.Min) / 1e3, AvgUs: h.Mean() / 1e3,
		P50Us: float64(h.Quantile(0.5)) / 1e3, P99Us: float64(h.Quantile(0.99)) / 1e3,
		MaxUs: float64(h.Max) / 1e3,
	}
}
