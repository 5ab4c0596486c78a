package fabric

import "fmt"

// The driver's agenda holds one entry per node (its next wake-up) and one per
// wire carrying frames (its oldest frame's arrival). An entry's key packs the
// time into the high bits and the entry's index into the low bits: entries of
// equal time order by index, so that a run is deterministic, and comparing two
// entries is one integer compare.
const (
	idBits = 21
	// MaxTimeNs is the latest time the virtual clock can reach (about 73 min).
	MaxTimeNs = 1<<(63-idBits) - 1
	// maxIDs bounds the nodes plus the wires of a fabric.
	maxIDs = 1 << idBits
)

func entryKey(t int64, id int) uint64 { return uint64(t)<<idBits | uint64(id) }

func keyTime(k uint64) int64 { return int64(k >> idBits) }

func checkIDs(nodes, wires int) error {
	if nodes+wires > maxIDs {
		return fmt.Errorf("fabric: %d nodes and %d link directions: at most %d in all", nodes, wires, maxIDs)
	}
	return nil
}

// agenda is an indexed 4-ary min-heap of entries 0 .. n-1: each entry is in
// it at most once, and moving an entry's time is one sift (no stale entries to
// skip, and the heap never holds more than the nodes and wires). Keys sit in
// the heap array itself, so a sift compares without following an index; a
// 4-ary heap is shallower than a binary one and a parent's four children
// share a cache line. Nothing allocates after newAgenda.
type agenda struct {
	heap []slot
	pos  []int32 // position of each entry in heap, -1 when absent
}

type slot struct {
	key uint64
	id  int32
}

func newAgenda(n int) *agenda {
	a := &agenda{heap: make([]slot, 0, n), pos: make([]int32, n)}
	for i := range a.pos {
		a.pos[i] = -1
	}
	return a
}

func (a *agenda) len() int { return len(a.heap) }

// set puts entry id at time t, inserting it or moving it.
func (a *agenda) set(id int, t int64) {
	k := entryKey(t, id)
	p := a.pos[id]
	if p < 0 {
		a.heap = append(a.heap, slot{})
		a.up(len(a.heap)-1, slot{k, int32(id)})
		return
	}
	old := a.heap[p].key
	if k < old {
		a.up(int(p), slot{k, int32(id)})
	} else if k > old {
		a.down(int(p), slot{k, int32(id)})
	}
}

// remove takes entry id out of the agenda (no-op when absent).
func (a *agenda) remove(id int) {
	p := a.pos[id]
	if p < 0 {
		return
	}
	a.pos[id] = -1
	n := len(a.heap) - 1
	last := a.heap[n]
	a.heap = a.heap[:n]
	if int(p) == n {
		return
	}
	a.down(int(p), last)
	a.up(int(a.pos[last.id]), last)
}

// top is the earliest entry and its key; the caller checked len.
func (a *agenda) top() (int, uint64) {
	s := &a.heap[0]
	return int(s.id), s.key
}

// up places s at i or above.
func (a *agenda) up(i int, s slot) {
	for i > 0 {
		p := (i - 1) / 4
		ps := a.heap[p]
		if ps.key <= s.key {
			break
		}
		a.heap[i] = ps
		a.pos[ps.id] = int32(i)
		i = p
	}
	a.heap[i] = s
	a.pos[s.id] = int32(i)
}

// down places s at i or below.
func (a *agenda) down(i int, s slot) {
	h := a.heap
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m, mk := c, h[c].key
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if jk := h[j].key; jk < mk {
				m, mk = j, jk
			}
		}
		if s.key <= mk {
			break
		}
		h[i] = h[m]
		a.pos[h[i].id] = int32(i)
		i = m
	}
	h[i] = s
	a.pos[s.id] = int32(i)
}
