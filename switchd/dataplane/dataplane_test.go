package dataplane

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// Four lcores on the machine's two CPUs (lcore 0 is the main lcore), so that the
// pipeline's three loops can run beside the test; four looping net_ring vdevs for
// the benchmark.
var ealArgs = []string{
	"--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry",
	"--lcores=0@0,1@1,2@0,3@1", "--log-level=lib.eal:error",
	"--vdev=net_ring0", "--vdev=net_ring1", "--vdev=net_ring2", "--vdev=net_ring3",
}

func TestMain(m *testing.M) {
	if err := dpdk.EALInit(ealArgs); err != nil {
		fmt.Fprintf(os.Stderr, "dataplane tests need DPDK (scripts/setup.sh) and root: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func hostIP(i int) uint32    { return 0x0a000001 | uint32(i)<<8 }
func hostMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0, byte(i)} }
func portMAC(i int) wire.MAC { return wire.MAC{2, 0, 0, 0, 0xff, byte(i)} }
func macString(m wire.MAC) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// switchConfig is 4 ports, host i at 10.0.i.1 behind port i.
func switchConfig(scheme string, gbps []float64) switchd.Config {
	c := switchd.DefaultConfig()
	c.CC.Scheme = scheme
	c.Telemetry.Console = false
	for i := 0; i < 4; i++ {
		c.Ports = append(c.Ports, switchd.PortConfig{
			Name: fmt.Sprintf("p%d", i), MAC: macString(portMAC(i)), PeerMAC: macString(hostMAC(i)),
			LinkGbps: gbps[i], BufferBytes: 1 << 20,
		})
		c.Routes = append(c.Routes, switchd.RouteConfig{Prefix: fmt.Sprintf("10.0.%d.0/24", i), Port: fmt.Sprintf("p%d", i)})
	}
	return c
}

func newPool(tb testing.TB, name string, n uint32) *dpdk.Mempool {
	tb.Helper()
	mp, err := dpdk.NewPktMbufPool(name, n, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
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
	var all []dpdk.EthPort
	for i := 0; i < 4; i++ {
		hn, sn := fmt.Sprintf("%s_h%d", prefix, i), fmt.Sprintf("%s_s%d", prefix, i)
		a, b, err := dpdk.NewEthCable(hn, sn, 1024, dpdk.SocketAny)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ep := range []dpdk.EthPort{a, b} {
			p, err := port.StartEth(port.EthConfig{Name: ep.Name(), Pool: mp, RxDesc: 1024, TxDesc: 1024})
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

func TestForward4Ports(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pipeline  bool
		unbatched bool // ports that are not port.EthQueue: one cgo call per port
		prefix    string
	}{
		{"rtc", false, false, "fwr"}, {"pipeline", true, false, "fwp"},
		{"rtc-unbatched", false, true, "fur"}, {"pipeline-unbatched", true, true, "fup"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newPool(t, "fwd_"+tc.prefix, 4095)
			hosts, sw := cables(t, tc.prefix, mp)
			if tc.unbatched {
				for i := range sw {
					sw[i] = plainPort{sw[i]}
				}
			}
			cfg := switchConfig("dcqcn", []float64{10, 10, 10, 10})
			eng, err := switchd.New(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(eng, sw, mp, Config{Pipeline: tc.pipeline, Name: tc.prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if batched := s.mrx != nil && s.mtx != nil; batched == tc.unbatched {
				t.Fatalf("batched rx/tx %v with unbatched %v", batched, tc.unbatched)
			}
			clock := lcore.NewTSCClock(dpdk.TSCHz())
			var g *lcore.Group
			if tc.pipeline {
				g = lcore.NewGroup()
				if err := s.Launch(g, clock, []uint{1, 2, 3}); err != nil {
					t.Fatal(err)
				}
			}
			const per = 8
			for src := 0; src < 4; src++ {
				for dst := 0; dst < 4; dst++ {
					if src != dst {
						send(t, mp, hosts[src], src, dst, per, 200)
					}
				}
			}
			r := &receiver{tb: t, b: dpdk.NewBurst(32)}
			defer r.b.Free()
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) && r.data[0]+r.data[1]+r.data[2]+r.data[3] < 4*3*per {
				if !tc.pipeline {
					s.PollRTC(clock.Now())
				}
				r.poll(hosts)
			}
			if g != nil {
				g.Stop()
				for _, st := range g.Wait() {
					if st.Panic != "" {
						t.Fatalf("%s panicked: %s", st.Name, st.Panic)
					}
				}
			}
			for j := 0; j < 4; j++ {
				if r.data[j] != 3*per {
					t.Errorf("host %d received %d data frames, want %d", j, r.data[j], 3*per)
				}
			}
			eng.PublishEgress()
			eng.PublishIngress()
			for j, pc := range eng.Snapshot().Ports {
				if pc.RxPackets != 3*per || pc.TxPackets != 3*per || pc.DropsTotal != 0 {
					t.Errorf("port %d: rx %d tx %d drops %d", j, pc.RxPackets, pc.TxPackets, pc.DropsTotal)
				}
			}
		})
	}
}

// plainPort hides a port's type, so that the Switch falls back to one rx and
// one tx call per port.
type plainPort struct{ port.Port }

// TestRoCCFeedbackThroughMbufs congests port 3 (0.2 Gb/s) and checks that the
// RoCC rate messages the CP generates reach the three sources as frames.
func TestRoCCFeedbackThroughMbufs(t *testing.T) {
	mp := newPool(t, "rocc_fb", 4095)
	hosts, sw := cables(t, "rf", mp)
	cfg := switchConfig("rocc", []float64{10, 10, 10, 0.2})
	cfg.CC.Params = map[string]map[string]any{"rocc": {"t_ns": int64(40_000)}}
	eng, err := switchd.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(eng, sw, mp, Config{Name: "rf"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	for src := 0; src < 3; src++ {
		send(t, mp, hosts[src], src, 3, 200, 1000)
	}
	r := &receiver{tb: t, b: dpdk.NewBurst(32)}
	defer r.b.Free()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) && (r.rates[0] == 0 || r.rates[1] == 0 || r.rates[2] == 0) {
		s.PollRTC(clock.Now())
		r.poll(hosts)
	}
	for j := 0; j < 3; j++ {
		if r.rates[j] == 0 {
			t.Errorf("source %d got no RoCC rate message", j)
		}
	}
	if r.data[3] == 0 {
		t.Error("nothing reached the destination")
	}
}

// BenchmarkForwardRTC forwards 64 B or 1500 B frames around 4 looping net_ring
// vdevs (each port's tx comes back on its rx) in rtc mode, with a CP on every
// port, and reports Mpps. scripts/bench-switchd.sh runs it beside dpdk-testpmd.
func BenchmarkForwardRTC(b *testing.B) {
	for _, scheme := range []string{"none", "rocc", "hpcc", "dcqcn"} {
		for _, size := range []int{64, 1500} {
			b.Run(fmt.Sprintf("%s/%dB", scheme, size), func(b *testing.B) { benchForward(b, scheme, size) })
		}
	}
}

func benchForward(b *testing.B, scheme string, size int) {
	mp := newPool(b, fmt.Sprintf("bench_%s_%d", scheme, size), 8191)
	var ports []port.Port
	var eths []dpdk.EthPort
	for i := 0; i < 4; i++ {
		p, err := port.StartEth(port.EthConfig{Name: fmt.Sprintf("net_ring%d", i), Pool: mp})
		if err != nil {
			b.Fatal(err)
		}
		eths = append(eths, p)
		ports = append(ports, port.EthQueue{Port: p})
	}
	defer func() {
		for _, p := range eths {
			p.Stop()
		}
	}()
	cfg := switchConfig(scheme, []float64{1000, 1000, 1000, 1000})
	cfg.Switch.DecrementTTL = false
	cfg.Switch.BurstBytes = 1 << 20
	for i := range cfg.Ports {
		cfg.Ports[i].BufferBytes = 8 << 20
		cfg.Ports[i].PeerMAC = macString(portMAC(i)) // frames come back to the switch
	}
	eng, err := switchd.New(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(eng, ports, mp, Config{Name: fmt.Sprintf("b%s%d", scheme, size)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Seed each port with 512 frames addressed to the next host: they loop
	// through the switch for the whole run.
	payload := size - (wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + wire.ICRCLen)
	withINT := scheme == "hpcc"
	if withINT {
		payload -= wire.INTLen
	}
	// The smallest ccbed data frame carries the 8-byte data header: 66 B
	// (108 B with HPCC's INT stack) where "64 B" is asked for.
	payload = max(payload, wire.DataHeaderLen)
	bb := dpdk.NewBurst(512)
	defer bb.Free()
	for i := 0; i < 4; i++ {
		if err := mp.AllocBulk(bb.Pkts); err != nil {
			b.Fatal(err)
		}
		for k, m := range bb.Pkts {
			ep := wire.Endpoints{DstMAC: portMAC(i), SrcMAC: hostMAC(i), SrcIP: hostIP(i), DstIP: hostIP((i + 1) % 4), SrcPort: uint16(49152 + k%16)}
			l, err := wire.BuildData(m.Room(), &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: uint32(k % 16), PayloadLen: payload, INT: withINT})
			if err != nil {
				b.Fatal(err)
			}
			m.SetLen(l)
		}
		if n := ports[i].TxBurst(bb.Pkts); n < len(bb.Pkts) {
			dpdk.FreeBulk(bb.Pkts[n:])
		}
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	for i := 0; i < 1000; i++ {
		s.PollRTC(clock.Now())
	}
	eng.PublishEgress()
	before := eng.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		s.PollRTC(clock.Now())
	}
	el := time.Since(start)
	b.StopTimer()
	eng.PublishEgress()
	after := eng.Snapshot()
	var pk uint64
	for j := range after.Ports {
		pk += after.Ports[j].TxPackets - before.Ports[j].TxPackets
	}
	b.ReportMetric(float64(pk)/el.Seconds()/1e6, "Mpps")
	b.ReportMetric(float64(pk)/float64(b.N), "pkts/poll")
	_ = context.Background
}
