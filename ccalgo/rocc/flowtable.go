// RoCC flow table: RoCC (Menikkumbura et al., "Congestion Control for
// Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS 2023) Section
// III-D, option 1 ("a table of the flows currently in the queue", the default),
// sized like the 1,024-entry FPGA table of Section IV-C.

package rocc

import (
	"math/bits"

	"github.com/ccbed/ccbed/ccalgo"
)

// flowTable holds the flows that have packets in the queue, with a count of their
// packets, and the flows that entered the queue since the last fair-rate
// computation (seen), whether or not their packets are still queued. Entries
// live in a stable array (an entry keeps its index while it is in the table,
// so that OnEnqueue can hand its index to the engine as the packet's tag and
// OnDequeue can find it again without hashing), indexed by an open-addressing
// hash table (linear probing, backward-shift deletion, load factor at most
// 1/2) and listed in dense, in the order they came, for iteration. All memory
// is allocated by newFlowTable; no method allocates.
type flowTable struct {
	slots   []int32 // hash table: entry index + 1; 0 when empty
	mask    uint32
	entries []ftEntry // cap = capacity
	free    []int32   // indexes of unused entries
	dense   []int32   // entry index of every live entry; cap = capacity
	full    uint64    // enqueues of untracked flows refused because the table was full
	// queued is the sum of the entries' pkts. While it is 0 queueEmpty has
	// nothing to do: an entry with no packet that was not seen is deleted
	// when its count reaches 0, and by endInterval.
	queued int64
}

type ftEntry struct {
	key  ccalgo.FlowKey
	hash uint32
	slot uint32 // its index in slots
	pkts int32  // packets of the flow in the queue
	pos  int32  // index in dense; -1 when the entry is unused
	seen bool   // enqueued a packet since the last endInterval
}

// slotHash is the table's hash of a flow key: the key's two 64-bit words
// combined and multiplied once by 2^64 / phi (Fibonacci hashing), the product's
// upper half kept. One multiply per packet where ccalgo.FlowKey.Hash's
// finaliser takes three: at a load factor of at most 1/2 with linear probing,
// this is enough.
func slotHash(k *ccalgo.FlowKey) uint32 {
	a := uint64(k.SrcIP)<<32 | uint64(k.DstIP)
	b := uint64(k.SrcPort)<<48 | uint64(k.DstPort)<<32 | uint64(k.DestQP)
	return uint32(((a ^ bits.RotateLeft64(b, 29)) * 0x9e3779b97f4a7c15) >> 32)
}

// sameFlow compares two keys field by field. Keys reach the table through
// pointers (no 16-byte copy): the engine writes a packet's key field by field
// just before the hook, and a wide load of those narrow stores would stall on
// store forwarding.
func sameFlow(a, b *ccalgo.FlowKey) bool {
	return a.SrcIP == b.SrcIP && a.DstIP == b.DstIP && a.SrcPort == b.SrcPort && a.DstPort == b.DstPort && a.DestQP == b.DestQP
}

// newFlowTable returns a table that tracks at most capacity flows.
func newFlowTable(capacity int) flowTable {
	n := 2
	for n < 2*capacity {
		n <<= 1
	}
	t := flowTable{
		slots:   make([]int32, n),
		mask:    uint32(n - 1),
		entries: make([]ftEntry, capacity),
		free:    make([]int32, capacity),
		dense:   make([]int32, 0, capacity),
	}
	for i := range t.entries {
		t.entries[i].pos = -1
		t.free[i] = int32(capacity - 1 - i) // entry 0 is taken first
	}
	return t
}

// Len returns the number of tracked flows.
func (t *flowTable) Len() int { return len(t.dense) }

// add counts one more packet of key in the queue and returns the flow's entry
// index. It returns -1 when key is new and the table is full.
func (t *flowTable) add(key *ccalgo.FlowKey) int32 {
	h := slotHash(key)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		k := t.slots[i] - 1
		if k < 0 {
			if len(t.free) == 0 {
				t.full++
				return -1
			}
			k = t.free[len(t.free)-1]
			t.free = t.free[:len(t.free)-1]
			t.entries[k] = ftEntry{key: *key, hash: h, slot: i, pkts: 1, pos: int32(len(t.dense)), seen: true}
			t.slots[i] = k + 1
			t.dense = append(t.dense, k)
			t.queued++
			return k
		}
		if e := &t.entries[k]; e.hash == h && sameFlow(&e.key, key) {
			e.pkts++
			e.seen = true
			t.queued++
			return k
		}
	}
}

// find returns key's entry index, -1 when untracked.
func (t *flowTable) find(key *ccalgo.FlowKey) int32 {
	h := slotHash(key)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		k := t.slots[i] - 1
		if k < 0 {
			return -1
		}
		if e := &t.entries[k]; e.hash == h && sameFlow(&e.key, key) {
			return k
		}
	}
}

// remove counts one packet of key leaving the queue and forgets the flow when it
// has none left and was not seen in this interval. Unknown flows are ignored.
func (t *flowTable) remove(key *ccalgo.FlowKey) {
	if k := t.find(key); k >= 0 {
		t.leave(k)
	}
}

// removeAt is remove for a packet whose add returned entry k: no hashing
// when the entry still holds key (it may not: the flow may have been
// forgotten while the packet waited, see queueEmpty, and its entry reused).
func (t *flowTable) removeAt(k int32, key *ccalgo.FlowKey) {
	if k >= 0 && int(k) < len(t.entries) {
		if e := &t.entries[k]; e.pos >= 0 && sameFlow(&e.key, key) {
			t.leave(k)
			return
		}
	}
	t.remove(key)
}

// leave counts one packet of entry k leaving the queue.
func (t *flowTable) leave(k int32) {
	e := &t.entries[k]
	if e.pkts > 0 {
		e.pkts--
		t.queued--
	}
	if e.pkts == 0 && !e.seen {
		t.delete(k)
	}
}

// delete forgets entry k: it leaves dense (swap-remove), its hash slot is
// emptied and the probe sequences restored (backward shift).
func (t *flowTable) delete(k int32) {
	e := &t.entries[k]
	p := e.pos
	last := len(t.dense) - 1
	moved := t.dense[last]
	t.dense[p] = moved
	t.entries[moved].pos = p
	t.dense = t.dense[:last]
	e.pos = -1
	t.free = append(t.free, k)

	i := e.slot
	t.slots[i] = 0
	for j := (i + 1) & t.mask; t.slots[j] != 0; j = (j + 1) & t.mask {
		m := t.slots[j] - 1
		home := t.entries[m].hash & t.mask
		// Leave slot j when its home lies cyclically in (i, j].
		if i <= j {
			if i < home && home <= j {
				continue
			}
		} else if home > i || home <= j {
			continue
		}
		t.slots[i] = t.slots[j]
		t.entries[m].slot = i
		t.slots[j] = 0
		i = j
	}
}

// queueEmpty records that the queue holds no packet: every count is zeroed and
// the flows not seen in this interval are forgotten.
func (t *flowTable) queueEmpty() {
	if t.queued == 0 {
		return
	}
	t.queued = 0
	for d := len(t.dense) - 1; d >= 0; d-- {
		k := t.dense[d]
		t.entries[k].pkts = 0
		if !t.entries[k].seen {
			t.delete(k)
		}
	}
}

// endInterval starts a new computation interval: seen flags are cleared and the
// flows with no packet in the queue are forgotten.
func (t *flowTable) endInterval() {
	// Walking dense backwards visits every entry once: delete moves the last
	// (already visited) entry into position d.
	for d := len(t.dense) - 1; d >= 0; d-- {
		k := t.dense[d]
		t.entries[k].seen = false
		if t.entries[k].pkts == 0 {
			t.delete(k)
		}
	}
}

// packets returns the count of key's packets in the queue (0 when untracked).
func (t *flowTable) packets(key *ccalgo.FlowKey) int32 {
	if k := t.find(key); k >= 0 {
		return t.entries[k].pkts
	}
	return 0
}
