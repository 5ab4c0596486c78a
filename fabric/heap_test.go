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
			a, ref := newAgenda(n), refAgenda{}
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
		a.at(keyTime(k))
		a.set(id, keyTime(k)+delays[i&1023])
	}
}

// TestPartitionAgendasOwnEntries builds a k = 4 fat-tree's parallel driver
// under each partitioning and checks that every partition's agenda holds a
// slot for its own entries alone (its nodes and the wires into them), numbered
// in the fabric's order, that every fabric entry belongs to one partition, and
// that the wires name their entries in their receiver's agenda.
func TestPartitionAgendasOwnEntries(t *testing.T) {
	for _, c := range []Parallel{
		{Workers: 2},
		{Workers: 2, Partition: PartitionNode},
		{Workers: 3, Partition: PartitionSwitch, Groups: 3},
	} {
		topo, err := FatTree(4, 100e9, 1000)
		if err != nil {
			t.Fatal(err)
		}
		v := newVirtual(t, &Spec{Topo: topo, Scheme: "dcqcn", Flows: []Flow{{ID: 1, Src: 0, Dst: 15}}})
		if err := v.SetParallel(c); err != nil {
			t.Fatal(err)
		}
		of := v.partitionOf(c)
		nn, entries := len(v.nodes), len(v.nodes)+len(v.wires)
		owner := make([]int, entries)
		for i := range owner {
			owner[i] = -1
		}
		for pi, pt := range v.par.parts {
			if len(pt.agenda.slots) != len(pt.glob) || pt.agenda.bytes() != agendaBytes(len(pt.glob)) {
				t.Fatalf("%+v: partition %d: %d slots, %d bytes for its %d entries (want %d bytes)",
					c, pi, len(pt.agenda.slots), pt.agenda.bytes(), len(pt.glob), agendaBytes(len(pt.glob)))
			}
			for l, e := range pt.glob {
				if l > 0 && e <= pt.glob[l-1] {
					t.Fatalf("%+v: partition %d: entry %d (fabric %d) after fabric entry %d", c, pi, l, e, pt.glob[l-1])
				}
				if owner[e] >= 0 {
					t.Fatalf("%+v: fabric entry %d in partitions %d and %d", c, e, owner[e], pi)
				}
				owner[e] = pi
				var want int32
				if int(e) < nn {
					want = of[e] // a node: its own partition
				} else {
					w := &v.wires[int(e)-nn]
					want = of[w.to] // a wire: its receiver's
					if int(w.ent) != l {
						t.Fatalf("%+v: wire %d is entry %d of partition %d but names %d", c, int(e)-nn, l, pi, w.ent)
					}
				}
				if int(want) != pi {
					t.Fatalf("%+v: fabric entry %d in partition %d, want %d", c, e, pi, want)
				}
			}
		}
		for e, pi := range owner {
			if pi < 0 {
				t.Fatalf("%+v: fabric entry %d in no partition", c, e)
			}
		}
		for wi := range v.wires {
			w := &v.wires[wi]
			if pt := v.par.parts[of[w.to]]; int(w.toEnt) >= len(pt.glob) || pt.glob[w.toEnt] != w.to {
				t.Fatalf("%+v: wire %d names entry %d for its receiver, node %d", c, wi, w.toEnt, w.to)
			}
		}
	}
}

// TestAgendaBytesFatTree reports the agendas' memory of the parallel driver
// as testbed runs it with two workers or more (a partition a switch with its
// hosts) on fat-trees up to k = 32 (8,192 hosts, 1,280 partitions): each
// partition's agenda is sized by its own entries (agendaIndex, as
// SetParallel builds it; TestPartitionAgendasOwnEntries checks that it
// does), and every entry of the fabric is in one, so the agendas' memory is
// a ring a partition plus a few bytes an entry, not a slot for every entry
// of the fabric in every partition. go test -run AgendaBytes -v ./fabric
// prints the figures.
func TestAgendaBytesFatTree(t *testing.T) {
	for _, c := range []struct {
		k, parts int
	}{{4, 20}, {16, 320}, {32, 1280}} {
		topo, err := FatTree(c.k, 100e9, 1000)
		if err != nil {
			t.Fatal(err)
		}
		of := partitionOf(topo, Parallel{Workers: 2})
		nparts := 0
		for _, p := range of {
			nparts = max(nparts, int(p)+1)
		}
		local, glob := agendaIndex(topo, of, nparts)
		entries := len(local)
		if nparts != c.parts {
			t.Fatalf("k %d: %d partitions, want %d", c.k, nparts, c.parts)
		}
		var sum, most, own int
		for _, g := range glob {
			b := agendaBytes(len(g)) + 4*len(g) // and lp.glob
			sum += b
			most = max(most, b)
			own += len(g)
		}
		ring := agendaBytes(0)
		if own != entries || sum > nparts*ring+28*entries {
			t.Fatalf("k %d: partitions own %d of %d entries in %d bytes, want every entry once within %d bytes",
				c.k, own, entries, sum, nparts*ring+28*entries)
		}
		// What a slot for every fabric entry in every partition took.
		fabricWide := nparts*(agendaBytes(0)+16*entries) + 8*entries
		t.Logf("k %d: %d nodes and wires, %d partitions: agendas %.2f MB in all (%d bytes the largest, %d bytes of ring each); a slot an entry of the fabric in each: %.1f MB",
			c.k, entries, nparts, float64(sum)/1e6, most, ring, float64(fabricWide)/1e6)
	}
}

// newVirtual is the virtual-time driver of spec's plan.
func newVirtual(t *testing.T, spec *Spec) *Virtual {
	t.Helper()
	p, err := spec.Plan()
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVirtual(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
