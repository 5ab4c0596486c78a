package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// TestXONRetriedOnFullControlQueue: an XON decided while the ingress port's
// control queue is full is counted as a control drop and sent once the
// queue has room, not lost (which would leave the peer paused until its
// pause ran out); an XOFF of the same priority before then supersedes it.
func TestXONRetriedOnFullControlQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		// reXOFF pauses port 2 again and fills it from port 0 past the
		// threshold before port 0's control queue has room: priority 3
		// of port 0 goes back into XOFF, and no XON is due.
		reXOFF bool
	}{
		{name: "retried"},
		{name: "superseded by an XOFF", reXOFF: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := staticPFCSpec()
			h := newHarness(t, c)
			h.inject(0, 2, pfcFrame(2, 3, 0xffff)) // port 2 paused: the queue builds
			for i := 0; i < 30; i++ {
				h.inject(0, 0, dataFrame(t, 0, 2, 1, 1000, false))
			}
			if out := h.tx(0, 0); len(out) != 1 {
				t.Fatalf("%d frames out of port 0, want its XOFF", len(out))
			}
			// Fill port 0's control queue with frames of no kind.
			g := &h.e.eg[0]
			filler := 0
			for b := g.gen.slot(); b != nil; b = g.gen.slot() {
				clear(b[:64])
				g.gen.commit(64)
				filler++
			}
			// Drain port 2 until the XON is decided, port 0 not sending.
			h.inject(1000, 2, pfcFrame(2, 3, 0))
			now := int64(1000)
			for ; now < 10_000_000 && g.xoff&(1<<3) != 0; now += 100 {
				h.tx(now, 2)
			}
			if g.xoff&(1<<3) != 0 {
				t.Fatal("no XON decided")
			}
			if pc := counters0(h.e, 0); pc.DropControl != 1 || pc.ResumesSent != 0 {
				t.Fatalf("XON on a full control queue: %d control drops, %d resumes sent; want 1, 0", pc.DropControl, pc.ResumesSent)
			}
			if tc.reXOFF {
				h.inject(now, 2, pfcFrame(2, 3, 0xffff))
				for i := 0; i < 30; i++ {
					h.inject(now, 0, dataFrame(t, 0, 2, 1, 1000, false))
				}
				if g.xoff&(1<<3) == 0 {
					t.Fatal("no XOFF decided again")
				}
			}
			xon, xoff, other := 0, 0, 0
			// Until the fillers are out and a PFC frame followed them.
			for end := now + 10_000_000; now < end && (other < filler || xon+xoff == 0); now += 100 {
				for _, b := range h.tx(now, 0) {
					var f wire.Frame
					switch err := wire.Decode(b, &f); {
					case err != nil || f.Kind != wire.KindPFC:
						other++
					case f.PFC.PauseQuanta(3) == 0:
						xon++
					default:
						xoff++
					}
				}
			}
			if other != filler {
				t.Errorf("%d filler frames sent, want %d", other, filler)
			}
			want := 1
			if tc.reXOFF {
				want = 0
				if xoff == 0 {
					t.Error("the XOFF after the full queue was never sent")
				}
			}
			if xon != want {
				t.Errorf("%d XONs sent after the control queue drained, want %d", xon, want)
			}
			if pc := counters0(h.e, 0); pc.ResumesSent != uint64(want) {
				t.Errorf("%d resumes counted, want %d", pc.ResumesSent, want)
			}
		})
	}
}
