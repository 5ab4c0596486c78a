package dpdk_test

import (
	"strconv"
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

// BenchmarkMacSwapNull is the reference measurement of the binding (the
// "Go mac swap" row of docs/perf.md, "dpdk/: the cgo binding"): one lcore,
// 4 net_null ports paired 0-1 and 2-3 (as dpdk-testpmd pairs them), rx from all
// ports in one cgo call, swap the MAC addresses of every packet in Go through
// the mbuf view, tx to the paired ports in one cgo call (refused mbufs freed).
// ns/op is per forwarded packet; scripts/bench-dpdk.sh compares it with
// dpdk-testpmd --forward-mode=mac on the same vdevs.
func BenchmarkMacSwapNull(b *testing.B) {
	// With a per-lcore cache, as testpmd's pools have: net_null allocates on rx
	// and frees on tx.
	mp, err := dpdk.NewPktMbufPool("p_null", 8191, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(mp.Free) // after the ports' cleanups, which drain into the pool
	var ports [4]dpdk.EthPort
	for i := range ports {
		ports[i] = startPort(b, "net_null"+strconv.Itoa(i), mp)
	}
	peer := [4]int{1, 0, 3, 2}
	rxPairs := make([]dpdk.PortQueue, 4)
	txPairs := make([]dpdk.PortQueue, 4)
	for i := range ports {
		rxPairs[i] = dpdk.PortQueue{Port: ports[i]}
		txPairs[i] = dpdk.PortQueue{Port: ports[peer[i]]}
	}
	rx, err := dpdk.NewMultiPort(rxPairs, 32)
	if err != nil {
		b.Fatal(err)
	}
	defer rx.Free()
	tx, err := dpdk.NewMultiPort(txPairs, 32)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Free()
	b.ReportAllocs()
	b.ResetTimer()
	err = dpdk.LaunchOnLcore(1, func() int {
		sent := 0
		for sent < b.N {
			if rx.RxBurst() == 0 {
				continue
			}
			for i := 0; i < 4; i++ {
				n := int(rx.Count[i])
				in, out := rx.Segment(i)[:n], tx.Segment(i)
				for k, m := range in {
					d := m.Data()
					var tmp [6]byte
					copy(tmp[:], d[0:6])
					copy(d[0:6], d[6:12])
					copy(d[6:12], tmp[:])
					out[k] = m
				}
				tx.Count[i] = uint16(n)
			}
			sent += tx.TxBurst(true)
		}
		return sent
	})
	if err != nil {
		b.Fatal(err)
	}
	dpdk.WaitLcore(1)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpps")
}
