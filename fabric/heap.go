package fabric

// event is a scheduled wake-up of a node or the arrival of a wire's oldest
// frame. seq orders events of equal time by scheduling order, so that a run is
// deterministic.
type event struct {
	t    int64
	seq  uint64
	kind uint8
	id   int32 // node or wire index
}

const (
	evNode uint8 = iota
	evWire
)

// eventHeap is a binary min-heap of events on (t, seq). Values, not pointers:
// no allocation once its slice has grown.
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) len() int { return len(h.ev) }

func (h *eventHeap) less(i, j int) bool {
	a, b := &h.ev[i], &h.ev[j]
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

func (h *eventHeap) push(t int64, kind uint8, id int32) {
	h.seq++
	h.ev = append(h.ev, event{t: t, seq: h.seq, kind: kind, id: id})
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

// top is the earliest event; the caller checked len.
func (h *eventHeap) top() *event { return &h.ev[0] }

func (h *eventHeap) pop() event {
	e := h.ev[0]
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
	return e
}
