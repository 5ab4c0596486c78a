package switchd

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo/dcqcn"
	"github.com/ccbed/ccbed/wire"
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

// TestSpecErrors: a Go caller's bad spec is refused by New with a
// *SpecError naming the field by its file key.
func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		mod       func(s *Spec)
	}{
		{"id", "switch.id", func(s *Spec) { s.ID = 0x1000 }},
		{"trust", "switch.trust", func(s *Spec) { s.Trust = "some" }},
		{"no ports", "ports", func(s *Spec) { s.Ports = nil }},
		{"link", "ports[1].link_gbps", func(s *Spec) { s.Ports[1].LinkBps = 0 }},
		{"delay", "ports[0].delay_us", func(s *Spec) { s.Ports[0].DelayNs = -1 }},
		{"faces", "ports[0].faces", func(s *Spec) { s.Trust = TrustTopology }},
		{"no routes", "routes", func(s *Spec) { s.Routes = nil }},
		{"route port", "routes[1].ports", func(s *Spec) { s.Routes[1].Ports = []int{7} }},
		{"host bits", "routes", func(s *Spec) { s.Routes[0].Addr |= 1 }},
		{"base rtt", "cc.base_rtt_us", func(s *Spec) { s.CC.BaseRTTNs = 0 }},
		{"scheme", "ports[2].scheme", func(s *Spec) { s.Ports[2].Scheme = "bbr" }},
		{"xon", "pfc.xon_offset_bytes", func(s *Spec) { s.PFC.Enabled, s.PFC.XONOffsetBytes = true, s.PFC.XOFFBytes }},
		{"samples", "telemetry.sample_buffer", func(s *Spec) { s.SampleBuffer = 1 }},
		{"cp params", "cc.params.dcqcn.kmax_bytes", func(s *Spec) {
			s.CC.Scheme = "dcqcn"
			p := dcqcn.DefaultParams(s.Env(1))
			p.KminBytes = p.KmaxBytes + 1
			s.Ports[1].Params = p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(4, 10)
			tc.mod(&s)
			for _, err := range []error{s.Check(), func() error { _, err := New(&s); return err }()} {
				var se *SpecError
				if !errors.As(err, &se) || se.Key != tc.key {
					t.Fatalf("error %v, want a SpecError at %s", err, tc.key)
				}
			}
		})
	}
	s := testSpec(4, 10)
	s.Ports[3].MAC = wire.MAC{}
	if _, err := New(&s); err == nil || !strings.Contains(err.Error(), "port p3: no MAC") {
		t.Errorf("a port without a MAC: %v", err)
	}
}
