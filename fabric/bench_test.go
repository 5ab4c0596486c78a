package fabric_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ccbed/ccbed/fabric"
)

// leafSpineWebSearch is the speed benchmark: leaves leaves of 16 hosts,
// as many spines, every link 100 Gb/s and 1 us (2:1 oversubscribed at the
// leaves), ECMP, the web-search flow-size CDF at 30 % load offered for 5 ms,
// lossless (PFC, as the HPCC paper's fabric).
func leafSpineWebSearch(leaves int, scheme string) *fabric.Spec {
	topo := fabric.LeafSpine(leaves, 8, 16, 100e9, 100e9, 1000)
	all := make([]int, len(topo.Hosts))
	for i := range all {
		all[i] = i
	}
	return &fabric.Spec{Topo: topo, Scheme: scheme, Seed: 1, PFC: fabric.PFC{Enabled: true},
		Workloads: []fabric.Workload{{CDF: "../configs/workloads/websearch.cdf", Senders: all, Dsts: all,
			Load: 0.3, StopNs: 5_000_000}}}
}

// benchLeafSpine simulates 10 ms of leafSpineWebSearch per iteration and
// reports simulated seconds per wall second, events per second and the heap.
func benchLeafSpine(b *testing.B, leaves int, scheme string) {
	b.ReportAllocs()
	var events int64
	var wall time.Duration
	var peak uint64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := fabric.Simulate(leafSpineWebSearch(leaves, scheme), 10_000_000)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		events += r.Events
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if i == 0 {
			b.Logf("%d hosts: %d events, %d flows completed, %d frame buffers",
				leaves*16, r.Events, len(r.FCTs()), r.FrameBuffers)
		}
	}
	b.ReportMetric(0.01*float64(b.N)/wall.Seconds(), "sim-s/wall-s")
	b.ReportMetric(float64(events)/wall.Seconds()/1e6, "Mevents/s")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
}

func BenchmarkLeafSpine128DCQCN(b *testing.B) { benchLeafSpine(b, 8, "dcqcn") }
func BenchmarkLeafSpine256DCQCN(b *testing.B) { benchLeafSpine(b, 16, "dcqcn") }
func BenchmarkLeafSpine128HPCC(b *testing.B)  { benchLeafSpine(b, 8, "hpcc") }

// BenchmarkRoCC3to1 is the case (a): RoCC 3-to-1 at 10 Gb/s, T =
// 100 us, 1 us links, 40 ms simulated per iteration.
func BenchmarkRoCC3to1(b *testing.B) {
	b.ReportAllocs()
	var events int64
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		s := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: "rocc", ExpectedFlows: 3,
			Params: map[string]any{"q_ref_bytes": 75_000, "q_mid_bytes": 150_000, "q_max_bytes": 210_000}}
		for f := 0; f < 3; f++ {
			s.Flows = append(s.Flows, fabric.Flow{ID: f + 1, Src: f, Dst: 3})
		}
		start := time.Now()
		r, err := fabric.Simulate(s, 40_000_000)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		events += r.Events
	}
	b.ReportMetric(0.04*float64(b.N)/wall.Seconds(), "sim-s/wall-s")
	b.ReportMetric(float64(events)/wall.Seconds()/1e6, "Mevents/s")
}
