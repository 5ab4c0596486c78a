package dataplane

import (
	"fmt"
	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/hostd"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

func TestMain(m *testing.M) {
	dpdktest.Main(m, "hostd", dpdktest.Args(512, "0-1", "--vdev=net_null0" /* the tx benchmark's sink */))
}

// cablePair starts two hosts joined by a dpdk.NewEthCable and returns them with
// their pool. Cleanup closes everything and checks that every mbuf came back.
func cablePair(t *testing.T, name string, a, b hostd.Spec) (*Host, *Host) {
	t.Helper()
	mp, err := dpdk.NewPktMbufPool("hp_"+name, 8191, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb, err := dpdk.NewEthCable(name+"_a", name+"_b", 4096, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is lost on a cable, but the loaded shared cores stall loops for
	// milliseconds: a 200 ms RTO keeps spurious timeouts out of the tests.
	a.RTONs, b.RTONs = 200_000_000, 200_000_000
	var hosts [2]*Host
	for i, c := range []struct {
		p   dpdk.EthPort
		cfg hostd.Spec
	}{{pa, a}, {pb, b}} {
		p, err := port.StartEth(port.EthConfig{Name: c.p.Name(), Pool: mp, RxDesc: 1024, TxDesc: 1024})
		if err != nil {
			t.Fatal(err)
		}
		e, err := hostd.NewEngine(c.cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		h, err := NewHost(e, port.EthQueue{Port: p}, mp, fmt.Sprintf("%s%d", name, i))
		if err != nil {
			t.Fatal(err)
		}
		hosts[i] = h
	}
	cleanupCable(t, mp, pa, pb, hosts[0].Close, hosts[1].Close)
	return hosts[0], hosts[1]
}

// runSplit runs A's rx and B's tx on the main lcore and A's tx and B's rx on
// lcore 1 (each host in 2-lcore mode, its two sides on different lcores) until
// stop (called on lcore 1 with the clock's time) says so or 2 s pass.
func runSplit(t *testing.T, a, b *Host, stop func(now int64) bool) []lcore.Stats {
	t.Helper()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	g := lcore.NewGroup()
	if err := g.Launch(dpdk.MainLcore(), "a-rx+b-tx", func() int {
		now := clock.Now()
		return a.PollRx(now) + b.PollTx(now)
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(1, "a-tx+b-rx", func() int {
		now := clock.Now()
		n := a.PollTx(now) + b.PollRx(now)
		if stop(now) {
			g.Stop()
		}
		return n
	}); err != nil {
		g.Stop()
		g.Wait()
		t.Fatal(err)
	}
	return waitLoops(t, g)
}

// runOne runs both hosts with Poll (the 1-lcore mode: each host's two sides in
// one call) from a loop on lcore 1, as the testbed does, until stop says so or
// 2 s pass.
func runOne(t *testing.T, a, b *Host, stop func(now int64) bool) []lcore.Stats {
	t.Helper()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	g := lcore.NewGroup()
	if err := g.Launch(1, "a+b", func() int {
		now := clock.Now()
		n := a.Poll(now) + b.Poll(now)
		if stop(now) {
			g.Stop()
		}
		return n
	}); err != nil {
		t.Fatal(err)
	}
	return waitLoops(t, g)
}

// waitLoops waits until a loop of g stops the group or 2 s pass, stops
// every loop, fails the test on a loop's panic and returns the loops' stats.
func waitLoops(t *testing.T, g *lcore.Group) []lcore.Stats {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !g.Stopped() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	g.Stop()
	stats := g.Wait()
	for _, s := range stats {
		if s.Panic != "" {
			t.Fatalf("loop %s panicked: %s", s.Name, s.Panic)
		}
	}
	return stats
}

func TestDPDKMessageCompletes(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, a, b *Host, stop func(now int64) bool) []lcore.Stats
	}{
		{"split", runSplit},
		{"poll", runOne},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { testMessageCompletes(t, tc.name, tc.run) })
	}
}

func testMessageCompletes(t *testing.T, name string, run func(t *testing.T, a, b *Host, stop func(now int64) bool) []lcore.Stats) {
	const size = 1 << 20
	ca, cb := oneFlow("dcqcn", size, 0)
	a, b := cablePair(t, "msg"+name, ca, cb)
	ea := a.Engine()
	run(t, a, b, func(int64) bool { _, tx := ea.Counters(); return tx.FlowsCompleted > 0 })
	fcts := ea.FCTs()
	if len(fcts) != 1 || fcts[0].SizeBytes != size {
		rx, tx := ea.Counters()
		t.Fatalf("1 MB message did not complete: FCTs %+v, rx %+v tx %+v port %+v", fcts, rx, tx, a.PortCounters())
	}
	rx := b.Engine().RxFlows()
	if len(rx) != 1 || rx[0].Bytes != size || rx[0].Messages != 1 {
		t.Fatalf("receiver: %+v", rx)
	}
	_, tx := ea.Counters()
	if tx.PayloadBytes < size {
		t.Fatalf("sent %d payload bytes of %d", tx.PayloadBytes, size)
	}
	t.Logf("1 MB over net_ring: FCT %.1f us, slowdown %.2f, %d data frames (%d resent)",
		float64(fcts[0].FCTNs)/1000, fcts[0].Slowdown(), tx.DataFrames, tx.RetxFrames)
}

func TestDPDKRateCap(t *testing.T) {
	ca, cb := oneFlow("none", 0, 1)
	// The two cores are shared with other processes, whose scheduling stalls
	// the loops for up to tens of ms. A burst as large as the run lets the QP
	// catch up after a stall (at the line rate, 10x its cap) instead of losing
	// the credit; it cannot run ahead of its rate, as the bucket starts empty.
	ca.BurstBytes = 64 << 20
	a, b := cablePair(t, "cap", ca, cb)
	// Stop after 40,000 frames (about 350 ms at 1 Gb/s), counted on the lcore
	// that owns A's tx side.
	ea := a.Engine()
	const frames = 40_000
	loops := runSplit(t, a, b, func(int64) bool { _, tx := ea.Counters(); return tx.DataFrames >= frames })
	rx := b.Engine().RxFlows()
	if len(rx) != 1 || rx[0].Frames < frames/2 {
		t.Fatalf("receiver: %+v", rx)
	}
	// Every frame is full; the rate is measured in the sender's time base (the
	// send timestamps of the first and last frames delivered in order), so that
	// the receiving loop's stalls do not count.
	f := rx[0]
	frameBytes := float64(1024 + hostd.DataOverhead)
	n := float64(f.Bytes) / 1024
	got := (n - 1) * frameBytes * 8 / float64(f.LastSendNs-f.FirstSendNs)
	// A loop's stall near the end holds the last frames back (the
	// receiver's ACKs, or the sender itself) past what the bucket can make
	// up before the 40,000th leaves: the span grows by up to the stall. The
	// cap is judged as ever (at most 2 % over); the rate reaching it, at
	// most 2 % under the frames' time at the cap plus the loops' longest
	// stall, as they measured it.
	var maxStall int64
	for _, l := range loops {
		maxStall = max(maxStall, l.MaxStallNs)
	}
	ideal := (n - 1) * frameBytes * 8 // ns at 1 Gb/s
	least := 0.98 * ideal / (ideal + float64(maxStall))
	t.Logf("QP capped at 1 Gb/s: %.4f Gb/s of frames over %.1f ms of send times (%.0f frames in order), longest loop stall %.1f ms; port %+v",
		got, float64(f.LastSendNs-f.FirstSendNs)/1e6, n, float64(maxStall)/1e6, a.PortCounters())
	if got > 1.02 || got < least {
		rxc, _ := b.Engine().Counters()
		_, txc := ea.Counters()
		t.Logf("rx %+v\ntx %+v\nflow %+v", rxc, txc, f)
		t.Fatalf("measured %.4f Gb/s, want 1: at most 1.02, at least %.4f (0.98 of the frames' time at the cap over it plus the longest loop stall, %.1f ms)",
			got, least, float64(maxStall)/1e6)
	}
}

// TestDPDKPollAllocatesNothing checks the adapter's loops: a Poll with traffic
// (a sender and its receiver on a cable) and the split polls allocate nothing.
func TestDPDKPollAllocatesNothing(t *testing.T) {
	ca, cb := oneFlow("dcqcn", 0, 1)
	a, b := cablePair(t, "allocs", ca, cb)
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	polls := []struct {
		name string
		fn   func()
	}{
		{"Poll", func() { now := clock.Now(); a.Poll(now); b.Poll(now) }},
		{"PollRx+PollTx", func() {
			now := clock.Now()
			a.PollRx(now)
			a.PollTx(now)
			b.PollRx(now)
			b.PollTx(now)
		}},
	}
	for _, p := range polls {
		if n := testing.AllocsPerRun(2000, p.fn); n != 0 {
			t.Errorf("%s allocates %.2f times per call", p.name, n)
		}
	}
	if _, tx := a.Engine().Counters(); tx.DataFrames == 0 {
		t.Fatal("no data frame sent: the polls did no work")
	}
}

// oneFlow returns the configs of a sender A with one static flow to B and of B.
func oneFlow(scheme string, size int64, rateGbps float64) (hostd.Spec, hostd.Spec) {
	cfg := func(name string, ip uint32) hostd.Spec {
		return hostd.Spec{
			Name: name, IP: ip, MAC: wire.MAC{2, 0, 0, 0, 0, byte(ip)}, LinkGbps: 10,
			Scheme: scheme, BaseRTTNs: 4000, MaxQPs: 16, MaxRxFlows: 64, SampleNs: 10_000,
		}
	}
	a := cfg("h1", 0x0a000001)
	a.Flows = []hostd.Flow{{ID: 7, Dst: 0x0a000002, SizeBytes: size, RateGbps: rateGbps}}
	return a, cfg("h2", 0x0a000002)
}

// cleanupCable closes the two ends' adapters (closers), then the cable's
// ports, and fails when an mbuf did not return to mp before it is freed.
func cleanupCable(t *testing.T, mp *dpdk.Mempool, pa, pb dpdk.EthPort, closers ...func()) {
	t.Cleanup(func() {
		for _, c := range closers {
			c()
		}
		for _, p := range []dpdk.EthPort{pa, pb} {
			p.Stop()
			p.Close()
		}
		if n := mp.InUse(); n != 0 {
			t.Errorf("%d mbufs not returned to the pool", n)
		}
		mp.Free()
	})
}

// TestPollReadsPauseBeforeData: a host in 1-lcore mode whose port holds more
// received frames than one Poll reads (maxRxBursts full bursts) with a PFC
// pause behind them sends no data until it has read the pause, and none while
// the pause holds: a pause on the port stops data before another burst
// leaves. Then, with the pause over, data flows (the host had data to send
// all along).
func TestPollReadsPauseBeforeData(t *testing.T) {
	ca, cb := oneFlow("none", 0, 0)
	a, b := cablePair(t, "pausefirst", ca, cb)
	const junk = maxRxBursts*Burst + 10
	inject := dpdk.NewBurst(junk + 1)
	defer inject.Free()
	if err := a.pool.AllocBulk(inject.Pkts); err != nil {
		t.Fatal(err)
	}
	for i, m := range inject.Pkts {
		room := m.Room()
		if i < junk {
			// Not IPv4: the engine counts it and owes nothing.
			clear(room[:64])
			room[12], room[13] = 0x88, 0xb5
			m.SetLen(64)
			continue
		}
		var qs [8]uint16
		qs[3] = 0xffff
		n, err := wire.BuildPFC(room, wire.MAC{2, 0, 0, 0, 0, 2}, 1<<3, &qs)
		if err != nil {
			t.Fatal(err)
		}
		m.SetLen(n)
	}
	if n := b.port.TxBurst(inject.Pkts); n != len(inject.Pkts) {
		dpdk.FreeBulk(inject.Pkts[n:])
		t.Fatalf("cable took %d of %d frames", n, len(inject.Pkts))
	}
	sent := func() uint64 { _, tx := a.Engine().Counters(); return tx.DataFrames }
	now := int64(1_000_000)
	for i := 0; i < 3; i++ {
		a.Poll(now)
		if n := sent(); n != 0 {
			t.Fatalf("poll %d: %d data frames sent before the pause behind %d frames was read", i, n, junk)
		}
		now += 1000
	}
	if _, tx := a.Engine().Counters(); tx.PauseFrames != 1 {
		t.Fatalf("pause frames applied %d, want 1", tx.PauseFrames)
	}
	// 0xffff quanta at 10 Gb/s hold data for 3.36 ms.
	now += wire.QuantaNs(0xffff, 10e9)
	a.Poll(now)
	if sent() == 0 {
		t.Fatal("no data frame after the pause ended")
	}
	port.Drain(b.port, b.rxb.Pkts)
}
