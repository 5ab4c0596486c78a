package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// roccTemplateCase is one rate message built both ways: ep and fb for
// BuildFeedback, the same fields for a RoCCRateTemplate.
type roccTemplateCase struct {
	name string
	ep   Endpoints
	fb   ccalgo.Feedback
}

func roccTemplateCases() []roccTemplateCase {
	sw := Endpoints{DstMAC: macA, SrcMAC: macSw, SrcIP: ipSw, DstIP: testFlow.SrcIP}
	vlan := sw
	vlan.VLAN, vlan.PCP, vlan.VLANID = true, 6, 0xfff
	odd := Endpoints{DstMAC: MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, SrcMAC: macB, SrcIP: 0xffffffff, DstIP: 0xffffffff,
		DSCP: 63, TTL: 1, IPID: 0xffff}
	rate := func(units uint32, df float64, cp uint32, k ccalgo.FlowKey) ccalgo.Feedback {
		return ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, Flow: k, CPID: cp, RateUnits: units, DeltaFBps: df}
	}
	ones := ccalgo.FlowKey{SrcIP: 0xffffffff, DstIP: 0xffffffff, SrcPort: 0xffff, DstPort: 0xffff, DestQP: 0xffffffff}
	return []roccTemplateCase{
		{"typical", sw, rate(333, 10e6, ipSw, testFlow)},
		{"VLAN", vlan, rate(1, 10e6, ipSw+7, testFlow)},
		{"zeros", Endpoints{}, rate(0, 0, 0, ccalgo.FlowKey{})},
		{"ones", odd, rate(0xffffffff, 4294967295, 0xffffffff, ones)},
		{"fraction", sw, rate(10_000, 2.5e6+0.49, 0x0a000001, ccalgo.FlowKey{SrcIP: 1, DstIP: 2, SrcPort: 3, DstPort: 4791, DestQP: 0xabcdef})},
	}
}

// buildRoCCBoth builds c with BuildFeedback and with a template into buffers
// alike beforehand.
func buildRoCCBoth(c *roccTemplateCase) alike {
	var t RoCCRateTemplate
	t.Init(&c.ep)
	return buildAlike(128, 5, 1, "BuildFeedback",
		func(b []byte) (int, error) { return BuildFeedback(b, &c.ep, &c.fb) },
		func(b []byte) (int, error) { return t.Build(b, &c.ep.DstMAC, &c.ep.SrcMAC, c.ep.DstIP, &c.fb) })
}

func TestRoCCRateTemplateEqualsBuildFeedback(t *testing.T) {
	for _, c := range roccTemplateCases() {
		t.Run(c.name, func(t *testing.T) {
			a := buildRoCCBoth(&c)
			var fr Frame
			if err := Decode(a.frame(t), &fr); err != nil || fr.Kind != KindRoCCRate {
				t.Fatalf("decode: %v, kind %v", err, fr.Kind)
			}
			m := RoCCRate(fr.IP.Payload())
			if !fr.IP.VerifyChecksum() || !m.VerifyChecksum() {
				t.Fatal("bad checksum")
			}
			if m.Flow() != (ccalgo.FlowKey{SrcIP: c.fb.Flow.SrcIP, DstIP: c.fb.Flow.DstIP, SrcPort: c.fb.Flow.SrcPort,
				DstPort: c.fb.Flow.DstPort, DestQP: c.fb.Flow.DestQP & 0xffffff}) || m.RateUnits() != c.fb.RateUnits {
				t.Fatalf("message %+v, rate %d", m.Flow(), m.RateUnits())
			}
		})
	}
}

// TestRoCCRatesReused: one RoCCRates builds, flow after flow, what
// BuildFeedback builds for each (a CP's messages of one computation).
func TestRoCCRatesReused(t *testing.T) {
	for _, c := range roccTemplateCases() {
		t.Run(c.name, func(t *testing.T) {
			var tm RoCCRateTemplate
			tm.Init(&c.ep)
			var r RoCCRates
			tm.Rates(&r, &c.fb)
			for _, k := range []ccalgo.FlowKey{c.fb.Flow, {}, testFlow,
				{SrcIP: 0xffffffff, DstIP: 0xffffffff, SrcPort: 0xffff, DstPort: 0xffff, DestQP: 0xffffff}, c.fb.Flow} {
				fb, ep := c.fb, c.ep
				fb.Flow, ep.DstIP = k, k.SrcIP
				a := buildAlike(128, 5, 1, "BuildFeedback",
					func(b []byte) (int, error) { return BuildFeedback(b, &ep, &fb) },
					func(b []byte) (int, error) { return r.Build(b, &ep.DstMAC, &ep.SrcMAC, k.SrcIP, &k) })
				if !a.same() {
					t.Fatalf("flow %+v: %v", k, &a)
				}
			}
		})
	}
}

func TestRoCCRateTemplateShortBuffer(t *testing.T) {
	var tm RoCCRateTemplate
	fb := roccTemplateCases()[0].fb
	if _, err := tm.Build(make([]byte, 128), &macA, &macB, 1, &fb); err != ErrShortBuffer {
		t.Errorf("zero template: %v, want ErrShortBuffer", err)
	}
	ep := roccTemplateCases()[0].ep
	tm.Init(&ep)
	if tm.Len() != EthernetLen+IPv4MinLen+RoCCRateLen {
		t.Fatalf("Len %d", tm.Len())
	}
	if _, err := tm.Build(make([]byte, tm.Len()-1), &macA, &macB, 1, &fb); err != ErrShortBuffer {
		t.Errorf("short buffer: %v, want ErrShortBuffer", err)
	}
	if n, err := tm.Build(make([]byte, tm.Len()), &macA, &macB, 1, &fb); err != nil || n != tm.Len() {
		t.Errorf("exact buffer: %d, %v", n, err)
	}
}

// FuzzRoCCRateTemplate checks that a template builds what BuildFeedback
// builds, for any endpoints and message.
func FuzzRoCCRateTemplate(f *testing.F) {
	for _, c := range roccTemplateCases() {
		k := c.fb.Flow
		f.Add(c.ep.DstMAC[5], c.ep.SrcMAC[0], c.ep.VLAN, c.ep.PCP, c.ep.VLANID, c.ep.SrcIP, c.ep.DstIP, c.ep.DSCP,
			c.ep.TTL, c.ep.IPID, c.fb.RateUnits, c.fb.DeltaFBps, c.fb.CPID, k.SrcIP, k.DstIP, k.SrcPort, k.DstPort, k.DestQP)
	}
	f.Fuzz(func(t *testing.T, dmac, smac byte, vlan bool, pcp uint8, vid uint16, src, dst uint32, dscp, ttl uint8,
		ipid uint16, units uint32, df float64, cp, fsrc, fdst uint32, sport, dport uint16, qp uint32) {
		if !(df >= 0 && df < 1<<32-1) { // BuildFeedback's uint32 conversion of Delta_F
			return
		}
		c := roccTemplateCase{
			ep: Endpoints{DstMAC: MAC{2, 0, 0, 0, 0, dmac}, SrcMAC: MAC{smac, 0, 0, 0, 0, 9}, VLAN: vlan, PCP: pcp,
				VLANID: vid, SrcIP: src, DstIP: dst, DSCP: dscp, TTL: ttl, IPID: ipid},
			fb: ccalgo.Feedback{Kind: ccalgo.FeedbackRoCCRate, RateUnits: units, DeltaFBps: df, CPID: cp,
				Flow: ccalgo.FlowKey{SrcIP: fsrc, DstIP: fdst, SrcPort: sport, DstPort: dport, DestQP: qp}},
		}
		if a := buildRoCCBoth(&c); !a.same() {
			t.Fatal(&a)
		}
	})
}

func BenchmarkRoCCRate(b *testing.B) {
	c := roccTemplateCases()[0]
	buf := make([]byte, 128)
	b.Run("BuildFeedback", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.fb.Flow.DestQP = uint32(i)
			BuildFeedback(buf, &c.ep, &c.fb)
		}
	})
	b.Run("template", func(b *testing.B) {
		var tm RoCCRateTemplate
		tm.Init(&c.ep)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.fb.Flow.DestQP = uint32(i)
			tm.Build(buf, &c.ep.DstMAC, &c.ep.SrcMAC, c.ep.DstIP, &c.fb)
		}
	})
}
