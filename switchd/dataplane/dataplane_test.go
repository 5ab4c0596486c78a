package dataplane

import (
	"fmt"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// TestMain starts the EAL with five lcores on the machine's two CPUs (lcore
// 0 is the main lcore), so that the pipeline's three loops, or the sharded
// mode's four, can run beside the test, and four looping net_ring vdevs for
// the benchmark. The lcore map is --lcores (dpdktest.Args spells -l, which
// cannot place two lcores on one CPU).
func TestMain(m *testing.M) {
	dpdktest.Main(m, "dataplane", []string{
		"--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry",
		"--lcores=0@0,1@1,2@0,3@1,4@0", "--log-level=lib.eal:error",
		"--vdev=net_ring0", "--vdev=net_ring1", "--vdev=net_ring2", "--vdev=net_ring3",
	})
}

func hostIP(i int) uint32    { return 0x0a000001 | uint32(i)<<8 }
func hostMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0, byte(i)} }
func portMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0xff, byte(i)} }

// switchConfig is 4 ports, host i at 10.0.i.1 behind port i.
func switchConfig(scheme string, gbps []float64) switchd.Spec {
	c := switchd.DefaultSpec()
	c.CC.Scheme = scheme
	for i := 0; i < 4; i++ {
		c.Ports = append(c.Ports, switchd.PortSpec{
			Name: fmt.Sprintf("p%d", i), MAC: portMAC(i), PeerMAC: hostMAC(i),
			LinkBps: gbps[i] * 1e9, BufferBytes: 1 << 20,
		})
		c.Routes = append(c.Routes, switchd.Route{Addr: 0x0a000000 | uint32(i)<<8, Len: 24, Ports: []int{i}})
	}
	return c
}

func newPool(tb testing.TB, name string, n uint32) *dpdk.Mempool {
	tb.Helper()
	return newCachedPool(tb, name, n, 0)
}

// daemonCache is the per-lcore cache of cmd/switchd's mbuf pool: a launched
// loop takes and returns mbufs there, the pool's shared ring only in bursts.
const daemonCache = 256

// newCachedPool is newPool with a per-lcore cache of cache mbufs (used on EAL
// lcores only; other threads go to the shared ring).
func newCachedPool(tb testing.TB, name string, n, cache uint32) *dpdk.Mempool {
	tb.Helper()
	mp, err := dpdk.NewPktMbufPool(name, n, cache, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if in := mp.InUse(); in != 0 {
			tb.Errorf("pool %s: %d mbufs not returned", name, in)
		}
		mp.Free()
	})
	return mp
}

// cables makes 4 host<->switch virtual cables and starts their 8 ports.
func cables(tb testing.TB, prefix string, mp *dpdk.Mempool) (hosts, sw []port.Port) {
	tb.Helper()
	return cablesOf(tb, prefix, mp, 1024)
}

// cablesOf is cables whose rings (one each way) have slots slots.
func cablesOf(tb testing.TB, prefix string, mp *dpdk.Mempool, slots uint32) (hosts, sw []port.Port) {
	tb.Helper()
	var all []dpdk.EthPort
	for i := 0; i < 4; i++ {
		hn, sn := fmt.Sprintf("%s_h%d", prefix, i), fmt.Sprintf("%s_s%d", prefix, i)
		a, b, err := dpdk.NewEthCable(hn, sn, slots, dpdk.SocketAny)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ep := range []dpdk.EthPort{a, b} {
			p, err := port.StartEth(port.EthConfig{Name: ep.Name(), Pool: mp, RxDesc: uint16(slots), TxDesc: uint16(slots)})
			if err != nil {
				tb.Fatal(err)
			}
			all = append(all, p)
		}
		hosts = append(hosts, port.EthQueue{Port: all[len(all)-2]})
		sw = append(sw, port.EthQueue{Port: all[len(all)-1]})
	}
	tb.Cleanup(func() {
		scratch := dpdk.NewBurst(64)
		defer scratch.Free()
		for _, p := range all {
			port.Drain(port.EthQueue{Port: p}, scratch.Pkts)
			p.Stop()
			p.Close()
		}
	})
	return hosts, sw
}

// send builds n data frames from host src to host dst and transmits them.
func send(tb testing.TB, mp *dpdk.Mempool, h port.Port, src, dst, n, payload int) {
	tb.Helper()
	b := dpdk.NewBurst(n)
	defer b.Free()
	if err := mp.AllocBulk(b.Pkts); err != nil {
		tb.Fatal(err)
	}
	for k, m := range b.Pkts {
		ep := wire.Endpoints{DstMAC: portMAC(src), SrcMAC: hostMAC(src), SrcIP: hostIP(src), DstIP: hostIP(dst), SrcPort: uint16(49152 + src)}
		l, err := wire.BuildData(m.Room(), &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: uint32(src*16 + dst), PSN: uint32(k), PayloadLen: payload})
		if err != nil {
			tb.Fatal(err)
		}
		m.SetLen(l)
	}
	sent := 0
	for tries := 0; sent < n && tries < 1000; tries++ {
		sent += h.TxBurst(b.Pkts[sent:])
	}
	if sent < n {
		dpdk.FreeBulk(b.Pkts[sent:])
		tb.Fatalf("host %d sent %d of %d", src, sent, n)
	}
}

// receiver collects what reaches the hosts.
type receiver struct {
	tb    testing.TB
	b     *dpdk.Burst
	data  [4]int
	rates [4]int
	f     wire.Frame
}

func (r *receiver) poll(hosts []port.Port) {
	for j, h := range hosts {
		n := h.RxBurst(r.b.Pkts)
		for _, m := range r.b.Pkts[:n] {
			if err := wire.Decode(m.Data(), &r.f); err != nil {
				r.tb.Errorf("host %d: bad frame: %v", j, err)
				continue
			}
			if r.f.Eth.Dst() != hostMAC(j) || r.f.Eth.Src() != portMAC(j) || r.f.IP.Dst() != hostIP(j) {
				r.tb.Errorf("host %d got a frame %v -> %v for %x", j, r.f.Eth.Src(), r.f.Eth.Dst(), r.f.IP.Dst())
			}
			switch r.f.Kind {
			case wire.KindData:
				if r.f.IP.TTL() != wire.DefaultTTL-1 || int(r.f.BTH.DestQP()&15) != j {
					r.tb.Errorf("host %d: TTL %d QP %d", j, r.f.IP.TTL(), r.f.BTH.DestQP())
				}
				r.data[j]++
			case wire.KindRoCCRate:
				r.rates[j]++
			}
		}
		dpdk.FreeBulk(r.b.Pkts[:n])
	}
}

// stopLoops stops g's loops (nil: none launched), fails on a loop's panic
// and returns their stats.
func stopLoops(tb testing.TB, g *lcore.Group) []lcore.Stats {
	tb.Helper()
	if g == nil {
		return nil
	}
	g.Stop()
	stats := g.Wait()
	for _, st := range stats {
		if st.Panic != "" {
			tb.Fatalf("%s panicked: %s", st.Name, st.Panic)
		}
	}
	return stats
}
