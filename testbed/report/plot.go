package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size and the most points drawn per line: longer series are reduced
// to the minimum and maximum of each of maxPlotPoints/2 consecutive runs of
// samples, which keeps every peak and trough visible.
const (
	plotWidth     = 8 * vg.Inch
	plotHeight    = 4.5 * vg.Inch
	maxPlotPoints = 2000
	// maxPlotSeries is the most series a plot draws: with more (a
	// workload's flows), a sample of them (plotSample).
	maxPlotSeries = 500
	plotChunk     = 32 // points per stroked piece of a line
	// maxLegendLines is the most lines a plot names one by one: with more
	// (a workload's hundreds of flows), each is a thin grey line and the
	// legend says how many there are.
	maxLegendLines = 10
	// legendInset keeps the legend off the plot's right edge.
	legendInset = vg.Length(8)
	// gapFactor: consecutive samples further apart than gapFactor times the
	// series' typical spacing are not joined (the series stopped, e.g. a flow
	// that ended, and started again).
	gapFactor = 3
)

// RefLine is a horizontal reference line on a plot: a scheme's target queue
// (RoCC's Q_ref, DCQCN's Kmin and Kmax) or a fair share (C/N), in the plot's
// units (bytes for the queue plot, Gb/s for the rate plots).
type RefLine struct {
	Label string
	Y     float64
}

// decimator is a series' bounded copy for its plot: the minimum and maximum
// (in time order) of each run of width consecutive samples, at most maxBins
// runs. When the runs are full, neighbours merge and the width doubles, so a
// series of any length is held in at most maxBins runs (2 points each), and
// every peak and trough stays visible. A series of up to maxBins samples is
// held whole.
type decimator struct {
	maxBins int // 0: maxPlotPoints/2
	width   int
	open    int // samples in the last run
	bins    []minMax
}

// minMax is one run of samples: its smallest and largest sample (the first
// of equals).
type minMax struct {
	tMin, vMin, tMax, vMax float64
}

// add appends a sample, later than the ones before.
func (d *decimator) add(t, v float64) {
	if n := len(d.bins); n > 0 && d.open < d.width {
		b := &d.bins[n-1]
		if v < b.vMin {
			b.tMin, b.vMin = t, v
		}
		if v > b.vMax {
			b.tMax, b.vMax = t, v
		}
		d.open++
		return
	}
	if d.maxBins == 0 {
		d.maxBins = maxPlotPoints / 2
	}
	if d.width == 0 {
		d.width = 1
		d.bins = make([]minMax, 0, min(d.maxBins, 64))
	}
	if len(d.bins) >= d.maxBins { // merge neighbours: every run is full
		k := 0
		for i := 0; i < len(d.bins); i += 2 {
			m := d.bins[i]
			if i+1 < len(d.bins) {
				o := d.bins[i+1]
				if o.vMin < m.vMin {
					m.tMin, m.vMin = o.tMin, o.vMin
				}
				if o.vMax > m.vMax {
					m.tMax, m.vMax = o.tMax, o.vMax
				}
			}
			d.bins[k] = m
			k++
		}
		d.bins = d.bins[:k]
		d.width *= 2
		if len(d.bins)%2 == 1 && d.width > 1 {
			// The last run merged alone: it holds half a width and stays
			// open for the rest.
			d.open = d.width / 2
			d.add(t, v)
			return
		}
	}
	d.bins = append(d.bins, minMax{t, v, t, v})
	d.open = 1
}

// last is the time of the latest sample held, 0 when none.
func (d *decimator) last() float64 {
	if len(d.bins) == 0 {
		return 0
	}
	b := d.bins[len(d.bins)-1]
	return max(b.tMin, b.tMax)
}

// points returns the held points in time order, scaled.
func (d *decimator) points(xScale, yScale float64) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(d.bins))
	for _, b := range d.bins {
		t1, v1, t2, v2 := b.tMin, b.vMin, b.tMax, b.vMax
		if t2 < t1 {
			t1, v1, t2, v2 = t2, v2, t1, v1
		}
		xys = append(xys, plotter.XY{X: t1 * xScale, Y: v1 * yScale})
		if t2 != t1 || v2 != v1 {
			xys = append(xys, plotter.XY{X: t2 * xScale, Y: v2 * yScale})
		}
	}
	return xys
}

// decimate returns the points of the series (t, v) as a decimator holding
// at most maxPts points keeps them.
func decimate(t, v []float64, xScale, yScale float64, maxPts int) plotter.XYs {
	d := decimator{maxBins: max(maxPts/2, 1)}
	if len(t) <= maxPts {
		d.maxBins = max(len(t), 1)
	}
	for i := range t {
		d.add(t[i], v[i])
	}
	return d.points(xScale, yScale)
}

// plotSample chooses the series a plot keeps a copy of: all of them up to
// maxPlotSeries; beyond, those whose id hashes to 0 modulo 2^level, the
// level rising as series come, so that a plot holds at most maxPlotSeries
// series (maxPlotSeries x maxPlotPoints points) spread over the whole run,
// whatever the number of flows.
type plotSample struct {
	level uint
	kept  int
}

// keeps reports whether the series id is in the sample.
func (ps *plotSample) keeps(id int) bool {
	x := uint64(id) + 0x9e3779b97f4a7c15 // splitmix64's finaliser
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return x&(1<<ps.level-1) == 0
}

// admit gives list[i] a copy when the sample keeps it, and drops copies
// from the sample when it holds more than maxPlotSeries.
func (ps *plotSample) admit(list []seriesStat, i int) {
	if !ps.keeps(list[i].id) {
		return
	}
	list[i].plot = &decimator{}
	ps.kept++
	for ps.kept > maxPlotSeries {
		ps.level++
		for j := range list {
			if list[j].plot != nil && !ps.keeps(list[j].id) {
				list[j].plot = nil
				ps.kept--
			}
		}
	}
}

// timeAxis picks the time unit for a run of lastUs microseconds: the factor
// from us and the axis label.
func timeAxis(lastUs float64) (float64, string) {
	if lastUs >= 10000 {
		return 1e-3, "time (ms)"
	}
	return 1, "time (us)"
}

// savePNG draws p into a PNG at path.
func savePNG(p *plot.Plot, path string) error {
	c := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(96))
	p.Draw(draw.New(c))
	return writeFile(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	})
}

// saveSVG draws p into an SVG (vector, for papers) at path.
func saveSVG(p *plot.Plot, path string) error {
	return saveCanvas(p, vgsvg.New(plotWidth, plotHeight), path)
}

// saveCanvas draws p on c and writes c to path.
func saveCanvas(p *plot.Plot, c vg.CanvasWriterTo, path string) error {
	p.Draw(draw.New(c))
	return writeFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

// pdfDate is the creation and modification date every PDF records: a fixed
// one, so that a rerun's PDFs are byte-identical like its other files (the
// run's own date is summary.json's started_at). The PDF library takes it as
// a process-wide default, which nothing else in ccbed sets.
var pdfDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func init() {
	fpdf.SetDefaultCreationDate(pdfDate)
	fpdf.SetDefaultModificationDate(pdfDate)
}

// savePDF draws p into a PDF at path, its fonts embedded (as conferences'
// camera-ready checks require).
func savePDF(p *plot.Plot, path string) error {
	return saveCanvas(p, vgpdf.New(plotWidth, plotHeight), path)
}

// savePlot draws p at pngPath as a PNG and beside it, with the same name,
// as an SVG and a PDF (vector, for papers), and returns the three paths.
func savePlot(p *plot.Plot, pngPath string) ([]string, error) {
	base := strings.TrimSuffix(pngPath, ".png")
	out := []string{pngPath, base + ".svg", base + ".pdf"}
	for i, save := range []func(*plot.Plot, string) error{savePNG, saveSVG, savePDF} {
		if err := save(p, out[i]); err != nil {
			return out[:i], err
		}
	}
	return out, nil
}

// splitGaps cuts xys where consecutive points are further apart in x than
// gapFactor times the median spacing, so that a line does not bridge a
// stretch without samples.
func splitGaps(xys plotter.XYs) []plotter.XYs {
	if len(xys) < 3 {
		return []plotter.XYs{xys}
	}
	d := make([]float64, 0, len(xys)-1)
	for i := 1; i < len(xys); i++ {
		d = append(d, xys[i].X-xys[i-1].X)
	}
	sort.Float64s(d)
	limit := gapFactor * d[len(d)/2]
	if !(limit > 0) {
		return []plotter.XYs{xys}
	}
	var out []plotter.XYs
	start := 0
	for i := 1; i < len(xys); i++ {
		if xys[i].X-xys[i-1].X > limit {
			out = append(out, xys[start:i])
			start = i
		}
	}
	return append(out, xys[start:])
}

// linePlot plots one line per series (their plot copies), labelled
// label+id, from time 0, with the reference lines refs (in the series' units
// before yScale); total is the number of series the plotted ones were
// sampled from (plotSample). Lines that would lie on one another stay apart
// by dash pattern as well as colour; a line is not drawn across a gap in its
// samples; with more than maxLegendLines series, each is a thin grey line
// under one legend entry; the y axis leaves room above the data for the
// legend. hot, when not nil (one of ss), is singled out: named "(hottest)"
// in the legend, and drawn in colour over the grey lines when there are many.
func linePlot(title, yLabel, label string, ss []*seriesStat, total int, yScale float64, refs []RefLine, hot *seriesStat) (*plot.Plot, error) {
	var last float64
	for _, s := range ss {
		last = max(last, s.plot.last())
	}
	xScale, xLabel := timeAxis(last)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Min = 0
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.XOffs = -legendInset // the thumbnails clear the right edge
	many := len(ss) > maxLegendLines
	// With many series, every line is one grey stroke of one plotter:
	// a plotter a flow (a workload's hundreds of thousands) would cost the
	// plot's bookkeeping per plotter more than the drawing.
	grey := &greyLines{style: draw.LineStyle{Color: color.Gray{Y: 150}, Width: vg.Points(0.5)}}
	ymax := 0.0
	for k, s := range ss {
		xys := s.plot.points(xScale, yScale)
		for _, xy := range xys {
			ymax = math.Max(ymax, xy.Y)
		}
		first := true
		for _, seg := range splitGaps(xys) {
			// The rasterizer behind vgimg (freetype's) searches a list of
			// the cells a path covers for every cell it adds, so one long,
			// dense path costs time quadratic in its length (seconds per
			// plot for a noisy queue). Stroking the line in short
			// overlapping pieces keeps that list short and draws the same
			// picture.
			for start := 0; start < len(seg) || start == 0; start += plotChunk {
				end := min(start+plotChunk+1, len(seg))
				if many {
					if err := grey.add(seg[start:end]); err != nil {
						return nil, err
					}
					continue
				}
				l, err := plotter.NewLine(seg[start:end])
				if err != nil {
					return nil, err
				}
				l.Color = plotutil.Color(k)
				l.Dashes = plotutil.Dashes(k)
				l.Width = vg.Points(1.2)
				p.Add(l)
				if first {
					name := fmt.Sprintf("%s %d", label, s.id)
					if s == hot {
						name += " (hottest)"
					}
					p.Legend.Add(name, l)
				}
				first = false
			}
		}
	}
	if many { // added once filled: Add reads its data range
		p.Add(grey)
		name := fmt.Sprintf("%d %ss (one grey line each)", total, label)
		if total > len(ss) {
			name = fmt.Sprintf("%d %ss, %d drawn (one grey line each)", total, label, len(ss))
		}
		p.Legend.Add(name, grey)
		if hot != nil && hot.plot != nil {
			named := false
			for _, seg := range splitGaps(hot.plot.points(xScale, yScale)) {
				for start := 0; start < len(seg) || start == 0; start += plotChunk {
					l, err := plotter.NewLine(seg[start:min(start+plotChunk+1, len(seg))])
					if err != nil {
						return nil, err
					}
					l.Color = plotutil.Color(0)
					l.Width = vg.Points(1.2)
					p.Add(l)
					if !named {
						p.Legend.Add(fmt.Sprintf("%s %d (hottest)", label, hot.id), l)
						named = true
					}
				}
			}
		}
	}
	for _, r := range refs {
		y := r.Y * yScale
		ymax = math.Max(ymax, y)
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: last * xScale, Y: y}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		l.Width = vg.Points(0.8)
		p.Add(l)
		p.Legend.Add(r.Label, l)
	}
	entries := len(refs) + min(len(ss), maxLegendLines)
	if many {
		entries = len(refs) + 1
		if hot != nil && hot.plot != nil {
			entries++
		}
	}
	if ymax > 0 {
		// Room for the legend's rows above the highest point.
		p.Y.Max = ymax * (1.05 + 0.07*float64(entries))
	}
	return p, nil
}

// greyLines is many polylines drawn in one style by one plotter (a
// plot.Plotter, plot.DataRanger and plot.Thumbnailer).
type greyLines struct {
	style                  draw.LineStyle
	lines                  []plotter.XYs
	xmin, xmax, ymin, ymax float64
}

// add appends a polyline, checked as plotter.NewLine checks its points.
func (g *greyLines) add(xys plotter.XYs) error {
	pts, err := plotter.CopyXYs(xys)
	if err != nil {
		return err
	}
	if len(g.lines) == 0 {
		g.xmin, g.xmax, g.ymin, g.ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	}
	for _, p := range pts {
		g.xmin, g.xmax = math.Min(g.xmin, p.X), math.Max(g.xmax, p.X)
		g.ymin, g.ymax = math.Min(g.ymin, p.Y), math.Max(g.ymax, p.Y)
	}
	g.lines = append(g.lines, pts)
	return nil
}

// Plot strokes every polyline, clipped to the canvas.
func (g *greyLines) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	var ps []vg.Point
	for _, l := range g.lines {
		ps = ps[:0]
		for _, p := range l {
			ps = append(ps, vg.Point{X: trX(p.X), Y: trY(p.Y)})
		}
		c.StrokeLines(g.style, c.ClipLinesXY(ps)...)
	}
}

// DataRange is the extent of every point.
func (g *greyLines) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(g.lines) == 0 {
		return 0, 0, 0, 0
	}
	return g.xmin, g.xmax, g.ymin, g.ymax
}

// Thumbnail draws the legend's sample of the style.
func (g *greyLines) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(g.style, c.Min.X, y, c.Max.X, y)
}

// WritePlots writes the PNG plots whose data exist into dir: queue.png (queue
// over time, one line per port with a non-zero sample, or every port when
// all stayed empty), rate.png (rate of each flow), fairrate.png (fair rate of
// each port, when recorded) and fct_slowdown.png (median and p99 slowdown by
// flow size bucket, log x, when there are FCT records), each beside an SVG
// of the same. The lines are drawn from the series' bounded copies
// (decimator; at most maxPlotSeries series a plot, plotSample), made as
// the rows were written, so that a plot costs the same memory for a run of
// any length. It returns the paths written. dir is created if missing.
func (r *Recorder) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.view()
	var written []string
	// Each plot as a PNG, with an SVG and a PDF beside it (same name).
	save := func(p *plot.Plot, name string) error {
		files, err := savePlot(p, filepath.Join(dir, name))
		written = append(written, files...)
		return err
	}

	title := r.meta.Experiment + " (" + r.meta.Scheme + ")"
	for _, pl := range []struct {
		st                  *seriesStats
		busy                bool // only the series with a non-zero sample, when there are any
		file, what, y, name string
		yScale              float64
	}{
		{v.queue, true, QueuePlotFile, "egress queue: ", "queue (KB)", "port", 1e-3},
		{v.rate, false, RatePlotFile, "flow rate: ", "goodput (Gb/s)", "flow", 1},
		{v.fair, false, FairPlotFile, "fair rate: ", "fair rate (Gb/s)", "port", 1},
	} {
		lines, total := plotted(pl.st, pl.busy)
		if len(lines) == 0 {
			continue
		}
		var hot *seriesStat
		if pl.busy { // the queue: the port of the largest p99, as compare picks it
			hot = hottest(lines)
		}
		p, err := linePlot(pl.what+title, pl.y, pl.name, lines, total, pl.yScale, r.refs[pl.file], hot)
		if err != nil {
			return written, err
		}
		if err := save(p, pl.file); err != nil {
			return written, err
		}
	}
	if buckets := v.fct.summary(); len(buckets) > 0 {
		p, err := slowdownPlot("FCT slowdown: "+title, buckets)
		if err != nil {
			return written, err
		}
		if err := save(p, FCTPlotFile); err != nil {
			return written, err
		}
	}
	return written, nil
}

// hottest is the series of ss with the largest p99 sample, then the largest
// mean, then the lowest id (ss is by id); nil when none has counts or every
// p99 is 0.
func hottest(ss []*seriesStat) *seriesStat {
	var best *seriesStat
	var bestP99, bestMean float64
	for _, s := range ss {
		if s.counts == nil || s.n == 0 {
			continue
		}
		p99, mean := percentileCounts(s.counts, s.n, 99), s.sum/float64(s.n)
		if p99 > 0 && (best == nil || p99 > bestP99 || (p99 == bestP99 && mean > bestMean)) {
			best, bestP99, bestMean = s, p99, mean
		}
	}
	return best
}

// plotted returns the series of st a plot draws, by id, and how many series
// they were sampled from: with busy, those with a non-zero sample (all when
// none has one).
func plotted(st *seriesStats, busy bool) ([]*seriesStat, int) {
	var all, nonzero []*seriesStat
	total, totalNonzero := len(st.list), 0
	for i := range st.list {
		s := &st.list[i]
		if s.nonzero {
			totalNonzero++
		}
		if s.plot == nil {
			continue
		}
		all = append(all, s)
		if s.nonzero {
			nonzero = append(nonzero, s)
		}
	}
	if busy && len(nonzero) > 0 {
		all, total = nonzero, totalNonzero
	}
	slices.SortFunc(all, func(a, b *seriesStat) int { return a.id - b.id })
	return all, total
}

// bucketX is where a size bucket sits on the log x axis: the geometric
// middle of its edges.
func bucketX(b FCTBucket) float64 {
	lo := math.Max(float64(b.LoBytes), 0.5)
	return math.Sqrt(lo * float64(b.HiBytes))
}

// slowdownPlot plots the median and p99 slowdown of each size bucket against
// flow size on a log x axis (and a log y axis when every slowdown is > 0).
func slowdownPlot(title string, buckets []FCTBucket) (*plot.Plot, error) {
	med := make(plotter.XYs, len(buckets))
	p99 := make(plotter.XYs, len(buckets))
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for k, b := range buckets {
		x := bucketX(b)
		med[k] = plotter.XY{X: x, Y: b.MedianSlowdown}
		p99[k] = plotter.XY{X: x, Y: b.P99Slowdown}
		ymin = math.Min(ymin, math.Min(b.MedianSlowdown, b.P99Slowdown))
		ymax = math.Max(ymax, math.Max(b.MedianSlowdown, b.P99Slowdown))
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "flow size (bytes)"
	p.Y.Label.Text = "FCT slowdown"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{format: formatBytes}
	// Explicit ranges: a single bucket would otherwise give a zero range,
	// which the axis widens to include non-positive values.
	p.X.Min = math.Max(float64(buckets[0].LoBytes), 0.5)
	p.X.Max = float64(buckets[len(buckets)-1].HiBytes)
	if ymin > 0 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}
		p.Y.Min, p.Y.Max = ymin/1.5, ymax*1.5
	} else {
		p.Y.Min, p.Y.Max = math.Min(ymin, 0), ymax+1
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for k, d := range []struct {
		name string
		xys  plotter.XYs
	}{{"median", med}, {"p99", p99}} {
		l, s, err := plotter.NewLinePoints(d.xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(k)
		s.Color = plotutil.Color(k)
		s.Shape = plotutil.Shape(k)
		p.Add(l, s)
		p.Legend.Add(d.name, l, s)
	}
	return p, nil
}

// logTicks marks a log axis at 1, 2 and 5 times each power of ten (labelled)
// and at the other integer multiples (unlabelled), so that a range narrower
// than a decade still gets labels (plot.LogTicks labels powers of ten only).
type logTicks struct {
	format func(float64) string
}

// Ticks implements plot.Ticker.
func (lt logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = lt.format(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// formatBytes writes a size with a decimal unit: 500 B, 2 KB, 1.5 MB.
func formatBytes(v float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 4, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " B"
}
