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
// live in a stable array (an entry keeps its index while it is in the table),
// indexed by an open-addressing hash table (linear probing, backward-shift
// deletion, load factor at most 1/2) and listed in dense, in the order they
// came, for iteration. A packet's enqueue finds its flow by the hash; its
// dequeue by the tag the enqueue gave it (tag): the entry's index and its
// generation, which changes each time the entry leaves dense, so that a tag whose
// flow has left the table since is told from a live one without comparing
// keys or hashing.
//
// A flow that leaves the table (delete: out of dense, its generation
// advanced) keeps its entry, key and hash slot (parked): when it comes back,
// add finds it by its key and lists it again as insert would list a new
// flow, without the hash table's delete (emptying the slot, restoring the
// probe sequences) and insert (probing for a slot, taking an unused
// entry). This is the steady state at each fair-rate computation, where
// every flow with no packet queued leaves (endInterval) and comes back with
// its next packet. A parked entry is freed only when a new flow finds no
// unused one (unpark), so the table refuses a new flow only when capacity
// flows are listed; parked entries count in the load factor (at most 1/2,
// as before: entries, listed or parked, are at most capacity). All memory
// is allocated by newFlowTable; no method allocates.
type flowTable struct {
	slots   []int32 // hash table: entry index + 1; 0 when empty
	mask    uint32
	entries []ftEntry // cap = capacity
	free    []int32   // indexes of unused entries
	dense   []int32   // entry index of every live entry; cap = capacity
	// parked lists the entries that left dense and may still hold their
	// hash slot (ftEntry.parked); one listed again stays in it, and unpark
	// passes it over. cap = capacity.
	parked []int32
	full   uint64 // enqueues of untracked flows refused because the table was full
	// queued is the sum of the entries' pkts. While it is 0 queueEmpty has
	// nothing to do: an entry with no packet that was not seen is deleted
	// when its count reaches 0, and by endInterval.
	queued int64
}

type ftEntry struct {
	w    flowWords // the flow's key
	hash uint32
	slot uint32 // its index in slots
	pkts int32  // packets of the flow in the queue
	pos  int32  // index in dense; -1 when the entry is not listed (parked or unused)
	gen  uint16 // 1 to 65535, advanced each time the entry leaves dense: its tags' upper half
	seen bool   // enqueued a packet since the last endInterval
	// parked: the entry is in the parked list (it holds its hash slot
	// until unpark frees it).
	parked bool
}

// flowWords is a flow key as two 64-bit words, the form the table keeps
// and compares (two comparisons where the key's fields take five), in the
// frame's byte order (FlowWords): a switch reads them from a frame with three
// loads and no byte swaps, and a FlowKey converts with five swaps.
type flowWords struct{ a, b uint64 }

// FlowWords is a flow key in the byte order of its frame, as a little-endian
// machine loads it: A is the IPv4 header's bytes 12-19 (source and
// destination address), B's lower half the UDP header's bytes 0-3 (source
// and destination port), its upper half the BTH's bytes 4-7 with the lowest
// byte (the reserved one before the destination QP) cleared, 0 without a
// BTH. FlowWordsOf and Key convert from and to a ccalgo.FlowKey.
type FlowWords struct{ A, B uint64 }

// FlowWordsOf returns k's FlowWords.
func FlowWordsOf(k *ccalgo.FlowKey) FlowWords {
	w := wordsOf(k)
	return FlowWords{w.a, w.b}
}

// Key returns w's flow key.
func (w FlowWords) Key() ccalgo.FlowKey { return flowWords{w.A, w.B}.key() }

// wordsOf packs k. Keys reach the table through pointers and are read field
// by field: the engine writes a packet's key field by field just before the
// hook, and a wide load of those narrow stores would stall on store
// forwarding.
func wordsOf(k *ccalgo.FlowKey) flowWords {
	return flowWords{uint64(bits.ReverseBytes32(k.SrcIP)) | uint64(bits.ReverseBytes32(k.DstIP))<<32,
		uint64(bits.ReverseBytes16(k.SrcPort)) | uint64(bits.ReverseBytes16(k.DstPort))<<16 |
			uint64(bits.ReverseBytes32(k.DestQP))<<32}
}

// key unpacks w.
func (w flowWords) key() ccalgo.FlowKey {
	return ccalgo.FlowKey{SrcIP: bits.ReverseBytes32(uint32(w.a)), DstIP: bits.ReverseBytes32(uint32(w.a >> 32)),
		SrcPort: bits.ReverseBytes16(uint16(w.b)), DstPort: bits.ReverseBytes16(uint16(w.b >> 16)),
		DestQP: bits.ReverseBytes32(uint32(w.b >> 32))}
}

// hash is the table's hash of a flow key: its two words combined and
// multiplied once by 2^64 / phi (Fibonacci hashing), the product's upper
// half kept. One multiply per packet where ccalgo.FlowKey.Hash's finaliser
// takes three: at a load factor of at most 1/2 with linear probing, this is
// enough.
func (w flowWords) hash() uint32 {
	return uint32(((w.a ^ bits.RotateLeft64(w.b, 29)) * 0x9e3779b97f4a7c15) >> 32)
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
		parked:  make([]int32, 0, capacity),
	}
	for i := range t.entries {
		t.entries[i].pos = -1
		t.entries[i].gen = 1
		t.free[i] = int32(capacity - 1 - i) // entry 0 is taken first
	}
	return t
}

// Len returns the number of tracked flows.
func (t *flowTable) Len() int { return len(t.dense) }

// add counts one more packet of key in the queue and returns the packet's
// tag: the flow's entry index in the lower 16 bits (capacity is at most
// MaxFlowTableSize), the entry's generation in the upper 16. It returns 0
// when key is new and the table is full (a generation is never 0, so no
// counted packet's tag is 0).
func (t *flowTable) add(w flowWords) uint32 {
	h := w.hash()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		k := t.slots[i] - 1
		if k < 0 {
			return t.insert(w, h, i)
		}
		if e := &t.entries[k]; e.w == w {
			if !e.seen { // first packet in this interval: listed or parked
				t.see(e, k)
			}
			e.pkts++
			t.queued++
			return uint32(e.gen)<<16 | uint32(k)
		}
	}
}

// see marks entry k (e) seen in this interval and, when it is parked (a
// parked entry is never seen), lists it again as insert would list a new
// entry, at the end of dense.
func (t *flowTable) see(e *ftEntry, k int32) {
	e.seen = true
	if e.pos < 0 {
		e.pos = int32(len(t.dense))
		t.dense = append(t.dense, k)
	}
}

// insert is add for a key w not in the table, whose probe ended at the
// empty slot i; h is its hash.
func (t *flowTable) insert(w flowWords, h, i uint32) uint32 {
	if len(t.free) == 0 {
		if !t.unpark() {
			t.full++
			return 0
		}
		// Freeing the parked entry's slot may have moved others: probe
		// again (w is still not in the table).
		for i = h & t.mask; t.slots[i] != 0; i = (i + 1) & t.mask {
		}
	}
	k := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	e := &t.entries[k]
	*e = ftEntry{w: w, hash: h, slot: i, pkts: 1, pos: int32(len(t.dense)), gen: e.gen, seen: true}
	t.slots[i] = k + 1
	t.dense = append(t.dense, k)
	t.queued++
	return uint32(e.gen)<<16 | uint32(k)
}

// leaveTag counts one packet leaving the queue whose add returned tag,
// while the tag's entry has not been freed since: its generation is the
// tag's and it still holds the packet's key, so remove would find it; the
// count goes down without hashing. It reports false, doing nothing, for a
// stale tag (the flow left the table while the packet waited: queueEmpty
// or endInterval after a count that undercounted, with several priorities
// sharing the CP) or 0: the caller then takes remove's lookup. An entry
// leaves dense at most twice per interval (once at endInterval, once by leave or
// queueEmpty after it), so a stale tag cannot pass for a live one unless
// its packet waits through 32,767 intervals (1.3 s at T = 40 us).
func (t *flowTable) leaveTag(tag uint32) bool {
	k := tag & 0xffff
	if k >= uint32(len(t.entries)) {
		return false
	}
	e := &t.entries[k]
	if uint32(e.gen) != tag>>16 {
		return false
	}
	if e.pkts > 1 { // leave's commonest case, inline
		e.pkts--
		t.queued--
		return true
	}
	t.leave(int32(k))
	return true
}

// removeTag is remove for a packet whose add returned tag (leaveTag, or
// remove when the tag is stale).
func (t *flowTable) removeTag(tag uint32, key *ccalgo.FlowKey) {
	if !t.leaveTag(tag) {
		t.remove(key)
	}
}

// removeTags is removeTag for packets that left the queue one after
// another: tags[i] is the i-th one's, keys.FlowKey(i) its key (asked for
// only for a stale tag). leaveTag and leave are written out in its loop, a
// packet costing no call.
func (t *flowTable) removeTags(tags []uint32, keys FlowKeys) {
	entries := t.entries
	left := int64(0) // packets counted down and not yet taken from t.queued
	for i, tag := range tags {
		if k := int(uint16(tag)); k < len(entries) {
			if e := &entries[k]; uint32(e.gen) == tag>>16 {
				p := e.pkts
				if p > 0 {
					p--
					e.pkts = p
					left++
				}
				if p == 0 && !e.seen {
					t.delete(int32(k)) // neither reads nor writes t.queued
				}
				continue
			}
		}
		t.queued -= left
		left = 0
		t.remove(keys.FlowKey(i))
	}
	t.queued -= left
}

// find returns key's entry index, -1 when untracked.
func (t *flowTable) find(key *ccalgo.FlowKey) int32 {
	w := wordsOf(key)
	for i := w.hash() & t.mask; ; i = (i + 1) & t.mask {
		k := t.slots[i] - 1
		if k < 0 {
			return -1
		}
		if e := &t.entries[k]; e.w == w {
			if e.pos < 0 { // parked: not in the table
				return -1
			}
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

// delete forgets entry k: it leaves dense (swap-remove), its generation
// advances, and it is parked, keeping its key and hash slot (add lists it
// again, unpark frees it).
func (t *flowTable) delete(k int32) {
	e := &t.entries[k]
	p := e.pos
	last := len(t.dense) - 1
	moved := t.dense[last]
	t.dense[p] = moved
	t.entries[moved].pos = p
	t.dense = t.dense[:last]
	t.park(e, k)
}

// park is delete's work on entry k (e) once it is out of dense: its
// generation advances and it goes on the parked list (its capacity is the
// table's: no entry is on it twice).
func (t *flowTable) park(e *ftEntry, k int32) {
	e.pos = -1
	if e.gen++; e.gen == 0 {
		e.gen = 1
	}
	if !e.parked {
		e.parked = true
		n := len(t.parked)
		t.parked = t.parked[:n+1]
		t.parked[n] = k
	}
}

// unpark frees one parked entry not listed again, taking it from parked
// (and the listed ones it passes), for insert when no entry is unused. It
// reports false when there is none.
func (t *flowTable) unpark() bool {
	for n := len(t.parked); n > 0; n-- {
		k := t.parked[n-1]
		t.parked = t.parked[:n-1]
		e := &t.entries[k]
		e.parked = false
		if e.pos < 0 {
			t.free = append(t.free, k)
			t.unhash(e)
			return true
		}
	}
	return false
}

// unhash empties e's hash slot and restores the probe sequences (backward
// shift).
func (t *flowTable) unhash(e *ftEntry) {
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
// flows with no packet in the queue are forgotten (parked).
func (t *flowTable) endInterval() {
	// Walking dense backwards visits every entry once: delete moves the last
	// (already visited) entry into position d. When every entry visited so
	// far was deleted (the common case: the queue drained since), d is the
	// last and nothing moves.
	for d := len(t.dense) - 1; d >= 0; d-- {
		k := t.dense[d]
		e := &t.entries[k]
		e.seen = false
		if e.pkts != 0 {
			continue
		}
		if d == len(t.dense)-1 {
			t.dense = t.dense[:d]
			t.park(e, k)
		} else {
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
