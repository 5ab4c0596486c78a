package switchd

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo/dcqcn"
)

// TestTypedParams: a port's Params reach its CP.
func TestTypedParams(t *testing.T) {
	c := testSpec(2, 10)
	c.CC.Scheme = "dcqcn"
	p := dcqcn.DefaultParams(c.Env(0))
	p.KminBytes, p.KmaxBytes = 1, 2
	for i := range c.Ports {
		c.Ports[i].Params = p
	}
	h := newHarness(t, c)
	for i := 0; i < 10; i++ {
		h.inject(0, 0, dataFrame(t, 0, 1, 1, 500, false))
	}
	h.tx(0, 1)
	if counters0(h.e, 1).MarkedCE == 0 {
		t.Error("typed params with Kmax = 2 B did not mark")
	}
}
