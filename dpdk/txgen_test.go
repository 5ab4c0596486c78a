package dpdk_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
)

// txgenSpec is a UDP-like spec: two sizes (60 and 100 bytes, scheduled 0 1 1),
// three flows, a 58-byte header with a valid IPv4 header at 14 (checksum and
// addresses patched), ports at 34, a flow tag at 44, a sequence number at
// 46, a time at 50.
func txgenSpec() *dpdk.TxGenSpec {
	s := &dpdk.TxGenSpec{Schedule: []uint16{0, 1, 1}}
	for _, size := range []int{60, 100} {
		h := make([]byte, 58)
		for i := range h {
			h[i] = byte(0xa0 + i)
		}
		ip := h[14:34]
		copy(ip, []byte{0x45, 0, byte((size - 14) >> 8), byte(size - 14), 0, 0, 0x40, 0, 64, 17, 0, 0})
		clear(ip[12:20])
		sum := uint32(0)
		for i := 0; i < 10; i += 2 {
			sum += uint32(ip[i])<<8 | uint32(ip[i+1])
		}
		s.Classes = append(s.Classes, dpdk.TxGenClass{Size: size, Header: h, IPSum: sum})
	}
	for i := range 3 {
		f := dpdk.TxGenFlow{SrcIP: 0x0a000001 + uint32(i), DstIP: 0x0a0000ff, SrcPort: 1024 + uint16(i), DstPort: 9, Tag: 0x1c0 + uint16(i)}
		f.IPSum = f.SrcIP>>16 + f.SrcIP&0xffff + f.DstIP>>16 + f.DstIP&0xffff
		s.Flows = append(s.Flows, f)
	}
	s.Offsets = dpdk.TxGenOffsets{IPv4: 14, UDP: 34, Seq32: 46, Time64: 50, Time64b: -1, QP24: -1, PSN24: -1, Tag16: 44}
	return s
}

// checkFrame checks frame d: packet i of a burst from cursor c at time now,
// of flow f.
func checkFrame(t *testing.T, spec *dpdk.TxGenSpec, d []byte, i int, c dpdk.TxGenCursor, f int, now int64) {
	t.Helper()
	cl := spec.Classes[spec.Schedule[(c.Pos+i)%len(spec.Schedule)]]
	fl := spec.Flows[f]
	if len(d) != cl.Size {
		t.Fatalf("packet %d: %d bytes, want %d", i, len(d), cl.Size)
	}
	want := append([]byte(nil), cl.Header...)
	binary.BigEndian.PutUint32(want[26:], fl.SrcIP)
	binary.BigEndian.PutUint32(want[30:], fl.DstIP)
	binary.BigEndian.PutUint16(want[34:], fl.SrcPort)
	binary.BigEndian.PutUint16(want[36:], fl.DstPort)
	binary.BigEndian.PutUint16(want[44:], fl.Tag)
	binary.BigEndian.PutUint32(want[46:], uint32(c.Seq+uint64(i)))
	binary.BigEndian.PutUint64(want[50:], uint64(now))
	copy(want[24:26], d[24:26]) // the checksum, checked below
	if string(d[:58]) != string(want) {
		t.Fatalf("packet %d:\n got % x\nwant % x", i, d[:58], want)
	}
	sum := uint32(0)
	for j := 14; j < 34; j += 2 {
		sum += uint32(d[j])<<8 | uint32(d[j+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	if sum != 0xffff {
		t.Fatalf("packet %d: IPv4 checksum does not verify (sum %#x)", i, sum)
	}
}

// TestTxGen sends template-built bursts on a looped-back net_ring and checks
// every received frame: size by the schedule, flow in turn or by the picks,
// header patches and checksum, sequence numbers across the 32-bit wrap;
// then a full ring (the unsent packets stay the caller's, with their lengths),
// an empty pool and the constructor's checks.
func TestTxGen(t *testing.T) {
	mp := newPool(t, "p_txgen", 2047, dpdk.MbufDefaultDataRoom)
	p := startPort(t, "net_ring0", mp)
	spec := txgenSpec()
	tg, err := dpdk.NewTxGen(mp, p, 0, spec, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Free()
	b := dpdk.NewBurst(32)
	defer b.Free()
	rx := dpdk.NewBurst(64)
	defer rx.Free()

	for _, picks := range []bool{false, true} {
		c := dpdk.TxGenCursor{Pos: 1, Flow: 2, Seq: 1<<32 - 3}
		const now = 0x0102030405060708
		if picks {
			for i := range tg.Picks {
				tg.Picks[i] = uint16(i*7) % 4 // 3 is outside the flows: flow 0
			}
		}
		n, sentBytes, built, err := tg.Send(b.Pkts[:20], now, c, picks)
		if err != nil || n != 20 {
			t.Fatalf("Send: %d, %v", n, err)
		}
		if sentBytes != built {
			t.Fatalf("sent %d bytes of %d built", sentBytes, built)
		}
		got := p.RxBurst(0, rx.Pkts)
		if got != 20 {
			dpdk.FreeBulk(rx.Pkts[:got])
			t.Fatalf("received %d, want 20", got)
		}
		var total uint64
		for i, m := range rx.Pkts[:got] {
			f := (c.Flow + i) % 3
			if picks {
				if f = int(tg.Picks[i]); f >= 3 {
					f = 0
				}
			}
			total += uint64(m.Len())
			checkFrame(t, spec, m.Data(), i, c, f, now)
		}
		dpdk.FreeBulk(rx.Pkts[:got])
		if total != built {
			t.Fatalf("received %d bytes, built %d", total, built)
		}
	}

	// Fill the ring: the first short send leaves its tail to the caller.
	filled := false
	for range 1000 {
		n, sentBytes, _, err := tg.Send(b.Pkts, 1, dpdk.TxGenCursor{}, false)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(b.Pkts) {
			var want uint64
			for _, l := range tg.Lens[:n] {
				want += uint64(l)
			}
			for i, m := range b.Pkts[n:] {
				if int(tg.Lens[n+i]) != m.Len() {
					t.Errorf("unsent packet %d: Lens %d, mbuf %d", n+i, tg.Lens[n+i], m.Len())
				}
			}
			if sentBytes != want {
				t.Errorf("sent %d bytes, the sent packets' lengths sum to %d", sentBytes, want)
			}
			dpdk.FreeBulk(b.Pkts[n:])
			filled = true
			break
		}
	}
	if !filled {
		t.Fatal("the ring never filled")
	}
	for {
		n := p.RxBurst(0, rx.Pkts)
		if n == 0 {
			break
		}
		dpdk.FreeBulk(rx.Pkts[:n])
	}

	if _, _, _, err := tg.Send(b.Pkts, 0, dpdk.TxGenCursor{Pos: 3}, false); !errors.Is(err, dpdk.ErrTxGenCursor) {
		t.Errorf("a cursor past the schedule: %v", err)
	}
	small := newPool(t, "p_txgen_small", 31, dpdk.MbufDefaultDataRoom)
	tg2, err := dpdk.NewTxGen(small, p, 0, spec, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer tg2.Free()
	if _, _, _, err := tg2.Send(b.Pkts, 0, dpdk.TxGenCursor{}, false); !errors.Is(err, dpdk.ErrNoMbufs) || small.InUse() != 0 {
		t.Errorf("32 from a pool of 31: %v, %d in use", err, small.InUse())
	}

	for _, tc := range []struct {
		name string
		edit func(s *dpdk.TxGenSpec)
		want string
	}{
		{"no flows", func(s *dpdk.TxGenSpec) { s.Flows = nil }, "want at least one each"},
		{"long header", func(s *dpdk.TxGenSpec) { s.Classes[1].Header = make([]byte, dpdk.TxGenHeaderMax+1) }, "header at most"},
		{"header past frame", func(s *dpdk.TxGenSpec) { s.Classes[0].Size = 40 }, "a 58-byte header for a 40-byte frame"},
		{"schedule", func(s *dpdk.TxGenSpec) { s.Schedule = []uint16{0, 2} }, "names class 2 of 2"},
		{"offset", func(s *dpdk.TxGenSpec) { s.Offsets.Time64 = 52 }, "offset Time64 = 52 outside the 58-byte header"},
		{"too big", func(s *dpdk.TxGenSpec) { s.Classes[1].Size = 4000 }, "do not fit the pool's"},
	} {
		s := txgenSpec()
		tc.edit(s)
		if g, err := dpdk.NewTxGen(mp, p, 0, s, 32); err == nil || !strings.Contains(err.Error(), tc.want) {
			if g != nil {
				g.Free()
			}
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkTxGenNull: one 32-packet burst of 64-byte frames built from the
// template and sent on net_null0 per op, on worker lcore 1 with a mempool
// cache (as cmd/pktgen runs): the binding's floor for pktgen's fast path;
// pktgen.BenchmarkTxPollNull adds the Go loop and the rate control.
func BenchmarkTxGenNull(b *testing.B) {
	mp, err := dpdk.NewPktMbufPool("p_txgen_bench", 16383, 256, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(mp.Free) // after the port's cleanup, which drains it (LIFO)
	p := startPort(b, "net_null0", mp)
	spec := txgenSpec()
	spec.Classes[0].Size, spec.Schedule = 64, []uint16{0}
	tg, err := dpdk.NewTxGen(mp, p, 0, spec, 32)
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Free()
	burst := dpdk.NewBurst(32)
	defer burst.Free()
	b.ReportAllocs()
	pkts := 0
	done := make(chan struct{})
	b.ResetTimer()
	if err := dpdk.LaunchOnLcore(1, func() int {
		c := dpdk.TxGenCursor{}
		for range b.N {
			n, _, _, _ := tg.Send(burst.Pkts, 1, c, false)
			pkts += n
			c.Seq += 32
		}
		close(done)
		return 0
	}); err != nil {
		b.Fatal(err)
	}
	<-done // rte_eal_wait_lcore spins: wait here first
	dpdk.WaitLcore(1)
	b.StopTimer()
	b.ReportMetric(float64(pkts)/b.Elapsed().Seconds()/1e6, "Mpps")
}
