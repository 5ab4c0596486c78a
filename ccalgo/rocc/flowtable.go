// RoCC flow table: RoCC (Menikkumbura et al., "Congestion Control for
// Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS 2023) Section
// III-D, option 1 ("a table of the flows currently in the queue", the default),
// sized like the 1,024-entry FPGA table of Section IV-C.

package rocc

import "github.com/ccbed/ccbed/ccalgo"

// flowTable holds the flows that have packets in the queue, with a count of their
// packets, and the flows that entered the queue since the last fair-rate
// computation (seen), whether or not their packets are still queued. It is an
// open-addressing hash table (linear probing, backward-shift deletion, load
// factor at most 1/2) plus a dense list of the occupied slots for iteration. All memory is allocated by newFlowTable; no method allocates.
type flowTable struct {
	slots []ftSlot
	mask  uint32
	dense []int32 // slot index of every live entry; cap = capacity
	full  uint64  // enqueues of untracked flows refused because the table was full
}

type ftSlot struct {
	key  ccalgo.FlowKey
	hash uint32
	pkts int32 // packets of the flow in the queue
	pos  int32 // index in dense; -1 when the slot is empty
	seen bool  // enqueued a packet since the last endInterval
}

// newFlowTable returns a table that tracks at most capacity flows.
func newFlowTable(capacity int) flowTable {
	n := 2
	for n < 2*capacity {
		n <<= 1
	}
	t := flowTable{
		slots: make([]ftSlot, n),
		mask:  uint32(n - 1),
		dense: make([]int32, 0, capacity),
	}
	for i := range t.slots {
		t.slots[i].pos = -1
	}
	return t
}

// Len returns the number of tracked flows.
func (t *flowTable) Len() int { return len(t.dense) }

// add counts one more packet of key in the queue. It reports false when key is new
// and the table is full.
func (t *flowTable) add(key ccalgo.FlowKey) bool {
	h := key.Hash()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.pos < 0 {
			if len(t.dense) == cap(t.dense) {
				t.full++
				return false
			}
			*s = ftSlot{key: key, hash: h, pkts: 1, pos: int32(len(t.dense)), seen: true}
			t.dense = append(t.dense, int32(i))
			return true
		}
		if s.hash == h && s.key == key {
			s.pkts++
			s.seen = true
			return true
		}
	}
}

// remove counts one packet of key leaving the queue and forgets the flow when it
// has none left and was not seen in this interval. Unknown flows are ignored.
func (t *flowTable) remove(key ccalgo.FlowKey) {
	h := key.Hash()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.pos < 0 {
			return
		}
		if s.hash == h && s.key == key {
			if s.pkts > 0 {
				s.pkts--
			}
			if s.pkts == 0 && !s.seen {
				t.delete(i)
			}
			return
		}
	}
}

// delete empties slot i and restores the probe sequences (backward shift).
func (t *flowTable) delete(i uint32) {
	// Swap-remove from the dense list.
	p := t.slots[i].pos
	last := len(t.dense) - 1
	moved := t.dense[last]
	t.dense[p] = moved
	t.slots[moved].pos = p
	t.dense = t.dense[:last]
	t.slots[i].pos = -1

	for j := (i + 1) & t.mask; t.slots[j].pos >= 0; j = (j + 1) & t.mask {
		home := t.slots[j].hash & t.mask
		// Leave slot j when its home lies cyclically in (i, j].
		if i <= j {
			if i < home && home <= j {
				continue
			}
		} else if home > i || home <= j {
			continue
		}
		t.slots[i] = t.slots[j]
		t.dense[t.slots[i].pos] = int32(i)
		t.slots[j].pos = -1
		i = j
	}
}

// queueEmpty records that the queue holds no packet: every count is zeroed and
// the flows not seen in this interval are forgotten.
func (t *flowTable) queueEmpty() {
	for k := len(t.dense) - 1; k >= 0; k-- {
		i := t.dense[k]
		t.slots[i].pkts = 0
		if !t.slots[i].seen {
			t.delete(uint32(i))
		}
	}
}

// endInterval starts a new computation interval: seen flags are cleared and the
// flows with no packet in the queue are forgotten.
func (t *flowTable) endInterval() {
	// Walking dense backwards visits every entry once: delete moves the last
	// (already visited) entry into position k, and backward shifts only change
	// which slot an entry occupies.
	for k := len(t.dense) - 1; k >= 0; k-- {
		i := t.dense[k]
		t.slots[i].seen = false
		if t.slots[i].pkts == 0 {
			t.delete(uint32(i))
		}
	}
}

// packets returns the count of key's packets in the queue (0 when untracked).
func (t *flowTable) packets(key ccalgo.FlowKey) int32 {
	h := key.Hash()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.pos < 0 {
			return 0
		}
		if s.hash == h && s.key == key {
			return s.pkts
		}
	}
}
