package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fillRun adds a run's samples: 4 ports' queues, 3 flows' rates, a fair
// rate, every 10 us up to endUs, and FCT records from two sources.
func fillRun(r *Recorder, endUs float64, advance bool) {
	for k := 0; float64(k)*10 < endUs; k++ {
		tUs := float64(k) * 10
		for p := range 4 {
			r.AddQueueSample(tUs, p, int64((k*(p+1)*7919)%150_000))
			r.AddFairRate(tUs, p, float64(k%13)/3)
		}
		for f := range 3 {
			r.AddRate(RateSample{TUs: tUs, Flow: f, GoodputGbps: float64((k+f)%10) / 7, RateGbps: float64(k%5) / 3, WindowBytes: -1})
		}
		if k%50 == 0 {
			r.AddFCTRecordFrom(1, FCTRecord{Flow: 100 + k, Src: "h1", SizeBytes: int64(1000 * (k + 1)), StartUs: tUs, FCTUs: tUs/3 + 1, Slowdown: 1 + tUs/1e3})
			r.AddFCTRecordFrom(0, FCTRecord{Flow: 200 + k, Src: "h0", SizeBytes: int64(300 * (k + 1)), StartUs: tUs, FCTUs: tUs/7 + 1, Slowdown: 1 + tUs/2e3})
		}
		if advance && k%17 == 0 {
			r.Advance(tUs)
		}
	}
}

// TestStreamedEqualsWrittenAtEnd: a Recorder that streams while the run
// goes writes the same files and summary as one that writes everything at
// the end, also when the run ends early (interrupted: its steady half is
// computed again from the files).
func TestStreamedEqualsWrittenAtEnd(t *testing.T) {
	for _, tc := range []struct {
		name             string
		plannedS, finalS float64
	}{
		{"whole run", 0.01, 0.01},
		{"interrupted", 0.01, 0.006},
		{"length unknown", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := Meta{Experiment: "s", Scheme: "rocc", DurationS: tc.plannedS}
			streamed, held := NewRecorder(meta), NewRecorder(meta)
			sdir, hdir := t.TempDir(), t.TempDir()
			if err := streamed.Stream(sdir); err != nil {
				t.Fatal(err)
			}
			endUs := tc.finalS * 1e6
			if endUs == 0 {
				endUs = 7000
			}
			fillRun(streamed, endUs, true)
			fillRun(held, endUs, false)
			for _, r := range []*Recorder{streamed, held} {
				r.SetDuration(tc.finalS)
				r.SetInterrupted(tc.finalS != tc.plannedS)
			}
			ss, err := streamed.WriteFiles(sdir)
			if err != nil {
				t.Fatal(err)
			}
			hs, err := held.WriteFiles(hdir)
			if err != nil {
				t.Fatal(err)
			}
			sj, _ := json.Marshal(ss)
			hj, _ := json.Marshal(hs)
			if string(sj) != string(hj) {
				t.Errorf("summaries differ:\nstreamed %s\nheld     %s", sj, hj)
			}
			for _, name := range []string{QueueCSVFile, RateCSVFile, FairRateCSVFile, FCTCSVFile, SummaryFile} {
				a, errA := os.ReadFile(filepath.Join(sdir, name))
				b, errB := os.ReadFile(filepath.Join(hdir, name))
				if errA != nil || errB != nil || string(a) != string(b) {
					t.Errorf("%s differs (%v, %v)", name, errA, errB)
				}
			}
			ents, _ := os.ReadDir(sdir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("%s left in the results", e.Name())
				}
			}
		})
	}
}

// TestStreamKilledMidway: while a run streams, its files hold the rows
// written so far, and summary.json says the run has not finished.
func TestStreamKilledMidway(t *testing.T) {
	dir := t.TempDir()
	r := NewRecorder(Meta{Experiment: "k", Scheme: "dcqcn", DurationS: 0.01})
	if err := r.Stream(dir); err != nil {
		t.Fatal(err)
	}
	fillRun(r, 3000, true)
	s, err := LoadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || !s.Degraded || len(s.DegradedReasons) == 0 || !strings.Contains(s.DegradedReasons[0], "not finished") {
		t.Errorf("summary.json of a running run: interrupted %v, degraded %v %q", s.Interrupted, s.Degraded, s.DegradedReasons)
	}
	b, err := os.ReadFile(filepath.Join(dir, QueueCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != QueueCSVHeader || len(lines) < 1+4*280 {
		t.Errorf("queue.csv midway: %d lines, want the header and the rows up to the last Advance", len(lines))
	}
}

// TestSeriesIDs: series of ids small, large, negative and far apart are
// found again by id, each with its own rows, and ids never seen are absent.
func TestSeriesIDs(t *testing.T) {
	ids := []int{7, 0, 3, 1<<22 - 1, 1 << 22, -5, 1 << 40, 100_000, 8, 15_107_315}
	var st seriesStats
	for i, id := range ids {
		if st.get(id) != nil {
			t.Fatalf("id %d present before its first row", id)
		}
		for range i + 1 {
			st.add(&row{t: 1, id: id, v: float64(i)}, false)
		}
	}
	for i, id := range ids {
		if s := st.get(id); s == nil || s.id != id || s.n != i+1 || s.sum != float64(i*(i+1)) {
			t.Errorf("get(%d) = %+v; want id %d with %d rows of %d", id, s, id, i+1, i)
		}
	}
	for _, id := range []int{1, 2, 9, 99_999, 1<<22 + 1, -1, 1<<40 + 1} {
		if st.get(id) != nil {
			t.Errorf("get(%d) present; it has no row", id)
		}
	}
	if got, want := st.ids(), []int{-5, 0, 3, 7, 8, 100_000, 1<<22 - 1, 1 << 22, 15_107_315, 1 << 40}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
}
