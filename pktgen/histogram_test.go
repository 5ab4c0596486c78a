package pktgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactQuantile is the ceil(q*n)-th smallest of sorted, Quantile's rank.
func exactQuantile(sorted []int64, q float64) int64 {
	return sorted[rankOf(q, uint64(len(sorted)))-1]
}

// histCases are known distributions of latencies in ns.
func histCases() []struct {
	name string
	vals []int64
} {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func(n int, f func() float64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(f())
		}
		return out
	}
	i := 0
	return []struct {
		name string
		vals []int64
	}{
		{"small exact", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"constant", gen(1000, func() float64 { return 12345 })},
		{"uniform 1..1e5", gen(100000, func() float64 { i++; return float64(i) })},
		{"exponential 5us", gen(50000, func() float64 { return rng.ExpFloat64() * 5000 })},
		{"lognormal 2us", gen(50000, func() float64 { return math.Exp(math.Log(2000) + rng.NormFloat64()) })},
		{"pareto 1.1", gen(50000, func() float64 { return 1000 / math.Pow(1-rng.Float64(), 1/1.1) })},
		{"bimodal 1us 1ms", gen(20000, func() float64 {
			if rng.IntN(100) == 0 {
				return 1e6 + rng.Float64()*1e5
			}
			return 1000 + rng.Float64()*100
		})},
		{"huge", []int64{1e12, 2e12, 3e12, math.MaxInt64}},
	}
}

// TestHistogramQuantiles: every quantile of known distributions is within
// HistogramRelErr of the exact order statistic of the same rank (exact
// below 128 ns), Quantiles in one pass agrees with Quantile, and count,
// sum, min and max are exact.
func TestHistogramQuantiles(t *testing.T) {
	qs := []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1}
	for _, c := range histCases() {
		t.Run(c.name, func(t *testing.T) {
			var h Histogram
			sorted := slices.Clone(c.vals)
			var sum uint64
			for _, v := range c.vals {
				h.Record(v)
				sum += uint64(v)
			}
			slices.Sort(sorted)
			if h.Count != uint64(len(c.vals)) || h.Sum != sum || h.Min != sorted[0] || h.Max != sorted[len(sorted)-1] {
				t.Fatalf("count %d sum %d min %d max %d", h.Count, h.Sum, h.Min, h.Max)
			}
			got := make([]int64, len(qs))
			h.Quantiles(qs, got)
			for k, q := range qs {
				want := exactQuantile(sorted, q)
				if d := math.Abs(float64(got[k] - want)); d > float64(want)*HistogramRelErr || want < 128 && d != 0 {
					t.Errorf("q%g = %d, exact %d: error %.3g%%, bound %.3g%%", q, got[k], want,
						100*d/float64(want), 100*HistogramRelErr)
				}
				if one := h.Quantile(q); one != got[k] {
					t.Errorf("Quantile(%g) = %d, Quantiles %d", q, one, got[k])
				}
			}
		})
	}
}

// TestHistogramDeltaCopy: the delta of two copies of a histogram is the
// histogram of the values recorded between them (same buckets, so the same
// quantiles); Min and Max are within a bucket; CopyFrom into a used
// histogram and Merge give the same as recording.
func TestHistogramDeltaCopy(t *testing.T) {
	cs := histCases()
	for k := 1; k < len(cs); k++ {
		a, b := cs[k-1].vals, cs[k].vals
		t.Run(cs[k].name, func(t *testing.T) {
			var live, first, second, want, d Histogram
			for _, v := range cs[(k+3)%len(cs)].vals {
				first.Record(v) // dirty: CopyFrom must clear what first held
			}
			for _, v := range a {
				live.Record(v)
			}
			first.CopyFrom(&live)
			for _, v := range b {
				live.Record(v)
				want.Record(v)
			}
			second.CopyFrom(&live)
			d.Delta(&second, &first)
			if d.Count != want.Count || d.Sum != want.Sum || d.buckets != want.buckets {
				t.Fatalf("delta: count %d sum %d, want %d %d (buckets equal %v)", d.Count, d.Sum, want.Count, want.Sum, d.buckets == want.buckets)
			}
			for _, q := range SummaryQuantiles {
				// Quantiles are clamped to Min and Max, which the delta knows
				// within a bucket: compare the buckets' middles.
				if g, w := histIndex(uint64(d.Quantile(q))), histIndex(uint64(want.Quantile(q))); g != w {
					t.Errorf("q%g: delta's bucket %d, want %d", q, g, w)
				}
			}
			if histIndex(uint64(d.Min)) != histIndex(uint64(want.Min)) || histIndex(uint64(d.Max)) != histIndex(uint64(want.Max)) {
				t.Errorf("delta min %d max %d, want %d %d within a bucket", d.Min, d.Max, want.Min, want.Max)
			}
			var m Histogram
			m.Merge(&first)
			m.Merge(&want)
			if m.Count != second.Count || m.Sum != second.Sum || m.Min != second.Min || m.Max != second.Max || m.buckets != second.buckets {
				t.Fatal("merge of the parts differs from the whole")
			}
		})
	}
	var empty, h, d Histogram
	h.Record(5)
	d.Delta(&h, &h)
	if d.Count != 0 || d.Quantile(0.5) != 0 {
		t.Fatalf("delta of equal copies: %+v", d.Summary())
	}
	d.Delta(&h, &empty)
	if d.Count != 1 || d.Min != 5 || d.Max != 5 {
		t.Fatalf("delta from empty: %+v", d.Summary())
	}
}

// TestHistogramAllocs: Record, Quantiles, CopyFrom and Delta allocate
// nothing.
func TestHistogramAllocs(t *testing.T) {
	var h, c, d Histogram
	q := make([]int64, len(SummaryQuantiles))
	v := int64(1)
	if a := testing.AllocsPerRun(1000, func() {
		v = v*7 + 13
		h.Record(v % 1e7)
		h.Quantiles(SummaryQuantiles[:], q)
		d.Delta(&h, &c)
		c.CopyFrom(&h)
	}); a != 0 {
		t.Fatalf("%.1f allocs, want 0", a)
	}
}

// BenchmarkHistogramRecord is the per-packet cost of a latency sample.
func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 4096)
	for i := range vals {
		vals[i] = int64(rng.ExpFloat64() * 5000)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(vals[i&4095])
	}
}
