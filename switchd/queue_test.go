package switchd

import (
	"testing"
	"unsafe"

	"github.com/ccbed/ccbed/ccalgo"
)

// TestQEntrySize: a queue slot is 32 bytes, two to a cache line (the
// fabric's switches write one per frame into lines they must fetch), and a
// queue's own state one line.
func TestQEntrySize(t *testing.T) {
	if s := unsafe.Sizeof(qEntry{}); s != 32 {
		t.Errorf("qEntry is %d bytes, want 32", s)
	}
	var g egress
	if s, o := unsafe.Sizeof(g.q[0]), unsafe.Offsetof(g.q); s != 64 || o%64 != 0 {
		t.Errorf("dataQueue is %d bytes at offset %d in egress: want 64, on a line", s, o)
	}
}

// TestPortLayout: what a frame touches of a port's state stays on as few
// cache lines as the layout promises: every egress whole lines and the
// ports' array starting on one (also for a switch of 3 ports, allocated
// small), a priority's ingress accounting 32 bytes within a line.
func TestPortLayout(t *testing.T) {
	var g egress
	if s := unsafe.Sizeof(g); s%64 != 0 {
		t.Errorf("egress is %d bytes, not whole cache lines", s)
	}
	if o := unsafe.Offsetof(g.acct); o%64 != 0 {
		t.Errorf("egress.acct at offset %d, not on a cache line", o)
	}
	if s := unsafe.Sizeof(prioAcct{}); s != 32 {
		t.Errorf("prioAcct is %d bytes, want 32", s)
	}
	for _, n := range []int{1, 3, 8, 24, 64} {
		if a := uintptr(unsafe.Pointer(&newEgress(n)[0])) % 64; a != 0 {
			t.Errorf("%d ports: egress array %d bytes past a cache line", n, a)
		}
	}
}

// TestDataQueueKeepsFrames pushes frames through a queue that grows and
// wraps, with and without flow keys, and wants each frame back as it went
// in (same bytes, same start: the entry keeps the frame's first byte and
// length), its handle and its flow key at its index, in order.
func TestDataQueueKeepsFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  bool
		limit int
		steps []int // >0: push that many; <0: pop that many
	}{
		{"empty-refill", false, 8, []int{1, -1, 2, -2, 3, -3}},
		{"grow-wrapped", false, 1 << 10, []int{200, -150, 300, -350}},
		{"keys-grow-wrapped", true, 1 << 10, []int{200, -150, 300, -350}},
		{"keys-to-limit", true, 512, []int{512, -511, 510, -511}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newDataQueue(tc.limit)
			if tc.keys {
				q.keepKeys()
			}
			store := make([]byte, 4096)
			var fifo []int // the frame numbers queued, oldest first
			next := 0
			for _, st := range tc.steps {
				for ; st > 0; st-- {
					if q.full() {
						t.Fatalf("full at %d frames, limit %d", q.len(), tc.limit)
					}
					if q.len() == len(q.buf) {
						q.grow()
					}
					i := next
					next++
					f := store[i%1000 : i%1000+60+i%7]
					m := Meta{In: uint8(i % 64), Class: ClassData, IPOff: 14, INTOff: uint16(i % 100)}
					en := q.pushEntry(&m, f, Handle(i+1))
					if q.keys() {
						*q.flow(q.tail - 1) = ccalgo.FlowKey{SrcIP: uint32(i), DestQP: uint32(i) * 3}
					}
					if en.n != uint32(len(f)) {
						t.Fatalf("frame %d: entry length %d, want %d", i, en.n, len(f))
					}
					fifo = append(fifo, i)
				}
				for ; st < 0; st++ {
					i := fifo[0]
					fifo = fifo[1:]
					if q.keys() {
						if k := *q.flow(q.head); k.SrcIP != uint32(i) || k.DestQP != uint32(i)*3 {
							t.Fatalf("frame %d: flow key %+v", i, k)
						}
					}
					en := q.pop()
					want := store[i%1000 : i%1000+60+i%7]
					got := en.frame()
					if en.h != Handle(i+1) || len(got) != len(want) || unsafe.SliceData(got) != unsafe.SliceData(want) {
						t.Fatalf("frame %d: handle %d, %d bytes at %p; want %d, %d at %p",
							i, en.h, len(got), unsafe.SliceData(got), i+1, len(want), unsafe.SliceData(want))
					}
					if en.in != uint8(i%64) || en.intOff != uint16(i%100) || en.ipOff != 14 || en.class != ClassData || en.stamp {
						t.Fatalf("frame %d: entry %+v", i, en)
					}
				}
			}
			if q.len() != len(fifo) {
				t.Fatalf("queue holds %d, want %d", q.len(), len(fifo))
			}
			if tc.keys != (len(q.flows) == len(q.buf)) || !tc.keys && q.flows != nil {
				t.Fatalf("keys %v: %d flow slots for %d entries", tc.keys, len(q.flows), len(q.buf))
			}
		})
	}
}
