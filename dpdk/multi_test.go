package dpdk_test

import (
	"testing"

	"github.com/ccbed/ccbed/dpdk"
)

// multiCables makes two cables of 64-slot rings (63 usable) and returns the
// sending ends and the receiving ends as MultiPorts of per packets; prefix
// makes the cable names unique in the process.
func multiCables(t *testing.T, prefix string, mp *dpdk.Mempool, per int) (tx, rx *dpdk.MultiPort) {
	t.Helper()
	var send, recv []dpdk.PortQueue
	for _, c := range []string{"a", "b"} {
		a, b := newCable(t, prefix+c+"_tx", prefix+c+"_rx", 64)
		send = append(send, dpdk.PortQueue{Port: startPort(t, a.Name(), mp)})
		recv = append(recv, dpdk.PortQueue{Port: startPort(t, b.Name(), mp)})
	}
	tx, err := dpdk.NewMultiPort(send, per)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Free)
	rx, err = dpdk.NewMultiPort(recv, per)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rx.Free)
	return tx, rx
}

// fill allocates n mbufs into seg, each tagged with tag+k in its first byte.
func fill(t *testing.T, mp *dpdk.Mempool, seg []*dpdk.Mbuf, n int, tag byte) {
	t.Helper()
	if n == 0 {
		return
	}
	if err := mp.AllocBulk(seg[:n]); err != nil {
		t.Fatal(err)
	}
	for k, m := range seg[:n] {
		m.Room()[0] = tag + byte(k)
		m.SetLen(60)
	}
}

func TestMultiPort(t *testing.T) {
	mp := newPool(t, "p_multi", 1023, dpdk.MbufDefaultDataRoom)
	const per = 64
	tx, rx := multiCables(t, "mc", mp, per)
	if _, err := dpdk.NewMultiPort(nil, 32); err == nil {
		t.Error("no pairs: want an error")
	}
	for _, tc := range []struct {
		name       string
		want       [2]int
		freeUnsent bool
	}{
		{"one port", [2]int{5, 0}, false},
		{"both ports", [2]int{7, 30}, false},
		{"full ring, freed", [2]int{per, 2}, true},
		{"full ring, kept", [2]int{1, per}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, w := range tc.want {
				fill(t, mp, tx.Segment(i), w, byte(16*i))
				tx.Count[i] = uint16(w)
			}
			total := tx.TxBurst(tc.freeUnsent)
			sum := 0
			for i, w := range tc.want {
				s := int(tx.Sent[i])
				sum += s
				if s > w || s < min(w, 63) {
					t.Errorf("pair %d sent %d of %d", i, s, w)
				}
				if !tc.freeUnsent && s < w {
					dpdk.FreeBulk(tx.Segment(i)[s:w])
				}
			}
			if total != sum {
				t.Errorf("total %d, sum of Sent %d", total, sum)
			}
			if in := mp.InUse(); in != sum {
				t.Errorf("%d mbufs in use, %d in the rings", in, sum)
			}
			got := rx.RxBurst()
			if got != sum {
				t.Errorf("received %d, sent %d", got, sum)
			}
			for i := range tc.want {
				n := int(rx.Count[i])
				if n != int(tx.Sent[i]) {
					t.Errorf("pair %d received %d, sent %d", i, n, tx.Sent[i])
				}
				for k, m := range rx.Segment(i)[:n] {
					if m.Data()[0] != byte(16*i+k) {
						t.Errorf("pair %d packet %d: tag %d", i, k, m.Data()[0])
					}
					if f := rx.Frame(i*rx.Per + k); &f[0] != &m.Data()[0] || len(f) != len(m.Data()) {
						t.Errorf("pair %d packet %d: Frame is %d bytes at %p, Data %d at %p", i, k, len(f), &f[0], len(m.Data()), &m.Data()[0])
					}
				}
				dpdk.FreeBulk(rx.Segment(i)[:n])
			}
			if in := mp.InUse(); in != 0 {
				t.Errorf("%d mbufs still in use", in)
			}
		})
	}
}

func TestMultiPortAllocatesNothing(t *testing.T) {
	mp := newPool(t, "p_multi_alloc", 511, dpdk.MbufDefaultDataRoom)
	tx, rx := multiCables(t, "mca", mp, 8)
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < tx.Len(); i++ {
			if mp.AllocBulk(tx.Segment(i)) != nil {
				panic("pool empty")
			}
			tx.Count[i] = 8
		}
		tx.TxBurst(true)
		rx.RxBurst()
		for i := 0; i < rx.Len(); i++ {
			dpdk.FreeBulk(rx.Segment(i)[:rx.Count[i]])
		}
	})
	if allocs != 0 {
		t.Fatalf("multi-port bursts allocate %.1f times per run", allocs)
	}
}
