package ring

// FIFO is a first-in, first-out ring of T owned by one goroutine (no
// atomics): a power-of-two array of slots that starts with a few and
// doubles, up to a limit, when every slot is in use, so that a switch port
// holds room for what its traffic uses rather than for its bound. A
// doubling allocates; Reserve does it, and nothing else does. A FIFO that
// empties restarts at slot 0, so that one that drains as fast as it fills
// keeps reusing its first, cache-hot slots. The zero FIFO has no slots and
// cannot grow: make one with NewFIFO.
type FIFO[T any] struct {
	buf        []T
	mask       uint32
	head, tail uint32 // free-running: head the oldest entry, tail the next free slot
	limit      int
	start      int // the slots NewFIFO made
}

// NewFIFO returns an empty FIFO of start slots that may grow to limit
// slots (both rounded up to powers of two; start at most limit, at least
// 1).
func NewFIFO[T any](start, limit int) FIFO[T] {
	limit = pow2(limit)
	n := min(limit, pow2(start))
	return FIFO[T]{buf: make([]T, n), mask: uint32(n - 1), limit: limit, start: n}
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// Len is the number of entries held.
func (r *FIFO[T]) Len() int { return int(r.tail - r.head) }

// Cap is the number of slots now (it grows up to the limit).
func (r *FIFO[T]) Cap() int { return len(r.buf) }

// GrownSlots is the slots the doublings since NewFIFO allocated: a FIFO
// that started with n0 slots and now has n allocated 2n0 + 4n0 + ... + n =
// 2(n - n0).
func (r *FIFO[T]) GrownSlots() int { return 2 * (len(r.buf) - r.start) }

// Reserve makes room for one more entry, doubling the slots when every one
// is in use (the entries keep their order); false at the limit.
func (r *FIFO[T]) Reserve() bool { return int(r.tail-r.head) < len(r.buf) || r.grow() }

// grow doubles the slots (false at the limit); kept out of Reserve, which
// a caller's loop inlines.
//
//go:noinline
func (r *FIFO[T]) grow() bool {
	if len(r.buf) >= r.limit {
		return false
	}
	n := 2 * len(r.buf)
	nb, nm := make([]T, n), uint32(n-1)
	for i := r.head; i != r.tail; i++ {
		nb[i&nm] = r.buf[i&r.mask]
	}
	r.buf, r.mask = nb, nm
	return true
}

// Push appends v; the caller made room with Reserve.
func (r *FIFO[T]) Push(v T) {
	r.buf[r.tail&r.mask] = v
	r.tail++
}

// Front is the oldest entry; the caller checked Len.
func (r *FIFO[T]) Front() *T { return &r.buf[r.head&r.mask] }

// Drop clears the oldest entry's slot (so that the ring keeps nothing it
// pointed to alive) and removes it; the caller checked Len.
func (r *FIFO[T]) Drop() {
	var zero T
	r.buf[r.head&r.mask] = zero
	r.head++
	if r.head == r.tail {
		r.head, r.tail = 0, 0
	}
}

// Pop removes the oldest entry and returns it; the caller checked Len.
func (r *FIFO[T]) Pop() T {
	v := *r.Front()
	r.Drop()
	return v
}
