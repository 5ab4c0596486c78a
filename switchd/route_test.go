package switchd

import (
	"math/rand/v2"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// TestRouteTableECMP: a /32 route to a group spreads flows over its ports by
// hash, a single port ignores the hash, the direct /32 table and the prefix
// scan agree, and FlowHash depends on every field and the seed.
func TestRouteTableECMP(t *testing.T) {
	var rt RouteTable
	if err := rt.AddECMP(0x0a000005, 32, []int{4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Add(0x0a000006, 32, 1); err != nil {
		t.Fatal(err)
	}
	if err := rt.AddECMP(0x0a000100, 24, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for sport := uint16(0); sport < 400; sport++ {
		p := rt.LookupHash(0x0a000005, FlowHash(7, 0x0a000001, 0x0a000005, 49152+sport, 4791, 17))
		seen[p]++
	}
	for _, p := range []int{4, 5, 6, 7} {
		if seen[p] < 60 {
			t.Errorf("ECMP over 4 ports: %v, port %d nearly unused", seen, p)
		}
	}
	if len(seen) != 4 {
		t.Errorf("ECMP picked ports %v, want 4..7", seen)
	}
	for h := uint32(0); h < 8; h++ {
		if p := rt.LookupHash(0x0a000006, h); p != 1 {
			t.Fatalf("single-port route: port %d", p)
		}
		if p := rt.LookupHash(0x0a000177, h); p != 2+int(h%2) {
			t.Fatalf("/24 ECMP: port %d for hash %d", p, h)
		}
	}
	if p := rt.Lookup(0x0a000005); p != 4 {
		t.Errorf("Lookup of an ECMP route = %d, want its first port", p)
	}
	if p := rt.LookupHash(0x0b000000, 0); p != -1 {
		t.Errorf("no route: %d", p)
	}
	base := FlowHash(1, 2, 3, 4, 5, 6)
	for i, h := range []uint32{FlowHash(9, 2, 3, 4, 5, 6), FlowHash(1, 9, 3, 4, 5, 6), FlowHash(1, 2, 9, 4, 5, 6),
		FlowHash(1, 2, 3, 9, 5, 6), FlowHash(1, 2, 3, 4, 9, 6), FlowHash(1, 2, 3, 4, 5, 9)} {
		if h == base {
			t.Errorf("FlowHash ignores field %d", i)
		}
	}
	if err := rt.AddECMP(0x0a000008, 32, nil); err == nil {
		t.Error("empty ECMP group: want an error")
	}
	if err := rt.AddECMP(0x0a000008, 32, []int{64}); err == nil {
		t.Error("port 64: want an error")
	}
}

// TestNextWake: an idle engine wakes for its telemetry; a queued frame makes
// its port due when the shaper is free, and a paused priority when the pause
// ends.
func TestNextWake(t *testing.T) {
	h := newHarness(t, testSpec(2, 10))
	e := h.e
	e.Start(1000)
	if w := e.NextWake(1000); w != 1000 {
		t.Fatalf("fresh engine: next wake %d, want its first counter publication at 1000", w)
	}
	e.Service(1000)
	e.ServiceIngress(1000)
	idle := e.NextWake(1000)
	if idle <= 1000 || idle == ccalgo.Never {
		t.Fatalf("idle engine: next wake %d, want its next sample or publication", idle)
	}
	if e.Active() != 0 {
		t.Fatalf("idle engine has busy ports %b", e.Active())
	}
	f := dataFrame(t, 0, 1, 5, 1000, false)
	if !h.inject(2000, 0, f) {
		t.Fatal("frame not taken")
	}
	if e.Active() != 1<<1 {
		t.Fatalf("busy ports %b, want port 1", e.Active())
	}
	if w := e.NextWake(2000); w != 2000 {
		t.Fatalf("queued frame on an idle port: next wake %d, want now", w)
	}
	if n := len(h.tx(2000, 1)); n != 1 {
		t.Fatalf("sent %d frames", n)
	}
	if e.Active() != 0 {
		t.Fatalf("busy ports %b after the queue emptied", e.Active())
	}
}

// TestRouteTableLongestMatch: random tables of every prefix length, with and
// without a default route and with spans below and above the direct tables'
// bounds, plain routes and ECMP groups, give the longest matching prefix for
// random addresses (and for each route's first and last address), against a
// scan of every route; route gives a plain route's port.
func TestRouteTableLongestMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 14))
	for trial := 0; trial < 300; trial++ {
		var rt RouteTable
		var specs []Route
		seen := map[uint64]bool{}
		base := rng.Uint32() & 0xff000000
		wide := trial%3 == 0 // prefixes all over the address space
		for n := 1 + rng.IntN(40); len(specs) < n; {
			plen := rng.IntN(33)
			if trial%5 == 0 && len(specs) == 0 {
				plen = 0 // a default route
			}
			addr := base | rng.Uint32()&0x0003ffff
			if wide {
				addr = rng.Uint32()
			}
			mask := uint32(0)
			if plen > 0 {
				mask = ^uint32(0) << (32 - plen)
			}
			addr &= mask
			if k := uint64(addr)<<8 | uint64(plen); !seen[k] {
				seen[k] = true
				ports := []int{len(specs) % MaxPorts}
				if rng.IntN(4) == 0 { // an ECMP group
					ports = append(ports, (len(specs)+1)%MaxPorts)
				}
				specs = append(specs, Route{Addr: addr, Len: plen, Ports: ports})
			}
		}
		if err := rt.addAll(specs); err != nil {
			t.Fatal(err)
		}
		naive := func(dst uint32) *route {
			var best *route
			for i := range rt.routes {
				r := &rt.routes[i]
				if dst&r.mask == r.addr && (best == nil || r.plen > best.plen) {
					best = r
				}
			}
			return best
		}
		probe := func(dst uint32) {
			want := naive(dst)
			if got := rt.find(dst); got != want {
				t.Fatalf("trial %d: %s: route %+v, want %+v (blocks %d)", trial, wire.FormatIPv4(dst), got, want, len(rt.blocks))
			}
			// route: a plain route's port, else the ECMP group's route.
			p, r := rt.route(dst)
			wp, wr := -1, want
			if want != nil && want.n == 1 {
				wp, wr = int(rt.ports[want.first]), nil
			}
			if p != wp || r != wr {
				t.Fatalf("trial %d: %s: route() = %d %+v, want %d %+v", trial, wire.FormatIPv4(dst), p, r, wp, wr)
			}
		}
		for _, r := range rt.routes {
			probe(r.addr)
			probe(r.addr | ^r.mask)
		}
		for i := 0; i < 200; i++ {
			probe(base | rng.Uint32()&0x0007ffff)
			probe(rng.Uint32())
		}
	}
}

// BenchmarkRouteLookup looks up addresses under n /24 subnet routes (a
// switch's per-rack or per-host subnets): one direct-table read whatever n,
// where a scan of the short routes grew with n.
func BenchmarkRouteLookup(b *testing.B) {
	for _, n := range []int{4, 256} {
		b.Run(itoa(n)+"x24", func(b *testing.B) {
			var rt RouteTable
			specs := make([]Route, n)
			for i := range specs {
				specs[i] = Route{Addr: 0x0a000000 | uint32(i)<<8, Len: 24, Ports: []int{i % 4}}
			}
			if err := rt.addAll(specs); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			sum := 0
			for i := 0; i < b.N; i++ {
				sum += rt.Lookup(0x0a000001 | uint32(i%n)<<8)
			}
			if sum < 0 {
				b.Fatal("no route")
			}
		})
	}
}

// TestRangePrefixes: the prefixes of a range hold exactly its addresses, in
// order, each aligned, no two of them mergeable into one.
func TestRangePrefixes(t *testing.T) {
	for _, c := range []struct {
		lo, hi uint32
		want   int // number of prefixes
	}{
		{0x0a000001, 0x0a000001, 1},
		{0x0a000001, 0x0a00000c, 5}, // .1, .2-3, .4-7, .8-11, .12
		{0x0a000000, 0x0a0000ff, 1},
		{0x0a000001, 0x0a002000, 14},
		{0, 0xffffffff, 1},
		{0xfffffffe, 0xffffffff, 1},
		{1, 0xfffffffe, 62},
	} {
		var got [][2]uint32
		RangePrefixes(c.lo, c.hi, func(addr uint32, plen int) { got = append(got, [2]uint32{addr, uint32(plen)}) })
		next := uint64(c.lo)
		for i, g := range got {
			size := uint64(1) << (32 - g[1])
			if uint64(g[0]) != next || uint64(g[0])%size != 0 {
				t.Fatalf("%s-%s: prefix %d %s/%d: want an aligned block at %s", wire.FormatIPv4(c.lo), wire.FormatIPv4(c.hi), i, wire.FormatIPv4(g[0]), g[1], wire.FormatIPv4(uint32(next)))
			}
			next += size
		}
		if next != uint64(c.hi)+1 {
			t.Fatalf("%s-%s: prefixes %v end at %d", wire.FormatIPv4(c.lo), wire.FormatIPv4(c.hi), got, next)
		}
		if len(got) != c.want {
			t.Errorf("%s-%s: %d prefixes %v, want %d", wire.FormatIPv4(c.lo), wire.FormatIPv4(c.hi), len(got), got, c.want)
		}
	}
}

// fatTreeCoreRoutes are the routes of a core switch of a k-ary fat-tree whose
// hosts are 10.0.0.1 + i, pod by pod (k^2/4 hosts a pod, pod p on port p):
// with perHost a /32 route per host, else the prefixes of each pod's range.
// edge: an edge switch's instead (its k/2 hosts on ports 0..k/2-1, every
// other host over the ECMP group of its k/2 uplinks).
func fatTreeRoutes(k int, perHost, edge bool) []Route {
	h := k / 2
	n := k * h * h
	var up []int
	for p := h; p < k; p++ {
		up = append(up, p)
	}
	portsOf := func(i int) []int {
		if !edge {
			return []int{i / (h * h)}
		}
		if i < h {
			return []int{i}
		}
		return up
	}
	var rs []Route
	add := func(lo, hi int) {
		if perHost {
			for i := lo; i <= hi; i++ {
				rs = append(rs, Route{Addr: 0x0a000001 + uint32(i), Len: 32, Ports: portsOf(i)})
			}
			return
		}
		RangePrefixes(0x0a000001+uint32(lo), 0x0a000001+uint32(hi), func(a uint32, plen int) {
			rs = append(rs, Route{Addr: a, Len: plen, Ports: portsOf(lo)})
		})
	}
	switch {
	case edge:
		for i := 0; i < h; i++ {
			add(i, i)
		}
		add(h, n-1)
	default:
		for p := 0; p < k; p++ {
			add(p*h*h, (p+1)*h*h-1)
		}
	}
	return rs
}

// BenchmarkRouteFatTree looks up every host of a k = 32 fat-tree (8192 hosts)
// in a core switch's and an edge switch's table (ECMP over 16 uplinks), with
// a /32 route per host and with the prefixes of ranges of hosts, as the
// forwarding path does (route, then the group's member by hash).
func BenchmarkRouteFatTree(b *testing.B) {
	const k, hosts = 32, 32 * 32 * 32 / 4
	for _, c := range []struct {
		name          string
		perHost, edge bool
	}{{"core/perhost", true, false}, {"core/prefix", false, false}, {"edge/perhost", true, true}, {"edge/prefix", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			var rt RouteTable
			if err := rt.addAll(fatTreeRoutes(k, c.perHost, c.edge)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rt.Len()), "routes")
			b.ReportAllocs()
			sum := 0
			for i := 0; i < b.N; i++ {
				dst := 0x0a000001 + uint32(i*7919%hosts)
				p, r := rt.route(dst)
				if p < 0 && r != nil {
					p = int(rt.ports[r.first+uint32(i)%r.n])
				}
				sum += p
			}
			if sum < 0 {
				b.Fatal("no route")
			}
		})
	}
}
