package lcore_test

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/lcore"
)

func TestMain(m *testing.M) { dpdktest.Main(m, "lcore", dpdktest.Args(256, "0-1")) }

// TestPipelineOverRings runs a producer on the main lcore and a consumer on worker
// lcore 1, passing mbufs through an rte_ring, stops both through a context, and
// checks the counters and that every mbuf is back in its pool.
func TestPipelineOverRings(t *testing.T) {
	mp, err := dpdk.NewPktMbufPool("lc_pool", 1023, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	ring, err := dpdk.NewRing("lc_ring", 256, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Free()

	var produced, consumed uint64
	prodBurst, consBurst := dpdk.NewBurst(32), dpdk.NewBurst(32)
	defer prodBurst.Free()
	defer consBurst.Free()
	g := lcore.NewGroup()
	err = g.Launch(0, "producer", func() int {
		if mp.AllocBulk(prodBurst.Pkts) != nil {
			return 0
		}
		for _, m := range prodBurst.Pkts {
			m.SetLen(64)
		}
		n := ring.EnqueueBurst(prodBurst.Pkts)
		dpdk.FreeBulk(prodBurst.Pkts[n:])
		produced += uint64(n)
		return n
	})
	if err != nil {
		t.Fatal(err)
	}
	err = g.Launch(1, "consumer", func() int {
		n := ring.DequeueBurst(consBurst.Pkts)
		dpdk.FreeBulk(consBurst.Pkts[:n])
		consumed += uint64(n)
		return n
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(1, "again", func() int { return 0 }); err == nil {
		t.Fatal("second loop on lcore 1 accepted")
	}
	if err := g.Launch(7, "absent", func() int { return 0 }); err == nil {
		t.Fatal("loop on a disabled lcore accepted")
	}
	if n := runtime.GOMAXPROCS(0); n < 4 {
		t.Errorf("GOMAXPROCS %d with 2 busy loops, want >= 4", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	stats := g.Run(ctx)

	// drain what the consumer left in the ring
	for n := ring.DequeueBurst(consBurst.Pkts); n > 0; n = ring.DequeueBurst(consBurst.Pkts) {
		dpdk.FreeBulk(consBurst.Pkts[:n])
		consumed += uint64(n)
	}
	if produced == 0 || consumed != produced {
		t.Fatalf("produced %d, consumed %d", produced, consumed)
	}
	if in := mp.InUse(); in != 0 {
		t.Fatalf("%d mbufs not returned", in)
	}
	if len(stats) != 2 {
		t.Fatalf("stats %+v", stats)
	}
	for _, s := range stats {
		if s.Iterations == 0 || s.BusyPolls+s.IdlePolls != s.Iterations || s.MaxStallNs <= 0 || s.Panic != "" {
			t.Errorf("loop stats %+v", s)
		}
		t.Logf("%+v", s)
	}
	if stats[0].Work != produced {
		t.Errorf("producer work %d, produced %d", stats[0].Work, produced)
	}
}

func TestSignalStopsLoops(t *testing.T) {
	g := lcore.NewGroup()
	if err := g.Launch(1, "spin", func() int { return 1 }); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stats := g.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("SIGINT did not stop the group before the deadline")
	}
	if stats[0].Iterations == 0 || stats[0].BusyPolls != stats[0].Iterations {
		t.Fatalf("stats %+v", stats[0])
	}
}

func TestPanicStopsGroup(t *testing.T) {
	g := lcore.NewGroup()
	i := 0
	if err := g.Launch(1, "bad", func() int {
		i++
		if i == 10 {
			panic("malformed state")
		}
		return 0
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stats := g.Run(ctx) // returns when the panic stops the group, not at the deadline
	if ctx.Err() != nil {
		t.Fatal("Run did not return when the group stopped itself")
	}
	if !g.Stopped() || stats[0].Panic != "malformed state" {
		t.Fatalf("stats %+v stopped %v", stats[0], g.Stopped())
	}
}

func TestTSCClock(t *testing.T) {
	c := lcore.NewTSCClock(dpdk.TSCHz())
	a := c.Now()
	time.Sleep(20 * time.Millisecond)
	d := c.Now() - a
	// Generous bounds: only checks the unit conversion, not the machine's timing.
	if d < int64(10*time.Millisecond) || d > int64(10*time.Second) {
		t.Fatalf("20 ms sleep measured as %d ns", d)
	}
	if n := testing.AllocsPerRun(100, func() { _ = c.Now() }); n != 0 {
		t.Fatalf("Now allocates %.1f", n)
	}
}

// TestStallFromOrigin: a loop launched after its group's origin counts the
// time from the origin to its first poll as a stall, whether or not it
// polled before the stop (a set-up that overran time 0).
func TestStallFromOrigin(t *testing.T) {
	const lateNs = 30_000_000
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	origin := clock.TSC()
	if at := clock.TSCAt(0); at > origin {
		t.Fatalf("TSCAt(0) = %d, after a later reading %d", at, origin)
	}
	time.Sleep(lateNs)
	if at, now := clock.TSCAt(lateNs), clock.TSC(); at > now || at < origin {
		t.Fatalf("TSCAt(%d) = %d, want between %d and %d", lateNs, at, origin, now)
	}
	for _, runFor := range []time.Duration{20 * time.Millisecond, 0} {
		t.Run(runFor.String(), func(t *testing.T) {
			g := lcore.NewGroup()
			g.SetOrigin(origin)
			if err := g.Launch(1, "late", func() int { return 0 }); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runFor)
			defer cancel()
			if s := g.Run(ctx)[0]; s.MaxStallNs < lateNs {
				t.Fatalf("%d polls, longest stall %d ns: want at least %d, the time from the origin to the launch",
					s.Iterations, s.MaxStallNs, lateNs)
			}
		})
	}
}
