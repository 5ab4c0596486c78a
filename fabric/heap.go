package fabric

import "fmt"

// An event is a scheduled wake-up of a node, or the arrival of a wire's oldest
// frame, packed into one uint64 key: the time in the high bits, then the kind,
// then the node's or wire's index. Events of equal time order by kind and
// index, so that a run is deterministic, and comparing two events is one
// integer compare.
const (
	idBits   = 20
	kindBit  = 1 << idBits
	timeBits = 63 - idBits - 1
	// MaxTimeNs is the latest time the virtual clock can reach (about 73 min).
	MaxTimeNs = 1<<timeBits - 1
	// maxIDs bounds the nodes and the wires of a fabric.
	maxIDs = 1 << idBits
)

const (
	evNode uint64 = 0
	evWire uint64 = kindBit
)

func eventKey(t int64, kind uint64, id int) uint64 {
	return uint64(t)<<(idBits+1) | kind | uint64(id)
}

func keyTime(k uint64) int64  { return int64(k >> (idBits + 1)) }
func keyKind(k uint64) uint64 { return k & kindBit }
func keyID(k uint64) int      { return int(k & (kindBit - 1)) }

func checkIDs(nodes, wires int) error {
	if nodes > maxIDs || wires > maxIDs {
		return fmt.Errorf("fabric: %d nodes and %d link directions: at most %d of each", nodes, wires, maxIDs)
	}
	return nil
}

// eventHeap is a 4-ary min-heap of event keys: shallower than a binary heap,
// and a node's four children share a cache line. No allocation once its slice
// has grown.
type eventHeap struct {
	k []uint64
}

func (h *eventHeap) len() int { return len(h.k) }

func (h *eventHeap) push(key uint64) {
	h.k = append(h.k, key)
	i := len(h.k) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h.k[p] <= key {
			break
		}
		h.k[i] = h.k[p]
		i = p
	}
	h.k[i] = key
}

// top is the earliest event; the caller checked len.
func (h *eventHeap) top() uint64 { return h.k[0] }

func (h *eventHeap) pop() uint64 {
	top := h.k[0]
	n := len(h.k) - 1
	x := h.k[n]
	h.k = h.k[:n]
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h.k[j] < h.k[m] {
				m = j
			}
		}
		if x <= h.k[m] {
			break
		}
		h.k[i] = h.k[m]
		i = m
	}
	h.k[i] = x
	return top
}
