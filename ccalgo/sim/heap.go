package sim

// Event kinds of the simulator.
const (
	evFlowStart    uint8 = iota + 1 // a = flow
	evHostFree                      // a = host: its NIC finished a packet
	evHostWake                      // a = host: a pacing / halt time has come
	evSwitchArrive                  // b = packet: last bit reached the switch
	evLinkFree                      // the bottleneck finished a packet
	evRxArrive                      // b = packet: last bit reached the receiver
	evAck                           // a = flow, b = ack slot
	evNak                           // a = flow, b = ack slot
	evCNP                           // a = flow
	evFeedback                      // a = flow, b = feedback slot
	evRPTimer                       // a = flow
	evCPTimer                       // CP timer
	evRTO                           // a = flow: retransmission timeout check
	evSample                        // time-series sample
	evDelayedAck                    // a = flow: delayed-ACK timer
)

// event is one scheduled happening. seq breaks ties between events of the same
// time in the order they were scheduled, which makes runs deterministic.
type event struct {
	t    int64
	seq  uint64
	a, b int32
	kind uint8
}

// eventHeap is a binary min-heap of events ordered by (t, seq). It is written out
// by hand (not container/heap) so that push and pop neither box nor allocate once
// the backing slice has grown to the run's peak size.
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) less(i, j int) bool {
	a, b := &h.ev[i], &h.ev[j]
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(t int64, kind uint8, a, b int32) {
	h.seq++
	h.ev = append(h.ev, event{t: t, seq: h.seq, a: a, b: b, kind: kind})
	i := len(h.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.ev[i], h.ev[p] = h.ev[p], h.ev[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	top := h.ev[0]
	n := len(h.ev) - 1
	h.ev[0] = h.ev[n]
	h.ev = h.ev[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.ev[i], h.ev[m] = h.ev[m], h.ev[i]
		i = m
	}
	return top
}
