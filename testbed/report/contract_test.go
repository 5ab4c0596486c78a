package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestWriteAllNeverMixesRuns writes one run, then another with different
// files into the same directory: nothing of the first may survive (an old
// fct_slowdown.png beside a run that wrote no FCTs), and no staging or
// moved-aside directory may be left beside it.
func TestWriteAllNeverMixesRuns(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	first := NewRecorder(Meta{Experiment: "a", Scheme: "dcqcn"})
	first.AddFCT(1, 1000, 10, 1.1)
	first.AddFairRate(0, 0, 1)
	if _, err := first.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("a user's file"), 0o644)
	for _, f := range []string{FCTPlotFile, FairRateCSVFile, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("first run: %v", err)
		}
	}
	second := NewRecorder(Meta{Experiment: "b", Scheme: "dcqcn"})
	second.AddQueueSample(0, 0, 10)
	if _, err := second.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FCTPlotFile, FairRateCSVFile, FairPlotFile, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s of the first run survived the second", f)
		}
	}
	if s, err := LoadSummary(filepath.Join(dir, SummaryFile)); err != nil || s.Experiment != "b" {
		t.Errorf("summary after the second run: %v %q", err, s.Experiment)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("beside the results: %v, want only run", names)
	}
}

// TestStageDir: the staging directory is made (and shown writable) before
// anything runs, the target stays whole until Commit, Abort leaves it as it
// was, stale staging directories of dead processes are removed, and a target
// that cannot be a directory is refused at once.
func TestStageDir(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "x", "run")
	// A killed run's leftovers: pid 999999999 does not exist.
	os.MkdirAll(filepath.Join(parent, "x", ".run.partial-999999999-1"), 0o755)
	os.MkdirAll(filepath.Join(parent, "x", ".run.old-999999999-1"), 0o755)
	st, err := StageDir(target)
	if err != nil {
		t.Fatal(err)
	}
	// A killed streaming run's (it holds a summary.json) is kept as
	// <run id>-killed, beside an earlier one of the same id.
	os.MkdirAll(filepath.Join(parent, "x", "r1-killed"), 0o755)
	streamed := filepath.Join(parent, "x", ".r1.partial-999999999-2")
	os.MkdirAll(streamed, 0o755)
	os.WriteFile(filepath.Join(streamed, SummaryFile), []byte("{}"), 0o644)
	other, err := StageRun(filepath.Join(parent, "x"), "r2")
	if err != nil {
		t.Fatal(err)
	}
	other.Abort()
	for _, stale := range []string{".run.partial-999999999-1", ".run.old-999999999-1", ".r1.partial-999999999-2"} {
		if _, err := os.Stat(filepath.Join(parent, "x", stale)); err == nil {
			t.Errorf("stale %s not removed", stale)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "x", "r1-killed-2", SummaryFile)); err != nil {
		t.Errorf("the killed streaming run was not kept as r1-killed-2: %v", err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("target exists before Commit")
	}
	if !strings.HasPrefix(filepath.Base(st.Path()), ".run.partial-") {
		t.Errorf("staging directory %s", st.Path())
	}
	os.WriteFile(filepath.Join(st.Path(), "a"), []byte("1"), 0o644)
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(target, "a")); string(b) != "1" {
		t.Fatalf("committed file: %q", b)
	}

	st2, err := StageDir(target)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(st2.Path(), "b"), []byte("2"), 0o644)
	st2.Abort()
	if _, err := os.Stat(st2.Path()); err == nil {
		t.Error("Abort left the staging directory")
	}
	if b, _ := os.ReadFile(filepath.Join(target, "a")); string(b) != "1" {
		t.Errorf("Abort touched the target: %q", b)
	}
	if err := st2.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}

	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	for _, bad := range []string{file, filepath.Join(file, "run")} {
		if _, err := StageDir(bad); err == nil {
			t.Errorf("StageDir(%s) succeeded", bad)
		}
	}
}

// TestMissingValuesAreNull: an unfinished flow's FCT, a port's fair rate
// where the scheme has none, Jain's index over no active flows and means over
// no samples are null in summary.json, never 0, and read back as missing.
func TestMissingValuesAreNull(t *testing.T) {
	r := NewRecorder(Meta{Experiment: "nulls", Scheme: "dcqcn", DurationS: 0.001})
	r.SetFlow(FlowInfo{ID: 1, Src: "h0", Dst: "h1", Bytes: 0}) // started, never completed, no samples
	r.AddRateSample(100, 2, 0)                                 // one sample, before the steady half
	r.SetPortCounters(PortCounters{ID: 0, Drops: 1})           // counters, no queue samples
	r.AddQueueSample(100, 1, 500)                              // queue, no fair rate
	dir := filepath.Join(t.TempDir(), "r")
	s, err := r.WriteAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	var doc struct {
		Jain  json.RawMessage              `json:"jain_index"`
		Flows []map[string]json.RawMessage `json:"flows"`
		Ports []map[string]json.RawMessage `json:"ports"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	null := func(what string, v json.RawMessage) {
		t.Helper()
		if string(v) != "null" {
			t.Errorf("%s = %s, want null", what, v)
		}
	}
	null("jain_index", doc.Jain)
	null("flow 1 fct_us", doc.Flows[0]["fct_us"])
	null("flow 1 steady_gbps", doc.Flows[0]["steady_gbps"])
	null("flow 2 fct_us", doc.Flows[1]["fct_us"])
	null("flow 2 steady_gbps", doc.Flows[1]["steady_gbps"])
	null("flow 2 steady_rate_gbps", doc.Flows[1]["steady_rate_gbps"])
	for _, k := range []string{"avg_queue_bytes", "p99_queue_bytes", "steady_queue_bytes", "fair_rate_gbps"} {
		null("port 0 "+k, doc.Ports[0][k])
	}
	null("port 1 fair_rate_gbps", doc.Ports[1]["fair_rate_gbps"])
	if string(doc.Ports[1]["avg_queue_bytes"]) != "500" || string(doc.Flows[0]["avg_gbps"]) != "0" {
		t.Errorf("present values: port 1 avg queue %s, flow 1 avg %s", doc.Ports[1]["avg_queue_bytes"], doc.Flows[0]["avg_gbps"])
	}
	back, err := LoadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) || back.Flows[0].FCTUs.Valid() || back.Ports[0].FairRateGbps.Valid() {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, s)
	}
	var table bytes.Buffer
	PrintTable(&table, s)
	if !strings.Contains(table.String(), "Jain index: -") {
		t.Errorf("table shows a missing Jain index as a number:\n%s", table.String())
	}
}

// TestOptFloatJSON: present numbers round-trip, null is missing, NaN and the
// infinities become missing.
func TestOptFloatJSON(t *testing.T) {
	for _, tc := range []struct {
		in   OptFloat
		json string
	}{
		{Some(1.5), "1.5"},
		{Some(0), "0"},
		{None, "null"},
		{Some(math.NaN()), "null"},
		{Some(math.Inf(-1)), "null"},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.json {
			t.Errorf("%v: %s %v, want %s", tc.in, b, err, tc.json)
		}
		var back OptFloat
		if err := json.Unmarshal(b, &back); err != nil || back != tc.in && tc.in.Valid() {
			t.Errorf("%s: read back %v %v", b, back, err)
		}
	}
	var o OptFloat
	if err := json.Unmarshal([]byte(`"x"`), &o); err == nil {
		t.Error("a string decoded as a number")
	}
}

// TestRateCSVColumns: rate.csv carries the goodput, the sender's rate and
// its window, each missing value an empty cell; the steady sender rate is in
// the summary.
func TestRateCSVColumns(t *testing.T) {
	r := NewRecorder(Meta{Experiment: "rate", DurationS: 0.0002})
	r.AddRate(RateSample{TUs: 100, Flow: 1, GoodputGbps: 2.95, RateGbps: 1, WindowBytes: -1})
	r.AddRate(RateSample{TUs: 200, Flow: 1, GoodputGbps: 0.5, RateGbps: 0.75, WindowBytes: 12000})
	r.AddRate(RateSample{TUs: 200, Flow: 2, GoodputGbps: 0.25, RateGbps: math.NaN(), WindowBytes: -1})
	var b bytes.Buffer
	if err := r.WriteRateCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "t_us,flow,goodput_gbps,rate_gbps,window_bytes\n100,1,2.95,1,\n200,1,0.5,0.75,12000\n200,2,0.25,,\n"
	if b.String() != want {
		t.Errorf("rate.csv:\n%s\nwant\n%s", b.String(), want)
	}
	s := r.Summarize()
	if g, ok := s.Flows[0].SteadyRateGbps.Get(); !ok || g != 0.875 {
		t.Errorf("flow 1 steady rate %v, want 0.875", s.Flows[0].SteadyRateGbps)
	}
	if s.Flows[1].SteadyRateGbps.Valid() {
		t.Errorf("flow 2 steady rate %v, want null", s.Flows[1].SteadyRateGbps)
	}
}

// TestFCTCSVColumns: fct.csv has the endpoints, the start time and the
// priority, last (a priority not known is an empty cell, priority 0 a 0).
func TestFCTCSVColumns(t *testing.T) {
	r := NewRecorder(Meta{})
	r.AddFCTRecord(FCTRecord{Flow: 7, Src: "h0", Dst: "h3", StartUs: 12.5, SizeBytes: 1000, FCTUs: 20, Slowdown: 1.25,
		Priority: 3, HasPriority: true})
	r.AddFCTRecord(FCTRecord{Flow: 8, StartUs: math.Inf(1), SizeBytes: 10, FCTUs: 2, Slowdown: 1})
	r.AddFCTRecord(FCTRecord{Flow: 9, Src: "h1", Dst: "h3", StartUs: 3, SizeBytes: 10, FCTUs: 2, Slowdown: 1, HasPriority: true})
	var b bytes.Buffer
	if err := r.WriteFCTCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority\n7,h0,h3,1000,12.5,20,1.25,3\n8,,,10,,2,1,\n9,h1,h3,10,3,2,1,0\n"
	if b.String() != want {
		t.Errorf("fct.csv:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestDegradedAndInterrupted: reasons given and rejected samples make the
// run degraded; the flags and the provenance reach summary.json.
func TestDegradedAndInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fill        func(r *Recorder)
		degraded    int // reasons
		interrupted bool
	}{
		{"clean", func(r *Recorder) {}, 0, false},
		{"interrupted", func(r *Recorder) { r.SetInterrupted(true) }, 0, true},
		{"stall", func(r *Recorder) { r.MarkDegraded("lcore %d stalled", 1) }, 1, false},
		{"rejected", func(r *Recorder) { r.AddQueueSample(math.NaN(), 0, 1) }, 1, false},
		{"both", func(r *Recorder) { r.MarkDegraded("x"); r.AddRateSample(1, 1, math.Inf(1)); r.SetInterrupted(true) }, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(Meta{Experiment: "d", Build: ThisBuild(), Machine: ThisMachine()})
			tc.fill(r)
			s := r.Summarize()
			if s.Degraded != (tc.degraded > 0) || len(s.DegradedReasons) != tc.degraded || s.Interrupted != tc.interrupted {
				t.Errorf("degraded %v %q interrupted %v", s.Degraded, s.DegradedReasons, s.Interrupted)
			}
			if s.Build.Version == "" || s.Build.GoVersion == "" || s.Machine.CPUs < 1 || s.Machine.OS == "" {
				t.Errorf("provenance %+v %+v", s.Build, s.Machine)
			}
		})
	}
}

// TestLoadSummaryVersion1 reads a summary written before results_version
// existed (testbed compare draws old runs beside new ones).
func TestLoadSummaryVersion1(t *testing.T) {
	p := filepath.Join(t.TempDir(), SummaryFile)
	os.WriteFile(p, []byte(`{"experiment":"old","scheme":"rocc","duration_s":0.04,"jain_index":0.99,
		"flows":[{"id":1,"src":"h0","dst":"h3","bytes":10,"avg_gbps":3.3,"steady_gbps":3.3,"fct_us":0}],
		"ports":[{"id":3,"avg_queue_bytes":75000,"p99_queue_bytes":80000,"steady_queue_bytes":75000,"fair_rate_gbps":3.3,
		"pfc_pauses":0,"pfc_activations":0,"pfc_pauses_received":0,"paused_us":0,"drops":0,"ecn_marked":0,"cnps_sent":5}],
		"steady_from_s":0.02,"clock":"virtual","seed":1,"topology":"star of 4 hosts","link_gbps":10}`), 0o644)
	s, err := LoadSummary(p)
	if err != nil || s.ResultsVersion != 0 || s.LinkGbps != 10 || s.Ports[0].FairRateGbps.Or(0) != 3.3 || s.JainIndex.Or(0) != 0.99 {
		t.Errorf("version 1 summary: %v %+v", err, s)
	}
}

// TestCommitNeverRemovesWhatItDidNotWrite: a StageDir target that holds
// anything but a results directory is left as it is and the commit fails;
// StageRun commits of one id, one after another and at once, each take a
// name of their own (id, id-2, ...) and replace nothing.
func TestCommitNeverRemovesWhatItDidNotWrite(t *testing.T) {
	parent := t.TempDir()
	mine := filepath.Join(parent, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "thesis.tex"), []byte("mine"), 0o644)
	st, err := StageDir(mine)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err == nil || !strings.Contains(err.Error(), "not a results directory") {
		t.Errorf("Commit over a user's directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "thesis.tex")); string(b) != "mine" {
		t.Errorf("the user's file holds %q", b)
	}
	os.RemoveAll(st.Path())

	exp := filepath.Join(parent, "exp")
	const id, n = "20261127-172512-seed1", 8
	var wg sync.WaitGroup
	names := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := StageRun(exp, id)
			if err != nil {
				t.Error(err)
				return
			}
			os.WriteFile(filepath.Join(st.Path(), SummaryFile), []byte(strconv.Itoa(i)), 0o644)
			if err := st.Commit(); err != nil {
				t.Error(err)
				return
			}
			names[i] = st.Target()
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join(name, SummaryFile))
		if err != nil || string(b) != strconv.Itoa(i) || seen[name] {
			t.Errorf("commit %d in %s: %q, %v", i, name, b, err)
		}
		seen[name] = true
	}
	if ents, _ := os.ReadDir(exp); len(ents) != n {
		t.Errorf("%d entries in the experiment's directory, want %d", len(ents), n)
	}
	if _, err := StageRun(exp, "../x"); err == nil {
		t.Error("StageRun took a run id with a separator")
	}
}
