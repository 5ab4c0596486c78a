package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestClassFCTBuckets: records of two priorities give a bucket table per
// class, and PrintTableWith prints them with a class column; records of one
// priority (or none known) give none. PFC pauses print by priority, summed
// over the ports.
func TestClassFCTBuckets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		recs    []FCTRecord
		classes int
	}{
		{"no priorities", []FCTRecord{{Flow: 1, SizeBytes: 5000, FCTUs: 10, Slowdown: 2}, {Flow: 2, SizeBytes: 500_000, FCTUs: 100, Slowdown: 3}}, 0},
		{"one class", []FCTRecord{{Flow: 1, SizeBytes: 5000, FCTUs: 10, Slowdown: 2, Priority: 3, HasPriority: true}}, 0},
		{"two classes", []FCTRecord{
			{Flow: 1, SizeBytes: 5000, FCTUs: 10, Slowdown: 2, Priority: 3, HasPriority: true},
			{Flow: 2, SizeBytes: 6000, FCTUs: 12, Slowdown: 4, Priority: 3, HasPriority: true},
			{Flow: 3, SizeBytes: 500_000, FCTUs: 400, Slowdown: 8, Priority: 1, HasPriority: true},
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs fctStats
			for i := range tc.recs {
				fs.add(&tc.recs[i])
			}
			cs := fs.classSummary()
			if len(cs) != tc.classes {
				t.Fatalf("%d classes: %+v", len(cs), cs)
			}
			s := Summary{Experiment: "x", Scheme: "hpcc", FCTBuckets: fs.summary(), ClassFCTBuckets: cs}
			var buf bytes.Buffer
			if err := PrintTableWith(&buf, s, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if got := strings.Contains(out, "class  "); got != (tc.classes > 0) {
				t.Errorf("class table printed: %v, want %v:\n%s", got, tc.classes > 0, out)
			}
			if tc.classes == 2 {
				if cs[0].Priority != 1 || cs[1].Priority != 3 || cs[1].Buckets[0].Count != 2 || cs[1].Buckets[0].MedianSlowdown != 2 {
					t.Errorf("classes %+v", cs)
				}
				for _, row := range []string{"p1  [316228,1000000)  1  8.00", "p3  [3162,10000)  2  2.00  4.00"} {
					if !strings.Contains(strings.Join(strings.Fields(out), "  "), row) {
						t.Errorf("no row %q in\n%s", row, out)
					}
				}
			}
		})
	}
	p3 := [8]uint64{3: 40}
	a3 := [8]uint64{3: 4}
	p0 := [8]uint64{3: 2, 1: 0}
	a0 := [8]uint64{3: 1}
	s := Summary{Ports: []PortSummary{{ID: 0, PFCPauses: 40, PFCPausesByPriority: &p3, PFCActivationsByPriority: &a3},
		{ID: 1, PFCPauses: 2, PFCPausesByPriority: &p0, PFCActivationsByPriority: &a0}, {ID: 2}}}
	var buf bytes.Buffer
	PrintTable(&buf, s)
	if !strings.Contains(buf.String(), "PFC by priority (every port):  p3: 42 pauses in 5 episodes\n") {
		t.Errorf("no PFC line:\n%s", buf.String())
	}
}
