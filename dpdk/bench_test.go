package dpdk_test

import (
	"testing"

	"github.com/ccbed/ccbed/dpdk"
)

// forwardLoop is an io forwarder as dpdk-testpmd --forward-mode=io runs it: rx a
// burst on one port, tx it on the other, both directions, until total packets
// have been sent. goSide selects the Go loop over the binding (two cgo calls per
// burst) or the C-side forwarder RxTxBurst (one cgo call per burst).
func forwardLoop(p0, p1 dpdk.EthPort, b *dpdk.Burst, total int, goSide bool) int {
	sent := 0
	ports := [2][2]dpdk.EthPort{{p0, p1}, {p1, p0}}
	for sent < total {
		for _, d := range ports {
			if goSide {
				n := d[0].RxBurst(0, b.Pkts)
				if n == 0 {
					continue
				}
				t := d[1].TxBurst(0, b.Pkts[:n])
				dpdk.FreeBulk(b.Pkts[t:n])
				sent += t
			} else {
				_, t := d[0].RxTxBurst(0, d[1], 0, b.Pkts)
				sent += t
			}
		}
	}
	return sent
}

func benchmarkForward(b *testing.B, goSide bool) {
	mp := newPool(b, "p_fwd", 4095, dpdk.MbufDefaultDataRoom)
	p0 := startPort(b, "net_ring0", mp)
	p1 := startPort(b, "net_ring1", mp)
	inject := dpdk.NewBurst(32)
	defer inject.Free()
	for _, p := range []dpdk.EthPort{p0, p1} {
		if err := mp.AllocBulk(inject.Pkts); err != nil {
			b.Fatal(err)
		}
		for _, m := range inject.Pkts {
			m.SetLen(60)
		}
		if n := p.TxBurst(0, inject.Pkts); n != len(inject.Pkts) {
			b.Fatalf("inject: %d of %d", n, len(inject.Pkts))
		}
	}
	burst := dpdk.NewBurst(32)
	defer burst.Free()
	b.ReportAllocs()
	b.ResetTimer()
	if err := dpdk.LaunchOnLcore(1, func() int { return forwardLoop(p0, p1, burst, b.N, goSide) }); err != nil {
		b.Fatal(err)
	}
	dpdk.WaitLcore(1)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpps")
}

// BenchmarkIOForwardGo: Go loop over the binding on lcore 1, 2 net_ring ports,
// 64 packets in flight; ns/op is per forwarded packet. scripts/bench-dpdk.sh
// compares it with dpdk-testpmd --forward-mode=io.
func BenchmarkIOForwardGo(b *testing.B) { benchmarkForward(b, true) }

// BenchmarkIOForwardC: the same with the rx/tx pair done in C (one cgo call per
// burst): the binding's floor.
func BenchmarkIOForwardC(b *testing.B) { benchmarkForward(b, false) }

// BenchmarkCgoCall is the price of one trivial call into C (rte_ring_count), the
// unit cost that every per-burst call pays.
func BenchmarkCgoCall(b *testing.B) {
	r, err := dpdk.NewRing("r_cgo", 64, dpdk.SocketAny, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Free()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.Count()
	}
}

// BenchmarkTSC is dpdk.TSC (rte_rdtsc through cgo); lcore.TSCClock reads the
// counter without cgo.
func BenchmarkTSC(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = dpdk.TSC()
	}
}
