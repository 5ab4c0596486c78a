package hostd

import (
	"errors"
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// oneFlow returns the configs of a sender A with one static flow to B and of B.
func oneFlow(scheme string, size int64, rateGbps float64) (Spec, Spec) {
	a := testConfig("h1", ipA, scheme)
	a.Flows = []Flow{{ID: 7, Dst: ipB, SizeBytes: size, RateGbps: rateGbps}}
	b := testConfig("h2", ipB, scheme)
	return a, b
}

func TestMessageCompletesAndFCT(t *testing.T) {
	const size = 1 << 20
	a, b := oneFlow("none", size, 0)
	v := newVnet(t, a, b)
	v.run(5_000_000)
	fcts := v.eng[0].FCTs()
	if len(fcts) != 1 {
		t.Fatalf("%d FCT records, want 1", len(fcts))
	}
	f := fcts[0]
	if f.Flow != 7 || f.SizeBytes != size || f.Dst != v.eng[1].IP() {
		t.Fatalf("FCT record %+v", f)
	}
	rx := v.eng[1].RxFlows()
	if len(rx) != 1 || rx[0].Bytes != size || rx[0].Messages != 1 {
		t.Fatalf("receiver %+v, want %d bytes in 1 message", rx, size)
	}
	// Expected: 1024 full packets paced back to back at 10 Gb/s (frame + 24 B
	// each), the last one leaves after 1023 of them, then one delay there and
	// one back for its ACK.
	npk := int64(size / 1024)
	frame := int64(1024 + dataOverhead + phyOverhead)
	wantFCT := (npk-1)*frame*8/10 + 2*v.delay // ns at 10 Gb/s: bits / 10
	if d := f.FCTNs - wantFCT; d < 0 || d > npk {
		t.Fatalf("FCT %d ns, want %d (+ at most 1 ns a packet of rounding)", f.FCTNs, wantFCT)
	}
	wantIdeal := int64(4000) + int64(math.Ceil(float64(npk*frame*8)/10))
	if f.IdealNs != wantIdeal {
		t.Fatalf("ideal FCT %d, want %d", f.IdealNs, wantIdeal)
	}
	if s := f.Slowdown(); math.Abs(s-float64(f.FCTNs)/float64(wantIdeal)) > 1e-12 || s < 0.99 || s > 1.01 {
		t.Fatalf("slowdown %v", s)
	}
	_, tx := v.eng[0].Counters()
	if tx.DataFrames != uint64(npk) || tx.RetxFrames != 0 || tx.FlowsCompleted != 1 {
		t.Fatalf("tx counters %+v", tx)
	}
	if len(v.eng[0].ActiveFlows()) != 0 {
		t.Fatal("flow still active after completion")
	}
}

func TestLossRecovery(t *testing.T) {
	const size = 256 * 1024 // 256 packets
	tests := []struct {
		name     string
		ackEvery int
		drop     func(psn uint32, seen map[uint32]int, isData bool) bool
		wantNak  bool
		wantRTO  bool
	}{
		{name: "one data packet lost once", ackEvery: 1,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool { return d && psn == 10 && seen[psn] == 1 }, wantNak: true},
		{name: "data packet lost twice", ackEvery: 1,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool { return d && psn == 50 && seen[psn] <= 2 }, wantNak: true},
		{name: "burst of losses", ackEvery: 4,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool {
				return d && psn >= 100 && psn < 120 && seen[psn] == 1
			}, wantNak: true},
		{name: "last packet lost: timeout", ackEvery: 1,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool { return d && psn == 255 && seen[psn] == 1 }, wantRTO: true},
		{name: "ACKs lost", ackEvery: 1,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool { return !d && psn%3 != 0 }},
		{name: "every ACK of the tail lost once: timeout and re-ACK", ackEvery: 1,
			drop: func(psn uint32, seen map[uint32]int, d bool) bool { return !d && psn >= 200 && seen[psn] == 1 }, wantRTO: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := oneFlow("none", size, 0)
			b.AckEvery = tc.ackEvery
			a.RTONs, b.RTONs = 200_000, 200_000
			v := newVnet(t, a, b)
			seen := map[uint32]int{}
			seenAck := map[uint32]int{}
			v.onFrame = func(from int, fr *wire.Frame, _ []byte) bool {
				switch fr.Kind {
				case wire.KindData:
					seen[fr.BTH.PSN()]++
					return !tc.drop(fr.BTH.PSN(), seen, true)
				case wire.KindAck:
					seenAck[fr.BTH.PSN()]++
					return !tc.drop(fr.BTH.PSN(), seenAck, false)
				}
				return true
			}
			v.run(20_000_000)
			if len(v.eng[0].FCTs()) != 1 {
				t.Fatal("message did not complete")
			}
			rx := v.eng[1].RxFlows()
			if rx[0].Bytes != size {
				t.Fatalf("receiver has %d bytes, want %d", rx[0].Bytes, size)
			}
			rxc, _ := v.eng[1].Counters()
			_, txc := v.eng[0].Counters()
			if tc.wantNak && (rxc.NaksOwed == 0 || txc.NakRewinds == 0 || txc.RetxFrames == 0) {
				t.Fatalf("expected go-back-N: rx %+v tx %+v", rxc, txc)
			}
			if tc.wantRTO && txc.Timeouts == 0 {
				t.Fatalf("expected a timeout: %+v", txc)
			}
		})
	}
}

func TestRateCapVirtual(t *testing.T) {
	tests := []struct {
		capGbps float64
	}{{0.01}, {1}, {3.3}, {10}}
	for _, tc := range tests {
		a, b := oneFlow("none", 0, tc.capGbps)
		v := newVnet(t, a, b)
		v.run(20_000_000)
		rx := v.eng[1].RxFlows()[0]
		// The first frame opens the interval: count the bytes after it.
		got := float64(rx.FrameBytes-rx.FrameBytes/rx.Frames) * 8 / float64(rx.LastNs-rx.FirstNs)
		want := tc.capGbps
		if tc.capGbps == 10 {
			// At the line rate the ceiling counts 24 B of preamble, FCS and gap.
			want = 10 * float64(1024+dataOverhead) / float64(1024+dataOverhead+phyOverhead)
		}
		if math.Abs(got-want)/want > 0.005 {
			t.Errorf("cap %v Gb/s: measured %.4f Gb/s, want %.4f within 0.5%%", tc.capGbps, got, want)
		}
	}
}

func TestRatesAndFCTsRecorded(t *testing.T) {
	a, b := oneFlow("none", 0, 2)
	a.Flows = append(a.Flows, Flow{ID: 8, Dst: ipB, SizeBytes: 100_000, StartNs: 50_000})
	v := newVnet(t, a, b)
	v.run(1_000_000)
	var n7 int
	var sum7 float64
	for _, s := range v.eng[0].Samples() {
		if s.Flow == 7 && s.T > 100_000 {
			n7++
			sum7 += s.Gbps
		}
	}
	// Goodput: the payload share of each 2 Gb/s of frames.
	want := 2 * 1024 / float64(1024+dataOverhead)
	if n7 < 80 || math.Abs(sum7/float64(n7)-want) > 0.01 {
		t.Fatalf("flow 7: %d samples averaging %.3f Gb/s, want ~90 at %.3f", n7, sum7/float64(n7), want)
	}
	f := v.eng[0].FCTs()
	if len(f) != 1 || f[0].Flow != 8 || f[0].StartNs != 50_000 {
		t.Fatalf("FCTs %+v", f)
	}
}

// TestIncastAndStaticStarts: an incast group's round k starts at exactly
// StartNs + k x PeriodNs, in integers (the spec's times were float64 us:
// (10.001 + 2 x 200.003) x 1000, truncated, was 410,006 ns, not 410,007).
func TestIncastAndStaticStarts(t *testing.T) {
	a := testConfig("h1", ipA, "none")
	a.Incast = []Incast{{IDBase: 100, Dst: ipB, Flows: 4, SizeBytes: 20_000, StartNs: 10_001, Repeat: 3, PeriodNs: 200_003}}
	b := testConfig("h2", ipB, "none")
	v := newVnet(t, a, b)
	v.run(2_000_000)
	fcts := v.eng[0].FCTs()
	if len(fcts) != 12 {
		t.Fatalf("%d FCTs, want 12", len(fcts))
	}
	ids := map[int64]bool{}
	for _, f := range fcts {
		ids[f.Flow] = true
		round := (f.Flow - 100) / 4
		if f.StartNs != 10_001+round*200_003 {
			t.Fatalf("flow %d posted at %d", f.Flow, f.StartNs)
		}
		// Four flows share the NIC: each takes about 4x its ideal time.
		if s := f.Slowdown(); s < 1 || s > 5 {
			t.Fatalf("flow %d slowdown %v", f.Flow, s)
		}
	}
	for id := int64(100); id < 112; id++ {
		if !ids[id] {
			t.Fatalf("flow %d missing", id)
		}
	}
}

func TestQPSlotsReused(t *testing.T) {
	a := testConfig("h1", ipA, "none")
	a.MaxQPs = 2
	a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 10, SizeBytes: 5000}}
	b := testConfig("h2", ipB, "none")
	v := newVnet(t, a, b)
	v.run(1_000_000)
	if n := len(v.eng[0].FCTs()); n != 10 {
		t.Fatalf("%d of 10 flows completed through 2 QP slots", n)
	}
	rx := v.eng[1].RxFlows()
	var total uint64
	for _, f := range rx {
		total += f.Bytes
	}
	if len(rx) != 10 || total != 50_000 {
		t.Fatalf("receiver saw %d flows, %d bytes", len(rx), total)
	}
}

func TestWorkloadPoisson(t *testing.T) {
	a := testConfig("h1", ipA, "none")
	a.Workloads = []Workload{{IDBase: 1000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"), Dsts: []uint32{ipB}, Load: 0.3}}
	a.MaxQPs = 256
	b := testConfig("h2", ipB, "none")
	// Fewer entries than flows: completed ones are evicted once 4 RTOs old.
	b.MaxRxFlows = 8192
	v := newVnet(t, a, b)
	const dur = 20_000_000
	v.run(dur)
	cdf := mustCDF("../configs/workloads/fb_hadoop.cdf")
	iv := MeanInterarrivalNs(cdf.Mean(), 0.3, 10e9)
	want := dur / iv
	_, tx := v.eng[0].Counters()
	got := float64(tx.FlowsStarted)
	if math.Abs(got-want) > 5*math.Sqrt(want) {
		t.Fatalf("%v arrivals in %v ns, want %v +- 5 sigma", got, dur, want)
	}
	if rxc, _ := v.eng[1].Counters(); rxc.Evicted == 0 || rxc.FlowTableFull != 0 {
		t.Fatalf("receiver flow table: %+v", rxc)
	}
	if tx.FlowsCompleted+uint64(len(v.eng[0].ActiveFlows())) != tx.FlowsStarted {
		t.Fatalf("started %d, completed %d, active %d", tx.FlowsStarted, tx.FlowsCompleted, len(v.eng[0].ActiveFlows()))
	}
	var bytes int64
	for _, f := range v.eng[0].FCTs() {
		bytes += f.SizeBytes
		if f.Flow < 1000 || f.Slowdown() < 0.5 {
			t.Fatalf("bad record %+v", f)
		}
	}
	load := float64(bytes) * 8 / dur / 10
	if load < 0.15 || load > 0.5 {
		t.Fatalf("offered load %.3f, want about 0.3", load)
	}
}

func TestCDFSample(t *testing.T) {
	c, err := ParseCDF("t", "# comment\n100 0.5\n200 0.75\n1000 1\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		u    float64
		want int64
	}{{0, 100}, {0.25, 100}, {0.5, 100}, {0.625, 150}, {0.75, 200}, {0.875, 600}, {0.999999, 1000}}
	for _, tc := range tests {
		if got := c.Sample(tc.u); got != tc.want {
			t.Errorf("Sample(%v) = %d, want %d", tc.u, got, tc.want)
		}
	}
	if m, want := c.Mean(), 100*0.5+0.25*150+0.25*600; math.Abs(m-want) > 1e-9 {
		t.Errorf("Mean = %v, want %v", m, want)
	}
	for _, bad := range []string{"", "100 0.5\n", "100 0.5\n50 1\n", "100 0.7\n200 0.5\n300 1\n", "x 1\n", "100 1 3\n"} {
		if _, err := ParseCDF("bad", bad); err == nil {
			t.Errorf("ParseCDF(%q) accepted", bad)
		}
	}
}

// TestRPReactsToItsSignal drives each scheme's RP with the signal it reacts to,
// carried by real packets, and checks the pacing rate or window the sender
// applies.
func TestRPReactsToItsSignal(t *testing.T) {
	markCE := func(from int, fr *wire.Frame, _ []byte) bool {
		if from == 0 && fr.Kind == wire.KindData {
			fr.IP.SetECN(wire.ECNCE)
		}
		return true
	}
	var txBytes uint32
	stampINT := func(v *vnet) func(int, *wire.Frame, []byte) bool {
		return func(from int, fr *wire.Frame, _ []byte) bool {
			if from == 0 && fr.Kind == wire.KindData {
				if fr.INT == nil {
					t.Error("hpcc data packet without INT stack")
					return true
				}
				txBytes += uint32(len(fr.Eth))
				// A 10 Gb/s hop with 200 KB queued: U well above eta.
				fr.INT.Push(&ccalgo.INTHop{LinkBps: 10e9, TS: uint32(v.now % ccalgo.INTTSWrap),
					TxBytes: txBytes % ccalgo.INTTxBytesWrap, QLen: 200_000}, 1)
			}
			return true
		}
	}
	feedback := func(v *vnet, kind ccalgo.FeedbackKind, rateBps float64) {
		fs := v.eng[0].ActiveFlows()
		if len(fs) != 1 {
			t.Fatalf("%d active flows", len(fs))
		}
		ip, dst := uint32(ipA), uint32(ipB)
		fb := ccalgo.Feedback{Kind: kind, CPID: 0x0a0000fe,
			Flow:      ccalgo.FlowKey{SrcIP: ip, DstIP: dst, SrcPort: QPSrcPort(ip, dst, fs[0].QPN), DstPort: 4791, DestQP: fs[0].QPN},
			RateUnits: uint32(rateBps / 10e6), DeltaFBps: 10e6, Fb: 63, QOff: -100_000, QDelta: -10_000}
		ep := wire.Endpoints{SrcIP: 0x0a0000fe, DstIP: ip}
		b := make([]byte, 256)
		n, err := wire.BuildFeedback(b, &ep, &fb)
		if err != nil {
			t.Fatal(err)
		}
		v.inject(0, b[:n])
	}
	tests := []struct {
		scheme string
		setup  func(v *vnet)
		act    func(v *vnet) // after 200 us of clean running
		dur    int64         // then run this long (default 800 us)
		check  func(t *testing.T, before, after FlowState, rp ccalgo.ReactionPoint)
	}{
		{scheme: "none", setup: func(v *vnet) { v.onFrame = markCE },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if a.RateBps != 10e9 {
					t.Fatalf("none changed its rate to %v", a.RateBps)
				}
			}},
		{scheme: "dcqcn", act: func(v *vnet) { v.onFrame = markCE },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.RateBps < 0.6*b.RateBps) {
					t.Fatalf("rate %v -> %v after CNPs", b.RateBps, a.RateBps)
				}
			}},
		{scheme: "dctcp", act: func(v *vnet) { v.onFrame = markCE },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.Window < b.Window/2) {
					t.Fatalf("window %v -> %v after CE echoes", b.Window, a.Window)
				}
			}},
		{scheme: "acc", act: func(v *vnet) { v.onFrame = markCE },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.RateBps < b.RateBps) {
					t.Fatalf("rate %v -> %v after CE echoes", b.RateBps, a.RateBps)
				}
			}},
		{scheme: "hpcc", act: func(v *vnet) { v.onFrame = stampINT(v) },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.Window < b.Window/2) {
					t.Fatalf("window %v -> %v after INT with a long queue", b.Window, a.Window)
				}
			}},
		{scheme: "timely", act: func(v *vnet) { v.delay = 30_000 },
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.RateBps < b.RateBps) {
					t.Fatalf("rate %v -> %v after the RTT grew", b.RateBps, a.RateBps)
				}
			}},
		{scheme: "rcc",
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if a.Window == ccalgo.NoWindow || a.Window <= 0 {
					t.Fatalf("no window assigned by the receiver: %v", a.Window)
				}
			}},
		{scheme: "rocc", act: func(v *vnet) { feedback(v, ccalgo.FeedbackRoCCRate, 3e9) },
			dur: 5_000,
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if b.RateBps != 10e9 || a.RateBps != 3e9 {
					t.Fatalf("rate %v -> %v, want 10e9 -> 3e9", b.RateBps, a.RateBps)
				}
			}},
		{scheme: "p4qcn", act: func(v *vnet) { feedback(v, ccalgo.FeedbackP4QCN, 0) },
			dur: 5_000,
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.RateBps < b.RateBps) {
					t.Fatalf("rate %v -> %v after feedback", b.RateBps, a.RateBps)
				}
			}},
		{scheme: "qcn", act: func(v *vnet) { feedback(v, ccalgo.FeedbackQCN, 0) },
			dur: 5_000,
			check: func(t *testing.T, b, a FlowState, _ ccalgo.ReactionPoint) {
				if !(a.RateBps < 0.6*b.RateBps) {
					t.Fatalf("rate %v -> %v after |Fb| = 63", b.RateBps, a.RateBps)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.scheme, func(t *testing.T) {
			a, b := oneFlow(tc.scheme, 0, 0)
			v := newVnet(t, a, b)
			if tc.setup != nil {
				tc.setup(v)
			}
			v.run(200_000)
			before := v.eng[0].ActiveFlows()[0]
			if tc.act != nil {
				tc.act(v)
			}
			if tc.dur == 0 {
				tc.dur = 800_000
			}
			v.run(200_000 + tc.dur)
			after := v.eng[0].ActiveFlows()[0]
			tc.check(t, before, after, v.eng[0].RP(7))
			if rxc, _ := v.eng[1].Counters(); rxc.InOrder == 0 {
				t.Fatal("nothing received")
			}
		})
	}
}

func TestDCQCNCNPPacing(t *testing.T) {
	// The receiver is DCQCN's NP; the sender ignores CNPs, so every packet
	// at line rate arrives marked.
	a, b := oneFlow("none", 0, 0)
	b.Scheme = "dcqcn"
	v := newVnet(t, a, b)
	v.onFrame = func(from int, fr *wire.Frame, _ []byte) bool {
		if from == 0 && fr.Kind == wire.KindData {
			fr.IP.SetECN(wire.ECNCE)
		}
		return true
	}
	v.run(1_000_000)
	rxc, _ := v.eng[1].Counters()
	// Every packet is marked: one CNP per 50 us, the first at the first packet.
	if rxc.CNPsOwed < 19 || rxc.CNPsOwed > 21 {
		t.Fatalf("%d CNPs in 1 ms, want 20 (one per 50 us)", rxc.CNPsOwed)
	}
	if rxa, _ := v.eng[0].Counters(); rxa.CNPs != rxc.CNPsOwed {
		t.Fatalf("sender received %d CNPs of %d", rxa.CNPs, rxc.CNPsOwed)
	}
}

func TestStaleAndMalformed(t *testing.T) {
	a, b := oneFlow("none", 10_000, 0)
	v := newVnet(t, a, b)
	v.run(1_000_000)
	e := v.eng[0]
	var out Controls
	// Truncated, garbage, and a well-formed ACK for a QP that is gone.
	for _, f := range [][]byte{{1, 2, 3}, make([]byte, 100)} {
		if e.Receive(v.now, f, &out) != 0 {
			t.Fatal("control owed for garbage")
		}
	}
	ep := wire.Endpoints{SrcIP: ipA + 1, DstIP: ipA}
	buf := make([]byte, 256)
	n, _ := wire.BuildAck(buf, &ep, &wire.AckSpec{DestQP: 0x123456, PSN: 5, Syndrome: wire.SyndromeAckNoCred}, &ccalgo.AckFields{})
	e.Receive(v.now, buf[:n], &out)
	e.Service(v.now)
	rxc, txc := e.Counters()
	if rxc.Malformed+rxc.Other != 2 || txc.StaleEvents != 1 {
		t.Fatalf("rx %+v tx %+v", rxc, txc)
	}
}

// TestSpecErrors: NewEngine refuses a bad spec with a *SpecError at the
// field's file key.
func TestSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *Spec)
		key  string
	}{
		{"bad scheme", func(c *Spec) { c.Scheme = "nope" }, "scheme"},
		{"negative size", func(c *Spec) { c.Flows = []Flow{{Dst: ipB, SizeBytes: -1}} }, "flows[0].size_bytes"},
		{"incast no flows", func(c *Spec) { c.Incast = []Incast{{Dst: ipB, SizeBytes: 1}} }, "incast[0].flows"},
		{"workload no cdf", func(c *Spec) {
			c.Workloads = []Workload{{Dsts: []uint32{ipB}, Load: 0.5}}
		}, "workloads[0].cdf"},
		{"workload no dsts", func(c *Spec) {
			c.Workloads = []Workload{{CDF: mustCDF("../configs/workloads/websearch.cdf"), Load: 0.5}}
		}, "workloads[0].dsts"},
		{"workload load", func(c *Spec) {
			c.Workloads = []Workload{{CDF: mustCDF("../configs/workloads/websearch.cdf"), Dsts: []uint32{ipB}, Load: 2}}
		}, "workloads[0].load"},
		{"mtu", func(c *Spec) { c.MTUBytes = 10_000 }, "mtu_bytes"},
		{"trust", func(c *Spec) { c.Trust = "some" }, "trust"},
		{"params of another scheme", func(c *Spec) { c.Scheme, c.Params = "dcqcn", new(int) }, "cc"},
	}
	for _, tc := range tests {
		c := testConfig("h1", ipA, "none")
		tc.mod(&c)
		_, err := NewEngine(c, 0)
		var se *SpecError
		if !errors.As(err, &se) || se.Key != tc.key {
			t.Errorf("%s: error %v, want a SpecError at %s", tc.name, err, tc.key)
		}
	}
}

// TestRTOBackoff: while every ACK is lost the sender times out at rto, then 2,
// 4, 8 ... x rto (at most 64 x), instead of resending its window every rto; once
// ACKs get through again the message completes.
func TestRTOBackoff(t *testing.T) {
	const size = 16 * 1024
	a, b := oneFlow("none", size, 0)
	a.RTONs, b.RTONs = 200_000, 200_000
	v := newVnet(t, a, b)
	var dataTimes []int64
	blackout := int64(30_000_000) // 30 ms without ACKs
	v.onFrame = func(from int, fr *wire.Frame, _ []byte) bool {
		switch fr.Kind {
		case wire.KindData:
			if fr.BTH.PSN() == 0 {
				dataTimes = append(dataTimes, v.now)
			}
		case wire.KindAck, wire.KindNak:
			return v.now > blackout
		}
		return true
	}
	v.run(100_000_000)
	if len(v.eng[0].FCTs()) != 1 {
		t.Fatal("message did not complete after the blackout")
	}
	_, txc := v.eng[0].Counters()
	// Without backoff: 30 ms / 0.2 ms = 150 timeouts. With it: 0.2, 0.6, 1.4,
	// 3, 6.2, 12.6, 25.4 ms, then every 12.8 ms: about 8.
	if txc.Timeouts < 5 || txc.Timeouts > 12 {
		t.Fatalf("%d timeouts in a 30 ms blackout with rto 200 us", txc.Timeouts)
	}
	for i := 2; i < len(dataTimes) && i < 6; i++ {
		if gap, prev := dataTimes[i]-dataTimes[i-1], dataTimes[i-1]-dataTimes[i-2]; gap < prev*3/2 {
			t.Fatalf("resend %d after %d ns, previous gap %d ns: no backoff (%v)", i, gap, prev, dataTimes)
		}
	}
}

// TestTablesGrowByUse: a host bounded at 100 QPs and 200 receiver flows that
// runs 40 flows at once to its peer holds 64 QP slots and 64 receiver slots
// (doubled from 16 as the flows came), gives its flows the slots and QP
// numbers that tables allocated whole would (slots 0..39, first generation),
// and completes them all.
func TestTablesGrowByUse(t *testing.T) {
	a, b := testConfig("h1", ipA, "dcqcn"), testConfig("h2", ipB, "dcqcn")
	a.MaxQPs, b.MaxRxFlows = 100, 200
	a.Incast = []Incast{{IDBase: 0, Dst: ipB, Flows: 40, SizeBytes: 20_000}}
	v := newVnet(t, a, b)
	v.run(1)
	ea, eb := v.eng[0], v.eng[1]
	if n := len(ea.active); n != 40 {
		t.Fatalf("%d QPs active, want 40", n)
	}
	for _, qp := range ea.active {
		s := &ea.qps[qp]
		if qp >= 40 || s.qpn != 1<<ea.sender.genShift|uint32(qp) {
			t.Fatalf("slot %d has QP number %#x, want slots 0..39 of the first generation", qp, s.qpn)
		}
	}
	if len(ea.qps) != 64 || ea.sched.MaxQPs() != 64 || len(ea.timers.pos) != 64 {
		t.Fatalf("%d QP slots (pacer %d, timers %d), want 64", len(ea.qps), ea.sched.MaxQPs(), len(ea.timers.pos))
	}
	v.run(5_000_000)
	if len(eb.rflows) != 64 || len(eb.RxFlows()) != 40 {
		t.Fatalf("receiver: %d slots, %d flows, want 64 and 40", len(eb.rflows), len(eb.RxFlows()))
	}
	if n := len(ea.FCTs()); n != 40 {
		t.Fatalf("%d flows completed, want 40", n)
	}
}
