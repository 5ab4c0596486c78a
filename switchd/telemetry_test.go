package switchd

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// summaryLineFmt is the console line as fmt wrote it before
// AppendSummaryLine: the two must agree.
func summaryLineFmt(tS, dtS float64, prev, cur *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%6.1fs", tS)
	for i := range cur.Ports {
		c := &cur.Ports[i]
		var p PortCounters
		if prev != nil && i < len(prev.Ports) {
			p = prev.Ports[i]
		}
		mpps := float64(c.TxPackets-p.TxPackets) / dtS / 1e6
		gbps := float64(c.TxBytes-p.TxBytes) * 8 / dtS / 1e9
		fmt.Fprintf(&b, " | %s tx %.3fMpps %.2fGb/s q %dB drop %d mark %d fb %d pfc %d/%d",
			c.Name, mpps, gbps, c.QueueBytes, c.DropsTotal-p.DropsTotal,
			c.ECNMarkedTotal-p.ECNMarkedTotal, c.FeedbackSent-p.FeedbackSent,
			c.PausesSent-p.PausesSent, c.PausesRecv-p.PausesRecv)
		if c.FairRateGbps > 0 {
			fmt.Fprintf(&b, " F %.2fGb/s", c.FairRateGbps)
		}
	}
	return b.String()
}

// TestSummaryLineAllocatesNothing: the console line every second and the
// snapshot behind it allocate nothing once their buffers exist (they were
// the garbage behind a running switchd's slow RSS rise), and the line reads
// as it did.
func TestSummaryLineAllocatesNothing(t *testing.T) {
	c := testSpec(4, 10)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	var prev, cur Snapshot
	e.SnapshotInto(&prev)
	e.SnapshotInto(&cur)
	cur.Ports[1].TxPackets, cur.Ports[1].TxBytes, cur.Ports[1].QueueBytes = 12345, 12345*1000, 77
	cur.Ports[2].FairRateGbps, cur.Ports[3].DropsTotal = 3.33, 9
	for _, tS := range []float64{0, 1.04, 12.5, 123456.7} {
		want := summaryLineFmt(tS, 1, &prev, &cur)
		if got := SummaryLine(tS, 1, &prev, &cur); got != want {
			t.Errorf("t %g:\n got %q\nwant %q", tS, got, want)
		}
	}
	if got, want := SummaryLine(3, 0.5, nil, &cur), summaryLineFmt(3, 0.5, nil, &cur); got != want {
		t.Errorf("no prev:\n got %q\nwant %q", got, want)
	}
	line := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		e.SnapshotInto(&cur)
		line = AppendSummaryLine(line[:0], 5, 1, &prev, &cur)
	}); n != 0 {
		t.Errorf("SnapshotInto + AppendSummaryLine: %v allocations per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = e.Snapshot() }); n == 0 {
		t.Log("Snapshot allocates nothing?")
	}
}

// TestRingGrowthBytes: RingGrowthBytes is what the rings allocated by
// growing, so that a soak can tell the data plane's growing queues from
// control-plane garbage. 1,000 frames queued on one port grow its data
// queue from nothing to 256, 512 and 1,024 slots; the heap's count of
// allocated bytes must move by that much (size classes may round it up a
// little), and nothing grows when the same depth comes back.
func TestRingGrowthBytes(t *testing.T) {
	c := testSpec(2, 100)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = dataFrame(t, 0, 1, uint32(i%16), 64, false)
	}
	out := make([]TxItem, 64)
	var meta Meta
	var ms runtime.MemStats
	fill := func(now int64) (grown, allocated uint64) {
		e.PublishEgress()
		g0 := e.RingGrowthBytes()
		runtime.ReadMemStats(&ms)
		a0 := ms.TotalAlloc
		for _, f := range frames {
			if !e.Classify(0, f, &meta) || !e.Enqueue(now, &meta, f, handleOf(f)) {
				t.Fatal("frame not queued")
			}
		}
		runtime.ReadMemStats(&ms)
		e.PublishEgress()
		return e.RingGrowthBytes() - g0, ms.TotalAlloc - a0
	}
	grown, allocated := fill(0)
	if want := uint64(256+512+1024) * uint64(unsafe.Sizeof(qEntry{})); grown != want {
		t.Errorf("first fill: RingGrowthBytes moved %d, want %d", grown, want)
	}
	if allocated < grown || allocated > grown+grown/8+4096 {
		t.Errorf("first fill: %d bytes allocated, RingGrowthBytes moved %d", allocated, grown)
	}
	// Drain the port, then fill it to the same depth: no growth.
	now := int64(0)
	for sent := 0; sent < n; {
		now += 1000
		e.Service(now)
		sent += e.Transmit(now, 1, out)
	}
	if grown, allocated := fill(now); grown != 0 || allocated > 4096 {
		t.Errorf("second fill: RingGrowthBytes moved %d, %d bytes allocated; want 0 and 0", grown, allocated)
	}
}
