package hostd

import (
	"testing"
	"unsafe"

	"github.com/ccbed/ccbed/node"
	"github.com/ccbed/ccbed/wire"
)

// testFrames is a node.Frames of fixed buffers for the Node tests.
type testFrames struct {
	bufs [][]byte
	free []node.Handle
}

func newTestFrames(n, room int) *testFrames {
	f := &testFrames{bufs: make([][]byte, n+1)}
	for h := n; h >= 1; h-- {
		f.bufs[h] = make([]byte, room)
		f.free = append(f.free, node.Handle(h))
	}
	return f
}

func (f *testFrames) Alloc() (node.Handle, []byte) {
	if len(f.free) == 0 {
		return 0, nil
	}
	h := f.free[len(f.free)-1]
	f.free = f.free[:len(f.free)-1]
	return h, f.bufs[h]
}

func (f *testFrames) Free(h node.Handle) { f.free = append(f.free, h) }

// TestNodeOwesControlsBeyondItsRing hands a receiving Node more data frames
// than its ring of owed control frames first holds (ctlSlots) before its
// next Transmit, as no fabric driver does: the ring grows, and Transmit
// sends every ACK owed, oldest first, with no frame lost.
func TestNodeOwesControlsBeyondItsRing(t *testing.T) {
	a, b := oneFlow("none", 1<<20, 0)
	ea, err := NewEngine(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := NewEngine(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	store := newTestFrames(256, ea.MaxFrameBytes())
	na, nb := NewNode(ea, store), NewNode(eb, store)
	const frames = 5 * ctlSlots
	out := make([]node.Tx, 64)
	var data []node.Tx
	for now := int64(0); len(data) < frames && now < 1_000_000; now += 100 {
		k := na.Transmit(now, out)
		data = append(data, out[:k]...)
	}
	if len(data) < frames {
		t.Fatalf("the sender built %d data frames, want %d", len(data), frames)
	}
	data = data[:frames]
	const now = 2_000_000
	for _, d := range data {
		nb.Receive(now, 0, d.H, store.bufs[d.H][:d.Len])
	}
	owed := int(nb.size)
	if owed <= ctlSlots {
		t.Fatalf("%d control frames owed after %d data frames: the ring was not exercised", owed, frames)
	}
	k := nb.Transmit(now, out)
	if k != owed || nb.NoFrame != 0 {
		t.Fatalf("Transmit sent %d control frames of %d owed (%d not built)", k, owed, nb.NoFrame)
	}
	var fr wire.Frame
	last := -1
	for i, c := range out[:k] {
		if err := wire.Decode(store.bufs[c.H][:c.Len], &fr); err != nil || fr.Kind != wire.KindAck {
			t.Fatalf("control frame %d: %v, kind %v", i, err, fr.Kind)
		}
		psn := int(fr.BTH.PSN())
		if psn <= last {
			t.Fatalf("control frame %d acknowledges PSN %d after %d: not oldest first", i, psn, last)
		}
		last = psn
	}
	if last != frames-1 {
		t.Fatalf("the last ACK names PSN %d, want %d", last, frames-1)
	}
}

// TestNodesShareEventRing drives two sender / receiver pairs through Nodes
// that share their event ring (NewNodes) in an order no fabric driver uses:
// both senders receive ACKs before either transmits, so the second finds
// the shared ring holding the first's events and keeps to its own. Every
// engine ends as it does with a ring of its own (NewNode), and both rings
// were used.
func TestNodesShareEventRing(t *testing.T) {
	type result struct {
		rx     [4]RxCounters
		tx     [4]TxCounters
		una    [2]uint64
		shared uint64 // events through the shared ring
		own    [2]uint64
	}
	run := func(share bool) result {
		var es [4]*Engine
		for i := 0; i < 2; i++ {
			a, b := oneFlow("dcqcn", 64<<10, 0)
			var err error
			if es[2*i], err = NewEngine(a, 0); err != nil {
				t.Fatal(err)
			}
			if es[2*i+1], err = NewEngine(b, 0); err != nil {
				t.Fatal(err)
			}
		}
		store := newTestFrames(512, es[0].MaxFrameBytes())
		var ns []*Node
		if share {
			ns = NewNodes(es[:], store)
		} else {
			for _, e := range es {
				ns = append(ns, NewNode(e, store))
			}
		}
		out := make([]node.Tx, 8)
		// Each sender's first frames, to its receiver; the ACKs back.
		var acks [2][]node.Tx
		for p := 0; p < 2; p++ {
			var data []node.Tx
			for now := int64(0); len(data) < 6 && now < 1_000_000; now += 100 {
				k := ns[2*p].Transmit(now, out)
				data = append(data, out[:k]...)
			}
			for _, d := range data {
				ns[2*p+1].Receive(2_000_000, 0, d.H, store.bufs[d.H][:d.Len])
			}
			for k := ns[2*p+1].Transmit(2_000_000, out); k > 0; k = ns[2*p+1].Transmit(2_000_000, out) {
				acks[p] = append(acks[p], out[:k]...)
			}
			if len(acks[p]) < 2 {
				t.Fatalf("pair %d: %d ACKs, want 2 or more", p, len(acks[p]))
			}
		}
		const now = 3_000_000
		for i := 0; i < 2; i++ {
			for p := 0; p < 2; p++ {
				c := acks[p][i]
				ns[2*p].Receive(now, 0, c.H, store.bufs[c.H][:c.Len])
			}
		}
		for _, p := range []int{1, 0} {
			for ns[2*p].Transmit(now, out) == len(out) {
			}
		}
		var r result
		for i, e := range es {
			r.rx[i], r.tx[i] = e.Counters()
		}
		for p := 0; p < 2; p++ {
			r.una[p] = es[2*p].qps[0].sndUna
			r.own[p] = es[2*p].evOwn.Produced()
		}
		if ns[0].shared != nil {
			r.shared = ns[0].shared.Produced()
		}
		for _, n := range ns {
			if n.evs || !n.e.evOwn.Empty() || n.e.evOne[0] != n.e.evOwn {
				t.Fatalf("a node still has events, or its engine is not on its own ring")
			}
		}
		return r
	}
	own, shared := run(false), run(true)
	if shared.shared != 2 || shared.own != [2]uint64{0, 2} {
		t.Errorf("events through the shared ring %d, own rings %v: want 2, [0 2]", shared.shared, shared.own)
	}
	if own.own != [2]uint64{2, 2} {
		t.Errorf("events through own rings %v without sharing, want [2 2]", own.own)
	}
	if own.una[0] == 0 || own.una[1] == 0 {
		t.Errorf("snd_una %v: the ACKs acknowledged nothing", own.una)
	}
	own.own, shared.own, shared.shared = [2]uint64{}, [2]uint64{}, 0
	if own != shared {
		t.Errorf("with a shared ring the engines end as\n%+v\nwith their own\n%+v", shared, own)
	}
}

// TestNodeLayout checks what Node's comment promises: two cache lines (an
// allocation of 128 bytes starts on a line), the first holding what every
// Receive, Transmit and NextWake reads.
func TestNodeLayout(t *testing.T) {
	var n Node
	if s := unsafe.Sizeof(n); s != 2*lineBytes {
		t.Errorf("Node is %d bytes, want %d", s, 2*lineBytes)
	}
	for _, f := range []struct {
		name string
		end  uintptr
	}{
		{"e", unsafe.Offsetof(n.e) + unsafe.Sizeof(n.e)},
		{"frames", unsafe.Offsetof(n.frames) + unsafe.Sizeof(n.frames)},
		{"ctls", unsafe.Offsetof(n.ctls) + unsafe.Sizeof(n.ctls)},
		{"shared", unsafe.Offsetof(n.shared) + unsafe.Sizeof(n.shared)},
		{"wake", unsafe.Offsetof(n.wake) + unsafe.Sizeof(n.wake)},
		{"size", unsafe.Offsetof(n.size) + unsafe.Sizeof(n.size)},
		{"evs", unsafe.Offsetof(n.evs) + unsafe.Sizeof(n.evs)},
	} {
		if f.end > lineBytes {
			t.Errorf("Node.%s ends at byte %d: past the first line", f.name, f.end)
		}
	}
}
