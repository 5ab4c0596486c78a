package hostd

import (
	"slices"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/ring"
)

// evKind says what an event from the receive side to the send side is.
type evKind uint8

const (
	evAck      evKind = iota + 1 // ACK for a sender QP
	evNak                        // go-back-N NAK
	evCNP                        // DCQCN CNP
	evFeedback                   // RoCC rate message, P4QCN / QCN feedback
	evPause                      // PFC: no data before t
)

// event is what the rx side hands the tx side: the decoded content of a control
// frame, so that the tx side, which owns every QP, never parses. Its slots in
// a ring start on a cache line (the event is padded to a multiple of one, and
// the ring's array is an allocation of a size class that is one too:
// TestEventLayout), and what an ACK, NAK or CNP touches is its first two lines:
// kind, QP, PSN and source, then the AckEvent the RP reads (the four words the
// tx side fills and the echo fields every scheme's ACK carries; INT, which
// only HPCC's carries, after them); a CNP touches the first line alone.
type event struct {
	eventFields
	_ [eventPad]byte
}

type eventFields struct {
	kind evKind
	qpn  uint32          // sender QP number the frame names (BTH DestQP, or the feedback's flow)
	psn  uint32          // ACK: last PSN received in order; NAK: PSN expected
	src  uint32          // the frame's IPv4 source (ACK, NAK, CNP: checked against the flow's destination)
	ack  ccalgo.AckEvent // ACK, NAK: Fields as the frame echoes them; the tx side fills the rest
	t    int64           // evPause: end of the pause, ns
	fb   ccalgo.Feedback
}

// eventPad pads an event to a whole number of cache lines.
const eventPad = (lineBytes - unsafe.Sizeof(eventFields{})%lineBytes) % lineBytes

// lineBytes is the cache line the event ring's slots are laid out on.
const lineBytes = 64

// evRing is the single-producer single-consumer ring of events between an
// rx side (the producer) and a tx side (the consumer); in 1-lcore mode the
// same goroutine does both. No lock, no allocation.
type evRing = ring.SPSC[event]

func newEvRing(size int) *evRing { return ring.New[event](size) }

// timerHeap is a binary min-heap of the RP timers of the sender QPs, keyed on
// time, with each QP's position so that a QP's timer can move in O(log n).
type timerHeap struct {
	t   []int64
	qp  []int32
	pos []int32 // index of each QP in the heap, -1 when absent
}

func newTimerHeap(n int) *timerHeap {
	h := &timerHeap{t: make([]int64, 0, n), qp: make([]int32, 0, n), pos: make([]int32, n)}
	for i := range h.pos {
		h.pos[i] = -1
	}
	return h
}

// grow makes room for the timers of n QPs (n at least the current number):
// set then allocates nothing.
func (h *timerHeap) grow(n int) {
	h.t = slices.Grow(h.t, n-len(h.t))
	h.qp = slices.Grow(h.qp, n-len(h.qp))
	for len(h.pos) < n {
		h.pos = append(h.pos, -1)
	}
}

func (h *timerHeap) len() int { return len(h.t) }

// set places QP qp's timer at t; ccalgo.Never removes it.
func (h *timerHeap) set(qp int32, t int64) {
	p := h.pos[qp]
	if t == ccalgo.Never {
		if p >= 0 {
			h.removeAt(p)
		}
		return
	}
	if p < 0 {
		p = int32(len(h.t))
		h.t = append(h.t, t) // within cap: no allocation
		h.qp = append(h.qp, qp)
		h.pos[qp] = p
		h.up(p)
		return
	}
	old := h.t[p]
	h.t[p] = t
	if t < old {
		h.up(p)
	} else {
		h.down(p)
	}
}

// top is the earliest timer; call only when len() > 0.
func (h *timerHeap) top() (int32, int64) { return h.qp[0], h.t[0] }

func (h *timerHeap) removeAt(p int32) {
	last := int32(len(h.t) - 1)
	h.pos[h.qp[p]] = -1
	if p != last {
		h.t[p], h.qp[p] = h.t[last], h.qp[last]
		h.pos[h.qp[p]] = p
	}
	h.t, h.qp = h.t[:last], h.qp[:last]
	if p != last {
		h.up(p)
		h.down(p)
	}
}

func (h *timerHeap) swap(i, j int32) {
	h.t[i], h.t[j] = h.t[j], h.t[i]
	h.qp[i], h.qp[j] = h.qp[j], h.qp[i]
	h.pos[h.qp[i]] = i
	h.pos[h.qp[j]] = j
}

func (h *timerHeap) up(i int32) {
	for i > 0 {
		p := (i - 1) / 2
		if h.t[p] <= h.t[i] {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *timerHeap) down(i int32) {
	n := int32(len(h.t))
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.t[r] < h.t[l] {
			m = r
		}
		if h.t[i] <= h.t[m] {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// flowTable maps a receiver flow key (source IPv4 << 32 | QP number) to a slot
// of the receiver's flow array, by open addressing with linear probing in a
// table allocated once (at most half full); remove uses backward-shift deletion,
// so no tombstones build up.
type flowTable struct {
	keys []uint64
	vals []int32 // slot + 1; 0 = empty
	mask uint64
}

func newFlowTable(maxFlows int) *flowTable {
	size := 1
	for size < 2*maxFlows {
		size <<= 1
	}
	return &flowTable{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
}

func hash64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// find returns the table index of key and true, or the empty index where it
// would go and false.
func (t *flowTable) find(key uint64) (uint64, bool) {
	for i := hash64(key) & t.mask; ; i = (i + 1) & t.mask {
		if t.vals[i] == 0 {
			return i, false
		}
		if t.keys[i] == key {
			return i, true
		}
	}
}

// insertAt stores key -> slot at the empty index i that find returned.
func (t *flowTable) insertAt(i uint64, key uint64, slot int32) {
	t.keys[i] = key
	t.vals[i] = slot + 1
}

// remove deletes key, shifting back the entries of its probe run.
func (t *flowTable) remove(key uint64) {
	i, ok := t.find(key)
	if !ok {
		return
	}
	for {
		t.vals[i] = 0
		j := i
		for {
			j = (j + 1) & t.mask
			if t.vals[j] == 0 {
				return
			}
			h := hash64(t.keys[j]) & t.mask
			// Entry j may fill the hole at i unless its home h lies
			// cyclically in (i, j].
			var stays bool
			if i <= j {
				stays = i < h && h <= j
			} else {
				stays = i < h || h <= j
			}
			if !stays {
				t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
				i = j
				break
			}
		}
	}
}
