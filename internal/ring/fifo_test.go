package ring

import "testing"

func TestNewFIFOSizes(t *testing.T) {
	for _, tc := range []struct{ start, limit, cap int }{{16, 1024, 16}, {16, 10, 16}, {16, 8, 8}, {3, 1000, 4}, {0, 0, 1}, {1, 1, 1}} {
		r := NewFIFO[int](tc.start, tc.limit)
		if r.Cap() != tc.cap || r.Len() != 0 {
			t.Errorf("NewFIFO(%d, %d): Cap %d Len %d, want Cap %d Len 0", tc.start, tc.limit, r.Cap(), r.Len(), tc.cap)
		}
	}
}

// FuzzFIFOModel checks a FIFO against a slice model: ops is a program of
// pushes (even bytes), pops (bytes 1 mod 4) and drops (3 mod 4) on a FIFO
// that starts with 1..4 slots and may grow to 1..32.
func FuzzFIFOModel(f *testing.F) {
	f.Add(uint8(0), uint8(5), []byte{0, 2, 4, 6, 8, 1, 3, 10, 5, 7, 9, 12, 14, 16, 18, 20})
	f.Add(uint8(3), uint8(31), []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1, 1})
	f.Fuzz(func(t *testing.T, start, limit uint8, ops []byte) {
		startN, limitN := int(start%4)+1, int(limit%32)+1
		r := NewFIFO[*byte](startN, limitN)
		lim := pow2(limitN)
		var model []byte
		for i, op := range ops {
			switch {
			case op%2 == 0:
				ok := r.Reserve()
				if ok != (len(model) < lim) {
					t.Fatalf("op %d: Reserve %v with %d held of limit %d", i, ok, len(model), lim)
				}
				if ok {
					v := op
					r.Push(&v)
					model = append(model, op)
				}
			case len(model) == 0:
				if r.Len() != 0 {
					t.Fatalf("op %d: Len %d, model empty", i, r.Len())
				}
			default:
				if got := *r.Front(); *got != model[0] {
					t.Fatalf("op %d: Front %d, want %d", i, *got, model[0])
				}
				slot := r.head & r.mask
				if op%4 == 1 {
					if got := r.Pop(); *got != model[0] {
						t.Fatalf("op %d: Pop %d, want %d", i, *got, model[0])
					}
				} else {
					r.Drop()
				}
				if r.buf[slot] != nil {
					t.Fatalf("op %d: slot %d keeps its pointer after removal", i, slot)
				}
				model = model[1:]
			}
			if want := 2 * (r.Cap() - min(pow2(startN), lim)); r.GrownSlots() != want {
				t.Fatalf("op %d: GrownSlots %d at Cap %d, want %d", i, r.GrownSlots(), r.Cap(), want)
			}
			if r.Len() != len(model) || r.Cap() > lim || r.Cap() < r.Len() {
				t.Fatalf("op %d: Len %d Cap %d, model holds %d (limit %d)", i, r.Len(), r.Cap(), len(model), lim)
			}
		}
	})
}

// TestFIFOSteadyAllocs: once grown, pushing and popping allocate nothing.
func TestFIFOSteadyAllocs(t *testing.T) {
	r := NewFIFO[[3]int](2, 64)
	for range 40 {
		r.Reserve()
		r.Push([3]int{})
	}
	for r.Len() > 0 {
		r.Drop()
	}
	if a := testing.AllocsPerRun(100, func() {
		for i := range 40 {
			if !r.Reserve() {
				t.Fatal("full")
			}
			r.Push([3]int{i})
		}
		for r.Len() > 0 {
			r.Pop()
		}
	}); a != 0 {
		t.Fatalf("%v allocations a round", a)
	}
}
