package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestSplitGaps: a line is cut where samples stop for more than gapFactor
// spacings (before, a flow that ended and another sample much later were
// joined by a straight line).
func TestSplitGaps(t *testing.T) {
	xy := func(xs ...float64) plotter.XYs {
		var p plotter.XYs
		for _, x := range xs {
			p = append(p, plotter.XY{X: x, Y: 1})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		in   plotter.XYs
		want []int // lengths of the pieces
	}{
		{"regular", xy(0, 1, 2, 3, 4), []int{5}},
		{"one gap", xy(0, 1, 2, 3, 10, 11, 12), []int{4, 3}},
		{"two gaps", xy(0, 1, 2, 9, 10, 11, 30, 31), []int{3, 3, 2}},
		{"short", xy(0, 5), []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitGaps(tc.in)
			var lens []int
			for _, g := range got {
				lens = append(lens, len(g))
			}
			if len(lens) != len(tc.want) {
				t.Fatalf("pieces %v, want %v", lens, tc.want)
			}
			for i := range lens {
				if lens[i] != tc.want[i] {
					t.Fatalf("pieces %v, want %v", lens, tc.want)
				}
			}
		})
	}
}

// TestLinePlotLayout: the time axis starts at 0, reference lines are named in
// the legend, the y axis leaves room above the data for the legend, more
// than maxLegendLines series share one legend entry, and the hottest port is
// named (and drawn in colour among many).
func TestLinePlotLayout(t *testing.T) {
	mk := func(n int) ([]*seriesStat, int) {
		var st seriesStats
		for i := 0; i < n; i++ {
			for k := 0; k < 10; k++ {
				st.add(&row{t: float64(100 + k*10), id: i, v: 2}, true)
			}
		}
		return plotted(&st, false)
	}
	lines, total := mk(3)
	p, err := linePlot("t", "y", "flow", lines, total, 1, []RefLine{{Label: "C/3", Y: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 0 || p.Y.Max <= 3 {
		t.Errorf("x from %v, y up to %v: want x from 0 and room above the reference at 3", p.X.Min, p.Y.Max)
	}
	for _, want := range []string{"flow 0", "flow 2", "C/3"} {
		if svg := svgText(t, p); !strings.Contains(svg, want) {
			t.Errorf("the plot does not show %q", want)
		}
	}
	lines, total = mk(maxLegendLines + 5)
	p, err = linePlot("t", "y", "flow", lines, total, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if svg := svgText(t, p); !strings.Contains(svg, "15 flows") || strings.Contains(svg, "flow 3<") {
		t.Errorf("with 15 series the legend should name them together, not one by one")
	}
	// The hottest port (largest p99) is singled out, among few or many.
	for _, n := range []int{3, maxLegendLines + 5} {
		var st seriesStats
		st.counts = true
		for i := 0; i < n; i++ {
			for k := 0; k < 10; k++ {
				v := 1.0
				if i == 2 {
					v = 5000
				}
				st.add(&row{t: float64(100 + k*10), id: i, v: v}, true)
			}
		}
		lines, total := plotted(&st, true)
		hot := hottest(lines)
		if hot == nil || hot.id != 2 {
			t.Fatalf("%d ports: hottest %+v, want port 2", n, hot)
		}
		p, err := linePlot("t", "y", "port", lines, total, 1, nil, hot)
		if err != nil {
			t.Fatal(err)
		}
		if svg := svgText(t, p); !strings.Contains(svg, "port 2 (hottest)") {
			t.Errorf("%d ports: the legend does not name port 2 as the hottest", n)
		}
	}
	lines, total = mk(3 * maxPlotSeries)
	if total != 3*maxPlotSeries || len(lines) > maxPlotSeries || len(lines) < maxPlotSeries/4 {
		t.Errorf("%d series: %d drawn of %d, want a sample of at most %d", 3*maxPlotSeries, len(lines), total, maxPlotSeries)
	}
}

// svgText renders p as SVG (whose text elements hold the legend's labels).
func svgText(t *testing.T, p *plot.Plot) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.svg")
	if err := saveSVG(p, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlotsAlsoVector: every plot is written as a PNG, an SVG and a PDF
// with its fonts embedded, and the PDF of the same plot is the same bytes
// when written again (no creation date of the moment).
func TestPlotsAlsoVector(t *testing.T) {
	r := NewRecorder(Meta{Experiment: "x", Scheme: "rocc"})
	for k := 0; k < 20; k++ {
		r.AddQueueSample(float64(k*100), 0, int64(1000*k))
	}
	r.AddReference(QueuePlotFile, RefLine{Label: "Q_ref", Y: 5000})
	var pdfs [2][]byte
	for i := range pdfs {
		dir := t.TempDir()
		written, err := r.WritePlots(dir)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(QueuePlotFile, ".png")
		for _, name := range []string{QueuePlotFile, base + ".svg", base + ".pdf"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v", name, err)
			}
		}
		if len(written) != 3 {
			t.Errorf("written %v, want the queue plot's PNG, SVG and PDF", written)
		}
		if pdfs[i], err = os.ReadFile(filepath.Join(dir, base+".pdf")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.HasPrefix(pdfs[0], []byte("%PDF-")) {
		t.Errorf("the PDF starts %q", pdfs[0][:min(8, len(pdfs[0]))])
	}
	if !bytes.Contains(pdfs[0], []byte("/FontFile2")) {
		t.Error("the PDF embeds no font")
	}
	if !bytes.Contains(pdfs[0], []byte("/CreationDate (D:"+pdfDate.Format("20060102150405"))) {
		t.Error("the PDF does not record the fixed creation date")
	}
	if !bytes.Equal(pdfs[0], pdfs[1]) {
		t.Error("the same plot written twice gave two different PDFs")
	}
}
