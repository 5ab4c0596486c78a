package report

import (
	"bufio"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A sweep's metrics: one number per run, from the run's summary.json and
// CSVs, for the sweep's index and its plots (docs/results.md, "Overrides and
// sweeps"). Each is missing (None) where the run has no value (no flow
// active in the steady half, no FCT, no queue sample), never 0.

// SweepMetric is one number a sweep measures in every run.
type SweepMetric struct {
	// Name is the metric's index.csv column and its part of a plot's file
	// name (sweep_<name>_vs_<key>.png).
	Name string
	// Label is the plot's y axis label, in the unit after Scale.
	Label string
	// Scale multiplies the value for the plot (1e-3: bytes to KB).
	Scale float64
}

// sweepMetrics are the metrics MeasureRun measures, in index.csv's column
// order. The first three are the index's columns from before the plots.
var sweepMetrics = []SweepMetric{
	{"jain_index", "Jain's fairness index (steady half)", 1},
	{"max_steady_queue_bytes", "steady-half mean queue, busiest port (KB)", 1e-3},
	{"flows_completed", "flows completed", 1},
	{"max_p50_queue_bytes", "median queue, busiest port (KB)", 1e-3},
	{"max_p99_queue_bytes", "p99 queue, busiest port (KB)", 1e-3},
	{"max_queue_bytes", "largest queue sample (KB)", 1e-3},
	{"total_steady_gbps", "total goodput, steady half (Gb/s)", 1},
	{"min_steady_gbps", "smallest flow goodput, steady half (Gb/s)", 1},
	{"min_fair_rate_gbps", "smallest fair rate of a port (Gb/s)", 1},
	{"p50_slowdown", "median FCT slowdown", 1},
	{"p99_slowdown", "p99 FCT slowdown", 1},
	{"p99_fct_us", "p99 FCT (us)", 1},
	{"pfc_pauses", "PFC pause frames sent, all ports", 1},
	{"drops", "packets dropped, all ports", 1},
	{"ecn_marked", "packets marked, all ports", 1},
	{"cnps_sent", "congestion notifications, all ports", 1},
}

// SweepMetrics returns the metrics MeasureRun measures, in index.csv's
// column order.
func SweepMetrics() []SweepMetric { return append([]SweepMetric(nil), sweepMetrics...) }

// Metrics is one run's sweep metrics by SweepMetric.Name: MeasureRun sets
// every one, None where the run has no value. A metric absent from the map
// is missing too.
type Metrics map[string]OptFloat

// MeasureRun measures the sweep metrics of the results directory dir from
// its summary.json, queue.csv and fct.csv:
//
//   - jain_index: summary.json's.
//   - max_steady_queue_bytes, max_p99_queue_bytes: the largest
//     steady_queue_bytes and p99_queue_bytes of any port.
//   - max_p50_queue_bytes: the largest median (nearest rank) of a port's
//     queue samples in queue.csv; max_queue_bytes the largest sample.
//   - flows_completed: flows with an fct_us.
//   - total_steady_gbps, min_steady_gbps: the sum and the smallest of the
//     flows' steady_gbps (flows without one are left out).
//   - min_fair_rate_gbps: the smallest fair_rate_gbps of any port (the
//     bottleneck's, for RoCC).
//   - p50_slowdown, p99_slowdown, p99_fct_us: percentiles (nearest rank)
//     over every record of fct.csv.
//   - pfc_pauses, drops, ecn_marked, cnps_sent: the ports' counters, summed.
func MeasureRun(dir string) (Metrics, error) {
	s, err := LoadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, err
	}
	m := Metrics{}
	for _, sm := range sweepMetrics {
		m[sm.Name] = None
	}
	m["jain_index"] = s.JainIndex
	// most keeps the largest present value of a metric.
	most := func(name string, x OptFloat) {
		if v, ok := x.Get(); ok && v >= m[name].Or(math.Inf(-1)) {
			m[name] = Some(v)
		}
	}
	least := func(name string, x OptFloat) {
		if v, ok := x.Get(); ok && v <= m[name].Or(math.Inf(1)) {
			m[name] = Some(v)
		}
	}
	var pauses, drops, marked, cnps uint64
	for _, p := range s.Ports {
		most("max_steady_queue_bytes", p.SteadyQueueBytes)
		most("max_p99_queue_bytes", p.P99QueueBytes)
		least("min_fair_rate_gbps", p.FairRateGbps)
		pauses += p.PFCPauses
		drops += p.Drops
		marked += p.ECNMarked
		cnps += p.CNPsSent
	}
	if len(s.Ports) > 0 {
		m["pfc_pauses"] = Some(float64(pauses))
		m["drops"] = Some(float64(drops))
		m["ecn_marked"] = Some(float64(marked))
		m["cnps_sent"] = Some(float64(cnps))
	}
	completed := 0
	total, active := 0.0, 0
	for _, f := range s.Flows {
		if f.FCTUs.Valid() {
			completed++
		}
		if g, ok := f.SteadyGbps.Get(); ok {
			total += g
			active++
			least("min_steady_gbps", f.SteadyGbps)
		}
	}
	m["flows_completed"] = Some(float64(completed))
	if active > 0 {
		m["total_steady_gbps"] = Some(total)
	}
	queues, err := readColumns(filepath.Join(dir, QueueCSVFile), QueueCSVHeader, 1, 2)
	if err != nil {
		return nil, err
	}
	byPort := map[float64][]float64{}
	for _, row := range queues {
		byPort[row[0]] = append(byPort[row[0]], row[1])
		most("max_queue_bytes", Some(row[1]))
	}
	for _, q := range byPort {
		most("max_p50_queue_bytes", Some(Percentile(q, 50)))
	}
	fcts, err := readColumns(filepath.Join(dir, FCTCSVFile), FCTCSVHeader, 5, 6)
	if err != nil {
		return nil, err
	}
	if len(fcts) > 0 {
		us := make([]float64, len(fcts))
		slow := make([]float64, len(fcts))
		for i, row := range fcts {
			us[i], slow[i] = row[0], row[1]
		}
		m["p50_slowdown"] = Some(Percentile(slow, 50))
		m["p99_slowdown"] = Some(Percentile(slow, 99))
		m["p99_fct_us"] = Some(Percentile(us, 99))
	}
	return m, nil
}

// readColumns reads the columns cols of a results CSV whose header must
// begin with header's columns up to the last one read: columns appended
// since (fct.csv's priority) or not yet written by an older run change
// nothing. A missing file has no rows; a row with an empty cell in one of
// cols (a missing value) is left out.
func readColumns(path, header string, cols ...int) ([][]float64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || !leadingColumns(sc.Text(), header, slices.Max(cols)+1) {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("report: %s: want the header %s", path, header)
	}
	var rows [][]float64
	line := 1
next:
	for sc.Scan() {
		line++
		cells := strings.Split(sc.Text(), ",")
		row := make([]float64, len(cols))
		for i, c := range cols {
			if c >= len(cells) {
				return nil, fmt.Errorf("report: %s:%d: %d columns, want %d", path, line, len(cells), strings.Count(header, ",")+1)
			}
			if cells[c] == "" {
				continue next
			}
			v, err := strconv.ParseFloat(cells[c], 64)
			if err != nil {
				return nil, fmt.Errorf("report: %s:%d: column %d: %v", path, line, c+1, err)
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// leadingColumns reports whether the CSV header line got has want's first n
// columns first.
func leadingColumns(got, want string, n int) bool {
	g, w := strings.Split(got, ","), strings.Split(want, ",")
	return n <= len(w) && n <= len(g) && slices.Equal(g[:n], w[:n])
}

// SweepRun is one run of a sweep as SweepPlots sees it: the value of each
// swept key (as given to -set) and the run's metrics (MeasureRun).
type SweepRun struct {
	Values  map[string]string
	Metrics Metrics
}

// SweepPlots draws each metric that varies across the runs against each
// swept key that takes two values or more, into dir as
// sweep_<metric>_vs_<key>.png, .svg and .pdf, and returns the files written.
//
// A plot has one point per run (an open circle) and, through the mean of the
// runs at each value, a line with filled marks. replicate is the key whose
// values are repeats of one point (the seed): it is averaged over and not
// drawn against, unless it is the only key that varies. When other keys vary
// too, each combination of their values is a line of its own, named in the
// legend. The x axis is numeric when every value of the key is a number
// (from 0 when none is negative; logarithmic when the values span a factor
// of 100 or more), otherwise the values in the order given; the y axis
// starts at 0. A run missing a metric draws no point for it.
func SweepPlots(dir, title string, keys []string, replicate string, runs []SweepRun) ([]string, error) {
	var xKeys []string
	for _, k := range keys {
		if k != replicate && varies(runs, k) {
			xKeys = append(xKeys, k)
		}
	}
	if len(xKeys) == 0 && replicate != "" && varies(runs, replicate) {
		xKeys, replicate = []string{replicate}, ""
	}
	var written []string
	for _, m := range sweepMetrics {
		if !metricVaries(runs, m.Name) {
			continue
		}
		for _, k := range xKeys {
			p, err := sweepPlot(title, m, k, keys, replicate, runs)
			if err != nil {
				return written, err
			}
			path := filepath.Join(dir, "sweep_"+m.Name+"_vs_"+k+".png")
			files, err := savePlot(p, path)
			written = append(written, files...)
			if err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// varies reports whether key k takes two values or more in runs.
func varies(runs []SweepRun, k string) bool {
	for _, r := range runs[min(1, len(runs)):] {
		if r.Values[k] != runs[0].Values[k] {
			return true
		}
	}
	return false
}

// metricVaries reports whether the runs' present values of metric name
// differ by more than rounding: by more than a millionth of the largest.
func metricVaries(runs []SweepRun, name string) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		if v, ok := r.Metrics[name].Get(); ok {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi-lo > 1e-6*math.Max(math.Abs(lo), math.Abs(hi))
}

// sweepAxis places a swept key's values on the x axis: numbers where every
// value parses as one (TOML's 50_000 included), else positions 0, 1, ...
// in the order the values first appear, labelled with the values.
type sweepAxis struct {
	values  []string
	x       map[string]float64
	numeric bool
	// label is the axis' label: the key, with the unit its values are
	// drawn in (a key in bytes, key_bytes, is drawn in KB, as the queue
	// metrics are).
	label string
}

func newSweepAxis(k string, runs []SweepRun) sweepAxis {
	a := sweepAxis{x: map[string]float64{}, numeric: true}
	for _, r := range runs {
		v := r.Values[k]
		if _, ok := a.x[v]; ok {
			continue
		}
		a.values = append(a.values, v)
		x, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			a.numeric = false
		}
		a.x[v] = x
	}
	a.label = k
	if !a.numeric {
		for i, v := range a.values {
			a.x[v] = float64(i)
		}
	} else if strings.HasSuffix(k, "_bytes") {
		for v, x := range a.x {
			a.x[v] = x * 1e-3
		}
		a.label = k + " (KB)"
	}
	return a
}

// apply sets p's x axis for the axis' values.
func (a sweepAxis) apply(p *plot.Plot) {
	if !a.numeric {
		var ticks []plot.Tick
		for i, v := range a.values {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: v})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.5, float64(len(a.values))-0.5
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range a.x {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	switch {
	case lo > 0 && hi >= 100*lo:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}
		p.X.Min, p.X.Max = lo/1.5, hi*1.5
	case lo >= 0:
		p.X.Min, p.X.Max = 0, max(hi*1.08, 1e-9)
	default:
		pad := 0.08 * (hi - lo)
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
}

// sweepLine is one line of a sweep plot: the runs that share the values of
// the keys other than the plotted one and the replicate (Name, "" when no
// other key varies), as points, and their mean at each x.
type sweepLine struct {
	Name  string
	Runs  plotter.XYs
	Means plotter.XYs
	// Spread is, at each mean of two runs or more, how far the smallest and
	// the largest run lie below and above it (the error bars).
	Spread rangeBars
}

// rangeBars are a sweep line's error bars: at each point, the range of the
// runs averaged there (min to max over the replicates), no distribution
// assumed.
type rangeBars struct {
	plotter.XYs
	low, high []float64
}

// YError is the distance from point i down to the smallest run and up to the
// largest (plotter.YErrorer).
func (b rangeBars) YError(i int) (float64, float64) { return b.low[i], b.high[i] }

// sweepLines groups the runs' values of metric m (scaled) into lines, one per
// combination of the values of the keys others; a run missing m is left out.
func sweepLines(m SweepMetric, k string, axis sweepAxis, others []string, runs []SweepRun) []sweepLine {
	var lines []sweepLine
	index := map[string]int{}
	byX := map[string]map[float64][]float64{}
	for _, r := range runs {
		v, ok := r.Metrics[m.Name].Get()
		if !ok {
			continue
		}
		var parts []string
		for _, o := range others {
			parts = append(parts, o+"="+r.Values[o])
		}
		name := strings.Join(parts, " ")
		i, ok := index[name]
		if !ok {
			i = len(lines)
			index[name] = i
			lines = append(lines, sweepLine{Name: name})
			byX[name] = map[float64][]float64{}
		}
		x, y := axis.x[r.Values[k]], v*m.Scale
		lines[i].Runs = append(lines[i].Runs, plotter.XY{X: x, Y: y})
		byX[name][x] = append(byX[name][x], y)
	}
	for i := range lines {
		for x, ys := range byX[lines[i].Name] {
			lines[i].Means = append(lines[i].Means, plotter.XY{X: x, Y: Mean(ys)})
		}
		sort.Slice(lines[i].Means, func(a, b int) bool { return lines[i].Means[a].X < lines[i].Means[b].X })
		for _, m := range lines[i].Means {
			ys := byX[lines[i].Name][m.X]
			if len(ys) < 2 {
				continue
			}
			lo, hi := slices.Min(ys), slices.Max(ys)
			lines[i].Spread.XYs = append(lines[i].Spread.XYs, m)
			lines[i].Spread.low = append(lines[i].Spread.low, m.Y-lo)
			lines[i].Spread.high = append(lines[i].Spread.high, hi-m.Y)
		}
	}
	return lines
}

// meanShapes mark the means of the lines of a sweep plot: filled, so that
// they stand apart from the runs' open circles.
var meanShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// sweepPlot draws metric m against key k (see SweepPlots).
func sweepPlot(title string, m SweepMetric, k string, keys []string, replicate string, runs []SweepRun) (*plot.Plot, error) {
	axis := newSweepAxis(k, runs)
	// The keys other than k and replicate that vary name the lines.
	var others []string
	for _, o := range keys {
		if o != k && o != replicate && varies(runs, o) {
			others = append(others, o)
		}
	}
	lines := sweepLines(m, k, axis, others, runs)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = axis.label
	p.Y.Label.Text = m.Label
	axis.apply(p)
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.XOffs = -legendInset
	ymin, ymax := 0.0, 0.0
	spread := false // some mean has error bars
	for i, l := range lines {
		for _, xy := range l.Runs {
			ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
		}
		c := plotutil.Color(i)
		sc, err := plotter.NewScatter(l.Runs)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}
		ml, mp, err := plotter.NewLinePoints(l.Means)
		if err != nil {
			return nil, err
		}
		ml.Color, ml.Width, ml.Dashes = c, vg.Points(1.2), plotutil.Dashes(i)
		mp.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: meanShapes[i%len(meanShapes)]}
		p.Add(sc, mp)
		if len(l.Spread.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(l.Spread)
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = c, vg.Points(1), vg.Points(6)
			p.Add(eb)
			spread = true
		}
		thumbs := []plot.Thumbnailer{mp}
		if axis.numeric {
			// A line between values that are not numbers would claim an
			// order between them.
			p.Add(ml)
			thumbs = append(thumbs, ml)
		}
		name := "mean"
		switch {
		case l.Name != "":
			name = l.Name + ", mean"
		case replicate != "":
			name = "mean over " + replicate
		}
		p.Legend.Add(name, thumbs...)
	}
	if len(lines) > 0 {
		each, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		each.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 90}, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}
		p.Legend.Add("one run", each)
		if spread {
			name := "bars: min to max of the runs"
			if replicate != "" {
				name = "bars: min to max over " + replicate
			}
			p.Legend.Add(name)
		}
	}
	if ymin >= 0 {
		p.Y.Min = 0
	}
	if ymax > 0 {
		// Room for the legend's rows above the highest point.
		rows := len(lines) + 1
		if spread {
			rows++
		}
		p.Y.Max = ymax * (1.05 + 0.07*float64(rows))
	}
	return p, nil
}
