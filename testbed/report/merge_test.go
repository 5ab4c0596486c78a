package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// randomRows makes the rows of n series (ids 0..n-1), about rows in all,
// each series at its own period from its own start, many times shared
// between series (ties), listed series by series.
func randomRows(n, rows int, seed uint64) []row {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []row
	for k := range n {
		period := float64(1 + rng.IntN(4)*50)
		t := float64(rng.IntN(20) * 50)
		for range rows / n {
			out = append(out, row{t: t, id: k, v: float64(k)})
			t += period
		}
	}
	return out
}

// inTimeOrder returns rs as a runner adds them: by time, ties in the order
// given.
func inTimeOrder(rs []row) []row {
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b row) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	return rs
}

// streamRows adds rs to a fair-rate table streaming into dir, advancing
// every step us of time, and returns the file's bytes and the comparisons
// the writer made.
func streamRows(t testing.TB, dir string, rs []row, step float64) ([]byte, int) {
	r := NewRecorder(Meta{})
	if err := r.Stream(dir); err != nil {
		t.Fatal(err)
	}
	next := step
	for _, x := range rs {
		if x.t >= next {
			if err := r.Advance(next); err != nil {
				t.Fatal(err)
			}
			next = x.t + step
		}
		r.AddFairRate(x.t, x.id, x.v)
	}
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FairRateCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	return b, r.fair.compares
}

// TestSeriesCSVOrder: the writer writes every sample once, in time order,
// ties by id, as a stable sort of all rows would; streaming (rows written
// as time passes) writes the same bytes as writing them all at the end, and
// rows added out of time order between two Advance calls are put in order.
func TestSeriesCSVOrder(t *testing.T) {
	rs := randomRows(300, 30_000, 7)
	var want bytes.Buffer
	want.WriteString(FairRateCSVHeader + "\n")
	for _, x := range inTimeOrder(rs) {
		fmt.Fprintf(&want, "%s,%d,%s\n", appendFloat(nil, x.t), x.id, appendFloat(nil, x.v))
	}
	held := NewRecorder(Meta{})
	for _, x := range rs {
		held.AddFairRate(x.t, x.id, x.v)
	}
	var got bytes.Buffer
	if err := held.WriteFairRateCSV(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("held rows: order differs from a stable sort by time (%d vs %d bytes)", got.Len(), want.Len())
	}
	for _, step := range []float64{1, 50, 1000, 1e9} {
		b, _ := streamRows(t, t.TempDir(), inTimeOrder(rs), step)
		if !bytes.Equal(b, want.Bytes()) {
			t.Errorf("streamed, Advance every %g us: the file differs from a stable sort by time", step)
		}
	}
}

// TestSeriesCSVLinear: with 10,000 series, twice the rows cost at most
// 2.3x the comparisons (the writer is linear in rows; before the heap
// merge it scanned every series for every row: rows x series).
func TestSeriesCSVLinear(t *testing.T) {
	var compares [2]int
	for i, rows := range []int{200_000, 400_000} {
		_, compares[i] = streamRows(t, t.TempDir(), inTimeOrder(randomRows(10_000, rows, 3)), 1000)
	}
	if r := float64(compares[1]) / float64(compares[0]); r > 2.3 {
		t.Errorf("comparisons %d -> %d for twice the rows: %.2fx, want <= 2.3x", compares[0], compares[1], r)
	}
	if per := float64(compares[1]) / 400_000; per > 40 {
		t.Errorf("%.1f comparisons per row with 10,000 series: want about log2(rows held)", per)
	}
}

// BenchmarkSeriesCSV writes rate.csv's shape: 10,000 series (flows), 20
// samples each, streamed as time passes.
func BenchmarkSeriesCSV(b *testing.B) {
	rs := inTimeOrder(randomRows(10_000, 200_000, 3))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		streamRows(b, b.TempDir(), rs, 1000)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200_000, "ns/row")
}

// TestStreamSamplePathAllocatesNothing: once its buffers have grown, adding
// samples and writing them (Advance) allocates nothing.
func TestStreamSamplePathAllocatesNothing(t *testing.T) {
	r := NewRecorder(Meta{DurationS: 1})
	if err := r.Stream(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	tUs := 0.0
	step := func() {
		for p := range 64 {
			r.AddQueueSample(tUs, p, int64(p%8)*1000)
			r.AddRate(RateSample{TUs: tUs, Flow: p, GoodputGbps: float64(p), RateGbps: 1, WindowBytes: 1000})
			r.AddFairRate(tUs, p, 2)
			r.AddPrioQueueSample(tUs, p, 3, int64(p%8)*1000)
			r.AddPFCEvent(tUs, p, 3, p%2 == 0, 5000)
		}
		tUs += 100
		if err := r.Advance(tUs); err != nil {
			t.Fatal(err)
		}
	}
	for range 3000 { // the plots' copies reach their size
		step()
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Errorf("%.1f allocations per sampling period, want 0", n)
	}
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRecorderSamplePath is the recorder's per-sample path as a run
// drives it: 64 ports' queue samples and 64 flows' rate samples a period,
// written (Advance) every period.
func BenchmarkRecorderSamplePath(b *testing.B) {
	r := NewRecorder(Meta{DurationS: 1})
	if err := r.Stream(b.TempDir()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	tUs := 0.0
	for i := range b.N {
		p := i & 63
		r.AddQueueSample(tUs, p, int64(p%8)*1000)
		r.AddRate(RateSample{TUs: tUs, Flow: p, GoodputGbps: float64(p), RateGbps: 1, WindowBytes: 1000})
		if p == 63 {
			tUs += 100
			if err := r.Advance(tUs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if err := r.finish(); err != nil {
		b.Fatal(err)
	}
}
