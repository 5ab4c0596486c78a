package pktgen

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

// TestTxGenMatchesBuild: the C builder (dpdk.TxGen, the fast path of a
// TxPort on an ethdev queue) writes the bytes Generator.Build writes, burst
// after burst, for UDP and RoCE, one size and a mix, flows in turn and flows
// picked by their rates: two generators of one config, one building in Go,
// the other through TxGen.Fill from its cursor and advancing.
func TestTxGenMatchesBuild(t *testing.T) {
	cases := []struct {
		name string
		p    PortConfig
	}{
		{"udp 64 1 flow", PortConfig{}},
		{"udp imix all fields", PortConfig{Mix: "imix", Flows: 7, Vary: []string{"src_port", "dst_port", "src_ip", "dst_ip"}, DSCP: 26}},
		{"udp 1500 rate", PortConfig{Size: 1500, RateGbps: 100, Flows: 3, Vary: []string{"dst_ip"}}},
		{"roce imix qp", PortConfig{Proto: "roce", Mix: "imix", Flows: 5, Vary: []string{"src_port", "dest_qp"}, DestQP: 0xfffffe}},
		{"flow rates", PortConfig{Mix: "100:1,200:2", Flow: []FlowConfig{{RateGbps: 30}, {RateMpps: 5}, {}}, Vary: []string{"src_ip"}}},
		{"roce flow rates", PortConfig{Proto: "roce", Flow: []FlowConfig{{RateGbps: 10}, {RateGbps: 20}}, Vary: []string{"dest_qp"}}},
	}
	pool := newPool(t, "pg_txgen", 1023)
	null, err := dpdk.EthPortByName("net_null0")
	if err != nil {
		t.Fatal(err)
	}
	burst := dpdk.NewBurst(32)
	defer burst.Free()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			goGen, cGen := newGen(t, c.p, 0), newGen(t, c.p, 0)
			cGen.seq, goGen.seq = 1<<32-40, 1<<32-40 // wrap the 32- and 24-bit sequence fields
			tg, err := dpdk.NewTxGen(pool, null, 0, cGen.txGenSpec(), len(burst.Pkts))
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Free()
			buf := make([]byte, MaxFrameLen)
			packets := 0
			for now := int64(1000); packets < 600; now += 1237 {
				k, k2 := goGen.Grant(now, 32), cGen.Grant(now, 32)
				if k != k2 {
					t.Fatalf("grants %d and %d", k, k2)
				}
				if k == 0 {
					continue
				}
				picks := cGen.perFlow != nil
				if picks {
					copy(tg.Picks, cGen.perFlow.pending()[:k])
				}
				pkts := burst.Pkts[:k]
				built, err := tg.Fill(pkts, now, cGen.cursor(), picks)
				if err != nil {
					t.Fatal(err)
				}
				cGen.advance(k, built)
				var goBytes uint64
				for i, m := range pkts {
					n := goGen.Build(buf, now)
					goBytes += uint64(n)
					got := m.Data()
					if len(got) != n || int(tg.Lens[i]) != n {
						dpdk.FreeBulk(pkts)
						t.Fatalf("packet %d: C frame %d bytes (lens %d), Go %d", packets+i, len(got), tg.Lens[i], n)
					}
					// The payload after the headers is the mbuf's old bytes
					// in Go; compare the headers and the RoCE ICRC.
					end := goGen.hdrEnd
					if !bytes.Equal(got[:end], buf[:end]) || goGen.roce && !bytes.Equal(got[n-wire.ICRCLen:], buf[n-wire.ICRCLen:n]) {
						dpdk.FreeBulk(pkts)
						t.Fatalf("packet %d differs:\nC  % x\nGo % x", packets+i, got[:end], buf[:end])
					}
				}
				dpdk.FreeBulk(pkts)
				if built != goBytes {
					t.Fatalf("C built %d bytes, Go %d", built, goBytes)
				}
				packets += k
			}
			if goGen.Stats() != cGen.Stats() || goGen.pos != cGen.pos || goGen.flow != cGen.flow || goGen.seq != cGen.seq ||
				goGen.tokens != cGen.tokens {
				t.Fatalf("generators diverged: Go %+v pos %d flow %d seq %d tokens %d; C %+v pos %d flow %d seq %d tokens %d",
					goGen.Stats(), goGen.pos, goGen.flow, goGen.seq, goGen.tokens,
					cGen.Stats(), cGen.pos, cGen.flow, cGen.seq, cGen.tokens)
			}
			if fmt.Sprint(goGen.FlowStats()) != fmt.Sprint(cGen.FlowStats()) {
				t.Fatalf("flow stats: Go %v, C %v", goGen.FlowStats(), cGen.FlowStats())
			}
		})
	}
	if pool.InUse() != 0 {
		t.Fatalf("%d mbufs in use", pool.InUse())
	}
}

// TestFlowRatesNull sends two flows at different rates on net_null0 through
// the fast path on worker lcore 1 and checks each flow's rate over the run's
// own measured duration. A flow's bucket starts empty, so it can never send
// more than its rate times the run plus a packet: that bound is tight. On a
// shared machine the loop may be descheduled; a flow then catches up on what
// it missed as long as its bucket holds it (65536 packets: 0.3 s of the
// faster flow), and the run ends with the loop polling until no flow is owed
// anything. What a stall longer than a flow's bucket span cost it the loop
// measures (the gaps between its polls), and the lower bound, 70 % of the
// most, leaves that out; the two flows must keep their 1:3 ratio when no
// stall outlasted the faster flow's bucket. The rates are counted before the
// allocation check, whose GOMAXPROCS changes and collections stop the loop.
func TestFlowRatesNull(t *testing.T) {
	mp, err := dpdk.NewPktMbufPool("pg_frnull", 4095, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mp.Free)
	p, err := port.StartEth(port.EthConfig{Name: "net_null0", Pool: mp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	// 50 and 150 Mb/s of 64 B frames (704 bits on the wire): 71 and 213 kpps.
	rates := []float64{0.05, 0.15}
	cfg := Config{Ports: []PortConfig{{Name: "net_null0", BucketPackets: MaxBucketPackets,
		Flow: []FlowConfig{{RateGbps: rates[0]}, {RateGbps: rates[1]}}}}}
	bl, err := NewBlaster(&cfg, []port.Port{port.EthQueue{Port: p}}, mp)
	if err != nil {
		t.Fatal(err)
	}
	tx := bl.Tx[0]
	if tx.fast == nil {
		t.Fatal("no fast path on an ethdev queue")
	}
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	const frameBits = (64 + L1Overhead) * 8
	var allocs float64
	var elapsed int64
	var st []FlowStat
	// lostNs[f]: the time of the loop's stalls beyond flow f's bucket span
	// (MaxBucketPackets frames at its rate), which it cannot catch up.
	var spanNs, lostNs [2]int64
	for f, w := range rates {
		spanNs[f] = int64(MaxBucketPackets * frameBits / w)
	}
	done := make(chan struct{})
	if err := dpdk.LaunchOnLcore(1, func() int {
		start := clock.Now()
		prev := start
		poll := func() int {
			now := clock.Now()
			for f := range lostNs {
				lostNs[f] += max(now-prev-spanNs[f], 0)
			}
			prev = now
			return tx.Poll(now)
		}
		poll()
		for clock.Now()-start < 400e6 {
			poll()
		}
		// Catch up: poll until a poll finds no flow eligible.
		for i := 0; i < 1e6 && poll() > 0; i++ {
		}
		elapsed = clock.Now() - start
		st = tx.Generator().FlowStats()
		allocs = testing.AllocsPerRun(200, func() { tx.Poll(clock.Now()) })
		close(done)
		return 0
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not finish")
	}
	dpdk.WaitLcore(1)
	bl.Close()
	if mp.InUse() != 0 {
		t.Errorf("%d mbufs in use after Close", mp.InUse())
	}
	if allocs != 0 {
		t.Errorf("%.1f allocs per poll, want 0", allocs)
	}
	sec := float64(elapsed) / 1e9
	gbps := func(f int) float64 { return float64(st[f].Packets*frameBits) / sec / 1e9 }
	for f, w := range rates {
		most := w*1e9*sec/frameBits + 1
		lost := w * float64(lostNs[f]) / frameBits
		if got := float64(st[f].Packets); got > most || got < 0.7*(most-lost) {
			t.Errorf("flow %d: %.0f packets (%.4g Gb/s) over %.3f s, want %.4g Gb/s: at most %.0f packets, at least 70%% of %.0f (the loop's stalls beyond its bucket cost %.0f)",
				f, got, gbps(f), sec, w, most, most-lost, lost)
		}
	}
	if r := gbps(1) / gbps(0); lostNs[1] == 0 && math.Abs(r-3) > 0.3 {
		t.Errorf("flow 1 / flow 0 = %.3f, want 3 (10%%)", r)
	}
	t.Logf("over %.3f s: flows %.4g and %.4g Gb/s L1; stalls beyond their buckets %.1f and %.1f ms",
		sec, gbps(0), gbps(1), float64(lostNs[0])/1e6, float64(lostNs[1])/1e6)
}
