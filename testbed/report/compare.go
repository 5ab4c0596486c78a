package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// CompareRun is one run drawn by ComparePlots: a results directory, a label,
// and the switch port whose queue and fair rate are drawn.
type CompareRun struct {
	Label string
	Dir   string
	// Port is the port's id in queue.csv and summary.json; HottestPort
	// (any negative value) draws the run's hottest port (HotPort).
	Port int
}

// HottestPort as a CompareRun's Port draws the run's hottest port.
const HottestPort = -1

// HotPort is the port of s whose queue was longest: the largest p99 queue,
// then the largest mean, then the lowest id. ok is false when no port has
// queue samples.
func HotPort(s *Summary) (id int, ok bool) {
	var best *PortSummary
	for i := range s.Ports {
		p := &s.Ports[i]
		if !p.P99QueueBytes.Valid() {
			continue
		}
		if best == nil || p.P99QueueBytes.Or(0) > best.P99QueueBytes.Or(0) ||
			(p.P99QueueBytes.Or(0) == best.P99QueueBytes.Or(0) && p.AvgQueueBytes.Or(0) > best.AvgQueueBytes.Or(0)) {
			best = p
		}
	}
	if best == nil {
		return 0, false
	}
	return best.ID, true
}

// portOf resolves r's port against its summary: the hottest port for
// HottestPort, else r.Port if the run has it.
func (r CompareRun) portOf(s *Summary) (int, error) {
	if r.Port < 0 {
		id, ok := HotPort(s)
		if !ok {
			return 0, fmt.Errorf("report: %s: no port has queue samples to pick the hottest from", r.Dir)
		}
		return id, nil
	}
	ids := make([]string, 0, len(s.Ports))
	for _, p := range s.Ports {
		if p.ID == r.Port {
			return r.Port, nil
		}
		ids = append(ids, strconv.Itoa(p.ID))
	}
	return 0, fmt.Errorf("report: %s: no port %d (its ports: %s)", r.Dir, r.Port, strings.Join(ids, ", "))
}

// ComparePlots draws the queue and the fair rate of several runs of one
// experiment on shared axes: compare_queue.png (KB) and compare_fairrate.png
// (fair rate / C, C each run's summary link_gbps). Time is scaled to the
// fastest run's link: a run at C/10 whose timers were scaled by 10 draws its
// 10 ms at 1 ms, so a scaled emulation and the paper-scale run line up. A
// run's port must be one its summary lists; HottestPort is resolved to the
// run's hottest, and runs[i].Port is set to the port drawn. It returns the
// files written.
func ComparePlots(runs []CompareRun, dir string) ([]string, error) {
	type loaded struct {
		run         CompareRun
		link        float64
		queue, fair *decimator
	}
	var ls []loaded
	fastest := 0.0
	for i := range runs {
		s, err := LoadSummary(filepath.Join(runs[i].Dir, "summary.json"))
		if err != nil {
			return nil, err
		}
		if !(s.LinkGbps > 0) {
			return nil, fmt.Errorf("report: %s: summary.json has no link_gbps", runs[i].Dir)
		}
		if runs[i].Port, err = runs[i].portOf(&s); err != nil {
			return nil, err
		}
		r := runs[i]
		q, err := readPortSeries(filepath.Join(r.Dir, "queue.csv"), r.Port)
		if err != nil {
			return nil, err
		}
		f, err := readPortSeries(filepath.Join(r.Dir, "fairrate.csv"), r.Port)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		ls = append(ls, loaded{run: r, link: s.LinkGbps, queue: q, fair: f})
		fastest = max(fastest, s.LinkGbps)
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("report: no runs to compare")
	}
	empty := true
	for _, l := range ls {
		empty = empty && (l.queue == nil || len(l.queue.bins) == 0)
	}
	if empty {
		return nil, fmt.Errorf("report: no queue samples at the ports asked for in any run: nothing to draw")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	draw := func(name, title, yLabel string, pick func(*loaded) (*decimator, float64)) (string, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = fmt.Sprintf("time at %g Gb/s (ms)", fastest)
		p.Y.Label.Text = yLabel
		p.X.Min, p.Y.Min = 0, 0
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		for k := range ls {
			s, yScale := pick(&ls[k])
			if s == nil || len(s.bins) == 0 {
				continue
			}
			xScale := 1e-3 * ls[k].link / fastest
			l, err := plotter.NewLine(s.points(xScale, yScale))
			if err != nil {
				return "", err
			}
			l.Color = plotutil.Color(k)
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(ls[k].run.Label, l)
		}
		path := filepath.Join(dir, name)
		_, err := savePlot(p, path)
		return path, err
	}
	var out []string
	f, err := draw("compare_queue.png", "egress queue", "queue (KB)", func(l *loaded) (*decimator, float64) { return l.queue, 1e-3 })
	if err != nil {
		return nil, err
	}
	out = append(out, f)
	f, err = draw("compare_fairrate.png", "fair rate", "fair rate / C", func(l *loaded) (*decimator, float64) { return l.fair, 1 / l.link })
	if err != nil {
		return nil, err
	}
	return append(out, f), nil
}

// readPortSeries reads one port's (or flow's) series from a results CSV
// (t_us,id,value) into a plot's bounded copy.
func readPortSeries(path string, id int) (*decimator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &decimator{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue // header
		}
		r, err := parseRow(sc.Bytes(), false)
		if err != nil || bytes.Count(sc.Bytes(), []byte{','}) != 2 {
			return nil, fmt.Errorf("report: %s:%d: want 3 columns of numbers", path, line)
		}
		if r.id == id {
			d.add(r.t, r.v)
		}
	}
	return d, sc.Err()
}
