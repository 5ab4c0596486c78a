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
// same random sets and removes (times drawn from a small range, so that
// equal times are common) and checks, after each, the size, the top and
// its key, and that taking every entry out comes in key order.
func TestAgendaMatchesScan(t *testing.T) {
	for _, n := range []int{1, 2, 4, 5, 17, 64, 530} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		a, ref := newAgenda(n), refAgenda{}
		for step := range 20 * n {
			id := rng.IntN(n)
			switch rng.IntN(4) {
			case 0:
				a.remove(id)
				delete(ref, id)
			default:
				at := rng.Int64N(int64(2 * n))
				a.set(id, at)
				ref[id] = at
			}
			if a.len() != len(ref) {
				t.Fatalf("n %d step %d: len %d, want %d", n, step, a.len(), len(ref))
			}
			want, ok := ref.top()
			if !ok {
				continue
			}
			got, k := a.top()
			if got != want || keyTime(k) != ref[want] {
				t.Fatalf("n %d step %d: top %d at %d, want %d at %d", n, step, got, keyTime(k), want, ref[want])
			}
		}
		var last uint64
		for a.len() > 0 {
			id, k := a.top()
			if k < last || keyTime(k) != ref[id] {
				t.Fatalf("n %d: drained %d at %d after key %d (want time %d)", n, id, keyTime(k), last, ref[id])
			}
			last = k
			a.remove(id)
			delete(ref, id)
		}
		if len(ref) != 0 {
			t.Fatalf("n %d: %d entries left in the specification after the agenda emptied", n, len(ref))
		}
	}
}

// BenchmarkAgendaHold is the driver's pattern: take the top entry and move
// it later, with 528 entries (the 128-host leaf-spine's nodes and link
// directions).
func BenchmarkAgendaHold(b *testing.B) {
	const n = 528
	rng := rand.New(rand.NewPCG(1, 2))
	a := newAgenda(n)
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
		a.set(id, keyTime(k)+delays[i&1023])
	}
}
