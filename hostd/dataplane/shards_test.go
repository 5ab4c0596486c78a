package dataplane

import (
	"fmt"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/hostd"
	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
)

// cableShards starts two hosts of n engines each (hostd.NewEngines) on the
// two ends of a net_ring cable of n queue pairs whose queue i leads to the
// other end's queue i+rotate (dpdk.NewEthCableQueues: a flow's ACKs come
// back on another queue than its data left, as a NIC's RSS may put them).
// Cleanup closes everything and checks that every mbuf came back.
func cableShards(t *testing.T, name string, n, rotate int, a, b hostd.Spec) (*Shards, *Shards) {
	t.Helper()
	mp, err := dpdk.NewPktMbufPool("hs_"+name, 8191, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb, err := dpdk.NewEthCableQueues(name+"_a", name+"_b", n, rotate, 1024, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	a.RTONs, b.RTONs = 200_000_000, 200_000_000 // see cablePair
	var shards [2]*Shards
	for i, c := range []struct {
		p   dpdk.EthPort
		cfg hostd.Spec
	}{{pa, a}, {pb, b}} {
		p, err := port.StartEth(port.EthConfig{Name: c.p.Name(), Pool: mp, Queues: uint16(n), RxDesc: 1024, TxDesc: 1024})
		if err != nil {
			t.Fatal(err)
		}
		engs, err := hostd.NewEngines(c.cfg, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewShards(engs, EthQueues(p, n), mp, fmt.Sprintf("%s%d", name, i))
		if err != nil {
			t.Fatal(err)
		}
		shards[i] = s
	}
	cleanupCable(t, mp, pa, pb, shards[0].Close, shards[1].Close)
	return shards[0], shards[1]
}

// TestDPDKShards runs a sender and a receiver of four engines each over a
// four-queue net_ring cable whose queues are crossed (queue i to queue i+1)
// with the engines' two sides in one loop per host (Poll) and split across
// the lcores (PollRx, PollTx): every flow completes with every byte
// delivered, every queue of both ports carries traffic both ways, and the
// ACKs that reach another engine than their flow's are handed to it.
func TestDPDKShards(t *testing.T) {
	const n, flows, size = 4, 16, 256 << 10
	tests := []struct {
		name  string
		loops func(a, b *Shards, clock *lcore.TSCClock) (main, worker lcore.Poll)
	}{
		{"poll", func(a, b *Shards, clock *lcore.TSCClock) (lcore.Poll, lcore.Poll) {
			return pollLoop(clock, b.Hosts, nil, nil), pollLoop(clock, a.Hosts, nil, nil)
		}},
		{"split", func(a, b *Shards, clock *lcore.TSCClock) (lcore.Poll, lcore.Poll) {
			return func() int {
					return pollLoop(clock, nil, a.Hosts, nil)() + pollLoop(clock, nil, nil, b.Hosts)()
				}, func() int {
					return pollLoop(clock, nil, nil, a.Hosts)() + pollLoop(clock, nil, b.Hosts, nil)()
				}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ca, cb := oneFlow("dcqcn", 0, 0)
			ca.Flows = nil
			ca.Incast = []hostd.Incast{{IDBase: 1, Dst: 0x0a000002, Flows: flows, SizeBytes: size}}
			a, b := cableShards(t, "sh"+tc.name, n, 1, ca, cb)
			clock := lcore.NewTSCClock(dpdk.TSCHz())
			main, worker := tc.loops(a, b, clock)
			engs := a.Engines()
			done := func() bool {
				for _, e := range engs {
					_, tx := e.Counters()
					if tx.FlowsCompleted < tx.FlowsStarted || tx.FlowsStarted == 0 {
						return false
					}
				}
				return true
			}
			g := lcore.NewGroup()
			if err := g.Launch(dpdk.MainLcore(), "b", main); err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(1, "a", func() int {
				k := worker()
				if done() {
					g.Stop()
				}
				return k
			}); err != nil {
				g.Stop()
				g.Wait()
				t.Fatal(err)
			}
			waitLoops(t, g)
			fcts := engs.Merged().FCTs()
			rx, tx := engs.Counters()
			if len(fcts) != flows {
				t.Fatalf("%d of %d flows completed; rx %+v tx %+v port %+v", len(fcts), flows, rx, tx, a.PortCounters())
			}
			var bytes uint64
			for _, f := range b.Engines().Merged().RxFlows() {
				bytes += f.Bytes
			}
			if bytes != flows*size {
				t.Errorf("receiver got %d bytes in order, want %d", bytes, flows*size)
			}
			for i := range n {
				pa, pb := a.Hosts[i].PortCounters(), b.Hosts[i].PortCounters()
				if pa.TxFrames == 0 || pa.RxFrames == 0 || pb.TxFrames == 0 || pb.RxFrames == 0 {
					t.Errorf("queue %d: sender tx %d rx %d, receiver tx %d rx %d: want traffic both ways on every queue",
						i, pa.TxFrames, pa.RxFrames, pb.TxFrames, pb.RxFrames)
				}
				if _, etx := engs[i].Counters(); etx.FlowsCompleted != flows/n || etx.StaleEvents != 0 {
					t.Errorf("engine %d: %d flows completed, %d stale events", i, etx.FlowsCompleted, etx.StaleEvents)
				}
			}
			if rx.Acks == 0 || rx.EventsDropped != 0 || tx.BadAcks != 0 {
				t.Errorf("sender: %d ACKs, %d events dropped, %d bad ACKs", rx.Acks, rx.EventsDropped, tx.BadAcks)
			}
			t.Logf("%d engines: %d flows of %d KiB in %.1f ms (last FCT), %d data frames (%d resent), port %+v",
				n, flows, size>>10, float64(fcts[len(fcts)-1].StartNs+fcts[len(fcts)-1].FCTNs)/1e6,
				tx.DataFrames, tx.RetxFrames, a.PortCounters())
		})
	}
}

// TestDPDKShardsLaunch runs a host of three engines from Shards.Launch with
// the loops a file's tx_lcores and rx_lcores ask for, and checks Launch's
// refusals.
func TestDPDKShardsLaunch(t *testing.T) {
	ca, cb := oneFlow("none", 0, 0)
	ca.Flows = nil
	ca.Incast = []hostd.Incast{{IDBase: 1, Dst: 0x0a000002, Flows: 6, SizeBytes: 64 << 10}}
	a, b := cableShards(t, "shl", 3, 2, ca, cb)
	bad := []struct {
		name  string
		loops []hostd.Loop
	}{
		{"engine polled twice", []hostd.Loop{{Lcore: 1, Rx: []int{0, 1, 2}, Tx: []int{0, 1, 2}}, {Lcore: 0, Rx: []int{1}}}},
		{"engine not polled", []hostd.Loop{{Lcore: 1, Rx: []int{0, 1}, Tx: []int{0, 1, 2}}}},
		{"no such engine", []hostd.Loop{{Lcore: 1, Rx: []int{0, 1, 2, 3}, Tx: []int{0, 1, 2}}}},
	}
	for _, tc := range bad {
		g := lcore.NewGroup()
		if err := a.Launch(g, tc.loops, lcore.NewTSCClock(dpdk.TSCHz())); err == nil {
			t.Errorf("%s: launched", tc.name)
		}
		g.Stop()
		g.Wait()
	}
	f := hostdaemon.File{TxLcores: []uint{1, 1, 1}}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	g := lcore.NewGroup()
	if err := a.Launch(g, f.Loops(), clock); err != nil {
		t.Fatal(err)
	}
	fb := hostdaemon.File{TxLcores: []uint{0, 0, 0}}
	if err := b.Launch(g, fb.Loops(), clock); err != nil {
		g.Stop()
		g.Wait()
		t.Fatal(err)
	}
	engs := a.Engines()
	for deadline := clock.Now() + 2e9; clock.Now() < deadline; {
		if _, tx := engs.Counters(); tx.FlowsCompleted == 6 {
			break
		}
	}
	waitStop(t, g)
	if p := a.PortCounters(); len(engs.Merged().FCTs()) != 6 || p.TxFrames == 0 {
		t.Fatalf("%d of 6 flows completed, port %+v", len(engs.Merged().FCTs()), p)
	}
}

// waitStop stops g's loops and fails the test on a loop's panic.
func waitStop(t *testing.T, g *lcore.Group) {
	t.Helper()
	g.Stop()
	for _, s := range g.Wait() {
		if s.Panic != "" {
			t.Fatalf("loop %s panicked: %s", s.Name, s.Panic)
		}
	}
}

// TestDPDKShardsProgress: a running host of several engines hands over its
// counters summed, and its polls allocate nothing.
func TestDPDKShardsProgress(t *testing.T) {
	ca, cb := oneFlow("dcqcn", 0, 1)
	ca.Flows = append(ca.Flows, hostd.Flow{ID: 8, Dst: 0x0a000002, RateGbps: 1})
	a, b := cableShards(t, "shp", 2, 1, ca, cb)
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	poll := pollLoop(clock, append(append([]*Host(nil), a.Hosts...), b.Hosts...), nil, nil)
	if n := testing.AllocsPerRun(2000, func() { poll() }); n != 0 {
		t.Errorf("a poll of two hosts of two engines allocates %.2f times", n)
	}
	g := lcore.NewGroup()
	if err := g.Launch(1, "ab", poll); err != nil {
		t.Fatal(err)
	}
	p, ok := a.Progress(time.Second)
	waitStop(t, g)
	if !ok {
		t.Fatal("no progress report")
	}
	if p.Tx.DataFrames == 0 || p.Port.TxFrames == 0 || p.Tx.FlowsStarted != 2 {
		t.Errorf("progress %+v", p)
	}
}
