package fabric_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ccbed/ccbed/fabric"
)

// leafSpineWebSearch is the speed benchmark: leaves leaves of 16 hosts,
// as many spines, every link 100 Gb/s and 1 us (2:1 oversubscribed at the
// leaves), ECMP, the web-search flow-size CDF at 30 % load offered for 5 ms.
func leafSpineWebSearch(leaves int, scheme string) *fabric.Spec {
	topo := fabric.LeafSpine(leaves, 8, 16, 100e9, 100e9, 1000)
	all := make([]int, len(topo.Hosts))
	for i := range all {
		all[i] = i
	}
	return &fabric.Spec{Topo: topo, Scheme: scheme, Seed: 1,
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
