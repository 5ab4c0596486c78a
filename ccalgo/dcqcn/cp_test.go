package dcqcn_test

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/cctest"
	"github.com/ccbed/ccbed/ccalgo/dcqcn"
)

// TestCPMarkAt: mark_at picks the hook that runs RED, on the queue the packet
// finds at enqueue (port.QueueBytes holds it too) or leaves behind at
// dequeue; the other hook never marks, and PacketHooks reports the marking one
// alone. The default is dequeue.
func TestCPMarkAt(t *testing.T) {
	if p := dcqcn.DefaultParams(env40); p.MarkAt != ccalgo.MarkAtDequeue {
		t.Fatalf("default mark_at %q, want %q", p.MarkAt, ccalgo.MarkAtDequeue)
	}
	pkt := ccalgo.DataPacket{WireBytes: 1066}
	for _, at := range []string{ccalgo.MarkAtEnqueue, ccalgo.MarkAtDequeue} {
		t.Run(at, func(t *testing.T) {
			p := dcqcn.DefaultParams(env40) // Kmin 5 KB, Kmax 200 KB
			p.MarkAt = at
			cp := cctest.Must[*dcqcn.CP](t)(dcqcn.NewCP(p, env40))
			cctest.CheckMarkAt(t, cp, at, &pkt, []cctest.MarkCase{
				{Q: 0, Want: ccalgo.MarkNone}, {Q: 5_000, Want: ccalgo.MarkNone}, {Q: 200_001, Want: ccalgo.MarkCE}, {Q: 1 << 20, Want: ccalgo.MarkCE}})
			// Between Kmin and Kmax: RED's probability, in the marking hook only.
			const q, n = 100_000, 200_000
			marked := 0
			for range n {
				port := ccalgo.PortState{QueueBytes: q}
				if at == ccalgo.MarkAtEnqueue {
					port.QueueBytes += int64(pkt.WireBytes)
					if cp.OnEnqueue(0, &pkt, &port, nil).Mark == ccalgo.MarkCE {
						marked++
					}
				} else if cp.OnDequeue(0, &pkt, &port, nil).Mark == ccalgo.MarkCE {
					marked++
				}
			}
			want := cp.MarkProbability(q)
			if got := float64(marked) / n; got < 0.9*want || got > 1.1*want {
				t.Errorf("marked %.5f of packets at q = %d, want %.5f", got, q, want)
			}
		})
	}
}

// TestCPMarkAtAllocs: neither hook allocates, at either place.
func TestCPMarkAtAllocs(t *testing.T) {
	for _, at := range []string{ccalgo.MarkAtEnqueue, ccalgo.MarkAtDequeue} {
		p := dcqcn.DefaultParams(env40)
		p.MarkAt = at
		cp, err := dcqcn.NewCP(p, env40)
		if err != nil {
			t.Fatal(err)
		}
		port := ccalgo.PortState{}
		pkt := ccalgo.DataPacket{WireBytes: 1066}
		var now int64
		if a := testing.AllocsPerRun(1000, func() {
			now++
			port.QueueBytes = now * 97 % 250_000
			cp.OnEnqueue(now, &pkt, &port, nil)
			cp.OnDequeue(now, &pkt, &port, nil)
		}); a != 0 {
			t.Errorf("mark_at %s: %v allocs per packet", at, a)
		}
	}
}
