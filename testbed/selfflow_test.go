package testbed

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
)

// TestWorkloadSelfOnly: a workload sender whose only destination is itself
// is an error at the workload's dsts (a host draws no flow to itself);
// senders that are among several destinations are fine.
func TestWorkloadSelfOnly(t *testing.T) {
	const base = "[experiment]\nname = \"x\"\n[topology]\nhosts = 3\n[[workloads]]\ncdf = \"../configs/workloads/websearch.cdf\"\nsenders = [0, 1]\n"
	for _, tc := range []struct {
		dsts string
		bad  bool
	}{
		{"[0, 1, 2]", false},
		{"[1, 1]", true},
		{"[2]", false},
	} {
		_, err := Decode("x.toml", base+"dsts = "+tc.dsts+"\nload = 0.5\n", ".")
		var ce *config.Error
		switch {
		case !tc.bad && err != nil:
			t.Errorf("dsts %s: %v", tc.dsts, err)
		case tc.bad && (!errors.As(err, &ce) || ce.Key != "workloads[0].dsts" || !strings.Contains(err.Error(), "sender 1's only destination is itself")):
			t.Errorf("dsts %s: got %v, want workloads[0].dsts: sender 1's only destination is itself", tc.dsts, err)
		}
	}
}
