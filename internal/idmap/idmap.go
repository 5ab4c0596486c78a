// Package idmap maps integer ids to values where the ids come in dense runs:
// flow ids, which each sender numbers up from its own base (a workload's
// sender k from id_base + k * 1,000,000), or port ids. A Go map of a million
// flows misses the cache on nearly every lookup; here the values of PageSize
// consecutive ids share a page, and the pages are found through a small map
// (one entry per page, so it stays in cache) with the last page used kept at
// hand, so that a run of nearby ids costs one page lookup.
//
// The results recorder keeps its per-flow statistics in it (testbed/report),
// and the virtual-time feed its per-host delivered bytes and FCTs. A page holds
// PageSize values whether or not they are used: ids that are spread thinly
// (one in a thousand) cost a page each, which is fine for the few hundred
// flows an experiment file lists one by one.
//
// A Map is not safe for concurrent use. The zero Map is empty and ready.
package idmap

import (
	"iter"
	"math/bits"
	"slices"
)

// ID is the key types a Map takes.
type ID interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64
}

// pageBits is log2 of PageSize.
const pageBits = 9

// PageSize is how many consecutive ids share a page.
const PageSize = 1 << pageBits

// page holds the values of PageSize consecutive ids and which are present.
type page[V any] struct {
	used [PageSize / 64]uint64
	vals [PageSize]V
}

// Map maps ids of type K to values of type V.
type Map[K ID, V any] struct {
	pages   map[K]*page[V] // by id >> pageBits
	last    *page[V]       // the page of lastKey, nil before any
	lastKey K
	n       int
}

// locate returns id's page (creating it when create is set; nil when absent
// otherwise) and id's index in it.
func (m *Map[K, V]) locate(id K, create bool) (*page[V], int) {
	k, i := id>>pageBits, int(id&(PageSize-1))
	if m.last != nil && m.lastKey == k {
		return m.last, i
	}
	p := m.pages[k]
	if p == nil {
		if !create {
			return nil, i
		}
		if m.pages == nil {
			m.pages = make(map[K]*page[V])
		}
		p = new(page[V])
		m.pages[k] = p
	}
	m.last, m.lastKey = p, k
	return p, i
}

// Get returns id's value and whether id is present.
func (m *Map[K, V]) Get(id K) (V, bool) {
	if v := m.Ref(id); v != nil {
		return *v, true
	}
	var zero V
	return zero, false
}

// Ref returns a pointer to id's value, nil when id is absent. The pointer
// stays valid, and keeps pointing at id's value, for the Map's life.
func (m *Map[K, V]) Ref(id K) *V {
	p, i := m.locate(id, false)
	if p == nil || p.used[i>>6]&(1<<(i&63)) == 0 {
		return nil
	}
	return &p.vals[i]
}

// Slot returns a pointer to id's value, adding id with the zero value when
// it is absent (as m[id] += x does for a Go map).
func (m *Map[K, V]) Slot(id K) *V {
	p, i := m.locate(id, true)
	if w, b := &p.used[i>>6], uint64(1)<<(i&63); *w&b == 0 {
		*w |= b
		m.n++
	}
	return &p.vals[i]
}

// Set sets id's value.
func (m *Map[K, V]) Set(id K, v V) { *m.Slot(id) = v }

// Len returns the number of ids present.
func (m *Map[K, V]) Len() int { return m.n }

// IDs appends the ids present to dst in increasing order and returns it.
func (m *Map[K, V]) IDs(dst []K) []K {
	for id := range m.All() {
		dst = append(dst, id)
	}
	return dst
}

// All yields the ids present and pointers to their values, in increasing
// order of id.
func (m *Map[K, V]) All() iter.Seq2[K, *V] {
	return func(yield func(K, *V) bool) {
		keys := make([]K, 0, len(m.pages))
		for k := range m.pages {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := m.pages[k]
			for w, word := range p.used {
				for word != 0 {
					i := w<<6 | bits.TrailingZeros64(word)
					word &= word - 1
					if !yield(k<<pageBits|K(i), &p.vals[i]) {
						return
					}
				}
			}
		}
	}
}
