package dpdkrun

import (
	"bytes"
	"io"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/pcapw"
)

func TestMain(m *testing.M) { dpdktest.Main(m, "dpdkrun", dpdktest.Args(256, "0")) }

// fakePort hands out the same received burst on every RxBurst and takes
// the first take frames of every TxBurst; it frees nothing.
type fakePort struct {
	rx   []*dpdk.Mbuf
	take int
}

func (p *fakePort) RxBurst(pkts []*dpdk.Mbuf) int { return copy(pkts, p.rx) }
func (p *fakePort) TxBurst(pkts []*dpdk.Mbuf) int { return min(p.take, len(pkts)) }

// mbufs allocates n mbufs from a new pool of poolN named name, all freed
// when the test ends.
func mbufs(t *testing.T, name string, poolN uint32, n int) *dpdk.Burst {
	pool, err := dpdk.NewPktMbufPool(name, poolN, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Free)
	burst := dpdk.NewBurst(n)
	t.Cleanup(burst.Free)
	if err := pool.AllocBulk(burst.Pkts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dpdk.FreeBulk(burst.Pkts) })
	return burst
}

// TestTapPort checks a captured port's ring: received frames are kept, only
// the transmitted frames TxBurst took are, a frame longer than the ring's
// room keeps its head and its whole length, the times never decrease, a
// full ring counts what it could not keep instead of blocking, and neither
// burst allocates.
func TestTapPort(t *testing.T) {
	burst := mbufs(t, "tap_pool", 255, 8)
	for i, m := range burst.Pkts {
		n := 60 + 10*i // 60..130 bytes: the last ones longer than the room
		r := m.Room()
		for j := 0; j < n; j++ {
			r[j] = byte(i*16 + j)
		}
		m.SetLen(n)
	}
	const room = 100
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	fp := &fakePort{rx: burst.Pkts, take: 5}
	tp := &tapPort{Port: fp, ring: newTapRing(tapSlots, room), clock: clock}
	t0 := clock.Now()

	if n := tp.RxBurst(make([]*dpdk.Mbuf, 8)); n != 8 {
		t.Fatalf("RxBurst %d", n)
	}
	if n := tp.TxBurst(burst.Pkts); n != 5 {
		t.Fatalf("TxBurst took %d", n)
	}
	var buf bytes.Buffer
	w, err := pcapw.NewWriter(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	tp.ring.drain(pcapw.NewPcapPort(w), t0)
	w.Close()
	r, err := pcapw.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	last := int64(0)
	for i := 0; i < 8+5; i++ {
		rec, err := r.Next(nil)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		d := burst.Pkts[i%8].Data() // the rx burst, then the 5 frames sent
		if rec.OrigLen != len(d) || !bytes.Equal(rec.Data, d[:min(len(d), room)]) {
			t.Errorf("record %d: %d of %d bytes, want %d of %d", i, len(rec.Data), rec.OrigLen, min(len(d), room), len(d))
		}
		if rec.TimeNs < last || rec.TimeNs > clock.Now()-t0 {
			t.Errorf("record %d at %d ns after %d", i, rec.TimeNs, last)
		}
		last = rec.TimeNs
	}
	if _, err := r.Next(nil); err != io.EOF {
		t.Fatalf("more records than frames: %v", err)
	}

	// Nobody drains: the ring fills, and the rest is counted, not blocked on.
	rx := make([]*dpdk.Mbuf, 8)
	bursts := tapSlots/8 + 3
	for i := 0; i < bursts; i++ {
		tp.RxBurst(rx)
	}
	if got, want := tp.ring.dropped.Load(), uint64(bursts*8-tapSlots); got != want {
		t.Errorf("full ring: %d dropped, want %d", got, want)
	}
	fp.take = 8
	tp.TxBurst(burst.Pkts)
	if got, want := tp.ring.dropped.Load(), uint64(bursts*8-tapSlots+8); got != want {
		t.Errorf("full ring, tx: %d dropped, want %d", got, want)
	}
	w, _ = pcapw.NewWriter(io.Discard, 0)
	port := pcapw.NewPcapPort(w)
	tp.ring.drain(port, t0)
	if port.Frames() != tapSlots {
		t.Errorf("drained %d frames of a full ring of %d", port.Frames(), tapSlots)
	}

	// Per burst: no allocation, whatever the ring's state.
	if a := testing.AllocsPerRun(1000, func() {
		tp.RxBurst(rx)
		tp.TxBurst(burst.Pkts)
		tp.ring.drain(port, t0)
	}); a != 0 {
		t.Errorf("a captured port's bursts and drain allocate %v times", a)
	}
}

// TestDrainMerged checks the merge of two ports' rings into one pcapng
// file: a drain writes only the frames no lcore can still precede (up to
// the rings' earliest last poll), in time order, each on its port's
// interface with its direction; the final drain writes the rest.
func TestDrainMerged(t *testing.T) {
	burst := mbufs(t, "merge_pool", 63, 4)
	for i, m := range burst.Pkts {
		m.SetLen(60 + i)
	}
	var buf bytes.Buffer
	w, _ := pcapw.NewNgWriter(&buf, pcapw.NgSection{})
	w.AddInterface(pcapw.NgInterface{Name: "a"})
	w.AddInterface(pcapw.NgInterface{Name: "b"})
	a, b := newTapRing(16, 128), newTapRing(16, 128)
	rings, ports := []*tapRing{a, b}, []*pcapw.Port{pcapw.NewNgPort(w, 0), pcapw.NewNgPort(w, 1)}
	heads := make([]uint64, 2)
	poll := func(r *tapRing, ns int64, n int, dir pcapw.Direction) {
		r.publish(r.stage(ns, burst.Pkts[:n], dir), n)
		r.polled.Store(ns)
	}
	poll(a, 110, 2, pcapw.DirInbound)
	poll(b, 105, 3, pcapw.DirOutbound)
	poll(a, 120, 1, pcapw.DirOutbound)
	drainMerged(rings, ports, heads, 100, false) // up to 105: b's 3
	if w.Frames() != 3 {
		t.Fatalf("first drain wrote %d frames, want 3", w.Frames())
	}
	b.polled.Store(130) // b polled, nothing received: up to 120
	drainMerged(rings, ports, heads, 100, false)
	if w.Frames() != 6 {
		t.Fatalf("second drain: %d frames, want 6", w.Frames())
	}
	poll(b, 125, 4, pcapw.DirInbound) // a has not polled since 120: waits
	drainMerged(rings, ports, heads, 100, false)
	if w.Frames() != 6 {
		t.Fatalf("third drain: %d frames, want 6", w.Frames())
	}
	drainMerged(rings, ports, heads, 100, true)
	w.Close()
	r, err := pcapw.NewNgReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ns    int64
		iface int
		dir   pcapw.Direction
	}{{5, 1, 2}, {5, 1, 2}, {5, 1, 2}, {10, 0, 1}, {10, 0, 1}, {20, 0, 2}, {25, 1, 1}, {25, 1, 1}, {25, 1, 1}, {25, 1, 1}}
	for i, wnt := range want {
		rec, err := r.Next(nil)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if rec.TimeNs != wnt.ns || rec.Interface != wnt.iface || rec.Dir != wnt.dir {
			t.Errorf("record %d: %d ns on %d %v, want %d ns on %d %v", i, rec.TimeNs, rec.Interface, rec.Dir, wnt.ns, wnt.iface, wnt.dir)
		}
	}
	if _, err := r.Next(nil); err != io.EOF {
		t.Errorf("more records: %v", err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		poll(a, 200, 4, pcapw.DirInbound)
		poll(b, 200, 4, pcapw.DirOutbound)
		drainMerged(rings, ports, heads, 100, false)
	}); allocs != 0 {
		t.Errorf("drainMerged allocates %v times", allocs)
	}
}

func TestTapRingSlots(t *testing.T) {
	for _, tc := range []struct{ ports, room, want int }{
		{1, 2048, tapSlots},
		{4, 2048, tapSlots},
		{16, 2048, tapSlots},
		{17, 2048, tapSlots / 2},
		{64, 2048, tapSlots / 4},
		{64, 128, tapSlots},
		{1000, 2048, minTapSlots},
	} {
		if got := tapRingSlots(tc.ports, tc.room); got != tc.want {
			t.Errorf("%d ports of %d-byte slots: %d slots, want %d", tc.ports, tc.room, got, tc.want)
		}
	}
}
