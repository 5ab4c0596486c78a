package report

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComparePlots draws two runs of different link rates on shared axes: both
// runs' files are read, the fair rate is normalised to each run's C, and both
// PNGs come out; by default each run's hottest port is drawn; a port a run
// does not have and a run without link_gbps are errors.
func TestComparePlots(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, gbps float64, period float64) string {
		r := NewRecorder(Meta{Experiment: name, Scheme: "rocc", LinkGbps: gbps})
		for i := 0; i < 50; i++ {
			tu := float64(i) * period
			r.AddQueueSample(tu, 0, int64(i))
			r.AddQueueSample(tu, 3, int64(75_000+i))
			r.AddQueueSample(tu, 5, int64(1000))
			r.AddFairRate(tu, 3, gbps/3)
		}
		d := filepath.Join(dir, name)
		if _, err := r.WriteAll(d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := mk("virtual", 10, 100), mk("dpdk", 1, 1000)
	files, err := ComparePlots([]CompareRun{{Label: "virtual", Dir: a, Port: 3}, {Label: "dpdk", Dir: b, Port: 3}}, filepath.Join(dir, "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil || img.Bounds().Dx() < 100 {
			t.Fatalf("%s: not a plot: %v", f, err)
		}
	}
	hot := []CompareRun{{Label: "virtual", Dir: a, Port: HottestPort}, {Label: "dpdk", Dir: b, Port: HottestPort}}
	if _, err := ComparePlots(hot, filepath.Join(dir, "hot")); err != nil || hot[0].Port != 3 || hot[1].Port != 3 {
		t.Errorf("the hottest ports: %+v, %v; want port 3 of each", hot, err)
	}
	_, err = ComparePlots([]CompareRun{{Label: "virtual", Dir: a, Port: 9}}, filepath.Join(dir, "nine"))
	if err == nil || !strings.Contains(err.Error(), "no port 9 (its ports: 0, 3, 5)") {
		t.Errorf("port 9 of a run with ports 0, 3, 5: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nine")); !os.IsNotExist(err) {
		t.Errorf("a refused compare left its directory: %v", err)
	}
	q, err := readPortSeries(filepath.Join(b, "fairrate.csv"), 3)
	if err != nil || len(q.points(1, 1)) != 50 {
		t.Fatalf("fairrate.csv of port 3: %v, %d samples", err, len(q.points(1, 1)))
	}
	noLink := NewRecorder(Meta{Experiment: "x", Scheme: "none"})
	noLink.AddQueueSample(0, 0, 1)
	d := filepath.Join(dir, "x")
	if _, err := noLink.WriteAll(d); err != nil {
		t.Fatal(err)
	}
	if _, err := ComparePlots([]CompareRun{{Label: "x", Dir: d}}, dir); err == nil {
		t.Fatal("a run without link_gbps: want an error")
	}
}
