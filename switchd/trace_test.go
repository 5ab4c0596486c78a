package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/trace"
	"github.com/ccbed/ccbed/wire"
)

// recordSink keeps the records it gets.
type recordSink struct{ recs []trace.Record }

func (s *recordSink) Record(r *trace.Record) { s.recs = append(s.recs, *r) }

// encodeSink encodes the records into a buffer it reuses, as a driver's
// sink does.
type encodeSink struct{ buf []byte }

func (s *encodeSink) Record(r *trace.Record) { s.buf = trace.AppendRecord(s.buf, r) }

// TestTraceEvents: a port paused by its peer fills from port 0 until PFC
// pauses port 0 upstream and the port's buffer drops; then it drains. The
// trace has an enqueue for every frame the engine kept, a drop for every
// one it refused, a dequeue for every data frame sent, each with its queue
// after the event, and the XOFF and XON the port counted: through
// drainData's loop and through Transmit's general one (noDrain).
func TestTraceEvents(t *testing.T) {
	for _, noDrain := range []bool{false, true} {
		t.Run(map[bool]string{false: "drainData", true: "dequeueData"}[noDrain], func(t *testing.T) {
			testTraceEvents(t, noDrain)
		})
	}
}

func testTraceEvents(t *testing.T, noDrain bool) {
	c := staticPFCSpec()
	c.Ports[2].BufferBytes = 30_000
	h := newHarness(t, c)
	h.noDrain = noDrain
	var sink recordSink
	if err := h.e.SetTrace(7, &sink); err != nil {
		t.Fatal(err)
	}
	h.inject(0, 2, pfcFrame(2, 3, 0xffff))
	kept, refused := 0, 0
	var flen int
	for i := 0; i < 40; i++ {
		f := dataFrame(t, 0, 2, 5, 1000, false)
		flen = len(f)
		if h.inject(int64(i), 0, f) {
			kept++
		} else {
			refused++
		}
		h.tx(int64(i), 0)
	}
	h.inject(1000, 2, pfcFrame(2, 3, 0))
	sent := 0
	for now := int64(1000); now < 1_000_000; now += 100 {
		sent += len(h.tx(now, 2))
		h.tx(now, 0)
	}
	if refused == 0 || kept == 0 || sent != kept {
		t.Fatalf("%d frames kept, %d refused, %d sent: want some of each, all kept sent", kept, refused, sent)
	}
	n := map[trace.Kind]int{}
	var q int64
	last := int64(-1)
	for i, r := range sink.recs {
		n[r.Kind]++
		if r.Node != 7 || r.TimeNs < last {
			t.Fatalf("record %d %+v: want node 7, times not decreasing", i, r)
		}
		last = r.TimeNs
		switch r.Kind {
		case trace.Enqueue, trace.Dequeue, trace.Drop:
			want := trace.Flow{SrcIP: hostIP(0), DstIP: hostIP(2), SrcPort: 49152, DstPort: wire.RoCEv2Port, QP: 5}
			if r.Port != 2 || r.Prio != 3 || int(r.FrameBytes) != flen || r.Flow != want {
				t.Fatalf("record %d %+v: want port 2, priority 3, %d bytes, flow %+v", i, r, flen, want)
			}
			switch r.Kind {
			case trace.Enqueue:
				q += int64(flen)
			case trace.Dequeue:
				q -= int64(flen)
			}
			if int64(r.QueueBytes) != q {
				t.Fatalf("record %d %+v: queue %d bytes, want %d", i, r, r.QueueBytes, q)
			}
		case trace.PFCPause, trace.PFCResume:
			if r.Port != 0 || r.Prio != 3 || r.Flow != (trace.Flow{}) {
				t.Fatalf("record %d %+v: want port 0's priority 3", i, r)
			}
		default:
			t.Fatalf("record %d %+v: no CP here marks", i, r)
		}
	}
	pc := counters0(h.e, 0)
	if n[trace.Enqueue] != kept || n[trace.Drop] != refused || n[trace.Dequeue] != sent ||
		n[trace.PFCPause] != int(pc.PFCOnsets) || n[trace.PFCResume] != int(pc.ResumesSent) || pc.PFCOnsets == 0 {
		t.Fatalf("records by kind %v: want %d enqueues, %d drops, %d dequeues, %d pauses, %d resumes",
			n, kept, refused, sent, pc.PFCOnsets, pc.ResumesSent)
	}
	// Off again: nothing more is recorded.
	if err := h.e.SetTrace(0, nil); err != nil {
		t.Fatal(err)
	}
	before := len(sink.recs)
	h.inject(2_000_000, 0, dataFrame(t, 0, 2, 5, 1000, false))
	h.tx(2_000_000, 2)
	if len(sink.recs) != before {
		t.Fatalf("%d records after SetTrace(nil)", len(sink.recs)-before)
	}
}

// TestTraceOneShard: a trace and several tx shards exclude each other.
func TestTraceOneShard(t *testing.T) {
	h := newHarness(t, testSpec(2, 10))
	if err := h.e.SetTrace(0, &recordSink{}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.ShardTx([][]int{{0}, {1}}); err == nil {
		t.Fatal("ShardTx with a trace on: no error")
	}
	h = newHarness(t, testSpec(2, 10))
	if err := h.e.ShardTx([][]int{{0}, {1}}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.SetTrace(0, &recordSink{}); err == nil {
		t.Fatal("SetTrace on two shards: no error")
	}
}

// idleFrame is an engine with an idle 2-port switch whose port 1 a 100 B
// RoCEv2 frame from port 0 goes out of, with the trace on (into sink's
// reused buffer) when on: step enqueues the frame and transmits it.
type idleFrame struct {
	h    *harness
	sink *encodeSink
	f    []byte
	m    Meta
	now  int64
}

func newIdleFrame(tb testing.TB, on bool) *idleFrame {
	tb.Helper()
	x := &idleFrame{h: newHarness(tb, testSpec(2, 100)), sink: &encodeSink{buf: make([]byte, 0, 64*trace.RecordSize)}}
	if on {
		if err := x.h.e.SetTrace(1, x.sink); err != nil {
			tb.Fatal(err)
		}
	}
	x.f = dataFrame(tb, 0, 1, 1, 100, false)
	if !x.h.e.Classify(0, x.f, &x.m) {
		tb.Fatal("frame dropped")
	}
	return x
}

// step enqueues the frame and transmits it a microsecond later; false when
// the engine dropped it.
func (x *idleFrame) step() bool {
	x.sink.buf = x.sink.buf[:0]
	ok := x.h.e.Enqueue(x.now, &x.m, x.f, 1)
	x.now += 1000
	x.h.e.Transmit(x.now, 1, x.h.out)
	return ok
}

// TestTraceAllocs: with a trace on, a frame's enqueue and dequeue allocate
// nothing (the sink encodes into a buffer it reuses).
func TestTraceAllocs(t *testing.T) {
	x := newIdleFrame(t, true)
	if n := testing.AllocsPerRun(1000, func() {
		if !x.step() {
			t.Fatal("frame dropped")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per frame", n)
	}
	if len(x.sink.buf) != 2*trace.RecordSize {
		t.Fatalf("%d bytes traced per frame: want an enqueue and a dequeue", len(x.sink.buf))
	}
}

// BenchmarkTrace is one frame's enqueue and transmit on an idle port (a
// 100 B RoCEv2 frame, no CP), with the trace off and on (its sink encoding
// into a reused buffer, as fabric's does): the trace's cost a frame.
func BenchmarkTrace(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			x := newIdleFrame(b, on)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				x.step()
			}
		})
	}
}
