package pktgen

import "testing"

// FuzzReceiver feeds arbitrary frames to the receive side (loss and latency
// accounting from the pktgen header): foreign or malformed frames are counted,
// never a panic, and the counters stay consistent.
func FuzzReceiver(f *testing.F) {
	for _, roce := range []bool{false, true} {
		pc := PortConfig{}
		if roce {
			pc.Proto = "roce"
		}
		g := newGen(f, pc, 0)
		b := make([]byte, 2048)
		g.Grant(0, 1)
		n := g.Build(b, 10)
		f.Add(append([]byte(nil), b[:n]...))
	}
	f.Add([]byte{1, 2, 3})
	r := NewReceiver(DefaultFlowStats)
	var now int64
	f.Fuzz(func(t *testing.T, frame []byte) {
		now += 100
		r.Packet(frame, now)
		s := r.Stats()
		if s.Packets == 0 {
			t.Fatal("frame not counted")
		}
		for i := range s.Streams {
			if st := &s.Streams[i]; st.Packets > 0 && st.Late > st.Packets {
				t.Fatalf("stream %d: %d late of %d packets", i, st.Late, st.Packets)
			}
		}
	})
}
