package pktgen

import "math/bits"

// Histogram bucket layout (HDR-style, log-linear): values below 2*histSub ns
// have a bucket each; above, each power of two [2^k, 2^(k+1)) is split into
// histSub buckets of width 2^(k-histSubBits), so a bucket's width is at most
// 1/histSub of its lower bound.
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits) * histSub
)

// HistogramRelErr bounds the error of Histogram.Quantile: the value it
// returns is within HistogramRelErr (1/128, 0.78 %) of the exact sample of
// that rank, and exact below 128 ns. A sample falls in a bucket of width at
// most 1/64 of its lower bound, and the quantile is the bucket's middle
// (clamped to the exact Min and Max), at most half a width from the sample.
const HistogramRelErr = 1.0 / (2 * histSub)

// Histogram is a log-linear latency histogram in ns with exact count, sum,
// min and max, and quantiles within HistogramRelErr. Record allocates
// nothing and costs an index computation and a few compares; the zero value
// is empty and ready. It is about 30 KB (3712 buckets); copies (CopyFrom,
// Delta) and quantile scans touch only the buckets between the lowest and
// the highest value recorded.
type Histogram struct {
	Count    uint64
	Sum      uint64 // ns
	Min, Max int64  // ns; 0 when empty
	lo, hi   int    // the buckets in use are within [lo, hi] (when Count > 0)
	buckets  [histBuckets]uint64
}

// Reset empties the histogram.
func (h *Histogram) Reset() {
	if h.Count > 0 {
		clear(h.buckets[h.lo : h.hi+1])
	}
	h.Count, h.Sum, h.Min, h.Max, h.lo, h.hi = 0, 0, 0, 0, 0, 0
}

func histIndex(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1
	return (shift+1)*histSub + int(v>>uint(shift)) - histSub
}

// histRange is the [low, low+width) range of bucket i.
func histRange(i int) (low, width uint64) {
	if i < 2*histSub {
		return uint64(i), 1
	}
	shift := uint(i/histSub - 1)
	return uint64(i%histSub+histSub) << shift, 1 << shift
}

// Record adds one value (ns; a negative one counts as 0).
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	i := histIndex(uint64(v))
	h.buckets[i]++
	if h.Count == 0 {
		h.Min, h.Max, h.lo, h.hi = v, v, i, i
	} else {
		if v < h.Min {
			h.Min, h.lo = v, i
		}
		if v > h.Max {
			h.Max, h.hi = v, i
		}
	}
	h.Count++
	h.Sum += uint64(v)
}

// Merge adds o's values into h.
func (h *Histogram) Merge(o *Histogram) {
	if o.Count == 0 {
		return
	}
	for i := o.lo; i <= o.hi; i++ {
		h.buckets[i] += o.buckets[i]
	}
	if h.Count == 0 {
		h.Min, h.Max, h.lo, h.hi = o.Min, o.Max, o.lo, o.hi
	} else {
		h.Min, h.Max = min(h.Min, o.Min), max(h.Max, o.Max)
		h.lo, h.hi = min(h.lo, o.lo), max(h.hi, o.hi)
	}
	h.Count += o.Count
	h.Sum += o.Sum
}

// CopyFrom makes h a copy of o without allocating, touching only the two
// histograms' buckets in use.
func (h *Histogram) CopyFrom(o *Histogram) {
	h.Reset()
	h.Merge(o)
}

// Delta makes h the values recorded into cur since prev, an earlier copy
// of the same histogram (prev empty: all of cur). Count, Sum and the
// quantiles are exact as for any histogram; Min and Max are exact when cur
// reached a new extreme after prev, else the edges of the lowest and
// highest bucket the interval used (within HistogramRelErr x 2).
func (h *Histogram) Delta(cur, prev *Histogram) {
	h.Reset()
	if cur.Count <= prev.Count {
		return
	}
	h.Count, h.Sum = cur.Count-prev.Count, cur.Sum-prev.Sum
	h.lo, h.hi = -1, cur.lo
	for i := cur.lo; i <= cur.hi; i++ {
		n := cur.buckets[i]
		if prev.Count > 0 && i >= prev.lo && i <= prev.hi {
			n -= prev.buckets[i]
		}
		if n == 0 {
			continue
		}
		h.buckets[i] = n
		if h.lo < 0 {
			h.lo = i
		}
		h.hi = i
	}
	low, _ := histRange(h.lo)
	h.Min = max(int64(low), cur.Min)
	if prev.Count == 0 || cur.Min < prev.Min {
		h.Min = cur.Min
	}
	low, w := histRange(h.hi)
	h.Max = min(int64(low+w-1), cur.Max)
	if prev.Count == 0 || cur.Max > prev.Max {
		h.Max = cur.Max
	}
}

// Mean is the average in ns (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return float64(h.Sum) / float64(h.Count)
}

// Quantile returns the q-quantile (0 < q <= 1) in ns, within
// HistogramRelErr of the ceil(q*Count)-th smallest value: the middle of the
// bucket holding it, clamped to [Min, Max]; 0 when empty.
func (h *Histogram) Quantile(q float64) int64 {
	var out [1]int64
	h.Quantiles([]float64{q}, out[:])
	return out[0]
}

// Quantiles writes the qs-quantiles (ascending, each in (0, 1]) into out
// in one pass over the buckets, as Quantile defines them; it allocates
// nothing.
func (h *Histogram) Quantiles(qs []float64, out []int64) {
	if h.Count == 0 {
		clear(out[:len(qs)])
		return
	}
	var cum uint64
	k := 0
	for i := h.lo; i <= h.hi && k < len(qs); i++ {
		cum += h.buckets[i]
		for k < len(qs) && cum >= rankOf(qs[k], h.Count) {
			low, w := histRange(i)
			out[k] = min(max(int64(low+w/2), h.Min), h.Max)
			k++
		}
	}
	for ; k < len(qs); k++ {
		out[k] = h.Max
	}
}

// rankOf is the 1-based rank of the q-quantile of n values: ceil(q*n), at
// least 1.
func rankOf(q float64, n uint64) uint64 {
	rank := uint64(q * float64(n))
	if float64(rank) < q*float64(n) || rank == 0 {
		rank++
	}
	return min(rank, n)
}

// SummaryQuantiles are the quantiles LatencySummary, the live lines and
// /metrics report: p50, p90, p99 and p99.9.
var SummaryQuantiles = [4]float64{0.5, 0.9, 0.99, 0.999}

// LatencySummary is a Histogram's summary in microseconds: exact count,
// min, mean and max, quantiles within HistogramRelErr.
type LatencySummary struct {
	Count  uint64  `json:"count"`
	MinUs  float64 `json:"min_us"`
	AvgUs  float64 `json:"avg_us"`
	P50Us  float64 `json:"p50_us"`
	P90Us  float64 `json:"p90_us"`
	P99Us  float64 `json:"p99_us"`
	P999Us float64 `json:"p999_us"`
	MaxUs  float64 `json:"max_us"`
}

// Summary summarises the histogram.
func (h *Histogram) Summary() LatencySummary {
	if h.Count == 0 {
		return LatencySummary{}
	}
	var q [len(SummaryQuantiles)]int64
	h.Quantiles(SummaryQuantiles[:], q[:])
	return LatencySummary{
		Count: h.Count,
		MinUs: float64(h.Min) / 1e3, AvgUs: h.Mean() / 1e3,
		P50Us: float64(q[0]) / 1e3, P90Us: float64(q[1]) / 1e3,
		P99Us: float64(q[2]) / 1e3, P999Us: float64(q[3]) / 1e3,
		MaxUs: float64(h.Max) / 1e3,
	}
}
