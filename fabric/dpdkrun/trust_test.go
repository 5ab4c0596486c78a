package dpdkrun

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

// forgingPort is a host's port that also sends frame every period from time
// from to time until (TSC ns), as the NIC of a host forging frames would: the
// host's engine runs as ever, and the forgeries leave beside its own frames.
// It forges when its loop polls it (RxBurst, every poll), not once the loops
// stopped (the host's Close drains the port through RxBurst: the run may
// stop a hair before until, its context's clock against the TSC's).
type forgingPort struct {
	port.Port
	pool                *dpdk.Mempool
	clock               *lcore.TSCClock
	stopped             *atomic.Bool
	frame               []byte
	next, period, until int64
	one                 []*dpdk.Mbuf
	sent                atomic.Uint64
}

func (p *forgingPort) RxBurst(pkts []*dpdk.Mbuf) int {
	if now := p.clock.Now(); now >= p.next && now < p.until && !p.stopped.Load() {
		p.next += p.period
		if p.pool.AllocBulk(p.one) == nil {
			m := p.one[0]
			m.SetLen(copy(m.Room(), p.frame))
			if p.Port.TxBurst(p.one) == 1 {
				p.sent.Add(1)
			} else {
				dpdk.FreeBulk(p.one)
			}
		}
	}
	return p.Port.RxBurst(pkts)
}

// ackedRate is the rate at which host h's one flow had its payload
// acknowledged between its first rate sample at or after from and its last
// at or before to (experiment time), bits/s: each sample's rate over the time
// since the host's previous sample, over the span those samples cover rather
// than the window's length (fabric.Result.Goodput).
func ackedRate(r *fabric.Result, h int, from, to int64) float64 {
	bits := 0.0
	first, last, prev := int64(-1), int64(-1), int64(-1)
	for _, s := range r.Hosts[h].Samples() {
		t := s.T - r.T0Ns
		if prev >= from && t <= to {
			if first < 0 {
				first = prev
			}
			bits += s.Gbps * float64(t-prev) // Gb/s x ns: bits
			last = t
		}
		prev = t
	}
	if last <= first {
		return 0
	}
	return bits * 1e9 / float64(last-first)
}

// TestForgedDataFramesDPDK is fabric's TestForgedDataFrames on the DPDK
// driver (net_ring cables, the real engines in one loop on lcore 0): host 2
// forges 5,000 data frames a second with host 0's address and QP and a PSN 4
// Mi packets ahead toward host 1, while host 0 sends one flow to host 1 and
// host 3 another to host 4, each at 1 Gb/s (a 100 us RTT). The unattacked
// flow is the victim's baseline in the same run: one loop runs every engine,
// so the time the loop is off its CPU on a shared machine costs both flows
// alike, where two runs would each get their own share. Trusted by
// topology, the switch refuses every forgery (refused_data at host 2's port),
// host 1 sees no gap, host 0 never goes back, and the victim's goodput is
// within 5 % of the baseline's. Trusting all, the forgeries reach host 1 and
// its NAKs send host 0 back.
func TestForgedDataFramesDPDK(t *testing.T) {
	const (
		bps     = 1e9
		delayNs = 25_000      // per link: a 100 us RTT, ~12 KB in flight
		runNs   = 200_000_000 // the run
		from    = 10_000_000  // forging starts; goodput over (from, runNs]
		period  = 200_000     // 5,000 frames a second
		forger  = 2
	)
	plan := func(trustAll bool) *fabric.Plan {
		s := &fabric.Spec{Topo: fabric.Star(5, bps, delayNs), Scheme: "none", TrustAll: trustAll, SampleNs: 1_000_000,
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 1}, {ID: 2, Src: 3, Dst: 4}}}
		p, err := s.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The victim's QP number, as an attacker predicts it: the same plan's
	// first flow of host 0 in virtual time.
	v, err := fabric.NewVirtual(plan(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Run(context.Background(), 100_000, nil); err != nil {
		t.Fatal(err)
	}
	qpn := v.Result().Hosts[0].ActiveFlows()[0].QPN
	b := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: fabric.SwitchPortMAC(0, forger), SrcMAC: fabric.HostMAC(0), SrcIP: fabric.HostIP(0),
		DstIP: fabric.HostIP(1), SrcPort: hostd.QPSrcPort(fabric.HostIP(0), fabric.HostIP(1), qpn), DSCP: fabric.DefaultPriority << 3}
	n, err := wire.BuildData(b, &ep, &wire.DataSpec{Opcode: wire.OpSendMiddle, DestQP: qpn, PSN: 1 << 22, PayloadLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	forged := b[:n]

	for _, trustAll := range []bool{false, true} {
		name := "trusted"
		if trustAll {
			name = "trust-all"
		}
		t.Run(name, func(t *testing.T) {
			var fp *forgingPort
			// Forgeries still on host 2's cable when the loops stopped:
			// sent after the switch's last poll of that port, never seen.
			inFlight := 0
			swNode := len(plan(trustAll).Topo.Hosts)
			opt := Options{SwitchLcore: 0, DurationNs: runNs,
				leftOver: func(node, p int, frame []byte) {
					if node == swNode && p == forger && string(frame) == string(forged) {
						inFlight++
					}
				},
				wrapHostPort: func(i int, p port.Port, pool *dpdk.Mempool, clock *lcore.TSCClock, t0 int64, stopped *atomic.Bool) port.Port {
					if i != forger {
						return p
					}
					fp = &forgingPort{Port: p, pool: pool, clock: clock, stopped: stopped, frame: forged, next: t0 + from, period: period,
						until: t0 + runNs, one: make([]*dpdk.Mbuf, 1)}
					return fp
				}}
			o, err := Run(context.Background(), plan(trustAll), opt)
			if err != nil {
				t.Fatal(err)
			}
			if o.MbufsLeaked != 0 {
				t.Errorf("%d mbufs leaked", o.MbufsLeaked)
			}
			got, base := ackedRate(o.Result, 0, from, runNs), ackedRate(o.Result, 3, from, runNs)
			sent := fp.sent.Load()
			refused := o.Port(0, forger).RefusedData
			rx, _ := o.Hosts[1].Counters()
			_, tx := o.Hosts[0].Counters()
			share := got / base
			t.Logf("victim %.4f Gb/s, baseline flow %.4f Gb/s (%.3f); %d forged, %d refused at the switch; "+
				"%d in flight at the end; host 1: %d out of order, %d NAKs owed; host 0: %d go-backs; longest stall %.1f ms",
				got/1e9, base/1e9, share, sent, refused, inFlight, rx.OutOfOrder, rx.NaksOwed, tx.NakRewinds, float64(o.Loops[0].MaxStallNs)/1e6)
			// 190 ms of forging at 5,000 a second, 950 frames; a loop off
			// its CPU catches up one frame a poll, and sends none due
			// after its last poll before the end: what its longest
			// stall left unsent (due in a stall across the end, and the
			// backlog of the stall before) is at most two stalls' worth.
			maxStall := o.Loops[0].MaxStallNs
			if want := int64((runNs-from)/period) - 2*(maxStall/period+1); int64(sent) < want || base < 0.1*bps {
				t.Fatalf("%d frames forged (longest stall %.1f ms), baseline %.3f Gb/s: want %d or more and a flow",
					sent, float64(maxStall)/1e6, base/1e9, want)
			}
			if trustAll {
				if refused != 0 || tx.NakRewinds == 0 || share > 0.95 {
					t.Errorf("trusting all: %d refused, %d go-backs, goodput %.3f of the baseline: want none refused, the flow harmed",
						refused, tx.NakRewinds, share)
				}
				return
			}
			// A forgery sent in the loop's last pass (the switch polls its
			// ports before the hosts) is still on the cable at the stop,
			// where the run frees it: every other one the switch saw and
			// refused.
			if refused+uint64(inFlight) != sent || inFlight > 1 || rx.OutOfOrder != 0 || tx.NakRewinds != 0 || share < 0.95 {
				t.Errorf("trusted: %d of %d forgeries refused, %d in flight at the end, %d out of order at host 1, %d go-backs, goodput %.3f of the baseline: "+
					"want all refused but at most one in flight, none, none, within 5 %%", refused, sent, inFlight, rx.OutOfOrder, tx.NakRewinds, share)
			}
		})
	}
}
