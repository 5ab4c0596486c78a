package hostd

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/internal/cpuclock"
	"github.com/ccbed/ccbed/wire"
)

// hotPath sets up a sender and a receiver of scheme, their configs changed
// by mods, and returns them with a data frame of the sender and an ACK of the
// receiver for it.
func hotPath(tb testing.TB, scheme string, mods ...func(a, b *Spec)) (a, b *Engine, data, ack []byte) {
	tb.Helper()
	ca, cb := oneFlow(scheme, 0, 0)
	for _, m := range mods {
		m(&ca, &cb)
	}
	v := newVnet(tb, ca, cb)
	v.run(50_000)
	a, b = v.eng[0], v.eng[1]
	data = make([]byte, 2048)
	n := 0
	for now := v.now; n == 0; now += 1000 {
		a.Service(now)
		n = a.NextData(now, data)
	}
	data = data[:n]
	var out Controls
	if b.Receive(v.now, data, &out) == 0 {
		tb.Fatal("no ACK owed")
	}
	ack = make([]byte, 512)
	ack = ack[:b.BuildControl(ack, &out.C[0])]
	return a, b, data, ack
}

var allSchemes = []string{"none", "dcqcn", "dctcp", "hpcc", "timely", "rcc", "acc", "rocc", "p4qcn", "qcn"}

// trusting makes both hosts of hotPath trust by topology: back to back, each
// one's gateway is the other.
func trusting(a, b *Spec) {
	a.Trust, a.GatewayMAC, a.TrustedCPs = TrustTopology, b.MAC, []AddrRange{{0x0a0000fe, 0x0a0000fe}}
	b.Trust, b.GatewayMAC, b.TrustedCPs = TrustTopology, a.MAC, []AddrRange{{0x0a0000fe, 0x0a0000fe}}
}

func TestPerPacketPathsAllocateNothing(t *testing.T) {
	for _, scheme := range allSchemes {
		t.Run(scheme, func(t *testing.T) {
			a, b, data, ack := hotPath(t, scheme)
			checkHotPathAllocs(t, a, b, data, ack)
		})
		t.Run(scheme+"/trusted", func(t *testing.T) {
			a, b, data, ack := hotPath(t, scheme, trusting)
			checkHotPathAllocs(t, a, b, data, ack)
			// The checks hand the sender one ACK again and again: when it
			// is a NAK (hotPath's data frame skipped the packets in
			// flight), the copies within a base RTT of the go-back it
			// caused are repeats, refused by design.
			var s wire.Summary
			if err := wire.Classify(ack, &s); err != nil {
				t.Fatal(err)
			}
			r := a.Refused()
			if s.Kind != wire.KindNak && r.NakRepeat != 0 {
				t.Errorf("an ACK refused as a repeated NAK: %+v", r)
			}
			if r.NakRepeat = 0; r.Total() != 0 {
				t.Errorf("the sender refused %+v", r)
			}
		})
	}
}

// checkHotPathAllocs fails the test for every per-packet path of sender a and
// receiver b that allocates.
func checkHotPathAllocs(t *testing.T, a, b *Engine, data, ack []byte) {
	t.Helper()
	var out Controls
	buf := make([]byte, 2048)
	now := int64(1_000_000)
	checks := []struct {
		name string
		fn   func()
	}{
		{"Receive data + BuildControl", func() {
			now += 100
			if k := b.Receive(now, data, &out); k > 0 {
				b.BuildControl(buf, &out.C[0])
			}
		}},
		{"Receive ACK + Service", func() {
			now += 100
			a.Receive(now, ack, &out)
			a.Service(now)
		}},
		{"NextData + ChargeControl", func() {
			now += 1000
			a.Service(now)
			a.NextData(now, buf)
			a.ChargeControl(now, 100)
			a.NextWake(now)
		}},
	}
	for _, c := range checks {
		if n := testing.AllocsPerRun(200, c.fn); n != 0 {
			t.Errorf("%s allocates %.1f times per call", c.name, n)
		}
	}
}

func TestFlowStartAllocatesNothing(t *testing.T) {
	for _, scheme := range allSchemes {
		c := testConfig("h1", ipA, scheme)
		e, err := NewEngine(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e.rpTmpl == nil {
			t.Errorf("%s: RP not resettable by copy", scheme)
			continue
		}
		pf := pendingFlow{id: 1, dst: 0x0a000002, size: 1000}
		now := int64(0)
		n := testing.AllocsPerRun(100, func() {
			now += 1000
			e.startFlow(now, &pf)
			qp := e.active[0]
			e.complete(now, qp, &e.qps[qp])
		})
		if n != 0 {
			t.Errorf("%s: flow start and completion allocate %.1f times", scheme, n)
		}
	}
}

// TestRPResetIsFresh checks that a reused QP slot's RP starts from the scheme's
// initial state, not from the previous flow's.
func TestRPResetIsFresh(t *testing.T) {
	c := testConfig("h1", ipA, "rocc")
	c.MaxQPs = 1
	e, err := NewEngine(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	pf := pendingFlow{id: 1, dst: 0x0a000002}
	e.startFlow(0, &pf)
	s := &e.qps[e.active[0]]
	s.rp.OnFeedback(0, &ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, RateBps: 1e9})
	if s.rp.RateBps() != 1e9 {
		t.Fatal("feedback not applied")
	}
	e.complete(10, e.active[0], s)
	e.startFlow(20, &pf)
	if r := e.qps[e.active[0]].rp.RateBps(); r != 10e9 {
		t.Fatalf("reused RP starts at %v, want the line rate", r)
	}
}

// timeCPU runs fn b.N times with the goroutine locked to its thread and
// reports the thread's CPU time per op beside the wall time (reportCPU).
func timeCPU(b *testing.B, fn func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuclock.Thread().Nanoseconds()
	for i := 0; i < b.N; i++ {
		fn(i)
	}
	cpu := cpuclock.Thread().Nanoseconds() - cpu0
	b.StopTimer()
	if cpu0 > 0 {
		reportCPU(b, cpu, b.N)
	}
}

func BenchmarkReceiveData(b *testing.B) {
	_, rx, data, _ := hotPath(b, "dcqcn")
	var out Controls
	buf := make([]byte, 512)
	timeCPU(b, func(i int) {
		if k := rx.Receive(int64(i), data, &out); k > 0 {
			rx.BuildControl(buf, &out.C[0])
		}
	})
}

func BenchmarkAckPath(b *testing.B) {
	tx, _, _, ack := hotPath(b, "dcqcn")
	var out Controls
	timeCPU(b, func(i int) {
		tx.Receive(int64(i), ack, &out)
		tx.Service(int64(i))
	})
}

// BenchmarkNextData measures building and pacing one data packet with 1000
// active QPs.
func BenchmarkNextData(b *testing.B) {
	c := testConfig("h1", ipA, "none")
	c.MaxQPs = 1000
	c.Incast = []Incast{{Dst: ipB, Flows: 1000, SizeBytes: 1 << 40}}
	c.LinkGbps = MaxLinkGbps // no line-rate ceiling below the engine's speed
	e, err := NewEngine(c, 0)
	if err != nil {
		b.Fatal(err)
	}
	e.Service(0)
	buf := make([]byte, 2048)
	now := int64(1)
	timeCPU(b, func(int) {
		if e.NextData(now, buf) == 0 {
			now += 100
		}
	})
	if _, tx := e.Counters(); tx.DataFrames == 0 {
		b.Fatal("nothing sent")
	}
	_ = wire.KindData
}

// TestFrameScratchPlace keeps the engine's decoded-frame scratch (Engine.fr,
// which wire.Decode zeroes for every frame received; nodeScratch.fr, the one
// a Node's engine uses) at 8 mod 16 bytes into the engine or the scratch
// (heap objects of their sizes are 16-byte aligned): on the AMD EPYC
// these numbers come from, BenchmarkAckPath ran 12% slower with it at 0 mod
// 16 (15.0 against 17.1 Mpps of thread CPU time; a store-forwarding effect of
// the zeroing's 16-byte stores, by the look of it). A field added before it
// moves it: adjust the padding in front of it.
func TestFrameScratchPlace(t *testing.T) {
	if off := unsafe.Offsetof(Engine{}.fr); off%16 != 8 {
		t.Errorf("Engine.fr at offset %d (%d mod 16): pad it to 8 mod 16", off, off%16)
	}
	if off := unsafe.Offsetof(nodeScratch{}.fr); off%16 != 8 {
		t.Errorf("nodeScratch.fr at offset %d (%d mod 16): pad it to 8 mod 16", off, off%16)
	}
}

// TestEventLayout checks what the event's comment promises: an event is a
// whole number of cache lines, the ring's slots start on one for every ring
// size, the fields an ACK, NAK or CNP touches are its first two lines (the
// INT hops excepted) and what a CNP touches its first.
func TestEventLayout(t *testing.T) {
	var ev event
	if n := unsafe.Sizeof(ev); n%lineBytes != 0 {
		t.Errorf("event is %d bytes, not a multiple of %d", n, lineBytes)
	}
	base := uintptr(unsafe.Pointer(&ev))
	at := func(p unsafe.Pointer) uintptr { return uintptr(p) - base }
	for _, f := range []struct {
		name  string
		end   uintptr // offset just past the field
		lines uintptr
	}{
		{"kind", at(unsafe.Pointer(&ev.kind)) + 1, 1},
		{"qpn", at(unsafe.Pointer(&ev.qpn)) + 4, 1},
		{"src", at(unsafe.Pointer(&ev.src)) + 4, 1},
		{"psn", at(unsafe.Pointer(&ev.psn)) + 4, 1},
		{"ack.RTT", at(unsafe.Pointer(&ev.ack.RTT)) + 8, 2},
		{"ack.Fields.EchoTS", at(unsafe.Pointer(&ev.ack.Fields.EchoTS)) + 8, 2},
		{"ack.Fields.Window", at(unsafe.Pointer(&ev.ack.Fields.Window)) + 8, 2},
		{"ack.Fields.RecvBytes", at(unsafe.Pointer(&ev.ack.Fields.RecvBytes)) + 4, 2},
		{"ack.Fields.Mark", at(unsafe.Pointer(&ev.ack.Fields.Mark)) + 1, 2},
		{"ack.Fields.INT.NHops", at(unsafe.Pointer(&ev.ack.Fields.INT.NHops)) + 1, 2},
	} {
		if f.end > f.lines*lineBytes {
			t.Errorf("event.%s ends at byte %d: past its first %d line(s)", f.name, f.end, f.lines)
		}
	}
	for size := 1; size <= 1024; size *= 2 {
		r := newEvRing(size)
		for i := 0; i < r.Cap(); i++ {
			s := r.Slot()
			if a := uintptr(unsafe.Pointer(s)); a%lineBytes != 0 {
				t.Fatalf("ring of %d: slot %d at %#x, not on a cache line", size, i, a)
			}
			r.Commit()
		}
	}
}
