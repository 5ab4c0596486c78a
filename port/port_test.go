package port_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/port"
)

func TestMain(m *testing.M) {
	dpdktest.Main(m, "port", dpdktest.Args(256, "0"))
}

var vdevSeq atomic.Int32

// ringVdev probes a net_ring device of its own for one run of a test (a
// lone net_ring loops what it sends into its receive queue) and removes it
// at cleanup if the test did not: closing a port removes its device, so a
// device made once at EAL start would be gone for the next run of -count.
func ringVdev(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("net_ring_t%d", vdevSeq.Add(1))
	if err := dpdk.CreateVdev(name, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p, err := dpdk.EthPortByName(name); err == nil {
			p.Stop()
			p.Close()
		}
	})
	return name
}

// sendRecv pushes a burst through tx and reads it back from rx, checking bytes.
func sendRecv(t *testing.T, mp *dpdk.Mempool, tx, rx port.Port) {
	t.Helper()
	b := dpdk.NewBurst(16)
	defer b.Free()
	if err := mp.AllocBulk(b.Pkts); err != nil {
		t.Fatal(err)
	}
	for i, m := range b.Pkts {
		r := m.Room()
		for j := 0; j < 64; j++ {
			r[j] = byte(i + j)
		}
		m.SetLen(64)
	}
	if n := tx.TxBurst(b.Pkts); n != 16 {
		dpdk.FreeBulk(b.Pkts[n:])
		t.Fatalf("TxBurst took %d of 16", n)
	}
	n := rx.RxBurst(b.Pkts)
	defer dpdk.FreeBulk(b.Pkts[:n])
	if n != 16 {
		t.Fatalf("RxBurst got %d of 16", n)
	}
	for i, m := range b.Pkts[:n] {
		if d := m.Data(); len(d) != 64 || d[0] != byte(i) || d[63] != byte(i+63) {
			t.Fatalf("packet %d corrupted", i)
		}
	}
}

func TestEthQueueAndRingPair(t *testing.T) {
	mp, err := dpdk.NewPktMbufPool("port_pool", 511, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	dev := ringVdev(t)
	if _, err := port.StartEth(port.EthConfig{Name: dev}); err == nil {
		t.Fatal("StartEth without a pool accepted")
	}
	if _, err := port.StartEth(port.EthConfig{Name: "no_such_dev", Pool: mp}); err == nil {
		t.Fatal("StartEth of a missing device accepted")
	}
	id, err := port.StartEth(port.EthConfig{Name: dev, Pool: mp, RxDesc: 128, TxDesc: 128})
	if err != nil {
		t.Fatal(err)
	}
	eq := port.EthQueue{Port: id}
	sendRecv(t, mp, eq, eq) // a lone net_ring vdev loops tx into rx

	a, err := dpdk.NewRing("port_a", 64, dpdk.SocketAny, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := dpdk.NewRing("port_b", 64, dpdk.SocketAny, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	left, right := port.RingPair{Rx: a, Tx: b}, port.RingPair{Rx: b, Tx: a}
	sendRecv(t, mp, left, right)
	sendRecv(t, mp, right, left)

	scratch := dpdk.NewBurst(8)
	defer scratch.Free()
	if n := port.Drain(eq, scratch.Pkts); n != 0 {
		t.Fatalf("Drain found %d stray packets", n)
	}
	if err := id.Stop(); err != nil {
		t.Fatal(err)
	}
	if in := mp.InUse(); in != 0 {
		t.Fatalf("%d mbufs not returned", in)
	}
}

func TestStartedClosesEveryPort(t *testing.T) {
	mp, err := dpdk.NewPktMbufPool("started_pool", 511, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	dev := ringVdev(t)
	var s port.Started
	if _, err := s.Start(port.EthConfig{Name: "no_such_dev", Pool: mp}); err == nil {
		t.Fatal("started a missing device")
	}
	p, err := s.Start(port.EthConfig{Name: dev, Pool: mp, RxDesc: 128, TxDesc: 128})
	if err != nil {
		t.Fatal(err)
	}
	sendRecv(t, mp, port.EthQueue{Port: p}, port.EthQueue{Port: p})
	// Leave frames waiting on the port: Close must drain them before it stops
	// the port (receiving from a stopped port is a DPDK error and a stack dump).
	b := dpdk.NewBurst(4)
	defer b.Free()
	if err := mp.AllocBulk(b.Pkts); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Pkts {
		m.SetLen(64)
	}
	if n := p.TxBurst(0, b.Pkts); n != 4 {
		t.Fatalf("TxBurst took %d of 4", n)
	}
	s.Close()
	if _, err := dpdk.EthPortByName(dev); err == nil {
		t.Fatalf("%s still exists after Close", dev)
	}
	if in := mp.InUse(); in != 0 {
		t.Fatalf("%d mbufs not returned", in)
	}
	s.Close() // a second Close does nothing
}
