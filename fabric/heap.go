package fabric

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// The driver's agenda holds one entry per node (its next wake-up) and one per
// wire carrying frames (its oldest frame's arrival). An entry's key packs the
// time into the high bits and the entry's index into the low bits: entries of
// equal time order by index, so that a run is deterministic, and comparing two
// entries is one integer compare. The fabric numbers its entries (node n is
// entry n, wire w entry nodes + w); an lp's agenda holds its own entries
// alone, numbered in the fabric's order (lp.glob), so that they order as the
// fabric's numbers do.
const (
	idBits = 21
	// MaxTimeNs is the latest time the virtual clock can reach (about 73 min).
	MaxTimeNs = 1<<(63-idBits) - 1
	// maxIDs bounds the nodes plus the wires of a fabric.
	maxIDs = 1 << idBits
)

func entryKey(t int64, id int) uint64 { return uint64(t)<<idBits | uint64(id) }

func keyTime(k uint64) int64 { return int64(k >> idBits) }

// keyID is the entry index packed into key k's low bits.
func keyID(k uint64) int32 { return int32(k & (maxIDs - 1)) }

func checkIDs(nodes, wires int) error {
	if nodes+wires > maxIDs {
		return fmt.Errorf("fabric: %d nodes and %d link directions: at most %d in all", nodes, wires, maxIDs)
	}
	return nil
}

// The agenda's ring: one bucket a nanosecond for the ringSize nanoseconds
// from the agenda's base on, found through a two-level bitmap (a bit a
// bucket, and a bit a word of those), so ringSize is at most 64 x 64.
const (
	ringBits  = 12
	ringSize  = 1 << ringBits
	ringMask  = ringSize - 1
	ringWords = ringSize / 64
	offRing   = -2 // slot.prev of an entry not in the agenda
	inFar     = -3 // slot.prev of an entry in far
)

// agenda is the driver's event list over entries 0 .. n-1, each in it at
// most once: take the earliest entry (by time, then index) and move entries
// to later times. Nearly every entry it is given lies within a few
// microseconds of the event being run (a frame's arrival one serialisation
// and one link delay ahead, a shaper's next departure), a front about two
// entries a nanosecond thick on the 128-host leaf-spine, where a heap spends
// a sift of several levels on every move. So an entry due within ringSize ns
// of the base (the time of the event being run, which no entry precedes)
// goes into a ring of one-nanosecond buckets, each a list of its entries in
// index order, and the earliest is the first entry of the first non-empty
// bucket from the base's, found with two trailing-zero counts; an entry due
// later (a timer, a flow's start) goes into a 4-ary heap, far, and the
// earliest entry is the earlier of the two minima. Moving an entry is an
// unlink and a link; nothing moves between the two parts but the entry being
// set, and nothing allocates after newAgenda.
//
// The drivers never set an entry earlier than the base (NextWake returns no
// earlier than now; a frame arrives no earlier than it was sent; a frame
// posted between partitions arrives after the window its sender ran in,
// which the receiver's clock has not passed). Such a set would still be
// served in order, from far; early counts them, and the digest tests check
// that it stays 0.
type agenda struct {
	base  int64  // no entry is earlier: the time of the event being run
	n     int    // entries in the agenda
	early int64  // sets before base (each went to far)
	sum   uint64 // bit w: bits[w] != 0
	slots []slot
	far   heap4
	bits  [ringWords]uint64
	head  [ringSize]int32 // first entry of each bucket, -1 when empty
}

// slot is an entry's place: in the ring, its key and its neighbours in its
// bucket's list (prev -1 for the first); in far, prev inFar and next its
// position in far's heap; prev offRing when the entry is in neither.
type slot struct {
	key        uint64
	next, prev int32
}

// newAgenda is an agenda over entries 0 .. n-1: an lp's own entries (its
// nodes and the wires into them), numbered by the lp (lp.glob).
func newAgenda(n int) *agenda {
	a := &agenda{slots: make([]slot, n)}
	for i := range a.slots {
		a.slots[i].prev = offRing
	}
	a.far = heap4{heap: make([]uint64, 0, n), slots: a.slots}
	for i := range a.head {
		a.head[i] = -1
	}
	return a
}

// agendaBytes is the memory of an agenda over n entries as newAgenda makes
// it: the ring and its bitmap (16.9 KB), a slot an entry (16 bytes) and the
// heap's room (8 bytes an entry).
func agendaBytes(n int) int {
	return int(unsafe.Sizeof(agenda{})) + n*int(unsafe.Sizeof(slot{})+unsafe.Sizeof(uint64(0)))
}

// bytes is the memory the agenda holds (agendaBytes of its entries, the heap
// as large as it has grown).
func (a *agenda) bytes() int {
	return int(unsafe.Sizeof(*a)) + cap(a.slots)*int(unsafe.Sizeof(slot{})) + cap(a.far.heap)*int(unsafe.Sizeof(uint64(0)))
}

func (a *agenda) len() int { return a.n }

// at moves the base to t, the time of the event about to run: no entry may
// be earlier than t. The base never goes back (an entry set before the base
// runs from far at its own time, the base staying).
func (a *agenda) at(t int64) { a.base = max(a.base, t) }

// set puts entry id at time t, inserting it or moving it. Its common case,
// an entry in the ring moved within the ring, is unlink and link written
// out: neither inlines, and two calls cost this path a quarter more
// instructions.
func (a *agenda) set(id int, t int64) {
	k := entryKey(t, id)
	s := &a.slots[id]
	if s.prev < -1 || uint64(t-a.base) >= ringSize {
		a.setSlow(id, t, k)
		return
	}
	if s.key == k {
		return
	}
	nx, pv := s.next, s.prev // unlink
	if nx >= 0 {
		a.slots[nx].prev = pv
	}
	if pv >= 0 {
		a.slots[pv].next = nx
	} else {
		b := int(s.key>>idBits) & ringMask
		a.head[b] = nx
		if nx < 0 {
			a.unmark(b)
		}
	}
	b := int(t) & ringMask // link
	h := a.head[b]
	if h >= 0 && a.slots[h].key < k {
		a.linkAfter(int32(id), s, k, h)
		return
	}
	s.key, s.prev, s.next = k, -1, h
	if h >= 0 {
		a.slots[h].prev = int32(id)
	} else {
		a.mark(b)
	}
	a.head[b] = int32(id)
}

// setSlow is set for an entry that is not in the ring or is to leave it.
func (a *agenda) setSlow(id int, t int64, k uint64) {
	s := &a.slots[id]
	inRing := uint64(t-a.base) < ringSize
	switch s.prev {
	case offRing:
		a.n++
	case inFar:
		if !inRing {
			a.far.set(id, k)
			a.early += int64(b2i(t < a.base))
			return
		}
		a.far.remove(id)
	default:
		a.unlink(s)
	}
	if inRing {
		a.link(int32(id), s, k)
		return
	}
	a.early += int64(b2i(t < a.base))
	a.far.set(id, k)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// remove takes entry id out of the agenda (no-op when absent).
func (a *agenda) remove(id int) {
	switch s := &a.slots[id]; s.prev {
	case offRing:
		return
	case inFar:
		a.far.remove(id)
	default:
		a.unlink(s)
	}
	a.n--
}

// top is the earliest entry and its key; the caller checked len.
func (a *agenda) top() (int, uint64) {
	k := uint64(math.MaxUint64)
	if a.sum != 0 {
		k = a.slots[a.head[a.first()]].key
	}
	if len(a.far.heap) > 0 && a.far.heap[0] < k {
		k = a.far.heap[0]
	}
	return int(keyID(k)), k
}

// first is the ring's first non-empty bucket from the base's (the ring is
// not empty): the base's word above the base's bit, then the words after
// it, then, past the ring's end, the words from the first on.
func (a *agenda) first() int {
	b0 := int(a.base) & ringMask
	w := b0 >> 6
	if m := a.bits[w] >> uint(b0&63); m != 0 {
		return b0 + bits.TrailingZeros64(m)
	}
	s := a.sum >> uint(w+1) << uint(w+1)
	if s == 0 {
		s = a.sum
	}
	w = bits.TrailingZeros64(s) & (ringWords - 1)
	return w<<6 | bits.TrailingZeros64(a.bits[w])
}

// link puts entry id (slot s) at key k into its bucket, after the entries
// of smaller index.
func (a *agenda) link(id int32, s *slot, k uint64) {
	b := int(k>>idBits) & ringMask
	h := a.head[b]
	if h >= 0 && a.slots[h].key < k {
		a.linkAfter(id, s, k, h)
		return
	}
	s.key, s.prev, s.next = k, -1, h
	if h >= 0 {
		a.slots[h].prev = id
	} else {
		a.mark(b)
	}
	a.head[b] = id
}

// linkAfter is link for a bucket whose first entry, c, precedes k (out of
// line: rare, and set's path stays short).
//
//go:noinline
func (a *agenda) linkAfter(id int32, s *slot, k uint64, c int32) {
	for {
		nx := a.slots[c].next
		if nx < 0 || a.slots[nx].key > k {
			break
		}
		c = nx
	}
	nx := a.slots[c].next
	s.key, s.prev, s.next = k, c, nx
	if nx >= 0 {
		a.slots[nx].prev = id
	}
	a.slots[c].next = id
}

// unlink takes the entry of slot s out of its bucket.
func (a *agenda) unlink(s *slot) {
	nx, pv := s.next, s.prev
	s.prev = offRing
	if nx >= 0 {
		a.slots[nx].prev = pv
	}
	if pv >= 0 {
		a.slots[pv].next = nx
		return
	}
	b := int(s.key>>idBits) & ringMask
	a.head[b] = nx
	if nx < 0 {
		a.unmark(b)
	}
}

// mark sets the bits of bucket b, no longer empty.
func (a *agenda) mark(b int) {
	a.bits[b>>6] |= 1 << uint(b&63)
	a.sum |= 1 << uint(b>>6)
}

// unmark clears the bits of bucket b, now empty.
func (a *agenda) unmark(b int) {
	w := b >> 6
	a.bits[w] &^= 1 << uint(b&63)
	if a.bits[w] == 0 {
		a.sum &^= 1 << uint(w)
	}
}

// heap4 is an indexed 4-ary min-heap of keys of entries 0 .. n-1 (the
// agenda's far): each entry is in it at most once, and moving an entry's
// key is one sift (no stale entries to skip). The heap holds keys alone (an
// entry's index is the key's low bits), so a sift compares without
// following an index, a parent's four children are 32 bytes, and the
// smallest of them is found by a tree of three compares with no loop. An
// entry's position is in its agenda slot (next, while prev is inFar).
// Nothing allocates while the heap holds no more entries than its capacity.
type heap4 struct {
	heap  []uint64
	slots []slot
}

// set puts entry id at key k (whose low bits are id), inserting it or
// moving it.
func (a *heap4) set(id int, k uint64) {
	s := &a.slots[id]
	if s.prev != inFar {
		s.prev = inFar
		a.heap = append(a.heap, 0)
		a.up(len(a.heap)-1, k)
		return
	}
	p := s.next
	old := a.heap[p]
	if k < old {
		a.up(int(p), k)
	} else if k > old {
		a.down(int(p), k)
	}
}

// remove takes entry id, which is in the heap, out of it.
func (a *heap4) remove(id int) {
	s := &a.slots[id]
	p := s.next
	s.prev, s.next = offRing, -1
	n := len(a.heap) - 1
	last := a.heap[n]
	a.heap = a.heap[:n]
	if int(p) == n {
		return
	}
	a.down(int(p), last)
	a.up(int(a.slots[keyID(last)].next), last)
}

// up places key k at i or above.
func (a *heap4) up(i int, k uint64) {
	for i > 0 {
		p := (i - 1) / 4
		pk := a.heap[p]
		if pk <= k {
			break
		}
		a.heap[i] = pk
		a.slots[keyID(pk)].next = int32(i)
		i = p
	}
	a.heap[i] = k
	a.slots[keyID(k)].next = int32(i)
}

// down places key k at i or below.
func (a *heap4) down(i int, k uint64) {
	h := a.heap
	n := len(h)
	for {
		c := 4*i + 1
		var m int
		var mk uint64
		if c+3 < n {
			// Four children: the smaller of each pair, then of the two.
			// Keys are distinct (each holds its entry's index), so this is
			// the one minimum a scan finds.
			c4 := h[c : c+4 : c+4]
			m, mk = c, c4[0]
			if c4[1] < mk {
				m, mk = c+1, c4[1]
			}
			m2, mk2 := c+2, c4[2]
			if c4[3] < mk2 {
				m2, mk2 = c+3, c4[3]
			}
			if mk2 < mk {
				m, mk = m2, mk2
			}
		} else {
			if c >= n {
				break
			}
			m, mk = c, h[c]
			for j := c + 1; j < n; j++ {
				if jk := h[j]; jk < mk {
					m, mk = j, jk
				}
			}
		}
		if k <= mk {
			break
		}
		h[i] = mk
		a.slots[keyID(mk)].next = int32(i)
		i = m
	}
	h[i] = k
	a.slots[keyID(k)].next = int32(i)
}
