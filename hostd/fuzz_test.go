package hostd

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// FuzzReceive feeds arbitrary frames to a host engine (the receive path of
// every frame a host gets: data, ACK, NAK, CNP, RoCC rate, P4QCN/QCN feedback,
// PFC) between real traffic: no input may panic, and the engine keeps sending
// and accounting. Seeds are the frames of a real exchange of each scheme.
func FuzzReceive(f *testing.F) {
	schemes := []string{"none", "hpcc", "rcc", "dcqcn", "rocc", "acc"}
	for _, sch := range schemes {
		a, b := oneFlow(sch, 64*1024, 0)
		v := newVnet(f, a, b)
		n := 0
		v.onFrame = func(from int, fr *wire.Frame, raw []byte) bool {
			if n < 6 {
				f.Add(append([]byte(nil), raw...), uint8(from))
				n++
			}
			return true
		}
		v.run(200_000)
	}
	engines := map[string]*Engine{}
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		sch := schemes[int(sel)%len(schemes)]
		e := engines[sch]
		if e == nil {
			a, _ := oneFlow(sch, 0, 0)
			var err error
			if e, err = NewEngine(a, 0); err != nil {
				t.Fatal(err)
			}
			engines[sch] = e
		}
		now := int64(len(frame)) * 1000
		var out Controls
		e.Receive(now, frame, &out)
		e.Service(now)
		buf := make([]byte, e.MaxFrameBytes())
		for i := 0; i < 4 && e.CanSend(now); i++ {
			if n := e.NextData(now, buf); n <= 0 || n > len(buf) {
				break
			}
		}
		rc, _ := e.Counters()
		if rc.Frames == 0 {
			t.Fatal("frame not counted")
		}
	})
}
