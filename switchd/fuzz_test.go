package switchd

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

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

// FuzzDecodeConfig: any text either decodes into a valid switch config or
// fails with an error that names the file (and, where it can, line and key).
//
// The seeds are small (a few hundred bytes): the fuzzer mutates them instead of
// spending its time minimising kilobyte-sized example configs.
func FuzzDecodeConfig(f *testing.F) {
	f.Add("[switch]\nmode = \"rtc\"\n[[ports]]\nname = \"p0\"\nlink_gbps = -1\n")
	f.Add(`[[ports]]
name = "p0"
mac = "02:00:00:00:ff:00"
peer_mac = "02:00:00:00:00:00"
link_gbps = 10
[[routes]]
prefix = "10.0.0.0/24"
port = "p0"
[cc]
scheme = "dcqcn"
[pfc]
enabled = true
priorities = [3]
[buffer]
mode = "shared"
alpha = 0.125
[queues]
strict = [7]
weights = [1, 1, 1, 2, 1, 1, 1, 1]
`)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return // configs are small; long inputs only slow the fuzzer down
		}
		c, err := DecodeConfig("fuzz.toml", text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(c.Ports) == 0 || len(c.Ports) > MaxPorts {
			t.Fatalf("valid config with %d ports", len(c.Ports))
		}
		// A valid config's spec builds an engine, once the devices' MACs are in.
		s, err := c.Spec(nil)
		if err != nil {
			t.Fatalf("valid config, no spec: %v", err)
		}
		for i := range s.Ports {
			if s.Ports[i].MAC == (wire.MAC{}) {
				s.Ports[i].MAC = wire.MAC{2, 0, 0, 0, 0xfe, byte(i)}
			}
		}
		if _, err := New(s); err != nil {
			t.Fatalf("valid config, no engine: %v", err)
		}
	})
}
