package costmodel

import (
	"math"
	"strings"
	"testing"
)

const benchOut = `goos: linux
BenchmarkEngineStages/none/classify-2         	28567587	        41.68 ns/op	        21.09 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkEngineStages/none/classify-2         	28567587	        40.00 ns/op	        20.50 cpu-ns/op	       0 B/op	       0 allocs/op
BenchmarkEngineStages/rocc/queue-2            	 7994320	       127.3 ns/op	        50.63 cpu-ns/op	         0.02499 msgs/op	       0 B/op	       0 allocs/op
BenchmarkForwardSharded/none/64B/1rx
    dataplane_test.go:752: switch-rx0: 329 polls, 329 busy, 128.0 per busy poll, max stall 67239.1 us
BenchmarkForwardSharded/none/64B/1rx-2         	 1000000	      1008 ns/op	         0.4967 Mpps	       947.0 rx-busy-ns/pkt	       719.0 tx-busy-ns/pkt
BenchmarkNoSuffix	 10	 5 ns/op
PASS
`

func TestParseBench(t *testing.T) {
	b, err := ParseBench(strings.NewReader(benchOut))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, unit  string
		least, most float64
	}{
		{"BenchmarkEngineStages/none/classify", "cpu-ns/op", 20.50, 21.09},
		{"BenchmarkEngineStages/rocc/queue", "msgs/op", 0.02499, 0.02499},
		{"BenchmarkForwardSharded/none/64B/1rx", "Mpps", 0.4967, 0.4967},
		{"BenchmarkForwardSharded/none/64B/1rx", "tx-busy-ns/pkt", 719, 719},
		{"BenchmarkNoSuffix", "ns/op", 5, 5},
	} {
		l, ok1 := b.Least(c.name, c.unit)
		m, ok2 := b.Most(c.name, c.unit)
		if !ok1 || !ok2 || l != c.least || m != c.most {
			t.Errorf("%s %s: least %v (%v), most %v (%v), want %v, %v", c.name, c.unit, l, ok1, m, ok2, c.least, c.most)
		}
	}
	if _, ok := b.Least("BenchmarkEngineStages/none/queue", "cpu-ns/op"); ok {
		t.Error("a benchmark that did not run has a value")
	}
	for _, bad := range []string{
		"BenchmarkX-2 10 5 ns/op 7\n",
		"BenchmarkX-2 10 five ns/op\n",
		"BenchmarkX-2 10 NaN ns/op\n",
	} {
		if _, err := ParseBench(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseBench(%q): no error", bad)
		}
	}
}

func FuzzParseBench(f *testing.F) {
	f.Add(benchOut)
	f.Add("BenchmarkX-2 10 5 ns/op 7\n")
	f.Add("BenchmarkA-b-3 1 1e9 x\n")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBench(strings.NewReader(s))
		if err != nil {
			return
		}
		for name, units := range b {
			if !strings.HasPrefix(name, "Benchmark") {
				t.Fatalf("name %q", name)
			}
			for unit, vs := range units {
				for _, v := range vs {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s %s: %v", name, unit, v)
					}
				}
				l, _ := b.Least(name, unit)
				m, _ := b.Most(name, unit)
				if l > m {
					t.Fatalf("%s %s: least %v > most %v", name, unit, l, m)
				}
			}
		}
	})
}

func TestQuietest(t *testing.T) {
	b := Bench{
		"BenchmarkA": {"x": {5, 3, 4}, "y": {1, 2, 0.5}, "z": {1}},
	}
	for _, c := range []struct {
		units []string
		want  int
	}{
		{[]string{"x"}, 1},
		{[]string{"x", "y"}, 2}, // 4.5 against 5 and 6
		{[]string{"x", "z"}, -1},
		{[]string{"w"}, -1},
	} {
		if got := b.Quietest("BenchmarkA", c.units...); got != c.want {
			t.Errorf("Quietest(%v) = %d, want %d", c.units, got, c.want)
		}
	}
	if v, ok := b.At("BenchmarkA", "y", 2); !ok || v != 0.5 {
		t.Errorf("At(y, 2) = %v, %v", v, ok)
	}
	if _, ok := b.At("BenchmarkA", "y", 3); ok {
		t.Error("At past the runs: a value")
	}
}
