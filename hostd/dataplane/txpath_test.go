package dataplane

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/internal/cpuclock"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

// BenchmarkDPDKTxPath is hostd's tx lcore through the adapter, on real
// time: one engine with 1,000 active QPs, each paced by its token bucket at
// an equal share of link_gbps, 1 KB payloads, sending into net_null (whose
// tx frees the mbufs, as a NIC's completions do), PollTx in a loop on lcore
// 1: Service, spare mbufs, Engine.NextDataBurst and TxBurst. At 100 Gb/s the
// engine paces at the line rate (11.3 Mpps of 1,082-byte frames) and the
// loop has to keep up; at 1,600 Gb/s (the largest link_gbps) nothing paces
// below the loop's own speed, so its rate is what one tx lcore can send.
// Each op is one data frame; Mpps and line-Gb/s (frames with their preamble,
// FCS and gap) are over the loop's run, cpu-ns/op the loop thread's CPU time
// per frame (steadier on a shared machine), frames/poll how many frames a
// poll sent on average.
func BenchmarkDPDKTxPath(b *testing.B) {
	for _, c := range []struct {
		scheme string
		gbps   float64
	}{{"none", 100}, {"dcqcn", 100}, {"none", 1600}, {"dcqcn", 1600}} {
		b.Run(fmt.Sprintf("%s/%gG", c.scheme, c.gbps), func(b *testing.B) { benchTxPath(b, c.scheme, c.gbps) })
	}
}

func benchTxPath(b *testing.B, scheme string, gbps float64) {
	const qps = 1000
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // the lcore group raises it
	mp, err := dpdk.NewPktMbufPool("hb_tx", 8191, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		b.Fatal(err)
	}
	defer mp.Free()
	p, err := port.StartEth(port.EthConfig{Name: "net_null0", Pool: mp})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Stop()
	c := hostd.Spec{Name: "h1", IP: 0x0a000001, MAC: wire.MAC{2, 0, 0, 0, 0, 1}, LinkGbps: gbps, Scheme: scheme,
		MaxQPs: qps, RTONs: 1e12, SampleNs: 1_000_000, MaxSamples: 1 << 16,
		Incast: []hostd.Incast{{Dst: 0x0a000002, Flows: qps, SizeBytes: 1 << 50, RateGbps: gbps / qps}}}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	e, err := hostd.NewEngine(c, clock.Now())
	if err != nil {
		b.Fatal(err)
	}
	h, err := NewHost(e, port.EthQueue{Port: p}, mp, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	// Warm up: every flow started and sending.
	for now := clock.Now(); clock.Now() < now+2e6; {
		h.PollTx(clock.Now())
	}
	b.ResetTimer()
	var t0, t1, cpu0, cpu1, f0, f1 int64
	var first atomic.Bool
	g := lcore.NewGroup()
	if err := g.Launch(1, "tx", func() int {
		if !first.Load() {
			first.Store(true)
			_, tx := e.Counters()
			f0, t0, cpu0 = int64(tx.DataFrames), clock.Now(), cpuclock.Thread().Nanoseconds()
		}
		n := h.PollTx(clock.Now())
		if _, tx := e.Counters(); int64(tx.DataFrames)-f0 >= int64(b.N) {
			f1, t1, cpu1 = int64(tx.DataFrames), clock.Now(), cpuclock.Thread().Nanoseconds()
			g.Stop()
		}
		return n
	}); err != nil {
		b.Fatal(err)
	}
	stats := g.Wait()
	b.StopTimer()
	if stats[0].Panic != "" {
		b.Fatal(stats[0].Panic)
	}
	b.Logf("%d polls, worst stall %.1f us", stats[0].Iterations, float64(stats[0].MaxStallNs)/1e3)
	if pc := h.PortCounters(); pc.TxDrops != 0 || pc.NoMbuf != 0 {
		b.Fatalf("port %+v", pc)
	}
	frames := float64(f1 - f0)
	b.ReportMetric(frames/float64(t1-t0)*1e3, "Mpps")
	// The line's share used: frames with their 24 bytes of preamble, FCS and gap.
	b.ReportMetric(frames*float64(1024+hostd.DataOverhead+24)*8/float64(t1-t0), "line-Gb/s")
	b.ReportMetric(frames/float64(stats[0].Iterations), "frames/poll")
	if cpu0 > 0 && cpu1 > cpu0 {
		b.ReportMetric(float64(cpu1-cpu0)/frames, "cpu-ns/op")
	}
	b.ReportMetric(0, "ns/op")
}
