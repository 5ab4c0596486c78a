package testbed

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/testbed/report"
)

// goodputStar is a small run in the shape of the report of goodputs far above
// the link rate: 8 hosts on 100 Gb/s links sending each other 1 KB flows
// (one frame each, many completing a few ns after a sample) and web search
// flows at 90 % load, sampled every 10 us, in virtual time.
const goodputStar = `
[experiment]
name = "goodput"
duration_ms = 1
sample_us = 10
clock = "virtual"
seed = 7

[topology]
hosts = 8
link_gbps = 100
delay_us = 1
buffer_bytes = 2_000_000
mtu_bytes = 1000

[cc]
scheme = "dcqcn"

[[workloads]]
id_base = 1
cdf = "ONE_KB_CDF"
senders = [0, 1, 2, 3, 4, 5, 6, 7]
dsts = [0, 1, 2, 3, 4, 5, 6, 7]
load = 0.5

[[workloads]]
id_base = 1_000_000
cdf = "../configs/workloads/websearch.cdf"
senders = [0, 1, 2, 3, 4, 5, 6, 7]
dsts = [0, 1, 2, 3, 4, 5, 6, 7]
load = 0.4
`

// TestRateCSVGoodputWithinLink runs goodputStar and checks that no rate.csv
// goodput exceeds the link's 100 Gb/s by more than 5 %, and that every row
// lies on the sampling grid. The tolerance: a period counts a frame's payload
// when its ACK arrives, and ACKs that waited behind the receiver's own data
// arrive together, so a 10 us sample can carry a few frames of the period
// before (101.6 Gb/s at most here); before samples covered whole periods a
// flow completing just after a sample read up to 4,000 Gb/s here.
func TestRateCSVGoodputWithinLink(t *testing.T) {
	cdf := filepath.Join(t.TempDir(), "one-kb.cdf")
	if err := os.WriteFile(cdf, []byte("1000 0\n1000 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runVirtual(t, strings.Replace(goodputStar, "ONE_KB_CDF", cdf, 1), t.TempDir())
	rows := resultRows(t, res.Dir, report.RateCSVFile)
	const most = 100 * 1.05 // Gb/s
	var peak float64
	flows := map[string]bool{}
	for _, r := range rows[1:] {
		tUs, err1 := strconv.ParseFloat(r[0], 64)
		g, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %v: %v %v", r, err1, err2)
		}
		flows[r[1]] = true
		peak = max(peak, g)
		if g > most {
			t.Errorf("t %s us flow %s: %.3f Gb/s, above %.1f Gb/s", r[0], r[1], g, most)
		}
		if tUs != float64(int64(tUs/10))*10 {
			t.Errorf("t %s us flow %s: off the 10 us sampling grid", r[0], r[1])
		}
	}
	t.Logf("%d rows of %d flows, peak goodput %.3f Gb/s", len(rows)-1, len(flows), peak)
	if len(flows) < 1000 {
		t.Errorf("%d flows sampled: the run does not exercise many completions", len(flows))
	}
}

// resultRows returns the rows of CSV file name in dir, its header first.
func resultRows(t *testing.T, dir, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
