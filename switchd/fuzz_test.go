package switchd

import "testing"

// FuzzClassify feeds arbitrary frames through Classify, Enqueue and Transmit: a
// malformed frame is counted and dropped, never a panic.
func FuzzClassify(f *testing.F) {
	f.Add(dataFrame(f, 0, 1, 1, 64, false))
	f.Add(dataFrame(f, 1, 0, 2, 100, true))
	f.Add(pfcFrame(1, 3, 100))
	f.Add([]byte{1, 2, 3})
	c := testSpec(2, 10)
	c.CC.Scheme = "hpcc"
	c.PFC.Enabled = true
	c.PFC.XOFFBytes = 10_000
	e, err := New(&c)
	if err != nil {
		f.Fatal(err)
	}
	out := make([]TxItem, 32)
	var now int64
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		frame := append([]byte(nil), in...) // the engine keeps queued frames; the fuzzer reuses in
		now += 1000
		var m Meta
		if e.Classify(int(frame[0]&1), frame, &m) {
			e.Enqueue(now, &m, frame, handleOf(frame))
		}
		e.Service(now)
		for p := 0; p < 2; p++ {
			e.Transmit(now, p, out)
		}
	})
}
