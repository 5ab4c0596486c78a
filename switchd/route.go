package switchd

import (
	"fmt"
	"sort"
)

// MaxRoutes bounds a RouteTable.
const MaxRoutes = 1024

// RouteTable is a static IPv4 longest-prefix-match table. Lookup scans the
// routes from the longest prefix down and stops at the first match: no
// allocation, no map, a few compares per route. A switch of ccbed has a handful
// of routes (one or two per port), for which this beats a trie.
type RouteTable struct {
	routes []route // sorted by prefix length, longest first
}

type route struct {
	addr, mask uint32
	plen       int
	port       int
}

// Add inserts addr/plen -> port. Host bits of addr must be zero; a prefix
// already present is an error.
func (t *RouteTable) Add(addr uint32, plen, port int) error {
	if plen < 0 || plen > 32 {
		return fmt.Errorf("prefix length %d out of 0..32", plen)
	}
	if len(t.routes) >= MaxRoutes {
		return fmt.Errorf("more than %d routes", MaxRoutes)
	}
	mask := uint32(0)
	if plen > 0 {
		mask = ^uint32(0) << (32 - plen)
	}
	if addr&^mask != 0 {
		return fmt.Errorf("%s/%d has host bits set", ipString(addr), plen)
	}
	for _, r := range t.routes {
		if r.addr == addr && r.plen == plen {
			return fmt.Errorf("%s/%d listed twice", ipString(addr), plen)
		}
	}
	t.routes = append(t.routes, route{addr: addr, mask: mask, plen: plen, port: port})
	sort.SliceStable(t.routes, func(i, j int) bool { return t.routes[i].plen > t.routes[j].plen })
	return nil
}

// Lookup returns the port of the longest prefix holding dst, or -1.
func (t *RouteTable) Lookup(dst uint32) int {
	for i := range t.routes {
		r := &t.routes[i]
		if dst&r.mask == r.addr {
			return r.port
		}
	}
	return -1
}

// Len is the number of routes.
func (t *RouteTable) Len() int { return len(t.routes) }

func ipString(a uint32) string {
	return fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff)
}
