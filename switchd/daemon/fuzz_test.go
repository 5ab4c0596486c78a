package daemon

import (
	"strings"
	"testing"

	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

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
		if len(c.Ports) == 0 || len(c.Ports) > switchd.MaxPorts {
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
		if _, err := switchd.New(s); err != nil {
			t.Fatalf("valid config, no engine: %v", err)
		}
	})
}
