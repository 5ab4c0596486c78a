package dataplane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/daemon"
	"github.com/ccbed/ccbed/wire"
)

// soakSample is one reading of the process's resources.
type soakSample struct {
	at         time.Duration
	rssBytes   int64
	heapAlloc  uint64
	totalAlloc uint64
	mbufs      int
	goroutines int
	txPackets  uint64
	ringGrowth uint64 // switchd.Engine.RingGrowthBytes
}

// rssReader reads the resident set size from /proc/self/statm, through one
// open file and one buffer: the soak's own readings must not add to the
// allocation they measure (os.ReadFile once cost ~1.8 KB a reading, about
// 1 KB/s, two thirds of what the soak counted).
type rssReader struct {
	f   *os.File
	buf [128]byte
}

func newRSSReader(tb testing.TB) *rssReader {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return &rssReader{f: f}
}

// bytes is the resident set size now (procfs regenerates the file on a
// read at offset 0).
func (r *rssReader) bytes(tb testing.TB) int64 {
	n, err := r.f.ReadAt(r.buf[:], 0)
	if n == 0 {
		tb.Fatalf("reading /proc/self/statm: %v", err)
	}
	// "size resident shared ...": the second field, in pages.
	b := r.buf[:n]
	i := bytes.IndexByte(b, ' ')
	var pages int64
	digits := 0
	for i++; i > 0 && i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		pages = pages*10 + int64(b[i]-'0')
		digits++
	}
	if digits == 0 {
		tb.Fatalf("/proc/self/statm: %q", b)
	}
	return pages * int64(os.Getpagesize())
}

// soakDurations is the soak's warm-up and measured time: 15 s + 30 s in CI,
// or CCBED_SOAK (e.g. CCBED_SOAK=10m) measured after a 30 s warm-up.
func soakDurations(tb testing.TB) (warm, run time.Duration) {
	if s := os.Getenv("CCBED_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			tb.Fatalf("CCBED_SOAK=%q: want a duration such as 10m", s)
		}
		return 30 * time.Second, d
	}
	if testing.Short() {
		tb.Skip("soak skipped in -short mode")
	}
	return 15 * time.Second, 30 * time.Second
}

// Soak bounds, after warm-up, over the measured time. RSS: 1 MiB plus
// 256 KiB a minute (what the Go runtime's own bookkeeping may take; the
// creep this test was written for was 0.64 MB in 310 s, 124 KiB a minute,
// and was the heap growing toward its first GC target); heap: the same; mbufs
// in use: within 2 bursts per port of the start (the frames loop; only
// generated feedback comes and goes); goroutines: none added.
// Allocation: at most soakAllocPerSecond bytes a second by the control plane,
// that is the process's allocations less what the switch's rings allocated
// by growing (switchd.Engine.RingGrowthBytes: a queue deeper than it has
// been doubles its ring, the data plane's memory, bounded by the queue
// limits and still within the heap bound above; one such doubling after
// warm-up once failed this test at 2,305 B/s) (the heap keeps this garbage until its next GC, which at GOGC 400 comes only
// near 16 MB: this rate is the slope of the creep). The JSON checkpoint leaves
// about 1 KB/s; the control plane before daemon.Monitor left 3.3 KB/s.
const (
	soakRSSBase        = 1 << 20
	soakRSSPerMinute   = 256 << 10
	soakAllocPerSecond = 2048
)

// TestSoakSwitch runs the switch under traffic for a long time with the
// daemon's control plane (daemon.Monitor: the sample ring drained to the CSV
// writer every 100 ms, a Snapshot and summary line every second, a JSON
// checkpoint every 2 s, the CSV decimated after 4 MB) and checks that, after
// warm-up, RSS, the Go heap, mbufs in use and goroutines stay flat. Frames
// loop through 4 net_ring vdevs (each port's tx comes back on its rx) as in
// BenchmarkForwardRTC, shaped at 10 Gb/s per port with DCQCN CPs, so that
// queues build and the CPs mark. CCBED_SOAK=10m runs it for
// ten minutes; CCBED_SOAK_TELEMETRY=legacy runs the control plane as
// cmd/switchd did before daemon.Monitor (a fresh Snapshot and fmt line every
// second), to compare.
func TestSoakSwitch(t *testing.T) {
	warm, measure := soakDurations(t)
	legacy := os.Getenv("CCBED_SOAK_TELEMETRY") == "legacy"
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as cmd/switchd

	mp := newPool(t, "soak", 8191)
	ports, stopRings := startRings(t, mp)
	defer stopRings()
	// DCQCN CPs mark; they generate no frames, which would loop here forever
	// and fill the pool (the switch's own frames are covered by
	// TestRoCCFeedbackThroughMbufs).
	cfg := switchConfig("dcqcn", []float64{10, 10, 10, 10})
	cfg.DecrementTTL = false
	for i := range cfg.Ports {
		cfg.Ports[i].PeerMAC = portMAC(i) // frames come back to the switch
	}
	eng, err := switchd.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(eng, ports, mp, Config{Name: "soak"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 256 frames of 1000 B per port, addressed to the next host, loop for
	// the whole run.
	bb := dpdk.NewBurst(256)
	defer bb.Free()
	for i := 0; i < 4; i++ {
		if err := mp.AllocBulk(bb.Pkts); err != nil {
			t.Fatal(err)
		}
		for k, m := range bb.Pkts {
			ep := wire.Endpoints{DstMAC: portMAC(i), SrcMAC: hostMAC(i), SrcIP: hostIP(i), DstIP: hostIP((i + 1) % 4), SrcPort: uint16(49152 + k%16)}
			l, err := wire.BuildData(m.Room(), &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: uint32(k % 16), PayloadLen: 1000})
			if err != nil {
				t.Fatal(err)
			}
			m.SetLen(l)
		}
		if n := ports[i].TxBurst(bb.Pkts); n < len(bb.Pkts) {
			dpdk.FreeBulk(bb.Pkts[n:])
		}
	}

	dir := t.TempDir()
	csv, err := daemon.CreateCSV(filepath.Join(dir, "queue.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csv.SetDecimation(4<<20, 100*time.Millisecond)
	start := time.Now()
	var mon *daemon.Monitor
	if !legacy {
		mon, err = daemon.NewMonitor(eng, daemon.MonitorConfig{CSV: csv, Console: io.Discard,
			JSONPath: filepath.Join(dir, "switch.json"), Mode: "rtc", Start: start})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The control plane, as cmd/switchd runs it.
	var prev *switchd.Snapshot
	last := start
	tickCP := func(now time.Time) {
		if !legacy {
			if err := mon.Tick(now); err != nil {
				t.Error(err)
			}
			return
		}
		eng.DrainSamples(csv.Write)
		if now.Sub(last) >= time.Second {
			cur := eng.Snapshot()
			fmt.Fprintln(io.Discard, switchd.SummaryLine(now.Sub(start).Seconds(), now.Sub(last).Seconds(), prev, &cur))
			prev, last = &cur, now
		}
	}

	clock := lcore.NewTSCClock(dpdk.TSCHz())
	g := lcore.NewGroup()
	if err := s.Launch(g, clock, []uint{1}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() []lcore.Stats {
		if stopped {
			return nil
		}
		stopped = true
		g.Stop()
		return g.Wait()
	}
	defer stop()

	var ms runtime.MemStats
	var snap switchd.Snapshot
	rss := newRSSReader(t)
	sample := func() soakSample {
		runtime.ReadMemStats(&ms)
		var tx uint64
		eng.SnapshotInto(&snap)
		for _, p := range snap.Ports {
			tx += p.TxPackets
		}
		return soakSample{at: time.Since(start), rssBytes: rss.bytes(t), heapAlloc: ms.HeapAlloc, totalAlloc: ms.TotalAlloc,
			mbufs: mp.InUse(), goroutines: runtime.NumGoroutine(), txPackets: tx, ringGrowth: eng.RingGrowthBytes()}
	}
	var samples []soakSample
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	nextSample := start.Add(warm)
	every := max(measure/30, 2*time.Second)
	for now := range tick.C {
		tickCP(now)
		if now.Before(nextSample) {
			continue
		}
		samples = append(samples, sample())
		nextSample = nextSample.Add(every)
		if now.Sub(start) >= warm+measure {
			break
		}
	}
	stats := stop()
	for _, st := range stats {
		if st.Panic != "" {
			t.Fatalf("%s panicked: %s", st.Name, st.Panic)
		}
	}
	if !legacy {
		if _, err := mon.Finish(time.Now(), nil, ""); err != nil {
			t.Error(err)
		}
	} else if err := csv.Close(); err != nil {
		t.Error(err)
	}

	first, lastS := samples[0], samples[len(samples)-1]
	span := lastS.at - first.at
	mins := span.Minutes()
	t.Logf("telemetry %s; %d samples over %.0f s after a %.0f s warm-up:", map[bool]string{true: "legacy", false: "daemon.Monitor"}[legacy], len(samples), span.Seconds(), warm.Seconds())
	minM, maxM := first.mbufs, first.mbufs
	for _, x := range samples {
		t.Logf("  t=%6.1fs rss %7.3f MiB heap %7.3f MiB alloc %9d B mbufs %5d goroutines %d tx %d",
			x.at.Seconds(), float64(x.rssBytes)/(1<<20), float64(x.heapAlloc)/(1<<20), x.totalAlloc, x.mbufs, x.goroutines, x.txPackets)
		minM, maxM = min(minM, x.mbufs), max(maxM, x.mbufs)
	}
	rssGrowth := lastS.rssBytes - first.rssBytes
	heapGrowth := int64(lastS.heapAlloc) - int64(first.heapAlloc)
	// A queue deeper than it has been before doubles its ring: the data
	// plane's memory, bounded by the queue limits, counted apart.
	ringGrowth := lastS.ringGrowth - first.ringGrowth
	allocRate := float64(lastS.totalAlloc-first.totalAlloc-ringGrowth) / span.Seconds()
	mpps := float64(lastS.txPackets-first.txPackets) / span.Seconds() / 1e6
	t.Logf("RSS %+.3f MiB, heap %+.3f MiB, allocated %.0f B/s (rings grew by %d B besides), mbufs in use %d..%d, goroutines %d -> %d, forwarding %.3f Mpps",
		float64(rssGrowth)/(1<<20), float64(heapGrowth)/(1<<20), allocRate, ringGrowth, minM, maxM, first.goroutines, lastS.goroutines, mpps)
	bound := int64(soakRSSBase + mins*soakRSSPerMinute)
	if rssGrowth > bound {
		t.Errorf("RSS grew %.3f MiB in %.0f s after warm-up, bound %.3f MiB", float64(rssGrowth)/(1<<20), span.Seconds(), float64(bound)/(1<<20))
	}
	if heapGrowth > bound {
		t.Errorf("Go heap grew %.3f MiB in %.0f s after warm-up, bound %.3f MiB", float64(heapGrowth)/(1<<20), span.Seconds(), float64(bound)/(1<<20))
	}
	if allocRate > soakAllocPerSecond {
		t.Errorf("the control plane allocated %.0f B/s after warm-up, bound %d B/s: garbage the heap grows by until its next GC", allocRate, soakAllocPerSecond)
	}
	if maxM-minM > 4*2*32 {
		t.Errorf("mbufs in use ranged %d..%d, want within %d", minM, maxM, 4*2*32)
	}
	if lastS.goroutines > first.goroutines {
		t.Errorf("goroutines %d -> %d", first.goroutines, lastS.goroutines)
	}
	if lastS.txPackets == first.txPackets {
		t.Error("no traffic during the soak")
	}
}
