package idmap

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// check compares m with the Go map want: every id of want present with its
// value, nothing else present, Len, and IDs in increasing order.
func check[K ID](t *testing.T, m *Map[K, int], want map[K]int, probes []K) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("Len %d, want %d", m.Len(), len(want))
	}
	wantIDs := make([]K, 0, len(want))
	for id, v := range want {
		wantIDs = append(wantIDs, id)
		if got, ok := m.Get(id); !ok || got != v {
			t.Fatalf("Get(%d) = %d, %v; want %d, true", id, got, ok, v)
		}
	}
	slices.Sort(wantIDs)
	if got := m.IDs(nil); !slices.Equal(got, wantIDs) {
		t.Fatalf("IDs %v, want %v", got, wantIDs)
	}
	for _, id := range probes {
		_, inWant := want[id]
		if v, ok := m.Get(id); ok != inWant || (!ok && v != 0) || (m.Ref(id) != nil) != inWant {
			t.Fatalf("id %d: Get ok %v (value %d), Ref nil %v; want present %v", id, ok, v, m.Ref(id) == nil, inWant)
		}
	}
}

func TestMapAgainstGoMap(t *testing.T) {
	cases := []struct {
		name string
		ids  func(r *rand.Rand) int64
	}{
		{"dense from 0", func(r *rand.Rand) int64 { return r.Int64N(3000) }},
		{"per-sender blocks", func(r *rand.Rand) int64 { return 1 + r.Int64N(16)*1_000_000 + r.Int64N(2000) }},
		{"spread thin", func(r *rand.Rand) int64 { return r.Int64N(1 << 40) }},
		{"negative and positive", func(r *rand.Rand) int64 { return r.Int64N(4000) - 2000 }},
		{"extremes", func(r *rand.Rand) int64 {
			return []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, PageSize - 1, PageSize, math.MaxInt64 - 1, math.MaxInt64}[r.IntN(9)]
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var m Map[int64, int]
			want := map[int64]int{}
			var probes []int64
			for i := range 5000 {
				id := tc.ids(r)
				probes = append(probes, tc.ids(r))
				if i%3 == 0 {
					*m.Slot(id) += i
					want[id] += i
				} else {
					m.Set(id, i)
					want[id] = i
				}
			}
			check(t, &m, want, probes)
		})
	}
}

func TestUnsignedAndSmallKeys(t *testing.T) {
	var u Map[uint64, int]
	want := map[uint64]int{}
	for i, id := range []uint64{0, 511, 512, math.MaxUint64, math.MaxUint64 - 511, 1 << 63} {
		u.Set(id, i+1)
		want[id] = i + 1
	}
	check(t, &u, want, []uint64{1, 513, math.MaxUint64 - 1})

	var s Map[int32, int]
	ws := map[int32]int{}
	for i, id := range []int32{math.MinInt32, -512, -1, 0, math.MaxInt32} {
		s.Set(id, i+1)
		ws[id] = i + 1
	}
	check(t, &s, ws, []int32{-2, 1, math.MaxInt32 - 1})
}

func TestRefStaysValid(t *testing.T) {
	var m Map[int, [4]int64]
	p := m.Slot(7)
	p[2] = 42
	for id := range 100_000 { // many more pages: the first page must not move
		m.Slot(id * 3)
	}
	if m.Ref(7) != p || p[2] != 42 {
		t.Fatalf("the value of id 7 moved or changed: %p %p %v", m.Ref(7), p, *p)
	}
}

func TestAllStopsEarly(t *testing.T) {
	var m Map[int, int]
	for id := range 2000 {
		m.Set(id*7, id)
	}
	n := 0
	for id, v := range m.All() {
		if *v != id/7 {
			t.Fatalf("id %d value %d", id, *v)
		}
		if n++; n == 10 {
			break
		}
	}
	if n != 10 {
		t.Fatalf("yielded %d", n)
	}
}

func TestNoAllocationOnAPresentPage(t *testing.T) {
	var m Map[int64, float64]
	for id := int64(0); id < 4*PageSize; id++ {
		m.Set(id+1_000_000, 1)
	}
	id := int64(1_000_000)
	if a := testing.AllocsPerRun(1000, func() {
		*m.Slot(id) += 1
		_ = m.Ref(id + 3*PageSize)
		id = 1_000_000 + (id+PageSize+1)%(4*PageSize)
	}); a != 0 {
		t.Fatalf("%.1f allocations per lookup", a)
	}
}

// FuzzMap plays a byte string as Set, Slot += and Get on a Map and a Go map.
func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var m Map[int64, int]
		want := map[int64]int{}
		var probes []int64
		for len(ops) >= 9 {
			op, id := ops[0]%3, int64(binary.LittleEndian.Uint64(ops[1:9]))
			ops = ops[9:]
			switch op {
			case 0:
				m.Set(id, int(id%97))
				want[id] = int(id % 97)
			case 1:
				*m.Slot(id)++
				want[id]++
			default:
				probes = append(probes, id)
			}
		}
		check(t, &m, want, probes)
	})
}

// BenchmarkLookup is a lookup of a present id among a million flows of 16
// senders, in the order rows come (time, then id): the Map against a Go map.
func BenchmarkLookup(b *testing.B) {
	const senders, per = 16, 65_536
	ids := make([]int64, 0, senders*per)
	for k := range int64(senders) {
		for i := range int64(per) {
			ids = append(ids, 1+k*1_000_000+i)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	order := make([]int64, 1<<16)
	var base int64
	for i := range order { // runs of 8 consecutive ids of one sender from random places
		if i%8 == 0 {
			base = ids[r.IntN(len(ids)/8)*8]
		}
		order[i] = base + int64(i%8)
	}
	b.Run("idmap", func(b *testing.B) {
		b.ReportAllocs()
		var m Map[int64, float64]
		for _, id := range ids {
			m.Set(id, 1)
		}
		b.ResetTimer()
		var s float64
		for i := range b.N {
			s += *m.Ref(order[i&(len(order)-1)])
		}
		_ = s
	})
	b.Run("gomap", func(b *testing.B) {
		b.ReportAllocs()
		m := make(map[int64]float64, len(ids))
		for _, id := range ids {
			m[id] = 1
		}
		b.ResetTimer()
		var s float64
		for i := range b.N {
			s += m[order[i&(len(order)-1)]]
		}
		_ = s
	})
}
