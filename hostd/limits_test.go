package hostd

import (
	"strings"
	"testing"
	"unsafe"
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
