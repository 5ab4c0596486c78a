package hostd

import (
	"testing"

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
	owed := nb.size
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
