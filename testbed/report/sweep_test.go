package report

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestMeasureRun measures the fixture's results directory: each metric from
// summary.json, queue.csv or fct.csv as MeasureRun's contract says.
func TestMeasureRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "unit")
	if _, err := fixture(0.001, false).WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	m, err := MeasureRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"jain_index": 0.9,
		// Port 0's queue: 0, 1000, ..., 9000 bytes; the steady half's
		// mean 7000.
		"max_steady_queue_bytes": 7000, "max_p50_queue_bytes": 4000, "max_p99_queue_bytes": 9000, "max_queue_bytes": 9000,
		"flows_completed":   2,
		"total_steady_gbps": 2 + 4 + 0, "min_steady_gbps": 0,
		"min_fair_rate_gbps": 4,
		// Slowdowns 1.92, 3, 5; FCTs 480, 12, 14 us.
		"p50_slowdown": 3, "p99_slowdown": 5, "p99_fct_us": 480,
		"pfc_pauses": 1, "drops": 9, "ecn_marked": 3, "cnps_sent": 54,
	}
	for _, sm := range SweepMetrics() {
		v, ok := m[sm.Name].Get()
		if w, has := want[sm.Name]; !ok || !has || !near(v, w) {
			t.Errorf("%s = %v (present %v), want %v", sm.Name, v, ok, w)
		}
	}
	if len(m) != len(SweepMetrics()) {
		t.Errorf("%d metrics, want %d", len(m), len(SweepMetrics()))
	}

	// A run with no FCTs and no flow active in the steady half: those
	// metrics are missing, not 0.
	r := NewRecorder(Meta{Experiment: "idle", DurationS: 0.001})
	r.AddQueueSample(0, 0, 0)
	r.SetFlow(FlowInfo{ID: 1})
	idle := filepath.Join(t.TempDir(), "idle")
	if _, err := r.WriteAll(idle); err != nil {
		t.Fatal(err)
	}
	if m, err = MeasureRun(idle); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jain_index", "total_steady_gbps", "min_steady_gbps", "min_fair_rate_gbps", "p50_slowdown", "p99_slowdown", "p99_fct_us"} {
		if m[name].Valid() {
			t.Errorf("%s = %v, want missing", name, m[name])
		}
	}
	if v, ok := m["max_queue_bytes"].Get(); !ok || v != 0 {
		t.Errorf("max_queue_bytes = %v, want a measured 0", m["max_queue_bytes"])
	}
}

// sweepFixture is a sweep of q over two values and seed over two, with
// jain_index varying, drops constant, cnps_sent equal but for rounding,
// p99_slowdown missing everywhere and total_steady_gbps missing in run 1.
func sweepFixture() []SweepRun {
	var runs []SweepRun
	for i, q := range []string{"50_000", "100000"} {
		for j, seed := range []string{"1", "2"} {
			m := Metrics{
				"jain_index":        Some(0.9 + 0.01*float64(2*i+j)),
				"drops":             Some(3),
				"p99_slowdown":      None,
				"total_steady_gbps": Some(9 + float64(i)),
				"cnps_sent":         Some(3000 * (1 + 1e-12*float64(i))),
			}
			runs = append(runs, SweepRun{Values: map[string]string{"q": q, "seed": seed}, Metrics: m})
		}
	}
	runs[1].Metrics["total_steady_gbps"] = None
	return runs
}

// TestSweepPlots: a metric that varies is drawn against each swept key but
// the seed, as PNG and SVG; a constant (to rounding) or missing metric is
// not drawn; a
// run missing a metric draws no point (not a 0); the means are per value.
func TestSweepPlots(t *testing.T) {
	dir := t.TempDir()
	files, err := SweepPlots(dir, "sweep of unit", []string{"q", "seed"}, "seed", sweepFixture())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	want := "sweep_jain_index_vs_q.pdf sweep_jain_index_vs_q.png sweep_jain_index_vs_q.svg sweep_total_steady_gbps_vs_q.pdf sweep_total_steady_gbps_vs_q.png sweep_total_steady_gbps_vs_q.svg"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files %s, want %s", got, want)
	}

	runs := sweepFixture()
	axis := newSweepAxis("q", runs)
	if !axis.numeric || axis.x["50_000"] != 50000 {
		t.Errorf("axis %+v", axis)
	}
	m := SweepMetric{Name: "total_steady_gbps", Scale: 1}
	lines := sweepLines(m, "q", axis, nil, runs)
	if len(lines) != 1 || len(lines[0].Runs) != 3 || len(lines[0].Means) != 2 ||
		lines[0].Means[0].X != 50000 || lines[0].Means[0].Y != 9 || lines[0].Means[1].Y != 10 {
		t.Errorf("lines %+v", lines)
	}
	for _, xy := range lines[0].Runs {
		if xy.Y == 0 {
			t.Errorf("a missing value drawn at %v", xy)
		}
	}
	// Error bars: the range of the seeds at each value of two runs or more
	// (q = 50_000 has one run of total_steady_gbps: no bar).
	jl := sweepLines(SweepMetric{Name: "jain_index", Scale: 1}, "q", axis, nil, runs)
	if s := jl[0].Spread; len(s.XYs) != 2 || math.Abs(s.low[0]-0.005) > 1e-12 || math.Abs(s.high[1]-0.005) > 1e-12 || len(lines[0].Spread.XYs) != 1 {
		t.Errorf("error bars %+v (total_steady_gbps %+v)", jl[0].Spread, lines[0].Spread)
	}
	p, err := sweepPlot("t", SweepMetric{Name: "jain_index", Label: "J", Scale: 1}, "q", []string{"q", "seed"}, "seed", runs)
	if err != nil {
		t.Fatal(err)
	}
	if svg := svgText(t, p); !strings.Contains(svg, "min to max over seed") {
		t.Error("the legend does not say what the bars are")
	}
	// A key in bytes is drawn in KB, as the queue metrics are.
	for i := range runs {
		runs[i].Values["cc.params.q_ref_bytes"] = runs[i].Values["q"]
	}
	if a := newSweepAxis("cc.params.q_ref_bytes", runs); a.x["50_000"] != 50 || a.label != "cc.params.q_ref_bytes (KB)" {
		t.Errorf("a bytes key's axis: %+v", a)
	}
}

// TestSweepPlotsKeys: with the seed the only key, the plots are against the
// seed; a key whose values are not numbers is an axis of names; a second
// key that varies gives a line per value.
func TestSweepPlotsKeys(t *testing.T) {
	runs := sweepFixture()
	for i := range runs {
		delete(runs[i].Values, "q")
	}
	files, err := SweepPlots(t.TempDir(), "seeds", []string{"seed"}, "seed", runs)
	if err != nil || len(files) == 0 || !strings.HasSuffix(files[0], "_vs_seed.png") {
		t.Errorf("seed only: %v %v", files, err)
	}

	runs = sweepFixture()
	for i := range runs {
		runs[i].Values["scheme"] = []string{"rocc", "dcqcn"}[i%2]
	}
	axis := newSweepAxis("scheme", runs)
	if axis.numeric || axis.x["dcqcn"] != 1 {
		t.Errorf("axis %+v", axis)
	}
	lines := sweepLines(SweepMetric{Name: "jain_index", Scale: 1}, "scheme", axis, []string{"q"}, runs)
	if len(lines) != 2 || lines[0].Name != "q=50_000" || lines[1].Name != "q=100000" || len(lines[1].Means) != 2 {
		t.Errorf("lines %+v", lines)
	}
	if _, err := SweepPlots(t.TempDir(), "names", []string{"scheme", "q"}, "", runs); err != nil {
		t.Error(err)
	}
}

// TestReadColumnsHeader: a results CSV is read when its header begins with
// the columns read, so fct.csv written before its priority column (or with
// columns appended later) measures the same; another header is an error.
func TestReadColumnsHeader(t *testing.T) {
	const oldFCT = "flow,src,dst,size_bytes,start_us,fct_us,slowdown"
	for _, tc := range []struct {
		name, text string
		want       [][]float64 // nil: an error
	}{
		{"current", FCTCSVHeader + "\n1,h0,h1,1000,0,20,2,3\n", [][]float64{{20, 2}}},
		{"before priority", oldFCT + "\n1,h0,h1,1000,0,20,2\n", [][]float64{{20, 2}}},
		{"a column more", FCTCSVHeader + ",later\n1,h0,h1,1000,0,20,2,3,x\n", [][]float64{{20, 2}}},
		{"missing value", FCTCSVHeader + "\n1,h0,h1,1000,0,,2,\n2,h0,h1,10,0,4,1,\n", [][]float64{{4, 1}}},
		{"other header", "flow,src,dst,size_bytes,start_us,slowdown,fct_us\n1,h0,h1,1000,0,2,20\n", nil},
		{"too few columns", "flow,src,dst,size_bytes,start_us,fct_us\n1,h0,h1,1000,0,20\n", nil},
		{"short row", FCTCSVHeader + "\n1,h0,h1,1000,0\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FCTCSVFile)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readColumns(path, FCTCSVHeader, 5, 6)
			switch {
			case tc.want == nil && err == nil:
				t.Fatalf("read %v, want an error", got)
			case tc.want != nil && err != nil:
				t.Fatal(err)
			case tc.want != nil && !reflect.DeepEqual(got, tc.want):
				t.Errorf("read %v, want %v", got, tc.want)
			}
		})
	}
}
