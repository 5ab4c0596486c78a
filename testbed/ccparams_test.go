package testbed

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
)

// TestValidateCCParams: validate refuses what every node would, at the key's
// line of the experiment file. Before, a typo or a bad type in [cc.params]
// surfaced only from the switch's config ("x.toml:27: topology: fabric: switch
// s0: cc.params.rocc:3: ...", the [topology] line and a doubled prefix), a bad
// Q_ref / Q_mid / Q_max order likewise, and a flow capped above its sender's
// link passed.
func TestValidateCCParams(t *testing.T) {
	for _, tc := range []struct {
		name, edit, from, key, want string
		line                        int
	}{
		{"unknown key", "t_ns = 500_000", "t_nss = 500_000", "cc.params.t_nss", "unknown key", 19},
		{"bad type", "t_ns = 500_000", `t_ns = "fast"`, "cc.params.t_ns", "incompatible types", 19},
		{"Q order", "t_ns = 500_000", "t_ns = 500_000\nq_ref_bytes = 300_000\nq_mid_bytes = 200_000", "cc.params.q_ref_bytes",
			"need 0 < Q_ref < Q_mid < Q_max", 20},
		{"rate above link", "start_us = 20_000", "start_us = 20_000\nrate_gbps = 40", "flows[2].rate_gbps",
			"exceeds host 2's 1 Gb/s link", 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(small, tc.edit) {
				t.Fatalf("small has no %q", tc.edit)
			}
			_, err := Decode("x.toml", strings.Replace(small, tc.edit, tc.from, 1), ".")
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line != tc.line || ce.File != "x.toml" || !strings.Contains(ce.Msg, tc.want) {
				t.Fatalf("got %v, want x.toml:%d: %s: ...%s", err, tc.line, tc.key, tc.want)
			}
		})
	}
}
