package dataplane

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/internal/cpuclock"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// benchCPU is the CPU BenchmarkForwardRTC polls on: lcore 1 (CPU 1, where
// scripts/bench-switchd.sh runs l3fwd's forwarding lcore too), or lcore 2
// with 0. BenchmarkForwardRTCScraped's polling thread, no lcore, is pinned
// to it; -1 leaves that thread where the scheduler puts it. Unpinned, the
// thread moves between CPUs and shares them with the runtime's other
// threads, and the benchmark's CPU time per packet varied from one run to
// the next by half.
var benchCPU = flag.Int("bench-cpu", 1, "`cpu` for BenchmarkForwardRTC's polling lcore (1 or 0) and BenchmarkForwardRTCScraped's thread (-1: unpinned)")

// pinThread pins the calling thread (locked to its goroutine) to cpu when the
// machine has it, and returns the function that restores its CPU set.
func pinThread(tb testing.TB, cpu int) func() {
	tb.Helper()
	var old unix.CPUSet
	if cpu < 0 || cpu >= runtime.NumCPU() || unix.SchedGetaffinity(0, &old) != nil {
		return func() {}
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		tb.Logf("cannot pin the polling thread to CPU %d: %v", cpu, err)
		return func() {}
	}
	return func() { _ = unix.SchedSetaffinity(0, &old) }
}

// benchIsolate keeps BenchmarkForwardRTCScraped's other threads (the
// endpoint, the storm, the runtime) off the polling thread's CPU, as on a
// node whose lcores have cores of their own.
var benchIsolate = flag.Bool("bench-isolate", false, "keep BenchmarkForwardRTCScraped's other threads off -bench-cpu")

// isolateOthers sets every other thread of the process (and so the threads
// they start) on every CPU but cpu, and returns the function that puts them
// back on every CPU.
func isolateOthers(tb testing.TB, cpu int) func() {
	var all, rest unix.CPUSet
	if cpu < 0 || cpu >= runtime.NumCPU() || runtime.NumCPU() < 2 {
		return func() {}
	}
	for c := 0; c < runtime.NumCPU(); c++ {
		all.Set(c)
		if c != cpu {
			rest.Set(c)
		}
	}
	set := func(s *unix.CPUSet) {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			tb.Logf("isolate: %v", err)
			return
		}
		self := unix.Gettid()
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil && tid != self {
				_ = unix.SchedSetaffinity(tid, s) // a thread gone meanwhile
			}
		}
	}
	set(&rest)
	return func() { set(&all) }
}

// shardedCPU has BenchmarkForwardSharded's loops also sum the thread CPU time
// of their busy polls (one clock_gettime system call per poll, idle or
// not): each side's cost per packet without the time other processes held
// its CPU, which the TSC time of the busy polls includes.
var shardedCPU = flag.Bool("sharded-cpu", false, "BenchmarkForwardSharded: report each side's CPU time per packet too")

var seedPcap = flag.String("seed-pcap", "", "`dir` for the frames BenchmarkForwardRTC/none seeds, one pcap per port and size")

// BenchmarkForwardRTC forwards 64 B or 1500 B frames around 4 looping net_ring
// vdevs (each port's tx comes back on its rx) in rtc mode, with a CP on every
// port, and reports Mpps. scripts/bench-switchd.sh runs it beside dpdk-testpmd.
func BenchmarkForwardRTC(b *testing.B) {
	for _, scheme := range []string{"none", "rocc", "hpcc", "dcqcn"} {
		for _, size := range []int{64, 1500} {
			b.Run(fmt.Sprintf("%s/%dB", scheme, size), func(b *testing.B) { benchForwardMode(b, scheme, size, benchMode{}) })
		}
	}
}

// BenchmarkForwardSharded is BenchmarkForwardRTC's traffic through the sharded
// mode (a "+pfc" scheme with PFC on, every frame lossless), on launched EAL
// lcores with the daemon's pool cache as BenchmarkForwardRTC: "1rx", one rx
// lcore that receives and classifies (lcore 1 on CPU 1) and one tx+CC lcore
// (lcore 2 on CPU 0); "1rx2tx", the same rx lcore and two tx+CC lcores
// (lcore 2 on CPU 0 with ports 0 and 2, lcore 3 on CPU 1 with ports 1 and 3,
// sharing CPU 1 with the rx lcore: this machine has two). The benchmark's
// goroutine sleeps meanwhile. It reports the switch's Mpps over wall time and
// each side's busy time per packet (the tx side's summed over its lcores).
func BenchmarkForwardSharded(b *testing.B) {
	for _, scheme := range []string{"none", "dcqcn", "hpcc", "rocc", "none+pfc", "dcqcn+pfc"} {
		b.Run(scheme+"/64B/1rx", func(b *testing.B) { benchForwardMode(b, scheme, 64, benchMode{rx: 1, tx: 1}) })
	}
	for _, scheme := range []string{"none", "dcqcn", "none+pfc", "dcqcn+pfc"} {
		b.Run(scheme+"/64B/1rx2tx", func(b *testing.B) { benchForwardMode(b, scheme, 64, benchMode{rx: 1, tx: 2}) })
	}
}

// BenchmarkShardedTxSide is BenchmarkForwardSharded's traffic through the
// sharded mode with 1 rx lcore and 1 or 2 tx+CC lcores, their loops polled in
// turn on one launched lcore (lcore 1): each rx poll is followed by a poll of
// every tx+CC lcore's loop (benchAlternated). The tx side's work is then the
// same from run to run (no idle polls, no other loop on its CPU, the same
// frames a poll), so that callgrind can count it (toggle-collect on
// (*Switch).pollTx, which PollTxShard calls inlined): the deterministic
// companion of BenchmarkForwardSharded's tx busy time. It reports the tx
// side's thread CPU time per packet, net of the clock's reading, and
// packets per tx poll.
func BenchmarkShardedTxSide(b *testing.B) {
	for _, scheme := range []string{"none", "none+pfc", "dcqcn", "dcqcn+pfc"} {
		for _, tx := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/64B/%dtx", scheme, tx), func(b *testing.B) {
				benchForwardMode(b, scheme, 64, benchMode{rx: 1, tx: tx, alternate: true})
			})
		}
	}
}

// ScrapeStorm starts a scrape storm on a metrics endpoint serving eng's and
// s's counters and returns the function that ends it and returns how many
// scrapes it made and how many were served. scrape_test.go (package
// dataplane_test, which can import package metrics: metrics imports this
// package) sets it; nil: BenchmarkForwardRTCScraped is skipped.
var ScrapeStorm func(tb testing.TB, eng *switchd.Engine, s *Switch) (stop func() (scrapes, served uint64))

// BenchmarkForwardRTCScraped is BenchmarkForwardRTC/none/64B with its polls
// split into eight phases, half of them under a scrape storm (ScrapeStorm:
// 200 concurrent clients scraping the switch's metrics endpoint as fast as it
// answers), and reports the forwarding rate and CPU time per packet of each
// half and their ratio, stormed / quiet: 1 is no change.
func BenchmarkForwardRTCScraped(b *testing.B) {
	if ScrapeStorm == nil {
		b.Skip("no ScrapeStorm")
	}
	benchForwardMode(b, "none", 64, benchMode{storm: ScrapeStorm})
}

// startRings starts the four looping net_ring vdevs on mp; stop stops them
// (a benchmark, called again for each b.N, stops them before it returns).
func startRings(tb testing.TB, mp *dpdk.Mempool) (ports []port.Port, stop func()) {
	var eths []dpdk.EthPort
	stop = func() {
		for _, p := range eths {
			p.Stop()
		}
	}
	for i := 0; i < 4; i++ {
		p, err := port.StartEth(port.EthConfig{Name: fmt.Sprintf("net_ring%d", i), Pool: mp})
		if err != nil {
			stop()
			tb.Fatal(err)
		}
		eths = append(eths, p)
		ports = append(ports, port.EthQueue{Port: p})
	}
	return ports, stop
}

// benchMode is how benchForwardMode runs the switch: rtc mode (rx 0), or the
// sharded mode with rx rx lcores and tx tx+CC lcores; alternate: the sharded
// mode's loops polled in turn on one lcore (benchAlternated); storm: rtc
// mode polled by the benchmark's goroutine, half the polls under the storm
// (benchStormed).
type benchMode struct {
	rx, tx    int
	alternate bool
	storm     func(testing.TB, *switchd.Engine, *Switch) func() (uint64, uint64)
}

// benchForwardMode runs the looping benchmark as m says, on launched lcores
// with the daemon's pool cache (but with a storm).
func benchForwardMode(b *testing.B, scheme string, size int, m benchMode) {
	rxLcores, txLcores, storm := m.rx, m.tx, m.storm
	mp := newCachedPool(b, fmt.Sprintf("bench_%s_%d_%d_%d", scheme, size, rxLcores, txLcores), 8191, daemonCache)
	ports, stop := startRings(b, mp)
	defer stop()
	scheme, pfc := strings.CutSuffix(scheme, "+pfc")
	cfg := switchConfig(scheme, []float64{1000, 1000, 1000, 1000})
	cfg.PFC.Enabled = pfc // every frame lossless (pfc.priority)
	cfg.DecrementTTL = false
	cfg.BurstBytes = 1 << 20
	// Each port faces a host, as a switch's edge ports do: the feedback a
	// CP sends toward a source (RoCC's rate messages) comes back over the
	// looping device and is refused there (CP feedback from a host port),
	// where a host would have consumed it, instead of circling for ever.
	cfg.Trust = switchd.TrustTopology
	for i := range cfg.Ports {
		cfg.Ports[i].BufferBytes = 8 << 20
		cfg.Ports[i].PeerMAC = portMAC(i) // frames come back to the switch
		cfg.Ports[i].Faces = switchd.FacesHost
	}
	eng, err := switchd.New(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	// Rings that hold every seeded frame: the first poll receives them all.
	s, err := New(eng, ports, mp, Config{Name: fmt.Sprintf("b%s%d_%d_%d", scheme, size, rxLcores, txLcores), RxLcores: rxLcores, TxLcores: txLcores, RingSize: 4096})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Seed each port with 512 frames from its host to another address
	// behind the same port (10.0.i.2): they loop through the switch on that
	// port for the whole run. (Frames to the next host would loop on its
	// port with host i's source, which trust "topology" refuses there.)
	payload := size - (wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + wire.ICRCLen)
	withINT := scheme == "hpcc"
	if withINT {
		payload -= wire.INTLen
	}
	// The smallest ccbed data frame carries the 8-byte data header: 66 B
	// (108 B with HPCC's INT stack) where "64 B" is asked for.
	payload = max(payload, wire.DataHeaderLen)
	bb := dpdk.NewBurst(512)
	defer bb.Free()
	for i := 0; i < 4; i++ {
		if err := mp.AllocBulk(bb.Pkts); err != nil {
			b.Fatal(err)
		}
		for k, m := range bb.Pkts {
			ep := wire.Endpoints{DstMAC: portMAC(i), SrcMAC: hostMAC(i), SrcIP: hostIP(i), DstIP: hostIP(i) + 1, SrcPort: uint16(49152 + k%16)}
			l, err := wire.BuildData(m.Room(), &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: uint32(k % 16), PayloadLen: payload, INT: withINT})
			if err != nil {
				b.Fatal(err)
			}
			m.SetLen(l)
		}
		if *seedPcap != "" && scheme == "none" {
			writePcap(b, filepath.Join(*seedPcap, fmt.Sprintf("%dB-port%d.pcap", size, i)), bb.Pkts)
		}
		if n := ports[i].TxBurst(bb.Pkts); n < len(bb.Pkts) {
			dpdk.FreeBulk(bb.Pkts[n:])
		}
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	switch {
	case m.alternate:
		benchAlternated(b, s, clock, rxLcores, max(txLcores, 1))
		return
	case rxLcores > 0:
		benchLaunched(b, s, clock, rxLcores, max(txLcores, 1))
		return
	}
	if storm != nil {
		for i := 0; i < 1000; i++ {
			s.PollRTC(clock.Now())
		}
		benchStormed(b, s, clock, storm)
		return
	}
	benchRTC(b, s, clock)
	_ = context.Background
}

// benchRTC polls s in rtc mode on a launched EAL lcore (lcore 1 on CPU 1, or
// lcore 2 on CPU 0 with -bench-cpu 0), as switchd runs its loop, so that the
// pool's per-lcore cache serves the spare mbufs of generated frames and takes
// back the frames the switch frees: 1000 polls to warm up, then b.N
// measured ones; the loop idles (polls nothing) before and after. It reports
// the data packets' Mpps, the loop thread's CPU time per data packet, data
// packets per poll and the CPs' feedback frames per data packet.
func benchRTC(b *testing.B, s *Switch, clock *lcore.TSCClock) {
	eng := s.Engine()
	id := uint(1)
	if *benchCPU == 0 {
		id = 2
	}
	const warm = 1000
	var (
		start            atomic.Bool
		polls            int
		t0, t1           int64
		cpu0, cpu1       time.Duration
		warmed, measured atomic.Bool
	)
	poll := func() int {
		switch {
		case polls < warm:
			polls++
			n := s.PollRTC(clock.Now())
			if polls == warm {
				eng.PublishEgress()
				warmed.Store(true)
			}
			return n
		case polls == warm && !start.Load():
			return 0
		case polls < warm+b.N:
			if polls == warm {
				t0, cpu0 = clock.Now(), cpuclock.Thread()
			}
			polls++
			n := s.PollRTC(clock.Now())
			if polls == warm+b.N {
				t1, cpu1 = clock.Now(), cpuclock.Thread()
				eng.PublishEgress()
				measured.Store(true)
			}
			return n
		}
		return 0
	}
	before := launchMeasured(b, eng, id, "switch-rtc", poll, &start, &warmed, &measured)
	after := eng.Snapshot()
	el, cpu := time.Duration(t1-t0), cpu1-cpu0
	// Data packets forwarded: the frames sent less the feedback the CPs
	// generated (their cost counts against the data packets).
	var pk, fb uint64
	for j := range after.Ports {
		a, o := &after.Ports[j], &before.Ports[j]
		fb += a.FeedbackSent - o.FeedbackSent
		pk += a.TxPackets - o.TxPackets
	}
	pk -= fb
	if fb > 0 {
		b.ReportMetric(float64(fb)/float64(pk), "feedback/pkt")
	}
	b.ReportMetric(float64(pk)/el.Seconds()/1e6, "Mpps")
	b.ReportMetric(float64(pk)/float64(b.N), "pkts/poll")
	// CPU time per packet leaves out the time other processes held the core
	// (see cpuclock.Thread): the steadier figure on a shared machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(pk), "cpu-ns/pkt")
}

// benchAlternated polls the sharded mode's loops in turn on one launched
// lcore (lcore 1): each of b.N measured rounds polls every rx lcore's loop,
// then every tx+CC lcore's, after 1000 rounds to warm up. It reports Mpps,
// the tx side's CPU time per packet (its polls' thread CPU time less the
// clock's own reading, taken once at the start) and packets per tx poll.
func benchAlternated(b *testing.B, s *Switch, clock *lcore.TSCClock, rxLcores, txLcores int) {
	eng := s.Engine()
	const warm = 1000
	var (
		start, warmed, measured atomic.Bool
		rounds                  int
		t0, t1                  int64
		txCPU, clockNs          time.Duration
	)
	round := func(timed bool) {
		for k := 0; k < rxLcores; k++ {
			s.PollShard(k, clock.Now())
		}
		for k := 0; k < txLcores; k++ {
			if !timed {
				s.PollTxShard(k, clock.Now())
				continue
			}
			c0 := cpuclock.Thread()
			s.PollTxShard(k, clock.Now())
			txCPU += cpuclock.Thread() - c0
		}
	}
	poll := func() int {
		switch {
		case rounds < warm:
			if rounds++; rounds == 1 {
				const reads = 1000
				c0 := cpuclock.Thread()
				for i := 0; i < reads; i++ {
					cpuclock.Thread()
				}
				clockNs = (cpuclock.Thread() - c0) / (reads + 1)
			}
			round(false)
			if rounds == warm {
				eng.PublishEgress()
				warmed.Store(true)
			}
			return 1
		case rounds == warm && !start.Load():
			return 0
		case rounds < warm+b.N:
			if rounds == warm {
				t0 = clock.Now()
			}
			rounds++
			round(true)
			if rounds == warm+b.N {
				t1 = clock.Now()
				eng.PublishEgress()
				measured.Store(true)
			}
			return 1
		}
		return 0
	}
	before := launchMeasured(b, eng, 1, "switch-alternated", poll, &start, &warmed, &measured)
	var pk uint64
	for j, a := range eng.Snapshot().Ports {
		pk += a.TxPackets - before.Ports[j].TxPackets
	}
	pk = max(pk, 1)
	b.ReportMetric(float64(pk)/time.Duration(t1-t0).Seconds()/1e6, "Mpps")
	b.ReportMetric(float64(pk)/float64(b.N*txLcores), "pkts/tx-poll")
	net := txCPU - time.Duration(b.N*txLcores)*clockNs
	b.ReportMetric(float64(net.Nanoseconds())/float64(pk), "tx-cpu-ns/pkt")
}

// launchMeasured runs a benchmark's loop, poll, on lcore id: poll warms up
// and sets warmed, then waits for start, and sets measured after its b.N
// measured polls, which the benchmark's timer spans. It returns the
// engine's counters as they were before the measured polls.
func launchMeasured(b *testing.B, eng *switchd.Engine, id uint, name string, poll func() int, start, warmed, measured *atomic.Bool) switchd.Snapshot {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // Launch raises it
	g := lcore.NewGroup()
	if err := g.Launch(id, name, poll); err != nil {
		b.Fatal(err)
	}
	// A panicking loop stops the group (its polls never finish).
	wait := func(f *atomic.Bool) {
		for !f.Load() && !g.Stopped() {
			time.Sleep(time.Millisecond)
		}
	}
	wait(warmed)
	before := eng.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	start.Store(true)
	wait(measured)
	b.StopTimer()
	if stopLoops(b, g); !measured.Load() {
		b.Fatalf("%s stopped before its polls were done", name)
	}
	return before
}

// benchStormed polls s b.N times in eight phases, half of them under a storm
// (ABBA order), and reports each half's Mpps and CPU time per packet (the
// polling thread's, pinned as in BenchmarkForwardRTC) and the ratios stormed
// / quiet, with the storm's scrapes a second (made and served).
func benchStormed(b *testing.B, s *Switch, clock *lcore.TSCClock, storm func(testing.TB, *switchd.Engine, *Switch) func() (uint64, uint64)) {
	eng := s.Engine()
	txPackets := func() uint64 {
		eng.PublishEgress()
		var n uint64
		for _, pc := range eng.Snapshot().Ports {
			n += pc.TxPackets
		}
		return n
	}
	// The polling goroutine holds a P as a launched lcore loop does; switchd
	// keeps two Ps beside its loops (lcore.reserveProcs), so that the control
	// plane (here the endpoint and the storm) runs without preempting them.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 1+2)))
	runtime.LockOSThread() // cpuclock.Thread reads this thread's time
	defer runtime.UnlockOSThread()
	defer pinThread(b, *benchCPU)()
	if *benchIsolate {
		defer isolateOthers(b, *benchCPU)()
	}
	const phases = 8 // quiet, stormed, stormed, quiet, twice: a drift over the run falls on both halves alike
	var pk [2]uint64
	var wall, cpu, proc [2]time.Duration
	var scrapes, served uint64
	b.ResetTimer()
	for ph := 0; ph < phases; ph++ {
		n := b.N*(ph+1)/phases - b.N*ph/phases
		k := (ph + 1) / 2 % 2 // 1: stormed
		var stop func() (uint64, uint64)
		if k == 1 {
			stop = storm(b, eng, s)
		}
		p0, t0, c0, r0 := txPackets(), time.Now(), cpuclock.Thread(), processCPU()
		for i := 0; i < n; i++ {
			s.PollRTC(clock.Now())
		}
		wall[k] += time.Since(t0)
		cpu[k] += cpuclock.Thread() - c0
		proc[k] += processCPU() - r0
		pk[k] += txPackets() - p0
		if stop != nil {
			m, v := stop()
			scrapes, served = scrapes+m, served+v
		}
	}
	b.StopTimer()
	if pk[0] == 0 || pk[1] == 0 { // the framework's first run, b.N = 1
		return
	}
	mpps := func(k int) float64 { return float64(pk[k]) / wall[k].Seconds() / 1e6 }
	cpp := func(k int) float64 { return float64(cpu[k].Nanoseconds()) / float64(pk[k]) }
	b.ReportMetric(mpps(0), "Mpps-quiet")
	b.ReportMetric(mpps(1), "Mpps-stormed")
	b.ReportMetric(mpps(1)/mpps(0), "stormed/quiet-Mpps")
	b.ReportMetric(cpp(0), "cpu-ns/pkt-quiet")
	b.ReportMetric(cpp(1), "cpu-ns/pkt-stormed")
	// Below 1 means a stormed packet took more CPU time.
	b.ReportMetric(cpp(0)/cpp(1), "stormed/quiet-cpu")
	// The process's other threads (the endpoint, the storm's clients, the
	// runtime), in CPUs: what the storm costs beside the polling thread.
	other := func(k int) float64 { return (proc[k] - cpu[k]).Seconds() / wall[k].Seconds() }
	b.ReportMetric(other(0), "other-CPUs-quiet")
	b.ReportMetric(other(1), "other-CPUs-stormed")
	b.ReportMetric(cpu[1].Seconds()/wall[1].Seconds(), "poller-on-CPU-stormed")
	b.ReportMetric(cpu[0].Seconds()/wall[0].Seconds(), "poller-on-CPU-quiet")
	b.ReportMetric(float64(scrapes)/wall[1].Seconds(), "scrapes/s")
	b.ReportMetric(float64(served)/wall[1].Seconds(), "served/s")
}

// processCPU is the CPU time the process has used, every thread's.
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLaunched runs s's sharded loops, rxLcores rx lcores and txLcores
// tx+CC lcores on lcores 1..rxLcores+txLcores, for b.N microseconds of wall
// time and reports the switch's Mpps and each side's busy time per packet
// (the tx side's summed over its lcores: what a packet costs there).
func benchLaunched(b *testing.B, s *Switch, clock *lcore.TSCClock, rxLcores, txLcores int) {
	var ids []uint
	for k := 0; k < rxLcores+txLcores; k++ {
		ids = append(ids, uint(1+k))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // Launch raises it
	g := lcore.NewGroup()
	// The loops Launch would start, each summing the TSC time of its polls
	// that found work (busy polls: the loops busy-poll, so their CPU time
	// counts idle polls too), so that each side's cost per packet is known.
	// With -sharded-cpu each loop also sums its thread's CPU time over those
	// polls and counts them: each costs one reading of the thread's clock (a
	// system call), which clockNs[k], the loop's own reading of that cost at
	// its first poll, lets the report take off.
	busyTSC := make([]atomic.Uint64, len(ids))
	busyCPU := make([]atomic.Int64, len(ids))
	busyPolls := make([]atomic.Int64, len(ids))
	clockNs := make([]atomic.Int64, len(ids))
	for k, id := range ids {
		poll := func() int { return s.PollShard(k, clock.Now()) }
		name := fmt.Sprintf("switch-rx%d", k)
		if k >= rxLcores {
			poll = func() int { return s.PollTxShard(k-rxLcores, clock.Now()) }
			name = fmt.Sprintf("switch-tx%d", k-rxLcores)
		}
		timed := func() int {
			t0 := clock.TSC()
			n := poll()
			if n > 0 {
				busyTSC[k].Add(clock.TSC() - t0)
			}
			return n
		}
		if *shardedCPU {
			timed = func() int {
				if clockNs[k].Load() == 0 {
					const reads = 1000
					c0 := cpuclock.Thread()
					for i := 0; i < reads; i++ {
						cpuclock.Thread()
					}
					clockNs[k].Store(max(int64(cpuclock.Thread()-c0)/(reads+1), 1))
				}
				t0, c0 := clock.TSC(), cpuclock.Thread()
				n := poll()
				if n > 0 {
					busyTSC[k].Add(clock.TSC() - t0)
					busyCPU[k].Add(int64(cpuclock.Thread() - c0))
					busyPolls[k].Add(1)
				}
				return n
			}
		}
		if err := g.Launch(id, name, timed); err != nil {
			b.Fatal(err)
		}
	}
	eng := s.Engine()
	txPackets := func() uint64 {
		var n uint64
		for _, pc := range eng.Snapshot().Ports {
			n += pc.TxPackets
		}
		return n
	}
	time.Sleep(50 * time.Millisecond) // warm up; counters publish every ms
	b.ResetTimer()
	type reading struct{ tsc, cpu, polls []int64 }
	read := func() reading {
		r := reading{make([]int64, len(ids)), make([]int64, len(ids)), make([]int64, len(ids))}
		for k := range ids {
			r.tsc[k], r.cpu[k], r.polls[k] = int64(busyTSC[k].Load()), busyCPU[k].Load(), busyPolls[k].Load()
		}
		return r
	}
	before, start, r0 := txPackets(), time.Now(), read()
	time.Sleep(time.Duration(b.N) * time.Microsecond)
	pk, el, r1 := txPackets()-before, time.Since(start), read()
	b.StopTimer()
	g.Stop()
	for _, st := range g.Wait() {
		if st.Panic != "" {
			b.Fatalf("%s panicked: %s", st.Name, st.Panic)
		}
		b.Logf("%s: %d polls, %d busy, %.1f per busy poll, max stall %.1f us", st.Name, st.Iterations, st.BusyPolls, float64(st.Work)/float64(max(st.BusyPolls, 1)), float64(st.MaxStallNs)/1e3)
	}
	if d := s.Stats().RingDrops; d != 0 {
		b.Logf("%d frames dropped at the rx-to-tx rings", d)
	}
	var xoff, xon uint64
	for _, pc := range eng.Snapshot().Ports {
		xoff, xon = xoff+pc.PausesSent, xon+pc.ResumesSent
	}
	if xoff+xon != 0 {
		b.Logf("PFC: %d XOFF and %d XON frames sent", xoff, xon)
	}
	b.ReportMetric(float64(pk)/el.Seconds()/1e6, "Mpps")
	// Each side's busy time per packet (the tx side's: enqueue, CP,
	// shaping, transmit), wall time of its polls that found work: on a
	// shared machine it includes whatever preempted them.
	perPkt := func(v func(k int) float64, from, to int) float64 {
		var sum float64
		for k := from; k < to; k++ {
			sum += v(k)
		}
		return sum / float64(max(pk, 1))
	}
	rx, tx, all := 0, rxLcores, rxLcores+txLcores
	tscNs := func(k int) float64 { return float64(r1.tsc[k]-r0.tsc[k]) * 1e9 / float64(dpdk.TSCHz()) }
	b.ReportMetric(perPkt(tscNs, rx, tx), "rx-busy-ns/pkt")
	b.ReportMetric(perPkt(tscNs, tx, all), "tx-busy-ns/pkt")
	if *shardedCPU {
		cpuNs := func(k int) float64 { return float64(r1.cpu[k] - r0.cpu[k]) }
		clk := func(k int) float64 { return float64((r1.polls[k] - r0.polls[k]) * clockNs[k].Load()) }
		b.ReportMetric(perPkt(cpuNs, rx, tx), "rx-cpu-ns/pkt")
		b.ReportMetric(perPkt(cpuNs, tx, all), "tx-cpu-ns/pkt")
		// The clock's share of tx-cpu-ns/pkt: one reading per busy poll.
		b.ReportMetric(perPkt(clk, tx, all), "tx-clock-ns/pkt")
		var polls int64
		for k := tx; k < all; k++ {
			polls += r1.polls[k] - r0.polls[k]
		}
		b.ReportMetric(float64(pk)/float64(max(polls, 1)), "pkts/tx-poll")
	}
}

// writePcap writes the frames of pkts to a pcap file at path.
func writePcap(tb testing.TB, path string, pkts []*dpdk.Mbuf) {
	tb.Helper()
	w, err := pcapw.Create(path, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range pkts {
		if err := w.Append(0, m.Data()); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}
