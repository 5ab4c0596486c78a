package ring

import (
	"runtime"
	"sync"
	"testing"
)

func TestNewRoundsUp(t *testing.T) {
	for _, tc := range []struct{ size, want int }{{-1, 1}, {0, 1}, {1, 1}, {2, 2}, {3, 4}, {1000, 1024}, {1024, 1024}} {
		if got := New[int](tc.size).Cap(); got != tc.want {
			t.Errorf("New(%d).Cap() = %d, want %d", tc.size, got, tc.want)
		}
	}
}

// TestFullAndEmpty fills a ring to the brim, finds it full, drains it in
// order and finds it empty, several times round (the counters wrap the
// slots).
func TestFullAndEmpty(t *testing.T) {
	r := New[int](4)
	next, want := 0, 0
	for round := range 5 {
		if !r.Empty() || r.Peek() != nil || r.Len() != 0 {
			t.Fatalf("round %d: not empty at the start", round)
		}
		for range r.Cap() {
			s := r.Slot()
			if s == nil {
				t.Fatalf("round %d: full after %d", round, r.Len())
			}
			*s = next
			next++
			r.Commit()
		}
		if r.Slot() != nil || r.Len() != 4 || r.Empty() {
			t.Fatalf("round %d: a slot beyond capacity (len %d)", round, r.Len())
		}
		for r.Peek() != nil {
			if got := *r.Peek(); got != want {
				t.Fatalf("round %d: got %d, want %d", round, got, want)
			}
			want++
			r.Pop()
		}
	}
}

// TestUncommittedInvisible: a slot filled but not committed is not seen by
// the consumer, and Slot returns the same slot until Commit.
func TestUncommittedInvisible(t *testing.T) {
	r := New[int](2)
	s := r.Slot()
	*s = 7
	if r.Peek() != nil || !r.Empty() {
		t.Fatal("uncommitted slot visible")
	}
	if r.Slot() != s {
		t.Fatal("Slot moved without Commit")
	}
	r.Commit()
	if p := r.Peek(); p == nil || *p != 7 {
		t.Fatalf("Peek = %v after Commit", p)
	}
}

// FuzzModel checks the ring against a slice model: ops is a program of
// pushes (even bytes), pops (bytes 1 mod 4) and drains (3 mod 4) on a
// ring of size 1..16.
func FuzzModel(f *testing.F) {
	f.Add(uint8(3), []byte{0, 2, 4, 6, 8, 1, 3, 10, 5, 7, 9})
	f.Add(uint8(1), []byte{0, 0, 1, 1, 0})
	f.Fuzz(func(t *testing.T, size uint8, ops []byte) {
		r := New[byte](int(size%16) + 1)
		var model []byte
		var produced uint64
		for i, op := range ops {
			if op%2 == 0 {
				s := r.Slot()
				if full := len(model) == r.Cap(); (s == nil) != full {
					t.Fatalf("op %d: Slot %v with %d of %d held", i, s, len(model), r.Cap())
				}
				if s != nil {
					*s = op
					r.Commit()
					model = append(model, op)
					produced++
				}
			} else if op%4 == 3 {
				n := 0
				if got := r.Drain(func(v *byte) {
					if *v != model[n] {
						t.Fatalf("op %d: Drain's slot %d is %d, want %d", i, n, *v, model[n])
					}
					n++
				}); got != len(model) || n != got {
					t.Fatalf("op %d: Drain %d (%d calls), model holds %d", i, got, n, len(model))
				}
				model = model[:0]
			} else {
				p := r.Peek()
				if (p == nil) != (len(model) == 0) {
					t.Fatalf("op %d: Peek %v with %d held", i, p, len(model))
				}
				if p != nil {
					if *p != model[0] {
						t.Fatalf("op %d: Peek %d, want %d", i, *p, model[0])
					}
					r.Pop()
					model = model[1:]
				}
			}
			if r.Produced() != produced {
				t.Fatalf("op %d: Produced %d, want %d", i, r.Produced(), produced)
			}
			if r.Len() != len(model) || r.Empty() != (len(model) == 0) {
				t.Fatalf("op %d: Len %d Empty %v, model holds %d", i, r.Len(), r.Empty(), len(model))
			}
		}
	})
}

// TestConcurrentOrder: a producer and a consumer goroutine pass 2e4 values
// through a small ring; the consumer sees every one, in order. Run it with
// -race to check the counters' ordering of the slot writes.
func TestConcurrentOrder(t *testing.T) {
	const n = 20_000
	r := New[[4]uint64](8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(0); i < n; {
			if s := r.Slot(); s != nil {
				*s = [4]uint64{i, i + 1, i + 2, i + 3}
				r.Commit()
				i++
			} else {
				runtime.Gosched()
			}
		}
	}()
	for want := uint64(0); want < n; {
		p := r.Peek()
		if p == nil {
			runtime.Gosched()
			continue
		}
		if *p != [4]uint64{want, want + 1, want + 2, want + 3} {
			t.Fatalf("got %v, want %d..", *p, want)
		}
		r.Pop()
		want++
	}
	wg.Wait()
}

func TestNoAllocs(t *testing.T) {
	r := New[[8]uint64](64)
	if a := testing.AllocsPerRun(100, func() {
		*r.Slot() = [8]uint64{1}
		r.Commit()
		_ = *r.Peek()
		r.Pop()
	}); a != 0 {
		t.Errorf("%v allocations per push and pop", a)
	}
}

// BenchmarkPushPop is one push and one pop of a 64-byte slot on one
// goroutine: the cost of the ring itself.
func BenchmarkPushPop(b *testing.B) {
	r := New[[8]uint64](1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := r.Slot()
		s[0] = uint64(i)
		r.Commit()
		_ = r.Peek()[0]
		r.Pop()
	}
}

// BenchmarkTwoGoroutines passes 64-byte slots from a producer to a
// consumer goroutine: per item.
func BenchmarkTwoGoroutines(b *testing.B) {
	r := New[[8]uint64](1024)
	b.ReportAllocs()
	done := make(chan struct{})
	n := b.N
	go func() {
		defer close(done)
		for got := 0; got < n; {
			if p := r.Peek(); p != nil {
				r.Pop()
				got++
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < n; {
		if s := r.Slot(); s != nil {
			s[0] = uint64(i)
			r.Commit()
			i++
		}
	}
	<-done
}
