package report

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"testing"
)

// randomSeries makes n series (ids 0..n-1) of about rows samples in all,
// each at its own period from its own start, many times shared between
// series (ties).
func randomSeries(n, rows int, seed uint64) []*series {
	rng := rand.New(rand.NewPCG(seed, 1))
	ss := make([]*series, n)
	for k := range ss {
		s := &series{id: k, sorted: true}
		period := float64(1 + rng.IntN(4)*50)
		t := float64(rng.IntN(20) * 50)
		for range rows / n {
			s.add(t, float64(k))
			t += period
		}
		ss[k] = s
	}
	return ss
}

// TestSeriesCSVOrder: the merge writes every sample once, in time order,
// ties by id, as a stable sort of all rows would.
func TestSeriesCSVOrder(t *testing.T) {
	ss := randomSeries(300, 30_000, 7)
	var got bytes.Buffer
	if err := writeSeriesCSV(&got, "t,id,v", ss, appendValue); err != nil {
		t.Fatal(err)
	}
	type row struct {
		t  float64
		id int
		v  float64
	}
	var rows []row
	for _, s := range ss {
		for i := range s.t {
			rows = append(rows, row{s.t[i], s.id, s.v[i]})
		}
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].t < rows[b].t })
	var want bytes.Buffer
	want.WriteString("t,id,v\n")
	for _, r := range rows {
		fmt.Fprintf(&want, "%s,%d,%s\n", appendFloat(nil, r.t), r.id, appendFloat(nil, r.v))
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("merge order differs from a stable sort by time (%d vs %d bytes)", got.Len(), want.Len())
	}
}

// TestSeriesCSVLinear: with 10,000 series, twice the rows cost at most
// 2.3x the comparisons (the merge is linear in rows; before the heap it
// scanned every series for every row: rows x series).
func TestSeriesCSVLinear(t *testing.T) {
	var compares [2]int
	for i, rows := range []int{200_000, 400_000} {
		n, err := mergeSeriesCSV(io.Discard, "t,id,v", randomSeries(10_000, rows, 3), appendValue)
		if err != nil {
			t.Fatal(err)
		}
		compares[i] = n
	}
	if r := float64(compares[1]) / float64(compares[0]); r > 2.3 {
		t.Errorf("comparisons %d -> %d for twice the rows: %.2fx, want <= 2.3x", compares[0], compares[1], r)
	}
	if per := float64(compares[1]) / 400_000; per > 40 { // 2 log2(10,000) ~ 27
		t.Errorf("%.1f comparisons per row with 10,000 series: want about 2 log2(series)", per)
	}
}

// BenchmarkSeriesCSV writes rate.csv's shape: 10,000 series (flows), 20
// samples each.
func BenchmarkSeriesCSV(b *testing.B) {
	ss := randomSeries(10_000, 200_000, 3)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := writeSeriesCSV(io.Discard, "t,id,v", ss, appendValue); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/row")
}
