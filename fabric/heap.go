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
// skip, and the heap never holds more than the nodes and wires). The heap
// holds keys alone (an entry's index is the key's low bits), so a sift
// compares without following an index, a parent's four children are 32
// bytes, and the smallest of them is found by a tree of three compares with
// no loop. Nothing allocates after newAgenda.
type agenda struct {
	heap []uint64
	pos  []int32 // position of each entry in heap, -1 when absent
}

// keyID is the entry index packed into key k's low bits.
func keyID(k uint64) int32 { return int32(k & (maxIDs - 1)) }

func newAgenda(n int) *agenda {
	a := &agenda{heap: make([]uint64, 0, n), pos: make([]int32, n)}
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
		a.heap = append(a.heap, 0)
		a.up(len(a.heap)-1, k)
		return
	}
	old := a.heap[p]
	if k < old {
		a.up(int(p), k)
	} else if k > old {
		a.down(int(p), k)
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
	a.up(int(a.pos[keyID(last)]), last)
}

// top is the earliest entry and its key; the caller checked len.
func (a *agenda) top() (int, uint64) {
	k := a.heap[0]
	return int(keyID(k)), k
}

// up places key k at i or above.
func (a *agenda) up(i int, k uint64) {
	for i > 0 {
		p := (i - 1) / 4
		pk := a.heap[p]
		if pk <= k {
			break
		}
		a.heap[i] = pk
		a.pos[keyID(pk)] = int32(i)
		i = p
	}
	a.heap[i] = k
	a.pos[keyID(k)] = int32(i)
}

// down places key k at i or below.
func (a *agenda) down(i int, k uint64) {
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
		a.pos[keyID(mk)] = int32(i)
		i = m
	}
	h[i] = k
	a.pos[keyID(k)] = int32(i)
}
