package fabric

import (
	"math/rand/v2"
	"testing"
)

// refAgenda is the agenda's specification: each entry's time, and the
// earliest entry (by time, then index) found by a scan.
type refAgenda map[int]int64

func (r refAgenda) top() (int, bool) {
	best, found := 0, false
	for id, t := range r {
		if !found || t < r[best] || (t == r[best] && id < best) {
			best, found = id, true
		}
	}
	return best, found
}

// TestAgendaMatchesScan drives the agenda and its specification with the
// same random sets and removes and checks, after each, the size, the top
// and its key, and that taking every entry out comes in key order. Free:
// times anywhere in a range (from a small one, where equal times are
// common, to several ring spans, so that entries go to the heap and move
// between the ring and the heap), the base left at 0. Driver: the drivers'
// pattern, the base moved to the top's time before each step, and sets no
// earlier than it, from the same nanosecond to several ring spans later, so
// that the base wraps the ring many times; with early, one set in 50 goes
// before the base, which the agenda serves from its heap and counts.
func TestAgendaMatchesScan(t *testing.T) {
	type mode int
	const (
		free mode = iota
		driver
		early
	)
	cases := []struct {
		name string
		mode mode
		span int64 // times (free) or offsets from the base (driver) below span
	}{
		{"free/small", free, 0}, // 2n: equal times common
		{"free/ring", free, ringSize},
		{"free/rings", free, 3 * ringSize},
		{"driver/near", driver, 8},
		{"driver/ring", driver, ringSize},
		{"driver/rings", driver, 4 * ringSize},
		{"early/rings", early, 4 * ringSize},
	}
	for _, c := range cases {
		for _, n := range []int{1, 2, 4, 5, 17, 64, 530} {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(c.mode)+7))
			a, ref := newAgenda(n, n), refAgenda{}
			span := c.span
			if span == 0 {
				span = int64(2 * n)
			}
			var wantEarly int64
			for step := range 20 * n {
				id := rng.IntN(n)
				var at int64
				switch c.mode {
				case free:
					at = rng.Int64N(span)
				default:
					if top, ok := ref.top(); ok && rng.IntN(2) == 0 {
						a.at(ref[top]) // the driver runs the top, then moves it or another
						if rng.IntN(2) == 0 {
							id = top
						}
					}
					at = a.base + rng.Int64N(span)
					if rng.IntN(4) == 0 {
						at = a.base + rng.Int64N(4) // the front: equal times
					}
					if c.mode == early && rng.IntN(50) == 0 && a.base > 0 {
						at = rng.Int64N(a.base)
					}
				}
				if rng.IntN(4) == 0 {
					a.remove(id)
					delete(ref, id)
				} else {
					if at < a.base {
						wantEarly++
					}
					a.set(id, at)
					ref[id] = at
				}
				if a.len() != len(ref) {
					t.Fatalf("%s n %d step %d: len %d, want %d", c.name, n, step, a.len(), len(ref))
				}
				want, ok := ref.top()
				if !ok {
					continue
				}
				got, k := a.top()
				if got != want || keyTime(k) != ref[want] {
					t.Fatalf("%s n %d step %d: top %d at %d, want %d at %d", c.name, n, step, got, keyTime(k), want, ref[want])
				}
			}
			if a.early != wantEarly {
				t.Fatalf("%s n %d: %d sets before the base counted, want %d", c.name, n, a.early, wantEarly)
			}
			var last uint64
			for a.len() > 0 {
				id, k := a.top()
				if k < last || keyTime(k) != ref[id] {
					t.Fatalf("%s n %d: drained %d at %d after key %d (want time %d)", c.name, n, id, keyTime(k), last, ref[id])
				}
				last = k
				if c.mode != free {
					a.at(keyTime(k))
				}
				a.remove(id)
				delete(ref, id)
			}
			if len(ref) != 0 {
				t.Fatalf("%s n %d: %d entries left in the specification after the agenda emptied", c.name, n, len(ref))
			}
			if a.sum != 0 || len(a.far.heap) != 0 {
				t.Fatalf("%s n %d: empty agenda with ring words %#x and %d heap entries", c.name, n, a.sum, len(a.far.heap))
			}
		}
	}
}

// AgendaEarly is how many times the drivers of v's run set an agenda entry
// before the agenda's base (the time of the event being run); the engine
// digest tests check that it is 0, so that every entry is served by the
// ring or, when it is due later than the ring reaches, the heap.
func AgendaEarly(v *Virtual) int64 {
	n := v.agenda.early
	if v.par != nil {
		for _, p := range v.par.parts {
			n += p.agenda.early
		}
	}
	return n
}

// BenchmarkAgendaHold is the driver's pattern: take the top entry, move the
// base to its time, and move it later, with 528 entries (the 128-host
// leaf-spine's nodes and link directions).
func BenchmarkAgendaHold(b *testing.B) {
	const n = 528
	rng := rand.New(rand.NewPCG(1, 2))
	a := newAgenda(n, n)
	for id := range n {
		a.set(id, rng.Int64N(1000))
	}
	delays := make([]int64, 1024)
	for i := range delays {
		delays[i] = 1 + rng.Int64N(2000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id, k := a.top()
		a.at(keyTime(k))
		a.set(id, keyTime(k)+delays[i&1023])
	}
}
