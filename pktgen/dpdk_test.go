package pktgen

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/internal/cpuclock"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
)

func TestMain(m *testing.M) {
	dpdktest.Main(m, "pktgen", dpdktest.Args(512, "0-1", "--vdev=net_null0"))
}

var cableSeq int

// newCable starts two ethdev ports joined by a virtual cable, closed at cleanup.
func newCable(tb testing.TB, pool *dpdk.Mempool) (a, b dpdk.EthPort) {
	tb.Helper()
	cableSeq++
	a, b, err := dpdk.NewEthCable(fmt.Sprintf("pg_a%d", cableSeq), fmt.Sprintf("pg_b%d", cableSeq), 1024, dpdk.SocketAny)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range []dpdk.EthPort{a, b} {
		if err := p.Configure(1, 1, 0); err != nil {
			tb.Fatal(err)
		}
		if err := p.RxQueueSetup(0, 1024, dpdk.SocketAny, pool); err != nil {
			tb.Fatal(err)
		}
		if err := p.TxQueueSetup(0, 1024, dpdk.SocketAny); err != nil {
			tb.Fatal(err)
		}
		if err := p.Start(); err != nil {
			tb.Fatal(err)
		}
		p := p
		tb.Cleanup(func() { p.Stop(); p.Close() })
	}
	return a, b
}

func newPool(tb testing.TB, name string, n uint32) *dpdk.Mempool {
	tb.Helper()
	mp, err := dpdk.NewPktMbufPool(name, n, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(mp.Free) // runs after the ports' cleanups (LIFO)
	return mp
}

// TestBlastOverCable sends a counted stream over a virtual cable at a moderate
// rate, polling tx and rx from one goroutine with the TSC clock, and checks that
// every packet arrives in order with a latency, and that every mbuf returns;
// both on the fast path (dpdk.TxGen on the ethdev queue) and on the Go path.
func TestBlastOverCable(t *testing.T) {
	cases := []struct {
		name string
		tx   PortConfig
	}{
		{"udp 64B 0.5 Gb/s", PortConfig{Name: "a", RateGbps: 0.5, Count: 20000, Flows: 8}},
		{"roce imix 2 Gb/s", PortConfig{Name: "a", RateGbps: 2, Count: 10000, Mix: "imix", Proto: "roce", Flows: 4, Vary: []string{"dest_qp"}}},
		{"udp 1500B 0.1 Mpps", PortConfig{Name: "a", RateMpps: 0.1, Count: 5000, Size: 1500}},
		{"udp flow rates", PortConfig{Name: "a", Count: 9000, Flow: []FlowConfig{{RateGbps: 0.3}, {RateMpps: 0.2}, {RateGbps: 0.1}}}},
	}
	for i, c := range cases {
		for _, goPath := range []bool{false, true} {
			name := c.name + " fast"
			if goPath {
				name = c.name + " go"
			}
			t.Run(name, func(t *testing.T) { blastOverCable(t, fmt.Sprintf("pg_cable%d_%v", i, goPath), c.tx, goPath) })
		}
	}
}

// blastOverCable is one case of TestBlastOverCable: txc sends, a second
// port receives, on the fast path or (goPath) the Go path.
func blastOverCable(t *testing.T, poolName string, txc PortConfig, goPath bool) {
	pool := newPool(t, poolName, 4095)
	a, b := newCable(t, pool)
	off := false
	cfg := Config{Ports: []PortConfig{txc, {Name: "b", Tx: &off, Rx: true}}}
	var pa port.Port = port.EthQueue{Port: a}
	if goPath {
		pa = goPort{pa}
	}
	pb := &samplingPort{Port: port.EthQueue{Port: b}}
	bl, err := NewBlaster(&cfg, []port.Port{pa, pb}, pool)
	if err != nil {
		t.Fatal(err)
	}
	if (bl.Tx[0].fast == nil) != goPath {
		t.Fatalf("fast path %v, want %v", bl.Tx[0].fast != nil, !goPath)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	polls := append(bl.Pollers(0), bl.Pollers(1)...)
	deadline := clock.Now() + 10e9
	for clock.Now() < deadline {
		now := clock.Now()
		pb.now = now
		for _, p := range polls {
			p(now)
		}
		if s := bl.Snapshot(); bl.TxDone() && s[1].RxPackets >= txc.Count {
			break
		}
	}
	elapsed := clock.Now()
	// A poll of a finished stream and of an empty port allocates nothing.
	if allocs := testing.AllocsPerRun(100, func() {
		for _, p := range polls {
			p(clock.Now())
		}
	}); allocs != 0 {
		t.Errorf("%.1f allocs per poll round, want 0", allocs)
	}
	sum := bl.Summary(elapsed)
	bl.Close()
	if pool.InUse() != 0 {
		t.Errorf("%d mbufs still in use after Close", pool.InUse())
	}
	tx, rx := sum.Ports[0], sum.Ports[1]
	if tx.TxPackets != txc.Count {
		t.Fatalf("sent %d, want %d", tx.TxPackets, txc.Count)
	}
	if len(rx.Streams) != 1 || rx.Streams[0].Received != txc.Count || rx.Streams[0].Lost != 0 ||
		rx.Streams[0].SeqGaps != 0 || rx.Streams[0].Late != 0 || rx.RxOther != 0 {
		t.Fatalf("receiver: %+v other %d", rx.Streams, rx.RxOther)
	}
	if rx.Latency == nil || rx.Latency.Count != txc.Count || rx.Latency.MinUs < 0 || rx.Latency.MaxUs < rx.Latency.P99Us {
		t.Fatalf("latency %+v", rx.Latency)
	}
	if tx.TxBytes != rx.RxBytes {
		t.Fatalf("tx %d bytes, rx %d", tx.TxBytes, rx.RxBytes)
	}
	// The quantiles agree with an exact sort of the same samples within
	// the histogram's bound.
	slices.Sort(pb.samples)
	l := rx.Latency
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, l.P50Us}, {0.9, l.P90Us}, {0.99, l.P99Us}, {0.999, l.P999Us}, {1, l.MaxUs}} {
		want := float64(exactQuantile(pb.samples, c.q)) / 1e3
		if math.Abs(c.got-want) > want*HistogramRelErr+1e-9 {
			t.Errorf("latency q%g = %.4f us, exact %.4f us: beyond the bound %.2g", c.q, c.got, want, HistogramRelErr)
		}
	}
	// Every flow is tracked on both sides (at most 64 here), and each
	// received what it sent.
	nf := txc.NumFlows()
	if nf > 1 && (len(tx.Flows) != nf || len(rx.RxFlows) != nf) {
		t.Fatalf("%d flows: %d tx flow entries, %d rx", nf, len(tx.Flows), len(rx.RxFlows))
	}
	for _, f := range rx.RxFlows {
		if f.Stream != 0 || f.Flow >= nf || nf > 1 && f.Packets != tx.Flows[f.Flow].Packets ||
			f.Latency.Count != f.Packets || f.Latency.MaxUs > l.MaxUs {
			t.Errorf("rx flow %+v, sent %+v", f, tx.Flows)
		}
	}
}

// samplingPort records the latency of every pktgen packet it receives,
// from the header's send time and the time the test set before the poll:
// the exact samples the Receiver's histogram is checked against.
// With keep it also keeps each frame and its arrival time.
type samplingPort struct {
	port.Port
	now     int64
	samples []int64
	keep    bool
	frames  [][]byte
	at      []int64
}

func (s *samplingPort) RxBurst(pkts []*dpdk.Mbuf) int {
	n := s.Port.RxBurst(pkts)
	for _, m := range pkts[:n] {
		if s.keep {
			s.frames = append(s.frames, append([]byte(nil), m.Data()...))
			s.at = append(s.at, s.now)
		}
		if off, ok := headerOffset(m.Data()); ok {
			s.samples = append(s.samples, s.now-int64(binary.BigEndian.Uint64(m.Data()[off+8:])))
		}
	}
	return n
}

// TestBlastOnLcore runs the tx and rx polls of both ends of a cable in one loop
// on worker lcore 1 (the testbed's composition), both directions at once, and
// stops it through a context.
func TestBlastOnLcore(t *testing.T) {
	pool := newPool(t, "pg_lcore", 4095)
	a, b := newCable(t, pool)
	const count = 5000
	cfg := Config{Ports: []PortConfig{
		{Name: "a", RateGbps: 1, Count: count, Rx: true},
		{Name: "b", RateGbps: 1, Count: count, Rx: true, Mix: "imix"},
	}}
	bl, err := NewBlaster(&cfg, []port.Port{port.EthQueue{Port: a}, port.EthQueue{Port: b}}, pool)
	if err != nil {
		t.Fatal(err)
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	polls := append(bl.Pollers(0), bl.Pollers(1)...)
	g := lcore.NewGroup()
	if err := g.Launch(1, "pktgen", func() int {
		now, n := clock.Now(), 0
		for _, p := range polls {
			n += p(now)
		}
		return n
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			s := bl.Snapshot()
			if bl.TxDone() && s[0].RxPackets >= count && s[1].RxPackets >= count {
				cancel()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	stats := g.Run(ctx)
	if stats[0].Panic != "" {
		t.Fatal(stats[0].Panic)
	}
	sum := bl.Summary(clock.Now())
	bl.Close()
	if pool.InUse() != 0 {
		t.Errorf("%d mbufs still in use after Close", pool.InUse())
	}
	for i, p := range sum.Ports {
		if p.TxPackets != count || p.RxPackets != count || len(p.Streams) != 1 ||
			p.Streams[0].Stream != 1-i || p.Streams[0].Lost != 0 || p.Streams[0].Late != 0 {
			t.Fatalf("port %d: %+v", i, p)
		}
	}
}

// TestPoolTooSmallForJumbo checks that frames larger than the pool's mbufs are
// refused at construction, not in the hot path.
func TestPoolTooSmallForJumbo(t *testing.T) {
	pool := newPool(t, "pg_small", 255)
	cfg := Config{Ports: []PortConfig{{Size: 9000}}}
	null, err := dpdk.EthPortByName("net_null0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBlaster(&cfg, []port.Port{port.EthQueue{Port: null}}, pool); err == nil ||
		!strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("err = %v, want a does-not-fit error", err)
	}
}

// goPort hides an ethdev queue's type from NewBlaster: its TxPort then takes
// the Go path (Build into each mbuf, then TxBurst) instead of dpdk.TxGen.
type goPort struct{ port.Port }

// benchTxPoll measures the tx poll (grant, alloc, build, tx burst) on
// net_null0, one 32-packet burst of frames per iteration, on worker lcore 1
// as cmd/pktgen runs it (so the mempool's per-lcore cache serves the mbufs).
// It reports Mpps of wall time and of the lcore thread's CPU time (Mpps-cpu:
// steadier on a shared machine, as it leaves out the time other processes
// held the core).
func benchTxPoll(b *testing.B, pc PortConfig, goPath bool) {
	mp, err := dpdk.NewPktMbufPool("pg_bench", 16383, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(mp.Free)
	p, err := port.StartEth(port.EthConfig{Name: "net_null0", Pool: mp})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop() })
	var pp port.Port = port.EthQueue{Port: p}
	if goPath {
		pp = goPort{pp}
	}
	pc.Name = "net_null0"
	cfg := Config{Ports: []PortConfig{pc}}
	bl, err := NewBlaster(&cfg, []port.Port{pp}, mp)
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	if (bl.Tx[0].fast == nil) != goPath {
		b.Fatalf("fast path %v, want %v", bl.Tx[0].fast != nil, !goPath)
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	tx := bl.Tx[0]
	b.ReportAllocs()
	var pkts int
	var cpu time.Duration
	done := make(chan struct{})
	b.ResetTimer()
	if err := dpdk.LaunchOnLcore(1, func() int {
		cpu0 := cpuclock.Thread()
		for range b.N {
			pkts += tx.Poll(clock.Now())
		}
		cpu = cpuclock.Thread() - cpu0
		close(done)
		return 0
	}); err != nil {
		b.Fatal(err)
	}
	<-done // rte_eal_wait_lcore spins: wait here first, so the main thread leaves the other core alone
	dpdk.WaitLcore(1)
	b.StopTimer()
	b.ReportMetric(float64(pkts)/b.Elapsed().Seconds()/1e6, "Mpps")
	if cpu > 0 {
		b.ReportMetric(float64(pkts)/cpu.Seconds()/1e6, "Mpps-cpu")
	}
}

// BenchmarkTxPollNull: 64-byte frames, 64 flows, unlimited, the C builder
// (dpdk.TxGen: one cgo call a burst); BenchmarkTxPollNullGo: the same on the
// Go path (Build in Go, alloc and tx as two cgo calls);
// BenchmarkTxPollNullFlowRates: 4 flows with rates of their own (the flow
// scheduler picks every packet) summing far above what one lcore sends.
func BenchmarkTxPollNull(b *testing.B)   { benchTxPoll(b, PortConfig{Flows: 64}, false) }
func BenchmarkTxPollNullGo(b *testing.B) { benchTxPoll(b, PortConfig{Flows: 64}, true) }
func BenchmarkTxPollNullFlowRates(b *testing.B) {
	benchTxPoll(b, PortConfig{Flow: []FlowConfig{{RateGbps: 100}, {RateGbps: 200}, {RateMpps: 100}, {}}}, false)
}
