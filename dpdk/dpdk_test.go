package dpdk_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
)

// The EAL initialises once per process; every test of this package shares it.
// Two net_ring vdevs: a net_ring vdev created alone loops its tx into its own rx.
var ealArgs = []string{
	"--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry",
	"-l", "0-1", "--log-level=lib.eal:error",
	"--vdev=net_ring0", "--vdev=net_ring1",
	"--vdev=net_null0", "--vdev=net_null1", "--vdev=net_null2", "--vdev=net_null3",
}

// ealChildEnv, when set, makes the test binary a child of TestEALInitFailures:
// it runs EALInit with the variable's arguments (separated by spaces) and
// exits 1 with the error on standard error when EALInit returns one, 0 when
// it succeeds.
const ealChildEnv = "CCBED_EAL_INIT_CHILD"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(ealChildEnv); ok {
		if err := dpdk.EALInit(strings.Fields(args)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// CCBED_EAL_EXTRA adds EAL arguments, e.g. "-d /path/to/pmds" on a machine
	// where DPDK's drivers are not installed in their default place.
	ealArgs = append(ealArgs, strings.Fields(os.Getenv("CCBED_EAL_EXTRA"))...)
	if err := dpdk.EALInit(ealArgs); err != nil {
		fmt.Fprintf(os.Stderr, "dpdk tests need DPDK (scripts/setup.sh) and root: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestEALInitFailures runs EALInit in a child process (this test binary,
// ealChildEnv) with arguments that make rte_eal_init fail, and wants a
// non-zero exit with the cause on standard error: for an error, DPDK's
// message for rte_errno and its log line; for a panic (a second copy of
// librte_ring registering the RTE_RING tailq again: rte_panic, abort), DPDK's
// panic text and the signal, which the captured descriptors used to swallow
// (exit 2, nothing on the terminal).
func TestEALInitFailures(t *testing.T) {
	base := "--no-huge -m 128 --no-pci --no-shconf --no-telemetry -l 0 "
	for _, tc := range []struct {
		name string
		args func(t *testing.T) string
		want []string
	}{
		{"bogus vdev", func(*testing.T) string { return "--vdev=bogus0" },
			[]string{"rte_eal_init: No such device", `failed to parse device "bogus0"`}},
		{"missing library", func(*testing.T) string { return "-d /nonexistent/librte_x.so" },
			[]string{"rte_eal_init: Invalid argument", "/nonexistent/librte_x.so: cannot open shared object file", "Cannot init plugins"}},
		{"panic: duplicate library", duplicateRingLibrary,
			[]string{"rte_eal_init did not return: SIGABRT", "PANIC in", "Cannot initialize tailq: RTE_RING", "end of DPDK's output"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), ealChildEnv+"="+base+tc.args(t))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("EALInit succeeded; stderr:\n%s", stderr.String())
			}
			if ctx.Err() != nil {
				t.Fatalf("child still running after a minute; stderr:\n%s", stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("%v; stderr lacks %q:\n%s", err, w, stderr.String())
				}
			}
		})
	}
}

// duplicateRingLibrary copies the librte_ring this process loaded to a
// directory DPDK accepts plugins from (no world-writable directory on its
// path: not under /tmp) and returns the EAL argument that loads the copy.
// It skips the test when there is no such directory.
func duplicateRingLibrary(t *testing.T) string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	lib := ""
	for _, l := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(l); len(f) == 6 && strings.Contains(filepath.Base(f[5]), "librte_ring.so") {
			lib = f[5]
			break
		}
	}
	if lib == "" {
		t.Skip("librte_ring is not loaded as a shared library")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp(cache, "ccbed-eal-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o002 != 0 {
			t.Skipf("%s is world-writable: DPDK loads no plugin from under it", d)
		}
		if d == "/" {
			break
		}
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Skip(err)
	}
	dup := filepath.Join(dir, "librte_ring_copy.so")
	if err := os.WriteFile(dup, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return "-d " + dup
}

func TestEALInitTwice(t *testing.T) {
	if err := dpdk.EALInit(ealArgs); err != dpdk.ErrEALInitialised {
		t.Fatalf("second EALInit = %v, want ErrEALInitialised", err)
	}
	if err := dpdk.EALInit([]string{"--help"}); err == nil {
		t.Fatal("EALInit(--help) should be refused")
	}
}

func TestLcores(t *testing.T) {
	if n := dpdk.LcoreCount(); n != 2 {
		t.Fatalf("LcoreCount = %d, want 2", n)
	}
	if got := dpdk.Lcores(true); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("Lcores(true) = %v", got)
	}
	if got := dpdk.Lcores(false); len(got) != 1 || got[0] != 1 {
		t.Fatalf("Lcores(false) = %v", got)
	}
	if dpdk.MainLcore() != 0 {
		t.Fatalf("MainLcore = %d", dpdk.MainLcore())
	}
	if dpdk.TSCHz() == 0 {
		t.Fatal("TSCHz = 0")
	}
	a := dpdk.TSC()
	time.Sleep(time.Millisecond)
	if b := dpdk.TSC(); b <= a {
		t.Fatalf("TSC did not advance: %d then %d", a, b)
	}
}

// newPool makes a pool for one test and checks at cleanup that every mbuf came back.
func newPool(tb testing.TB, name string, n uint32, room uint16) *dpdk.Mempool {
	tb.Helper()
	mp, err := dpdk.NewPktMbufPool(name, n, 0, room, dpdk.SocketAny)
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

func TestMempoolAllocFree(t *testing.T) {
	for _, tc := range []struct {
		name string
		room uint16
	}{
		{"std", dpdk.MbufDefaultDataRoom},
		{"jumbo", 9216 + dpdk.MbufHeadroom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newPool(t, "p_"+tc.name, 255, tc.room)
			if mp.DataRoom() != int(tc.room) {
				t.Fatalf("DataRoom = %d, want %d", mp.DataRoom(), tc.room)
			}
			b := dpdk.NewBurst(32)
			defer b.Free()
			if err := mp.AllocBulk(b.Pkts); err != nil {
				t.Fatal(err)
			}
			if mp.InUse() != 32 || mp.Avail() != 255-32 {
				t.Fatalf("in use %d avail %d", mp.InUse(), mp.Avail())
			}
			for i, m := range b.Pkts {
				room := m.Room()
				if want := int(tc.room) - dpdk.MbufHeadroom; len(room) != want {
					t.Fatalf("Room = %d, want %d", len(room), want)
				}
				room[0], room[len(room)-1] = byte(i), 0xee
				m.SetLen(len(room))
				if d := m.Data(); len(d) != len(room) || d[0] != byte(i) || m.Len() != len(room) {
					t.Fatalf("Data view wrong: len %d first %d", len(d), d[0])
				}
			}
			dpdk.FreeBulk(b.Pkts)
			if mp.InUse() != 0 {
				t.Fatalf("in use after free = %d", mp.InUse())
			}
		})
	}
}

func TestMempoolExhausted(t *testing.T) {
	mp := newPool(t, "p_small", 15, dpdk.MbufDefaultDataRoom)
	b := dpdk.NewBurst(16)
	defer b.Free()
	if err := mp.AllocBulk(b.Pkts); err != dpdk.ErrNoMbufs {
		t.Fatalf("AllocBulk of 16 from 15 = %v, want ErrNoMbufs", err)
	}
	if mp.InUse() != 0 {
		t.Fatal("failed bulk alloc took mbufs")
	}
}

func TestEthPortByNameUnknown(t *testing.T) {
	if _, err := dpdk.EthPortByName("net_nope9"); err == nil {
		t.Fatal("expected error for unknown port")
	}
}

// startPort configures a vdev with one rx and one tx queue.
func startPort(tb testing.TB, name string, mp *dpdk.Mempool) dpdk.EthPort {
	tb.Helper()
	p, err := dpdk.EthPortByName(name)
	if err != nil {
		tb.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return p.Configure(1, 1, 0) },
		func() error { return p.RxQueueSetup(0, 256, dpdk.SocketAny, mp) },
		func() error { return p.TxQueueSetup(0, 256, dpdk.SocketAny) },
		p.Start,
	} {
		if err := step(); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() {
		// drain what is still queued on the loopback ring
		b := dpdk.NewBurst(64)
		// Bounded: a net_null port makes packets on every poll.
		for i := 0; i < 1024; i++ {
			n := p.RxBurst(0, b.Pkts)
			if n == 0 {
				break
			}
			dpdk.FreeBulk(b.Pkts[:n])
		}
		b.Free()
		if err := p.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return p
}

// newCable makes a cable whose ports close at cleanup, after startPort's
// cleanups stop them (cleanups run last first).
func newCable(tb testing.TB, nameA, nameB string, size uint32) (a, b dpdk.EthPort) {
	tb.Helper()
	a, b, err := dpdk.NewEthCable(nameA, nameB, size, dpdk.SocketAny)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestEthRingLoopback(t *testing.T) {
	mp := newPool(t, "p_eth", 1023, dpdk.MbufDefaultDataRoom)
	p := startPort(t, "net_ring0", mp)
	if p.Name() != "net_ring0" {
		t.Fatalf("Name = %q", p.Name())
	}
	if _, err := p.MACAddr(); err != nil {
		t.Fatal(err)
	}
	if l, err := p.Link(); err != nil || !l.Up {
		t.Fatalf("Link = %+v, %v", l, err)
	}
	if err := p.ResetStats(); err != nil {
		t.Fatal(err)
	}
	tx := dpdk.NewBurst(32)
	defer tx.Free()
	rx := dpdk.NewBurst(32)
	defer rx.Free()
	if err := mp.AllocBulk(tx.Pkts); err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(tx.Pkts))
	for i, m := range tx.Pkts {
		pkt := bytes.Repeat([]byte{byte(i)}, 60+i)
		n := copy(m.Room(), pkt)
		m.SetLen(n)
		want[i] = pkt
	}
	if n := p.TxBurst(0, tx.Pkts); n != len(tx.Pkts) {
		dpdk.FreeBulk(tx.Pkts[n:])
		t.Fatalf("TxBurst sent %d of %d", n, len(tx.Pkts))
	}
	n := p.RxBurst(0, rx.Pkts)
	defer dpdk.FreeBulk(rx.Pkts[:n])
	if n != len(want) {
		t.Fatalf("RxBurst got %d, want %d", n, len(want))
	}
	for i, m := range rx.Pkts[:n] {
		if !bytes.Equal(m.Data(), want[i]) {
			t.Fatalf("packet %d differs", i)
		}
	}
	st, err := p.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.OPackets != 32 || st.IPackets != 32 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRingBetweenLcores sends mbufs from the test goroutine through an rte_ring to
// a Go loop running on worker lcore 1, which checks and returns them through a
// second ring; every mbuf comes back to the pool.
func TestRingBetweenLcores(t *testing.T) {
	const total = 10000
	mp := newPool(t, "p_ring", 2047, dpdk.MbufDefaultDataRoom)
	toWorker, err := dpdk.NewRing("r_to", 1024, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
	if err != nil {
		t.Fatal(err)
	}
	defer toWorker.Free()
	back, err := dpdk.NewRing("r_back", 1024, dpdk.SocketAny, dpdk.RingSingleProducer|dpdk.RingSingleConsumer)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Free()

	var bad int
	err = dpdk.LaunchOnLcore(1, func() int {
		b := dpdk.NewBurst(32)
		defer b.Free()
		seen := 0
		for seen < total {
			n := toWorker.DequeueBurst(b.Pkts)
			for _, m := range b.Pkts[:n] {
				d := m.Data()
				if len(d) != 64 || int(d[0])|int(d[1])<<8 != seen&0xffff {
					bad++
				}
				seen++
			}
			for sent := 0; sent < n; {
				sent += back.EnqueueBurst(b.Pkts[sent:n])
			}
		}
		return seen
	})
	if err != nil {
		t.Fatal(err)
	}
	b := dpdk.NewBurst(32)
	defer b.Free()
	sent, returned := 0, 0
	for returned < total {
		if sent < total {
			k := min(32, total-sent)
			if err := mp.AllocBulk(b.Pkts[:k]); err == nil {
				for i, m := range b.Pkts[:k] {
					r := m.Room()
					r[0], r[1] = byte(sent+i), byte((sent+i)>>8)
					m.SetLen(64)
				}
				q := 0
				for q < k {
					q += toWorker.EnqueueBurst(b.Pkts[q:k])
				}
				sent += k
			}
		}
		n := back.DequeueBurst(b.Pkts)
		dpdk.FreeBulk(b.Pkts[:n])
		returned += n
	}
	if got := dpdk.WaitLcore(1); got != total {
		t.Fatalf("worker saw %d, want %d", got, total)
	}
	if bad != 0 {
		t.Fatalf("%d packets out of order or corrupted", bad)
	}
}

func TestRunOnMainLcore(t *testing.T) {
	ran := false
	dpdk.RunOnMainLcore(func() { ran = true })
	if !ran {
		t.Fatal("function did not run")
	}
}

func TestBurstPathsAllocateNothing(t *testing.T) {
	mp := newPool(t, "p_alloc", 511, dpdk.MbufDefaultDataRoom)
	p := startPort(t, "net_ring1", mp)
	r, err := dpdk.NewRing("r_alloc", 256, dpdk.SocketAny, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free()
	b := dpdk.NewBurst(32)
	defer b.Free()
	allocs := testing.AllocsPerRun(100, func() {
		if mp.AllocBulk(b.Pkts) != nil {
			panic("pool empty")
		}
		for _, m := range b.Pkts {
			m.SetLen(60)
			_ = m.Data()
		}
		n := r.EnqueueBurst(b.Pkts)
		n = r.DequeueBurst(b.Pkts[:n])
		n = p.TxBurst(0, b.Pkts[:n])
		dpdk.FreeBulk(b.Pkts[n:])
		n = p.RxBurst(0, b.Pkts)
		dpdk.FreeBulk(b.Pkts[:n])
		_ = dpdk.TSC()
	})
	if allocs != 0 {
		t.Fatalf("burst path allocates %.1f times per run", allocs)
	}
}

func TestEthCable(t *testing.T) {
	mp := newPool(t, "p_cable", 511, dpdk.MbufDefaultDataRoom)
	a, b := newCable(t, "cab_a", "cab_b", 256)
	pa := startPort(t, a.Name(), mp)
	pb := startPort(t, b.Name(), mp)
	burst := dpdk.NewBurst(8)
	defer burst.Free()
	for _, dir := range [][2]dpdk.EthPort{{pa, pb}, {pb, pa}} {
		if err := mp.AllocBulk(burst.Pkts); err != nil {
			t.Fatal(err)
		}
		for i, m := range burst.Pkts {
			m.Room()[0] = byte(i + int(dir[0]))
			m.SetLen(60)
		}
		if n := dir[0].TxBurst(0, burst.Pkts); n != 8 {
			t.Fatalf("tx %d of 8", n)
		}
		if n := dir[0].RxBurst(0, burst.Pkts); n != 0 {
			dpdk.FreeBulk(burst.Pkts[:n])
			t.Fatalf("sender received its own %d packets", n)
		}
		n := dir[1].RxBurst(0, burst.Pkts)
		if n != 8 || burst.Pkts[3].Data()[0] != byte(3+int(dir[0])) {
			t.Fatalf("peer received %d", n)
		}
		dpdk.FreeBulk(burst.Pkts[:n])
	}
}

// TestPluggedDevicesCanBeMadeAgain: closing both ports of a cable frees its
// rings and takes its devices off the vdev bus, and closing a device plugged
// in by CreateVdev takes it off too, so that the same names can be made
// again in one process (as every run of `go test -count N` does); a cable
// whose second port cannot be made leaves nothing behind.
func TestPluggedDevicesCanBeMadeAgain(t *testing.T) {
	for round := 0; round < 3; round++ {
		a, b, err := dpdk.NewEthCable("again_a", "again_b", 64, dpdk.SocketAny)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		qa, qb, err := dpdk.NewEthCableQueues("againq_a", "againq_b", 2, 1, 64, dpdk.SocketAny)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := dpdk.CreateVdev("net_ring_again", ""); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		v, err := dpdk.EthPortByName("net_ring_again")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []dpdk.EthPort{a, b, qa, qb, v} {
			if err := p.Close(); err != nil {
				t.Fatalf("round %d: close %s: %v", round, p.Name(), err)
			}
		}
		if _, err := dpdk.EthPortByName("net_ring_again"); err == nil {
			t.Fatal("net_ring_again still an ethdev after Close")
		}
	}
	// A name already on the bus: B is refused, and A's device and both
	// rings go with it, so the cable can then be made under free names.
	x, y, err := dpdk.NewEthCable("dup_x", "dup_y", 64, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dpdk.NewEthCable("half_a", "dup_x", 64, dpdk.SocketAny); err == nil {
		t.Fatal("a cable end named after an existing one was made")
	}
	a, b, err := dpdk.NewEthCable("half_a", "half_b", 64, dpdk.SocketAny)
	if err != nil {
		t.Fatalf("after the refused cable: %v", err)
	}
	for _, p := range []dpdk.EthPort{x, y, a, b} {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
