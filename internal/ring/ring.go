// Package ring is ccbed's single-producer, single-consumer ring: a
// power-of-two array of slots in Go memory between one goroutine (or
// lcore) that fills slots and one that empties them, with no lock and no
// allocation after New. The producer fills the slot Slot returns and
// publishes it with Commit; the consumer reads the slot Peek returns and
// frees it with Pop. head and tail are counters on cache lines of their
// own, each written by one side only, which alone may read its own without
// an atomic load: the atomic store of one side's counter orders the slot
// writes before it for the other side (Go's memory model: a Store is
// synchronized before the Load that observes it). One goroutine may play
// both sides.
package ring

import "sync/atomic"

// SPSC is a single-producer, single-consumer ring of T; make one with New.
// head and tail are plain words used through sync/atomic's functions (with
// atomic.Uint64 fields the methods of the generic type cost too much to be
// inlined); each sits on a cache line of its own, 64 and 128 bytes into the
// allocation New makes, so they are 64-bit aligned on every platform.
type SPSC[T any] struct {
	_    [64]byte
	head uint64 // next slot to consume; written (atomically) by the consumer only
	_    [56]byte
	tail uint64 // next slot to produce; written (atomically) by the producer only
	_    [56]byte
	buf  []T
	mask uint64
}

// New returns an empty ring of size slots rounded up to a power of two
// (at least 1).
func New[T any](size int) *SPSC[T] {
	n := 1
	for n < size {
		n <<= 1
	}
	return &SPSC[T]{buf: make([]T, n), mask: uint64(n - 1)}
}

// Cap is the number of slots.
func (r *SPSC[T]) Cap() int { return len(r.buf) }

// Len is the number of slots published and not yet consumed (either side
// may ask; the answer may be stale by the time it returns).
func (r *SPSC[T]) Len() int { return int(atomic.LoadUint64(&r.tail) - atomic.LoadUint64(&r.head)) }

// Produced is the number of slots committed since New (either side may
// ask).
func (r *SPSC[T]) Produced() uint64 { return atomic.LoadUint64(&r.tail) }

// Empty reports whether no published slot waits (either side may ask).
func (r *SPSC[T]) Empty() bool { return atomic.LoadUint64(&r.head) == atomic.LoadUint64(&r.tail) }

// Slot returns the next free slot for the producer to fill, or nil when
// the ring is full. The slot becomes visible to the consumer with Commit;
// until then the producer may fill it and ask again.
func (r *SPSC[T]) Slot() *T {
	t := atomic.LoadUint64(&r.tail)
	if t-atomic.LoadUint64(&r.head) > r.mask {
		return nil
	}
	return &r.buf[t&r.mask]
}

// Commit publishes the slot Slot returned (producer only).
func (r *SPSC[T]) Commit() { atomic.StoreUint64(&r.tail, r.tail+1) }

// Peek returns the oldest published slot, or nil when the ring is empty
// (consumer only). The slot stays the consumer's until Pop.
func (r *SPSC[T]) Peek() *T {
	h := atomic.LoadUint64(&r.head)
	if h == atomic.LoadUint64(&r.tail) {
		return nil
	}
	return &r.buf[h&r.mask]
}

// Pop frees the slot Peek returned (consumer only).
func (r *SPSC[T]) Pop() { atomic.StoreUint64(&r.head, r.head+1) }

// Drain calls fn on every slot published so far, oldest first, frees them
// all with one store of head, and returns how many (consumer only). fn must
// not keep the pointer: the slot is the producer's once Drain returns.
func (r *SPSC[T]) Drain(fn func(*T)) int {
	h, t := r.head, atomic.LoadUint64(&r.tail)
	for i := h; i != t; i++ {
		fn(&r.buf[i&r.mask])
	}
	atomic.StoreUint64(&r.head, t)
	return int(t - h)
}
