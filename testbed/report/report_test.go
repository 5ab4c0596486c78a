package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestJain(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"all zero", []float64{0, 0}, 0},
		{"one flow", []float64{7}, 1},
		{"equal", []float64{3.3, 3.3, 3.3}, 1},
		{"one takes all of three", []float64{1, 0, 0}, 1.0 / 3},
		{"1..4", []float64{1, 2, 3, 4}, 100.0 / 120},
		{"2 and 4", []float64{2, 4}, 0.9},
		{"6,3,1 (RoCC mixed)", []float64{6, 3, 1}, 100.0 / (3 * 46)},
	} {
		if got := Jain(tc.xs); !near(got, tc.want) {
			t.Errorf("%s: Jain(%v) = %v, want %v", tc.name, tc.xs, got, tc.want)
		}
	}
}

// TestJainApplies: Jain's index is taken where the flows share one steady
// state: every flow with goodput in the steady half had it through the
// whole half, and there are at least two; null otherwise (summary.json),
// with the reason in the terminal table. Each case is a 1000 us run
// sampled every 100 us (steady half t >= 500 us); a flow is given by the
// samples [from, to) it has goodput in and whether it completed.
func TestJainApplies(t *testing.T) {
	type flow struct {
		from, to float64 // us
		gbps     float64
		done     bool
	}
	long := func(gbps float64) flow { return flow{0, 1000, gbps, false} }
	for _, tc := range []struct {
		name           string
		flows          []flow
		jain           float64 // 0: null
		shared, active int
		line           string // the table's Jain line has this
	}{
		{"long-lived flows", []flow{long(2), long(4)}, 0.9, 2, 2, "Jain index over the 2 flows that shared the whole steady half: 0.9000"},
		{"one long-lived flow", []flow{long(2)}, 0, 1, 1, "Jain index: - (it needs 2 flows that shared the whole steady half, the run had 1)"},
		{"no flow", nil, 0, 0, 0, "the run had 0)"},
		{"a flow completed before the steady half", []flow{long(3), long(3), {0, 400, 5, true}}, 1, 2, 2, "over the 2 flows"},
		{"a flow starts in the steady half", []flow{long(3), long(3), {600, 1000, 2, false}}, 0, 2, 3,
			"Jain index: - (only 2 of the 3 flows active in the steady half shared all of it"},
		{"a flow completes in the steady half", []flow{long(3), long(3), {0, 700, 2, true}}, 0, 2, 3, "only 2 of the 3"},
		{"a flow idle in the steady half", []flow{long(3), long(1), {0, 400, 5, false}}, 0.8, 2, 2, "over the 2 flows"},
		// A Poisson workload: two large flows span the run while short ones
		// come and go; the large ones' shares are not a steady state's.
		{"a workload", []flow{long(4), long(6), {100, 300, 1, true}, {500, 600, 1, true}, {700, 900, 2, true}, {800, 1000, 1, false}},
			0, 2, 5, "only 2 of the 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(Meta{Experiment: "jain", DurationS: 0.001})
			for tUs := 0.0; tUs < 1000; tUs += 100 {
				r.AddQueueSample(tUs, 0, 0)
				for i, f := range tc.flows {
					if tUs >= f.from && tUs < f.to {
						r.AddRateSample(tUs, i+1, f.gbps)
					}
				}
			}
			for i, f := range tc.flows {
				if f.done {
					r.AddFCT(i+1, 1000, f.to-f.from, 2)
				}
			}
			s := r.Summarize()
			if got, ok := s.JainIndex.Get(); ok != (tc.jain != 0) || (ok && !near(got, tc.jain)) {
				t.Errorf("jain_index %s, want %v (0: null)", s.JainIndex.Format(4), tc.jain)
			}
			if s.JainFlows != tc.shared || s.SteadyFlows != tc.active || JainApplies(s.JainFlows, s.SteadyFlows) != (tc.jain != 0) {
				t.Errorf("jain_flows %d, steady_flows %d, want %d, %d", s.JainFlows, s.SteadyFlows, tc.shared, tc.active)
			}
			var b bytes.Buffer
			if err := PrintTable(&b, s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.line) {
				t.Errorf("table lacks %q:\n%s", tc.line, b.String())
			}
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if want := `"jain_index":null`; tc.jain == 0 && !bytes.Contains(raw, []byte(want)) {
				t.Errorf("summary.json lacks %s: %s", want, raw)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	oneToTen := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i)
	}
	for _, tc := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, 0},
		{"single", []float64{4}, 99, 4},
		{"p0 is min", oneToTen, 0, 1},
		{"p10", oneToTen, 10, 1},
		{"p11 rounds rank up", oneToTen, 11, 2},
		{"median", oneToTen, 50, 5},
		{"p99 of 10", oneToTen, 99, 10},
		{"p100 is max", oneToTen, 100, 10},
		{"above 100 clamps", oneToTen, 150, 10},
		{"p99 of 1..100", hundred, 99, 99},
		{"p50 of 1..100", hundred, 50, 50},
	} {
		before := append([]float64(nil), tc.xs...)
		if got := Percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("%s: Percentile(p=%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
		if !reflect.DeepEqual(before, tc.xs) {
			t.Errorf("%s: Percentile modified its input", tc.name)
		}
	}
}

func TestMeanAndSlowdown(t *testing.T) {
	if got := Mean([]float64{1, 2, 3, 6}); got != 3 {
		t.Errorf("Mean = %v, want 3", got)
	}
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
	for _, tc := range []struct {
		name                 string
		fct                  float64
		size                 int64
		gbps, rtt, wantIdeal float64
		wantSlowdown         float64
	}{
		// 125000 B = 1e6 bit at 10 Gb/s = 100 us, plus 10 us RTT.
		{"100 KB at 10G", 220, 125000, 10, 10, 110, 2},
		// 1250 B at 100 Gb/s = 0.1 us + 4.9 us RTT = 5 us.
		{"1 packet at 100G", 5, 1250, 100, 4.9, 5, 1},
		{"zero rate", 5, 1250, 0, 0, math.Inf(1), 0},
	} {
		if got := IdealFCTUs(tc.size, tc.gbps, tc.rtt); !near(got, tc.wantIdeal) && got != tc.wantIdeal {
			t.Errorf("%s: IdealFCTUs = %v, want %v", tc.name, got, tc.wantIdeal)
		}
		if got := Slowdown(tc.fct, tc.size, tc.gbps, tc.rtt); !near(got, tc.wantSlowdown) {
			t.Errorf("%s: Slowdown = %v, want %v", tc.name, got, tc.wantSlowdown)
		}
	}
}

func TestBucketOf(t *testing.T) {
	for _, tc := range []struct {
		size      int64
		perDecade int
		lo, hi    int64
	}{
		{1, 1, 1, 10},
		{9, 1, 1, 10},
		{10, 1, 10, 100},
		{999, 1, 100, 1000},
		{1000, 1, 1000, 10000},
		{315, 2, 100, 316},
		{316, 2, 316, 1000},
		{999, 2, 316, 1000},
		{1000, 2, 1000, 3162},
		{3161, 2, 1000, 3162},
		{3162, 2, 3162, 10000},
		{1000000, 2, 1000000, 3162278},
		{1000, 3, 1000, 2154},
		{2154, 3, 2154, 4642},
		{999999999999, 1, 100000000000, 1000000000000},
	} {
		i := bucketOf(tc.size, tc.perDecade)
		lo, hi := bucketEdge(i, tc.perDecade), bucketEdge(i+1, tc.perDecade)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("size %d, %d per decade: bucket [%d,%d), want [%d,%d)", tc.size, tc.perDecade, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestFCTBuckets(t *testing.T) {
	var recs []FCTRecord
	// [1000, 3162): 100 flows with slowdown 100, 99, ..., 1 and FCT 10x that.
	for i := 100; i >= 1; i-- {
		recs = append(recs, FCTRecord{Flow: i, SizeBytes: 1000 + int64(i)*21, FCTUs: float64(10 * i), Slowdown: float64(i)})
	}
	recs = append(recs,
		FCTRecord{Flow: 200, SizeBytes: 500, FCTUs: 3, Slowdown: 1.5},     // [316, 1000)
		FCTRecord{Flow: 201, SizeBytes: 3162, FCTUs: 20, Slowdown: 2},     // [3162, 10000)
		FCTRecord{Flow: 202, SizeBytes: 9999, FCTUs: 40, Slowdown: 4},     // [3162, 10000)
		FCTRecord{Flow: 203, SizeBytes: 9000, FCTUs: 30, Slowdown: 3},     // [3162, 10000)
		FCTRecord{Flow: 204, SizeBytes: 0, FCTUs: 1, Slowdown: 1},         // [0, 1)
		FCTRecord{Flow: 205, SizeBytes: 1000000, FCTUs: 900, Slowdown: 9}, // [1e6, 3.16e6)
	)
	got := FCTBuckets(recs, 2)
	want := []FCTBucket{
		{LoBytes: 0, HiBytes: 1, Count: 1, MedianSlowdown: 1, P99Slowdown: 1, MedianFCTUs: 1, P99FCTUs: 1},
		{LoBytes: 316, HiBytes: 1000, Count: 1, MedianSlowdown: 1.5, P99Slowdown: 1.5, MedianFCTUs: 3, P99FCTUs: 3},
		{LoBytes: 1000, HiBytes: 3162, Count: 100, MedianSlowdown: 50, P99Slowdown: 99, MedianFCTUs: 500, P99FCTUs: 990},
		{LoBytes: 3162, HiBytes: 10000, Count: 3, MedianSlowdown: 3, P99Slowdown: 4, MedianFCTUs: 30, P99FCTUs: 40},
		{LoBytes: 1000000, HiBytes: 3162278, Count: 1, MedianSlowdown: 9, P99Slowdown: 9, MedianFCTUs: 900, P99FCTUs: 900},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FCTBuckets:\n got %+v\nwant %+v", got, want)
	}
	if got := FCTBuckets(nil, 2); got != nil {
		t.Errorf("FCTBuckets(nil) = %v, want nil", got)
	}
	// perDecade < 1 falls back to the default.
	if a, b := FCTBuckets(recs, 0), FCTBuckets(recs, DefaultBucketsPerDecade); !reflect.DeepEqual(a, b) {
		t.Errorf("perDecade 0 differs from the default")
	}
}

// fixture builds a 1000 us run sampled every 100 us (t = 0, 100, ..., 900),
// so the steady half is t >= 500 us, the last 5 samples:
//
//	flow 1: 10 Gb/s then 2 Gb/s   -> avg 6,   steady 2
//	flow 2: 0 then 4 Gb/s         -> avg 2,   steady 4
//	flow 3: 5 Gb/s then 0         -> avg 2.5, steady 0 (not active)
//	port 0: queue 0, 1000, ..., 9000 B -> avg 4500, p99 9000, steady 7000
//	port 1: counters only
//	port 2: fair rate 8 then 3, 3, 4, 4, 6 -> steady fair rate 4
//
// Jain over the active flows {2, 4} is 36/40 = 0.9.
func fixture(durationS float64, reverse bool) *Recorder {
	r := NewRecorder(Meta{Experiment: "unit", Scheme: "rocc", DurationS: durationS, Scaling: "none"})
	steadyFair := []float64{3, 3, 4, 4, 6}
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	if reverse {
		sort.Sort(sort.Reverse(sort.IntSlice(idx)))
	}
	for _, i := range idx {
		tUs := float64(i * 100)
		steady := i >= 5
		r.AddQueueSample(tUs, 0, int64(i*1000))
		if steady {
			r.AddRateSample(tUs, 1, 2)
			r.AddRateSample(tUs, 2, 4)
			r.AddRateSample(tUs, 3, 0)
			r.AddFairRate(tUs, 2, steadyFair[i-5])
		} else {
			r.AddRateSample(tUs, 1, 10)
			r.AddRateSample(tUs, 2, 0)
			r.AddRateSample(tUs, 3, 5)
			r.AddFairRate(tUs, 2, 8)
		}
	}
	r.SetFlow(FlowInfo{ID: 1, Src: "h0", Dst: "h3", Bytes: 750000})
	r.SetFlow(FlowInfo{ID: 2, Src: "h1", Dst: "h3", Bytes: 250000})
	r.SetFlow(FlowInfo{ID: 3, Src: "h2", Dst: "h3", Bytes: 312500, FCTUs: 480})
	r.SetFlow(FlowInfo{ID: 4, Src: "h2", Dst: "h0", Bytes: 125000}) // no samples
	r.SetPortCounters(PortCounters{ID: 1, PFCPauses: 1, Drops: 2, ECNMarked: 3, CNPsSent: 4})
	r.SetPortCounters(PortCounters{ID: 0, Drops: 7, CNPsSent: 50})
	r.AddFCT(3, 312500, 480, 1.92)
	r.AddFCT(4, 2000, 12, 3)
	r.AddFCT(4, 3000, 14, 5)
	return r
}

func wantFixtureSummary(durationS float64) Summary {
	return Summary{
		ResultsVersion: ResultsVersion, Experiment: "unit", Scheme: "rocc", DurationS: durationS,
		JainIndex: Some(0.9), JainFlows: 2, SteadyFlows: 2, SteadyFromS: 500e-6, Scaling: "none", DegradedReasons: []string{},
		// Missing values (no FCT, no samples, no fair rate) are None: null.
		Flows: []FlowSummary{
			{ID: 1, Src: "h0", Dst: "h3", Bytes: 750000, AvgGbps: Some(6), SteadyGbps: Some(2)},
			{ID: 2, Src: "h1", Dst: "h3", Bytes: 250000, AvgGbps: Some(2), SteadyGbps: Some(4)},
			{ID: 3, Src: "h2", Dst: "h3", Bytes: 312500, AvgGbps: Some(2.5), SteadyGbps: Some(0), FCTUs: Some(480)},
			// No rate samples: bytes*8/duration = 1e6 bit / 1000 us = 1 Gb/s,
			// no steady rate; FCT: mean of its two records.
			{ID: 4, Src: "h2", Dst: "h0", Bytes: 125000, AvgGbps: Some(1), FCTUs: Some(13)},
		},
		Ports: []PortSummary{
			{ID: 0, AvgQueueBytes: Some(4500), P99QueueBytes: Some(9000), SteadyQueueBytes: Some(7000), Drops: 7, CNPsSent: 50},
			{ID: 1, PFCPauses: 1, Drops: 2, ECNMarked: 3, CNPsSent: 4},
			{ID: 2, FairRateGbps: Some(4)},
		},
		FCTBuckets: []FCTBucket{
			// Flow 4's two records share [1000, 3162).
			{LoBytes: 1000, HiBytes: 3162, Count: 2, MedianSlowdown: 3, P99Slowdown: 5, MedianFCTUs: 12, P99FCTUs: 14},
			{LoBytes: 100000, HiBytes: 316228, Count: 1, MedianSlowdown: 1.92, P99Slowdown: 1.92, MedianFCTUs: 480, P99FCTUs: 480},
		},
		// Worst first; AddFCT gives no endpoints or start.
		WorstFlows: []WorstFlow{
			{ID: 4, SizeBytes: 3000, FCTUs: 14, Slowdown: 5},
			{ID: 4, SizeBytes: 2000, FCTUs: 12, Slowdown: 3},
			{ID: 3, SizeBytes: 312500, FCTUs: 480, Slowdown: 1.92},
		},
	}
}

// summariesNear compares two summaries, floats within 1e-9 relative.
func summariesNear(t *testing.T, got, want Summary) {
	t.Helper()
	round := func(s Summary) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var walk func(any) any
		walk = func(x any) any {
			switch x := x.(type) {
			case float64:
				return math.Round(x*1e9) / 1e9
			case []any:
				for i := range x {
					x[i] = walk(x[i])
				}
			case map[string]any:
				for k := range x {
					x[k] = walk(x[k])
				}
			}
			return x
		}
		out, _ := json.Marshal(walk(v))
		return string(out)
	}
	if g, w := round(got), round(want); g != w {
		t.Errorf("summary:\n got %s\nwant %s", g, w)
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		durationS float64
		reverse   bool
		wantDurS  float64
	}{
		{"duration given", 0.001, false, 0.001},
		{"samples added backwards", 0.001, true, 0.001},
		// Duration 0: up to the last sample (900 us), so the steady half
		// starts at 450 us: the same five samples.
		{"duration from samples", 0, false, 0.0009},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixture(tc.durationS, tc.reverse)
			want := wantFixtureSummary(tc.wantDurS)
			want.SteadyFromS = tc.wantDurS / 2
			if tc.durationS == 0 {
				// Flow 4's average comes from its bytes over the duration.
				want.Flows[3].AvgGbps = Some(1e6 / (900 * 1e3))
			}
			summariesNear(t, r.Summarize(), want)
		})
	}
}

func TestSummarizeEmptyAndRejected(t *testing.T) {
	r := NewRecorder(Meta{Experiment: "empty", Scheme: "none"})
	r.AddRateSample(math.NaN(), 1, 1)
	r.AddRateSample(1, 1, math.Inf(1))
	r.AddFairRate(1, 0, math.NaN())
	r.AddFCT(1, 100, math.NaN(), 1)
	if got := r.Rejected(); got != 4 {
		t.Errorf("Rejected = %d, want 4", got)
	}
	s := r.Summarize()
	if s.Flows == nil || s.Ports == nil || len(s.Flows) != 0 || len(s.Ports) != 0 {
		t.Errorf("empty summary flows %#v ports %#v, want empty non-nil slices", s.Flows, s.Ports)
	}
	if s.JainIndex.Valid() || s.DurationS != 0 {
		t.Errorf("empty summary: jain %v duration %v", s.JainIndex, s.DurationS)
	}
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"flows": []`) || !strings.Contains(buf.String(), `"ports": []`) {
		t.Errorf("empty lists must encode as []: %s", buf.String())
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "unit")
	r := fixture(0.001, true)
	s, err := r.WriteAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	summariesNear(t, s, wantFixtureSummary(0.001))

	for _, tc := range []struct {
		file   string
		header string
		rows   int
		check  map[int]string // line number -> exact content
	}{
		{QueueCSVFile, "t_us,port,queue_bytes", 10, map[int]string{1: "0,0,0", 10: "900,0,9000"}},
		// No sender rate or window given: empty cells (null).
		{RateCSVFile, "t_us,flow,goodput_gbps,rate_gbps,window_bytes", 30,
			map[int]string{1: "0,1,10,,", 2: "0,2,0,,", 3: "0,3,5,,", 16: "500,1,2,,", 30: "900,3,0,,"}},
		{FairRateCSVFile, "t_us,port,gbps", 10, map[int]string{1: "0,2,8", 6: "500,2,3", 10: "900,2,6"}},
		// AddFCT gives no endpoints, start or priority: empty cells.
		{FCTCSVFile, "flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority", 3,
			map[int]string{1: "3,,,312500,,480,1.92,", 2: "4,,,2000,,12,3,", 3: "4,,,3000,,14,5,"}},
	} {
		lines := readLines(t, filepath.Join(dir, tc.file))
		if len(lines) == 0 || lines[0] != tc.header {
			t.Errorf("%s: header %q, want %q", tc.file, lines, tc.header)
			continue
		}
		if len(lines)-1 != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.file, len(lines)-1, tc.rows)
		}
		for n, want := range tc.check {
			if n >= len(lines) || lines[n] != want {
				t.Errorf("%s line %d: got %q, want %q", tc.file, n, lines[min(n, len(lines)-1)], want)
			}
		}
	}

	for _, name := range []string{QueuePlotFile, RatePlotFile, FairPlotFile, FCTPlotFile} {
		checkPNG(t, filepath.Join(dir, name))
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 432 {
		t.Errorf("%s: %dx%d, want 768x432", path, b.Dx(), b.Dy())
	}
	// A blank image would mean nothing was drawn: expect several colours.
	colours := make(map[[4]uint32]bool)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 3 {
		t.Errorf("%s: only %d colours, plot looks empty", path, len(colours))
	}
}

func TestWriteAllOptionalFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fill    func(r *Recorder)
		present []string
		absent  []string
	}{
		{
			name: "no fair rate, no FCT, idle queues",
			fill: func(r *Recorder) {
				r.AddQueueSample(0, 0, 0)
				r.AddQueueSample(100, 0, 0)
				r.AddRateSample(100, 1, 9.5)
			},
			present: []string{SummaryFile, QueueCSVFile, RateCSVFile, FCTCSVFile, QueuePlotFile, RatePlotFile},
			absent:  []string{FairRateCSVFile, FairPlotFile, FCTPlotFile},
		},
		{
			name: "one FCT bucket only",
			fill: func(r *Recorder) {
				r.AddFCT(1, 1000, 10, 1.1)
			},
			present: []string{SummaryFile, QueueCSVFile, RateCSVFile, FCTCSVFile, FCTPlotFile},
			absent:  []string{FairRateCSVFile, FairPlotFile, QueuePlotFile, RatePlotFile},
		},
		{
			name: "FCT with zero slowdown (linear y)",
			fill: func(r *Recorder) {
				r.AddFCT(1, 1000, 10, 0)
				r.AddFCT(2, 100000, 100, 2)
			},
			present: []string{FCTPlotFile},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := NewRecorder(Meta{Experiment: "opt", Scheme: "dcqcn"})
			tc.fill(r)
			if _, err := r.WriteAll(dir); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.present {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s missing: %v", f, err)
				} else if strings.HasSuffix(f, ".png") {
					checkPNG(t, filepath.Join(dir, f))
				}
			}
			for _, f := range tc.absent {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s written, want absent", f)
				}
			}
		})
	}
}

// TestSummaryJSONContract checks summary.json's field names against the
// results contract (the required and optional keys listed here, which Summary,
// FlowSummary and PortSummary carry), and that LoadSummary reads it back.
func TestSummaryJSONContract(t *testing.T) {
	dir := t.TempDir()
	r := fixture(0.001, false)
	s, err := r.WriteAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SummaryFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	required := []string{"results_version", "experiment", "scheme", "clock", "seed", "started_at", "duration_s",
		"interrupted", "degraded", "degraded_reasons", "jain_index", "jain_flows", "steady_flows", "flows", "ports", "build", "machine"}
	optional := []string{"steady_from_s", "warmup_s", "scaling", "notes", "fct_buckets", "config", "topology",
		"link_gbps", "lcores", "samples_rejected", "captures", "trace", "link_losses", "hottest_port", "worst_flows"}
	checkKeys(t, "summary", doc, required, optional)

	var lists struct {
		Flows []map[string]json.RawMessage `json:"flows"`
		Ports []map[string]json.RawMessage `json:"ports"`
	}
	if err := json.Unmarshal(raw, &lists); err != nil {
		t.Fatal(err)
	}
	if len(lists.Flows) != 4 || len(lists.Ports) != 3 {
		t.Fatalf("%d flows, %d ports, want 4 and 3", len(lists.Flows), len(lists.Ports))
	}
	for _, f := range lists.Flows {
		checkKeys(t, "flow", f, []string{"id", "src", "dst", "bytes", "avg_gbps", "steady_gbps", "steady_rate_gbps", "fct_us"}, nil)
	}
	for _, p := range lists.Ports {
		checkKeys(t, "port", p, []string{"id", "avg_queue_bytes", "p99_queue_bytes", "steady_queue_bytes",
			"fair_rate_gbps", "pfc_pauses", "pfc_activations", "pfc_pauses_by_priority", "pfc_activations_by_priority",
			"pfc_pauses_received", "paused_us", "drops", "ecn_marked", "cnps_sent"}, nil)
	}

	back, err := LoadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, s)
	}

	// Unknown fields are errors.
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"experiment":"x","jain":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSummary(bad); err == nil {
		t.Error("LoadSummary accepted an unknown field")
	}
	if _, err := LoadSummary(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("LoadSummary of a missing file succeeded")
	}
}

func checkKeys(t *testing.T, what string, obj map[string]json.RawMessage, required, optional []string) {
	t.Helper()
	allowed := make(map[string]bool)
	for _, k := range required {
		allowed[k] = true
		if _, ok := obj[k]; !ok {
			t.Errorf("%s: missing key %q", what, k)
		}
	}
	for _, k := range optional {
		allowed[k] = true
	}
	for k := range obj {
		if !allowed[k] {
			t.Errorf("%s: unexpected key %q", what, k)
		}
	}
}

func TestPrintTable(t *testing.T) {
	var buf bytes.Buffer
	if err := fixture(0.001, false).PrintTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"experiment unit", "scheme rocc", "duration 0.001 s",
		"avg Gb/s", "steady Gb/s", "FCT us",
		"6.000", "2.000", "480.0", "13.0",
		"p99 q KB", "4.5       9.0          7.0", "4.000",
		"Jain index over the 2 flows that shared the whole steady half: 0.9000",
		"[1000,3162)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Flow 1 did not complete and port 0 has no fair rate: "-".
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[0] == "1" && f[1] == "h0" && f[6] != "-" {
			t.Errorf("flow 1 FCT shown as %q, want -", f[6])
		}
		if len(f) == 9 && f[0] == "0" && f[4] != "-" {
			t.Errorf("port 0 fair rate shown as %q, want -", f[4])
		}
	}
}

func TestDecimate(t *testing.T) {
	const n = 10000
	ts, vs := make([]float64, n), make([]float64, n)
	for i := range ts {
		ts[i] = float64(i)
		vs[i] = float64(i % 100)
	}
	vs[4321] = 1e6 // a spike must survive
	xys := decimate(ts, vs, 1, 1, 400)
	if len(xys) > 400 {
		t.Errorf("%d points, want <= 400", len(xys))
	}
	spike := false
	for i, p := range xys {
		if p.Y == 1e6 && p.X == 4321 {
			spike = true
		}
		if i > 0 && p.X < xys[i-1].X {
			t.Fatalf("points out of time order at %d", i)
		}
	}
	if !spike {
		t.Error("spike lost by decimation")
	}
	if got := decimate(ts[:10], vs[:10], 2, 3, 400); len(got) != 10 || got[9].X != 18 || got[9].Y != 27 {
		t.Errorf("short series: %v", got)
	}
}

// fill adds ports x samples queue samples and flows x samples rate samples.
func fill(r *Recorder, ports, flows, samples int) {
	for i := 0; i < samples; i++ {
		tUs := float64(i) * 10
		for p := 0; p < ports; p++ {
			r.AddQueueSample(tUs, p, int64((i*p)%150000))
		}
		for f := 0; f < flows; f++ {
			r.AddRateSample(tUs, f, float64((i+f)%10))
		}
	}
}

func BenchmarkAddQueueSample(b *testing.B) {
	b.ReportAllocs()
	r := NewRecorder(Meta{})
	for i := 0; i < b.N; i++ {
		r.AddQueueSample(float64(i), i&3, int64(i))
	}
}

// BenchmarkSummarize100k summarizes 4 ports and 3 flows of 15k samples each
// (105k samples).
func BenchmarkSummarize100k(b *testing.B) {
	b.ReportAllocs()
	r := NewRecorder(Meta{Experiment: "bench", Scheme: "rocc"})
	fill(r, 4, 3, 15000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.Summarize()
	}
}

// BenchmarkWriteCSV100k writes queue.csv and rate.csv of the same 105k samples.
func BenchmarkWriteCSV100k(b *testing.B) {
	b.ReportAllocs()
	r := NewRecorder(Meta{Experiment: "bench", Scheme: "rocc"})
	fill(r, 4, 3, 15000)
	var buf bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := r.WriteQueueCSV(&buf); err != nil {
			b.Fatal(err)
		}
		if err := r.WriteRateCSV(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkWritePlots100k draws the queue and rate plots of 105k samples.
func BenchmarkWritePlots100k(b *testing.B) {
	b.ReportAllocs()
	r := NewRecorder(Meta{Experiment: "bench", Scheme: "rocc"})
	fill(r, 4, 3, 15000)
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.WritePlots(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		labels []string
		marks  int // all ticks, labelled or not
	}{
		{1, 10, []string{"1", "2", "5", "10"}, 10},
		{0.7, 8, []string{"1", "2", "5"}, 11}, // 0.7, 0.8, 0.9 and 1..8
		{150, 450, []string{"200"}, 3},
		{0, 10, nil, 0},
		{5, 1, nil, 0},
	} {
		ticks := logTicks{format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}.Ticks(tc.lo, tc.hi)
		var labels []string
		for _, tk := range ticks {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("[%v,%v]: tick %v outside the range", tc.lo, tc.hi, tk.Value)
			}
		}
		if !reflect.DeepEqual(labels, tc.labels) {
			t.Errorf("[%v,%v]: labels %v, want %v", tc.lo, tc.hi, labels, tc.labels)
		}
		if len(ticks) != tc.marks {
			t.Errorf("[%v,%v]: %d ticks, want %d", tc.lo, tc.hi, len(ticks), tc.marks)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{500, "500 B"},
		{1000, "1 KB"},
		{2000, "2 KB"},
		{1.5e6, "1.5 MB"},
		{1e9, "1 GB"},
		{0.5, "0.5 B"},
	} {
		if got := formatBytes(tc.v); got != tc.want {
			t.Errorf("formatBytes(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestPrintTableManyFlows: a workload's thousands of flows print as one
// line of counts, not a row each.
func TestPrintTableManyFlows(t *testing.T) {
	s := Summary{Experiment: "many", Scheme: "dcqcn"}
	for i := range 1000 {
		f := FlowSummary{ID: i, Src: "h0", Dst: "h1"}
		if i%2 == 0 {
			f.FCTUs = Some(10)
		}
		s.Flows = append(s.Flows, f)
	}
	var buf bytes.Buffer
	if err := PrintTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "1000 flows, 500 completed") || strings.Count(out, "\n") > 10 {
		t.Errorf("table of 1000 flows:\n%s", out)
	}
}

// TestPrintTableManyPorts: a fabric's ports print as totals over all of them
// and rows for the MaxTablePorts busiest, by name, in port order.
func TestPrintTableManyPorts(t *testing.T) {
	s := Summary{Experiment: "fabric", Scheme: "hpcc"}
	for i := range 64 {
		p := PortSummary{ID: i, Name: fmt.Sprintf("leaf%d.p%d", i/16, i%16), Drops: 1, PFCPauses: uint64(i % 3)}
		if i != 5 { // one port without samples: its p99 is missing and ranks last
			p.P99QueueBytes = Some(float64((i * 37) % 64 * 1000))
		}
		s.Ports = append(s.Ports, p)
	}
	var buf bytes.Buffer
	if err := PrintTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "64 ports: 64 drops, 0 marks, 0 CNPs, 63 pauses; the 8 with the largest p99 queue") {
		t.Errorf("no totals line:\n%s", out)
	}
	// (i * 37) % 64 takes every value 0..63 once; port 5's (57) is missing,
	// so the eight largest are 63..55 but 57, listed in port order.
	var want []string
	for i := range 64 {
		if v := (i * 37) % 64; v >= 55 && i != 5 {
			want = append(want, fmt.Sprintf("leaf%d.p%d", i/16, i%16))
		}
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "leaf") {
			got = append(got, f[0])
		}
	}
	if !slices.Equal(got, want) || strings.Count(out, "\n") > 14 {
		t.Errorf("port rows %v, want %v; table:\n%s", got, want, out)
	}
}

// TestWriteSummaryJSONFlows: the flows written by appendFlowJSON are the
// bytes json.MarshalIndent writes, for every kind of value a flow can hold.
func TestWriteSummaryJSONFlows(t *testing.T) {
	values := []OptFloat{{}, Some(0), Some(math.Copysign(0, -1)), Some(1e-7), Some(-1e-7), Some(1e-6),
		Some(1e21), Some(-1e21), Some(999999999999999999999), Some(4.266), Some(123456789.125),
		Some(5e-324), Some(math.MaxFloat64), Some(0.1 + 0.2), Some(1e-10), Some(math.Inf(1)), Some(math.NaN())}
	names := []string{"h0", "workload", `a"b`, "<&>", "é\u2028x", "tab\there", ""}
	var flows []FlowSummary
	for i := range 40 {
		flows = append(flows, FlowSummary{ID: i*7919 - 100, Src: names[i%len(names)], Dst: names[(i+3)%len(names)],
			Bytes: int64(i) << 40, AvgGbps: values[i%len(values)], SteadyGbps: values[(i+1)%len(values)],
			SteadyRateGbps: values[(i+5)%len(values)], FCTUs: values[(i+9)%len(values)]})
	}
	for _, tc := range []struct {
		name  string
		flows []FlowSummary
	}{{"many", flows}, {"one", flows[:1]}, {"none", []FlowSummary{}}, {"nil", nil}} {
		s := Summary{Experiment: "x", Flows: tc.flows, Ports: []PortSummary{{ID: 1}}, Notes: "flows"}
		want, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		var got bytes.Buffer
		if err := WriteSummaryJSON(&got, s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: WriteSummaryJSON differs from MarshalIndent:\n got %s\nwant %s", tc.name, got.Bytes(), want)
		}
	}
}

// TestWorstFlows: the summary keeps the MaxWorstFlows largest slowdowns,
// worst first, the earlier of two equal ones first, a NaN never; a run of
// many flows prints them under its count line.
func TestWorstFlows(t *testing.T) {
	var fs fctStats
	slow := []float64{1, 5, 3, 5, 9, 2, 7, math.NaN(), 8, 5}
	for i, sd := range slow {
		fs.add(&FCTRecord{Flow: i, Src: "h1", Dst: "h2", StartUs: float64(10 * i), SizeBytes: 1000, FCTUs: 10 * sd, Slowdown: sd})
	}
	var ids []int
	for _, w := range fs.worst {
		ids = append(ids, w.ID)
	}
	if want := []int{4, 8, 6, 1, 3}; !slices.Equal(ids, want) {
		t.Fatalf("worst flows %v, want %v", ids, want)
	}
	if w := fs.worst[0]; w.StartUs != Some(40) || w.FCTUs != 90 || w.Src != "h1" {
		t.Errorf("worst flow %+v", w)
	}
	s := Summary{Experiment: "many", Scheme: "dcqcn", WorstFlows: fs.worst}
	for i := range MaxTableFlows + 1 {
		s.Flows = append(s.Flows, FlowSummary{ID: i})
	}
	var buf bytes.Buffer
	if err := PrintTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "the 5 with the largest FCT slowdown") || !strings.Contains(out, "9.00") ||
		strings.Count(out, "\n") != 10 {
		t.Errorf("table:\n%s", out)
	}
}
