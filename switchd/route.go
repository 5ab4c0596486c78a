package switchd

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/ccbed/ccbed/wire"
)

// MaxRoutes bounds a RouteTable.
const MaxRoutes = 65536

// RouteTable is a static IPv4 longest-prefix-match table whose routes lead to
// one port or to an ECMP group of ports (equal-cost paths, chosen per flow by
// a 5-tuple hash). Lookup reads a direct table of /24 blocks and, in a block
// that a longer route lies in, that block's table of 256 addresses, as
// DPDK's DIR-24-8 (l3fwd's LPM) does: one or two reads whatever the number of
// routes and their lengths, so that a fabric's switch holds a route per range
// of hosts (RangePrefixes: prefixes of every length) rather than a /32 per
// host. No allocation, no map.
type RouteTable struct {
	routes []route // sorted by prefix length, longest first
	ports  []uint8 // the ports of every route, route r's at [first, first+n); routes with equal ports share them
	// blocks is the direct table of the /24 blocks the routes of at least 8
	// bits span (when they span at most maxBlockSpan of them): blocks[dst>>8
	// - blockBase] = the entry of the longest route of at most 24 bits holding
	// the block (0: none), or entryGroup | g when a longer route lies in the
	// block: then groups[g<<8 | dst&0xff] is the entry of the longest route
	// holding dst.
	blocks    []uint32
	blockBase uint32
	groups    []uint32
	// scan: routes[scan:] are the routes a lookup outside the blocks scans,
	// from the longest down: those shorter than 8 bits, or every route when
	// there are no blocks.
	scan int
}

type route struct {
	addr, mask uint32
	plen       int
	first, n   uint32 // the route's ports are ports[first : first+n]
}

// An entry of the direct tables names a route: its low 23 bits are the
// route's index + 1, its top 8 the route's port + 1 when it has one port (0
// for an ECMP group), so that a lookup of a plain route reads the port where
// the entry is, without the route's struct and port list. In blocks, an entry
// with entryGroup set names a group of 256 entries instead (its low bits the
// group's index).
const (
	entryIndex = 1<<23 - 1
	entryGroup = 1 << 23
)

// entry is route i's entry in a direct table.
func (t *RouteTable) entry(i int) uint32 {
	r := &t.routes[i]
	v := uint32(i + 1)
	if r.n == 1 {
		v |= (uint32(t.ports[r.first]) + 1) << 24
	}
	return v
}

// maxBlockSpan bounds the /24 blocks of the direct table (256 KiB at most),
// maxGroups its tables of 256 addresses (4 MiB): beyond either, the routes are
// scanned.
const (
	maxBlockSpan = 1 << 16
	maxGroups    = 1 << 12
)

// Add inserts addr/plen -> port. Host bits of addr must be zero; a prefix
// already present is an error.
func (t *RouteTable) Add(addr uint32, plen, port int) error {
	return t.AddECMP(addr, plen, []int{port})
}

// AddECMP inserts addr/plen -> an ECMP group of ports (one port: a plain route).
func (t *RouteTable) AddECMP(addr uint32, plen int, ports []int) error {
	if err := t.add(addr, plen, ports, true); err != nil {
		return err
	}
	t.index()
	return nil
}

// addAll inserts every route and indexes once: a fabric's switch gets a /32
// route per host, thousands of them, where AddECMP's check and index per route
// would cost quadratic time.
func (t *RouteTable) addAll(rs []Route) error {
	seen := make(map[uint64]bool, len(rs)+len(t.routes))
	for _, r := range t.routes {
		seen[uint64(r.addr)<<8|uint64(r.plen)] = true
	}
	for _, r := range rs {
		k := uint64(r.Addr)<<8 | uint64(r.Len&0xff)
		if seen[k] {
			return fmt.Errorf("%s/%d listed twice", wire.FormatIPv4(r.Addr), r.Len)
		}
		seen[k] = true
		if err := t.add(r.Addr, r.Len, r.Ports, false); err != nil {
			return err
		}
	}
	sort.SliceStable(t.routes, func(i, j int) bool { return t.routes[i].plen > t.routes[j].plen })
	t.index()
	return nil
}

// add checks and appends one route; with sorted, it keeps the routes sorted
// by prefix length and refuses a prefix already present.
func (t *RouteTable) add(addr uint32, plen int, ports []int, sorted bool) error {
	if plen < 0 || plen > 32 {
		return fmt.Errorf("prefix length %d out of 0..32", plen)
	}
	if len(t.routes) >= MaxRoutes {
		return fmt.Errorf("more than %d routes", MaxRoutes)
	}
	if len(ports) == 0 || len(ports) > MaxPorts {
		return fmt.Errorf("%s/%d: %d ports, want 1..%d", wire.FormatIPv4(addr), plen, len(ports), MaxPorts)
	}
	mask := uint32(0)
	if plen > 0 {
		mask = ^uint32(0) << (32 - plen)
	}
	if addr&^mask != 0 {
		return fmt.Errorf("%s/%d has host bits set", wire.FormatIPv4(addr), plen)
	}
	if sorted {
		for _, r := range t.routes {
			if r.addr == addr && r.plen == plen {
				return fmt.Errorf("%s/%d listed twice", wire.FormatIPv4(addr), plen)
			}
		}
	}
	for _, p := range ports {
		if p < 0 || p >= MaxPorts {
			return fmt.Errorf("%s/%d: port %d out of range", wire.FormatIPv4(addr), plen, p)
		}
	}
	r := route{addr: addr, mask: mask, plen: plen, first: t.share(ports), n: uint32(len(ports))}
	t.routes = append(t.routes, r)
	if sorted {
		sort.SliceStable(t.routes, func(i, j int) bool { return t.routes[i].plen > t.routes[j].plen })
	}
	return nil
}

// share returns where ports start in t.ports: where the last route with the
// same ports (in the same order) has them, else appended. A fabric's switch
// has a few groups (its uplinks) under many routes.
func (t *RouteTable) share(ports []int) uint32 {
	for i := len(t.routes) - 1; i >= 0 && i >= len(t.routes)-maxShareScan; i-- {
		r := &t.routes[i]
		if int(r.n) == len(ports) && samePorts(t.ports[r.first:r.first+r.n], ports) {
			return r.first
		}
	}
	first := uint32(len(t.ports))
	for _, p := range ports {
		t.ports = append(t.ports, uint8(p))
	}
	return first
}

// maxShareScan bounds the routes share looks back over: adding n routes
// stays linear in n.
const maxShareScan = 64

func samePorts(a []uint8, b []int) bool {
	for i, p := range a {
		if int(p) != b[i] {
			return false
		}
	}
	return true
}

// index rebuilds the direct tables.
func (t *RouteTable) index() {
	t.blocks, t.groups, t.blockBase = nil, nil, 0
	long := sort.Search(len(t.routes), func(i int) bool { return t.routes[i].plen < 8 })
	t.scan = 0
	if long == 0 {
		return
	}
	lo, hi := t.routes[0].addr>>8, (t.routes[0].addr|^t.routes[0].mask)>>8
	for _, r := range t.routes[:long] {
		lo, hi = min(lo, r.addr>>8), max(hi, (r.addr|^r.mask)>>8)
	}
	mid := sort.Search(len(t.routes), func(i int) bool { return t.routes[i].plen <= 24 })
	if hi-lo >= maxBlockSpan || t.groupsNeeded(mid) > maxGroups {
		return // scan them all
	}
	t.scan = long
	t.blockBase = lo
	t.blocks = make([]uint32, hi-lo+1)
	// Shortest first, so that a longer route overwrites the addresses it
	// shares: first the routes of at most 24 bits over whole blocks...
	for i := len(t.routes) - 1; i >= mid; i-- {
		r := &t.routes[i]
		a, b := max(r.addr>>8, lo), min((r.addr|^r.mask)>>8, hi)
		for k := a; k <= b; k++ { // blocks are 24-bit: no wrap
			t.blocks[k-lo] = t.entry(i)
		}
	}
	// ... then the longer ones in their blocks' groups, each group starting
	// as a copy of its block's entry.
	for i := mid - 1; i >= 0; i-- {
		r := &t.routes[i]
		b := &t.blocks[r.addr>>8-lo]
		if *b&entryGroup == 0 {
			g := uint32(len(t.groups) >> 8)
			for k := 0; k < 256; k++ {
				t.groups = append(t.groups, *b)
			}
			*b = entryGroup | g
		}
		at := (*b&entryIndex)<<8 | r.addr&0xff
		for k := uint32(0); k <= ^r.mask; k++ {
			t.groups[at+k] = t.entry(i)
		}
	}
}

// groupsNeeded is the number of /24 blocks the routes longer than 24 bits
// (routes[:mid]) lie in.
func (t *RouteTable) groupsNeeded(mid int) int {
	blocks := make([]uint32, 0, mid)
	for _, r := range t.routes[:mid] {
		blocks = append(blocks, r.addr>>8)
	}
	slices.Sort(blocks)
	return len(slices.Compact(blocks))
}

// slot is dst's entry in the direct tables, and whether dst lies in them.
func (t *RouteTable) slot(dst uint32) (uint32, bool) {
	d := dst>>8 - t.blockBase
	if d >= uint32(len(t.blocks)) {
		return 0, false
	}
	v := t.blocks[d]
	if v&entryGroup != 0 {
		v = t.groups[(v&entryIndex)<<8|dst&0xff]
	}
	return v, true
}

// find returns the route holding dst, or nil.
func (t *RouteTable) find(dst uint32) *route {
	if v, ok := t.slot(dst); ok {
		if v == 0 {
			return nil
		}
		return &t.routes[v&entryIndex-1]
	}
	for i := t.scan; i < len(t.routes); i++ {
		r := &t.routes[i]
		if dst&r.mask == r.addr {
			return r
		}
	}
	return nil
}

// route is find for the forwarding path: the port of the longest prefix
// holding dst when that route has one port (read from the direct table's
// entry where there is one), with r unset; else -1 and the route, an ECMP
// group, or nil when no route holds dst.
func (t *RouteTable) route(dst uint32) (port int, r *route) {
	if v, ok := t.slot(dst); ok {
		return t.byEntry(v)
	}
	if r = t.find(dst); r == nil {
		return -1, nil
	}
	if r.n == 1 {
		return int(t.ports[r.first]), nil
	}
	return -1, r
}

// byEntry is route's answer for a direct table's entry v (0: no route).
func (t *RouteTable) byEntry(v uint32) (int, *route) {
	if p := v >> 24; p != 0 {
		return int(p) - 1, nil
	}
	if v == 0 {
		return -1, nil
	}
	return -1, &t.routes[v&entryIndex-1]
}

// Lookup returns the port of the longest prefix holding dst (the first of its
// ECMP group), or -1.
func (t *RouteTable) Lookup(dst uint32) int {
	r := t.find(dst)
	if r == nil {
		return -1
	}
	return int(t.ports[r.first])
}

// LookupHash returns the port of the longest prefix holding dst: within an
// ECMP group, the one hash picks (hash is only read for a group); -1 when no
// route holds dst.
func (t *RouteTable) LookupHash(dst uint32, hash uint32) int {
	r := t.find(dst)
	if r == nil {
		return -1
	}
	if r.n == 1 {
		return int(t.ports[r.first])
	}
	return int(t.ports[r.first+hash%r.n])
}

// hasPort reports whether port is the port, or one of the ECMP group, of the
// longest prefix holding addr: a frame from addr may come in on port (strict
// reverse-path filtering, RFC 3704 Sec. 2.2).
func (t *RouteTable) hasPort(addr uint32, port int) bool {
	r := t.find(addr)
	if r == nil {
		return false
	}
	for _, p := range t.ports[r.first : r.first+r.n] {
		if int(p) == port {
			return true
		}
	}
	return false
}

// RangePrefixes calls fn with the fewest prefixes that together hold exactly
// the addresses lo..hi (lo <= hi), in address order: each the largest block
// aligned at the next address that still fits in the range (at most 62 of
// them). A fabric's switch routes a range of consecutive host addresses that
// leave by one port or group with them.
func RangePrefixes(lo, hi uint32, fn func(addr uint32, plen int)) {
	for a := uint64(lo); a <= uint64(hi); {
		size := 32 // log2 of the block: as aligned as a allows ...
		if a != 0 {
			size = bits.TrailingZeros64(a)
		}
		for a+1<<size-1 > uint64(hi) { // ... and no further than hi
			size--
		}
		fn(uint32(a), 32-size)
		a += 1 << size
	}
}

// Len is the number of routes.
func (t *RouteTable) Len() int { return len(t.routes) }

// FlowHash is the ECMP hash of a flow's 5-tuple under a switch's seed: a
// multiply-xorshift mix (no table, no allocation). Every switch of a fabric has
// its own seed, so that switches in series do not pick correlated ports (hash
// polarisation).
func FlowHash(seed, src, dst uint32, sport, dport uint16, proto uint8) uint32 {
	h := uint64(seed)<<32 | uint64(src)
	h ^= (uint64(dst)<<32 | uint64(sport)<<16 | uint64(dport)) * 0x9e3779b97f4a7c15
	h ^= uint64(proto) << 56
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return uint32(h)
}
