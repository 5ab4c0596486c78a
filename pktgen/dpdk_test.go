package pktgen

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
)

func TestMain(m *testing.M) {
	args := []string{"--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry",
		"-l", "0-1", "--log-level=lib.eal:error", "--vdev=net_null0"}
	args = append(args, strings.Fields(os.Getenv("CCBED_EAL_EXTRA"))...)
	if err := dpdk.EALInit(args); err != nil {
		fmt.Fprintf(os.Stderr, "pktgen tests need DPDK (scripts/setup.sh) and root: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
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
// every packet arrives in order with a latency, and that every mbuf returns.
func TestBlastOverCable(t *testing.T) {
	cases := []struct {
		name string
		tx   PortConfig
	}{
		{"udp 64B 0.5 Gb/s", PortConfig{Name: "a", RateGbps: 0.5, Count: 20000, Flows: 8}},
		{"roce imix 2 Gb/s", PortConfig{Name: "a", RateGbps: 2, Count: 10000, Mix: "imix", Proto: "roce", Flows: 4, Vary: []string{"dest_qp"}}},
		{"udp 1500B 0.1 Mpps", PortConfig{Name: "a", RateMpps: 0.1, Count: 5000, Size: 1500}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool := newPool(t, fmt.Sprintf("pg_cable%d", i), 4095)
			a, b := newCable(t, pool)
			off := false
			cfg := Config{Ports: []PortConfig{c.tx, {Name: "b", Tx: &off, Rx: true}}}
			bl, err := NewBlaster(&cfg, []port.Port{port.EthQueue{Port: a}, port.EthQueue{Port: b}}, pool)
			if err != nil {
				t.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock := lcore.NewTSCClock(dpdk.TSCHz())
			polls := append(bl.Pollers(0), bl.Pollers(1)...)
			deadline := clock.Now() + 10e9
			for clock.Now() < deadline {
				now := clock.Now()
				for _, p := range polls {
					p(now)
				}
				if s := bl.Snapshot(); bl.TxDone() && s[1].RxPackets >= c.tx.Count {
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
			if tx.TxPackets != c.tx.Count {
				t.Fatalf("sent %d, want %d", tx.TxPackets, c.tx.Count)
			}
			if len(rx.Streams) != 1 || rx.Streams[0].Received != c.tx.Count || rx.Streams[0].Lost != 0 ||
				rx.Streams[0].SeqGaps != 0 || rx.Streams[0].Late != 0 || rx.RxOther != 0 {
				t.Fatalf("receiver: %+v other %d", rx.Streams, rx.RxOther)
			}
			if rx.Latency == nil || rx.Latency.Count != c.tx.Count || rx.Latency.MinUs < 0 || rx.Latency.MaxUs < rx.Latency.P99Us {
				t.Fatalf("latency %+v", rx.Latency)
			}
			if tx.TxBytes != rx.RxBytes {
				t.Fatalf("tx %d bytes, rx %d", tx.TxBytes, rx.RxBytes)
			}
		})
	}
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

// BenchmarkTxPollNull measures the tx poll (grant, alloc, build, tx burst) on a
// net_null port, one 32-packet burst of 64-byte frames per iteration.
func BenchmarkTxPollNull(b *testing.B) {
	pool := newPool(b, "pg_bench", 8191)
	p, err := port.StartEth(port.EthConfig{Name: "net_null0", Pool: pool})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop() })
	cfg := Config{Ports: []PortConfig{{Name: "net_null0", Flows: 64}}}
	bl, err := NewBlaster(&cfg, []port.Port{port.EthQueue{Port: p}}, pool)
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	tx := bl.Tx[0]
	b.ReportAllocs()
	start := clock.Now()
	var pkts int
	for b.Loop() {
		pkts += tx.Poll(clock.Now())
	}
	b.ReportMetric(float64(pkts)/(float64(clock.Now()-start)/1e9)/1e6, "Mpps")
}
