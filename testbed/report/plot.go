package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot size and the most points drawn per line: longer series are reduced
// to the minimum and maximum of each of maxPlotPoints/2 consecutive runs of
// samples, which keeps every peak and trough visible.
const (
	plotWidth     = 8 * vg.Inch
	plotHeight    = 4.5 * vg.Inch
	maxPlotPoints = 2000
	plotChunk     = 32 // points per stroked piece of a line
	// maxLegendLines is the most lines a plot names one by one: with more
	// (a workload's hundreds of flows), each is a thin grey line and the
	// legend says how many there are.
	maxLegendLines = 10
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

// decimate returns s's points, or, when there are more than maxPts, the
// minimum and maximum (in time order) of each of maxPts/2 equal runs of
// samples.
func decimate(t, v []float64, xScale, yScale float64, maxPts int) plotter.XYs {
	n := len(t)
	if n <= maxPts {
		xys := make(plotter.XYs, n)
		for i := range t {
			xys[i] = plotter.XY{X: t[i] * xScale, Y: v[i] * yScale}
		}
		return xys
	}
	bins := maxPts / 2
	xys := make(plotter.XYs, 0, maxPts)
	for b := 0; b < bins; b++ {
		lo, hi := b*n/bins, (b+1)*n/bins
		if lo == hi {
			continue
		}
		imin, imax := lo, lo
		for i := lo + 1; i < hi; i++ {
			if v[i] < v[imin] {
				imin = i
			}
			if v[i] > v[imax] {
				imax = i
			}
		}
		first, second := imin, imax
		if first > second {
			first, second = second, first
		}
		xys = append(xys, plotter.XY{X: t[first] * xScale, Y: v[first] * yScale})
		if second != first {
			xys = append(xys, plotter.XY{X: t[second] * xScale, Y: v[second] * yScale})
		}
	}
	return xys
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
	c := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(c))
	return writeFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
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

// linePlot plots one line per series, labelled label+id, from time 0, with
// the reference lines refs (in the series' units before yScale). Lines that
// would lie on one another stay apart by dash pattern as well as colour; a
// line is not drawn across a gap in its samples; with more than
// maxLegendLines series, each is a thin grey line under one legend entry; the
// y axis leaves room above the data for the legend.
func linePlot(title, yLabel, label string, ss []*series, yScale float64, refs []RefLine) (*plot.Plot, error) {
	var last float64
	for _, s := range ss {
		if n := len(s.t); n > 0 && s.t[n-1] > last {
			last = s.t[n-1]
		}
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
	many := len(ss) > maxLegendLines
	// With many series, every line is one grey stroke of one plotter:
	// a plotter a flow (a workload's hundreds of thousands) would cost the
	// plot's bookkeeping per plotter more than the drawing.
	grey := &greyLines{style: draw.LineStyle{Color: color.Gray{Y: 150}, Width: vg.Points(0.5)}}
	ymax := 0.0
	for k, s := range ss {
		xys := decimate(s.t, s.v, xScale, yScale, maxPlotPoints)
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
					p.Legend.Add(fmt.Sprintf("%s %d", label, s.id), l)
				}
				first = false
			}
		}
	}
	if many { // added once filled: Add reads its data range
		p.Add(grey)
		p.Legend.Add(fmt.Sprintf("%d %ss (one grey line each)", len(ss), label), grey)
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

// hasTraffic reports whether s has a non-zero sample.
func hasTraffic(s *series) bool {
	for _, v := range s.v {
		if v != 0 {
			return true
		}
	}
	return false
}

// WritePlots writes the PNG plots whose data exist into dir: queue.png (queue
// over time, one line per port with a non-zero sample, or every port when
// all stayed empty), rate.png (rate of each flow), fairrate.png (fair rate of
// each port, when recorded) and fct_slowdown.png (median and p99 slowdown by
// flow size bucket, log x, when there are FCT records). It returns the paths
// written. dir is created if missing.
func (r *Recorder) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var written []string
	// Each plot as a PNG and as an SVG beside it (same name, .svg).
	save := func(p *plot.Plot, name string) error {
		path := filepath.Join(dir, name)
		if err := savePNG(p, path); err != nil {
			return err
		}
		svg := strings.TrimSuffix(path, ".png") + ".svg"
		if err := saveSVG(p, svg); err != nil {
			return err
		}
		written = append(written, path, svg)
		return nil
	}

	title := r.meta.Experiment + " (" + r.meta.Scheme + ")"
	if queues := r.queue.prepare(); len(queues) > 0 {
		var busy []*series
		for _, s := range queues {
			if hasTraffic(s) {
				busy = append(busy, s)
			}
		}
		if len(busy) == 0 {
			busy = queues
		}
		p, err := linePlot("egress queue: "+title, "queue (KB)", "port", busy, 1e-3, r.refs[QueuePlotFile])
		if err != nil {
			return written, err
		}
		if err := save(p, QueuePlotFile); err != nil {
			return written, err
		}
	}
	if rates := r.rate.prepare(); len(rates) > 0 {
		p, err := linePlot("flow rate: "+title, "goodput (Gb/s)", "flow", rates, 1, r.refs[RatePlotFile])
		if err != nil {
			return written, err
		}
		if err := save(p, RatePlotFile); err != nil {
			return written, err
		}
	}
	if fairs := r.fair.prepare(); len(fairs) > 0 {
		p, err := linePlot("fair rate: "+title, "fair rate (Gb/s)", "port", fairs, 1, r.refs[FairPlotFile])
		if err != nil {
			return written, err
		}
		if err := save(p, FairPlotFile); err != nil {
			return written, err
		}
	}
	if buckets := FCTBuckets(r.fct, DefaultBucketsPerDecade); len(buckets) > 0 {
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
