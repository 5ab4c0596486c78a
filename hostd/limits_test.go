package hostd

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/ccbed/ccbed/config/bounds"
)

// testMem is the memory the bound tests give a spec (Spec.MemBytes).
const testMem = 16 << 30

// TestSizeFieldBounds: the bound of each table-sized field is exactly what
// a quarter of the spec's memory (MemBytes) holds, and the bound itself is accepted
// (checked without building the engine, which would allocate it).
func TestSizeFieldBounds(t *testing.T) {
	for _, tc := range []struct {
		key   string
		set   func(c *Spec, n int)
		entry uintptr
	}{
		{"max_pending", func(c *Spec, n int) { c.MaxPending = n }, unsafe.Sizeof(pendingFlow{})},
		{"max_samples", func(c *Spec, n int) { c.MaxSamples = n }, unsafe.Sizeof(RateSample{})},
		{"max_fcts", func(c *Spec, n int) { c.MaxFCTs = n }, unsafe.Sizeof(FCT{})},
		{"incast[0].flows", func(c *Spec, n int) {
			c.Incast = []Incast{{Dst: ipB, Flows: n, SizeBytes: 1, Repeat: 1}}
		}, unsafe.Sizeof(pendingFlow{})},
	} {
		t.Run(tc.key, func(t *testing.T) {
			most := int(maxEntries(tc.entry, testMem))
			for _, n := range []int{most, most + 1} {
				c := testConfig("h1", ipA, "none")
				c.MemBytes = testMem
				c.ApplyDefaults()
				tc.set(&c, n)
				_, err := resolve(&c)
				if n == most && err != nil {
					t.Fatalf("%d refused: %v", n, err)
				}
				if n > most && (err == nil || !strings.Contains(err.Error(), tc.key)) {
					t.Fatalf("%d: got %v", n, err)
				}
			}
		})
	}
}

// TestCheckSpec: CheckSpec refuses what NewEngine refuses, without
// allocating the engine's tables.
func TestCheckSpec(t *testing.T) {
	c := testConfig("h1", ipA, "none")
	c.MemBytes = testMem
	if err := CheckSpec(c); err != nil {
		t.Fatal(err)
	}
	c.MaxFCTs = int(maxEntries(unsafe.Sizeof(FCT{}), testMem))
	if err := CheckSpec(c); err != nil {
		t.Fatalf("max_fcts at its bound: %v", err)
	}
	c.MaxFCTs++
	if err := CheckSpec(c); err == nil || !strings.Contains(err.Error(), "max_fcts") {
		t.Fatalf("max_fcts over its bound: %v", err)
	}
	if _, err := NewEngine(c, 0); err == nil {
		t.Fatal("NewEngine took what CheckSpec refused")
	}
}

// TestSpecTimeBounds: the spec's times are ns in [0, 2^60] (the
// durations above 0), errors name them by the spec's keys, the bound
// itself is accepted, and an incast's last round (StartNs + (Repeat-1) x
// PeriodNs) is checked without overflowing.
func TestSpecTimeBounds(t *testing.T) {
	const most = bounds.MaxTimeNs
	cdf, err := ParseCDF("t", "100 0.5\n1000 1\n")
	if err != nil {
		t.Fatal(err)
	}
	incast := func(start, period int64, repeat int) []Incast {
		return []Incast{{Dst: ipB, Flows: 1, SizeBytes: 1, StartNs: start, PeriodNs: period, Repeat: repeat}}
	}
	for _, tc := range []struct {
		name string
		mod  func(c *Spec)
		key  string // "": accepted
	}{
		{"base rtt negative", func(c *Spec) { c.BaseRTTNs = -1 }, "base_rtt_ns"},
		{"base rtt at the bound", func(c *Spec) { c.BaseRTTNs = most }, ""},
		{"base rtt over", func(c *Spec) { c.BaseRTTNs = most + 1 }, "base_rtt_ns"},
		{"base rtt max int64", func(c *Spec) { c.BaseRTTNs, c.NakIntervalNs = math.MaxInt64, 0 }, "base_rtt_ns"},
		{"nak interval negative", func(c *Spec) { c.NakIntervalNs = -5 }, "nak_interval_ns"},
		{"rto over", func(c *Spec) { c.RTONs = most + 1 }, "rto_ns"},
		{"sample negative", func(c *Spec) { c.SampleNs = -1 }, "sample_ns"},
		{"sample 1 ns", func(c *Spec) { c.SampleNs = 1 }, ""},
		{"flow start negative", func(c *Spec) { c.Flows = []Flow{{Dst: ipB, StartNs: -1}} }, "flows[0].start_ns"},
		{"flow start at the bound", func(c *Spec) { c.Flows = []Flow{{Dst: ipB, StartNs: most}} }, ""},
		{"incast start over", func(c *Spec) { c.Incast = incast(most+1, 0, 1) }, "incast[0].start_ns"},
		{"incast period negative", func(c *Spec) { c.Incast = incast(0, -1, 1) }, "incast[0].period_ns"},
		{"incast period 0, repeat 2", func(c *Spec) { c.Incast = incast(0, 0, 2) }, "incast[0].period_ns"},
		{"incast last round at the bound", func(c *Spec) { c.Incast = incast(most-6, 3, 3) }, ""},
		{"incast last round over", func(c *Spec) { c.Incast = incast(most-5, 3, 3) }, "incast[0].repeat"},
		{"incast last round overflows int64", func(c *Spec) { c.Incast = incast(most, most, 16) }, "incast[0].repeat"},
		{"workload stop before start", func(c *Spec) {
			c.Workloads = []Workload{{CDF: cdf, Dsts: []uint32{ipB}, Load: 0.5, StartNs: 2000, StopNs: 2000}}
		}, "workloads[0].stop_ns"},
		{"workload stop over", func(c *Spec) {
			c.Workloads = []Workload{{CDF: cdf, Dsts: []uint32{ipB}, Load: 0.5, StopNs: most + 1}}
		}, "workloads[0].stop_ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig("h1", ipA, "none")
			c.MemBytes = testMem
			tc.mod(&c)
			err := CheckSpec(c)
			var se *SpecError
			if tc.key == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.key != "" && (!errors.As(err, &se) || se.Key != tc.key) {
				t.Fatalf("got %v, want an error at %s", err, tc.key)
			}
		})
	}
}
