package testbed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/testbed/report"
)

// longFlowsOnly is virtualRoCC without its finite flow: no FCT records.
var longFlowsOnly = strings.Replace(virtualRoCC, "size_bytes = 2_000_000\n", "", 1)

// TestEachRunKeepsItsOwnDirectory: runs of one experiment, in sequence
// (same seed, another seed) and at once, each leave a complete directory of
// their own under results/<name>/; an earlier run's files, and a stray file
// of the user's, are untouched; latest links name the newest.
func TestEachRunKeepsItsOwnDirectory(t *testing.T) {
	out := t.TempDir()
	first := runVirtual(t, virtualRoCC, out)
	if _, err := os.Stat(filepath.Join(first.Dir, report.FCTPlotFile)); err != nil {
		t.Fatalf("first run wrote no FCT plot: %v", err)
	}
	os.WriteFile(filepath.Join(first.Dir, "notes.txt"), []byte("mine"), 0o644)
	second := runVirtual(t, longFlowsOnly, out) // same seed, same second, likely
	third := runVirtual(t, strings.Replace(virtualRoCC, "clock = \"virtual\"", "clock = \"virtual\"\nseed = 7", 1), out)
	// Two at once.
	var wg sync.WaitGroup
	together := make([]*Result, 2)
	for i := range together {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := Decode("v.toml", virtualRoCC, ".")
			if err != nil {
				t.Error(err)
				return
			}
			e.Experiment.OutputDir = out
			if together[i], err = Run(context.Background(), e, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	runs := []*Result{first, second, third, together[0], together[1]}
	dirs := map[string]bool{}
	for i, r := range runs {
		if filepath.Dir(r.Dir) != filepath.Join(out, "v") {
			t.Errorf("run %d in %s, want a directory of results/v", i, r.Dir)
		}
		dirs[r.Dir] = true
		s, err := report.LoadSummary(filepath.Join(r.Dir, report.SummaryFile))
		if err != nil || s.Experiment != "v" {
			t.Errorf("run %d: %v", i, err)
		}
	}
	if len(dirs) != len(runs) {
		t.Fatalf("%d runs in %d directories: %v", len(runs), len(dirs), dirs)
	}
	if !strings.Contains(filepath.Base(third.Dir), "-seed7") || !strings.Contains(filepath.Base(first.Dir), "-seed1") {
		t.Errorf("run ids %s, %s: want the seed in each", first.Dir, third.Dir)
	}
	for _, f := range []string{report.FCTPlotFile, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(first.Dir, f)); err != nil {
			t.Errorf("%s of the first run: %v", f, err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(out, "v"))
	if len(ents) != len(runs)+1 { // and latest
		t.Errorf("%d entries in results/v, want %d runs and latest", len(ents), len(runs))
	}
	top, _ := os.ReadDir(out)
	if len(top) != 2 {
		t.Errorf("%d entries in the output directory, want v and latest", len(top))
	}
	for _, l := range []string{filepath.Join(out, LatestLink), filepath.Join(out, "v", LatestLink)} {
		s, err := report.LoadSummary(filepath.Join(l, report.SummaryFile))
		if err != nil || s.Experiment != "v" {
			t.Errorf("%s: %v", l, err)
		}
	}
}

// TestNamesStayInTheirDirectory: whatever name an experiment file gives,
// validate and run refuse it unless it is one path element, and a refused
// run creates and removes nothing anywhere.
func TestNamesStayInTheirDirectory(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "results")
	precious := filepath.Join(root, "precious")
	os.MkdirAll(filepath.Join(out, "earlier"), 0o755)
	os.MkdirAll(precious, 0o755)
	os.WriteFile(filepath.Join(precious, "thesis.tex"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	snapshot := func() []string {
		var all []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			all = append(all, p)
			return nil
		})
		return all
	}
	before := snapshot()
	for _, name := range []string{"../precious", ".", "..", "a/b", "/abs", root + "/x", "latest", "x\ny", "tab\tname", "-rf", ".hidden", ""} {
		text := strings.Replace(virtualRoCC, `name = "v"`, fmt.Sprintf("name = %q", name), 1)
		_, err := Decode("v.toml", text, ".")
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != "experiment.name" || ce.Line != 3 {
			t.Errorf("name %q: %v, want an error at v.toml:3: experiment.name", name, err)
		}
		// -set is checked the same way, and blamed.
		_, err = DecodeWith("v.toml", virtualRoCC, ".", []string{"experiment.name=" + strconv.Quote(name)})
		if err == nil || !strings.Contains(err.Error(), "-set experiment.name=") {
			t.Errorf("-set name %q: %v", name, err)
		}
		// A run of an experiment whose name was changed after validation
		// is refused too.
		e, err := Decode("v.toml", virtualRoCC, ".")
		if err != nil {
			t.Fatal(err)
		}
		e.Experiment.OutputDir, e.Experiment.Name = out, name
		if _, err := Run(context.Background(), e, nil); err == nil {
			t.Errorf("run named %q succeeded", name)
		}
	}
	for _, dir := range []string{"../x", "/abs", ".."} {
		text := strings.Replace(virtualRoCC, `clock = "virtual"`, fmt.Sprintf("clock = \"virtual\"\noutput_dir = %q", dir), 1)
		if _, err := Decode("v.toml", text, "."); err == nil || !strings.Contains(err.Error(), "experiment.output_dir") {
			t.Errorf("output_dir %q: %v", dir, err)
		}
	}
	if after := snapshot(); strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("refused runs changed the tree:\nbefore %v\nafter  %v", before, after)
	}
	// A run beside them touches nothing but its own directory and links.
	runVirtual(t, virtualRoCC, out)
	for _, f := range []string{filepath.Join(precious, "thesis.tex"), filepath.Join(out, "notes.txt")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "mine" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "earlier")); err != nil || !st.IsDir() {
		t.Errorf("results/earlier: %v", err)
	}
}

// TestRequiredKeys: an entry of an array of tables without its endpoints
// or id is an error at its line, never host 0 or flow 0.
func TestRequiredKeys(t *testing.T) {
	for _, tc := range []struct{ drop, key string }{
		{"src = 0\n", "flows[0].src"},
		{"dst = 3\n", "flows[0].dst"},
		{"id = 1\n", "flows[0].id"},
	} {
		text := strings.Replace(virtualRoCC, tc.drop, "", 1)
		_, err := Decode("v.toml", text, ".")
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line == 0 || !strings.Contains(ce.Msg, "missing") {
			t.Errorf("without %q: %v, want %s: missing at a line", tc.drop, err, tc.key)
		}
	}
	base := strings.Replace(virtualRoCC, "[cc]", `[[incast]]
senders = [0, 1]
size_bytes = 1000

[[workloads]]
cdf = "../configs/workloads/websearch.cdf"
senders = [0]
load = 0.3

[cc]`, 1)
	for _, key := range []string{"incast[0].dst", "workloads[0].dsts"} {
		_, err := Decode("v.toml", base, ".")
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%v, want %s missing", err, key)
		}
		base = strings.Replace(base, "senders = [0, 1]\n", "senders = [0, 1]\ndst = 3\n", 1)
	}
}

// TestOutputPathCheckedBeforeTheRun: an output directory that cannot be made
// fails at once, before a run of ten virtual minutes starts. (A run that
// started first would take hours of wall time: the test's own timeout is
// the bound, not a clock here.)
func TestOutputPathCheckedBeforeTheRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	e, err := Decode("v.toml", strings.Replace(virtualRoCC, "duration_ms = 30", "duration_ms = 600_000", 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = file
	_, err = Run(context.Background(), e, nil)
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("error %v, want one naming %s", err, file)
	}
}

// killedRunEnv names the directory TestKilledRunLeavesNothingComplete's child
// writes to.
const killedRunEnv = "CCBED_TEST_KILLED_RUN_DIR"

// TestKilledRunLeavesNothingComplete SIGKILLs a process in the middle of a
// run: the previous run's results stay whole, and no directory that looks
// complete (a summary.json) appears.
func TestKilledRunLeavesNothingComplete(t *testing.T) {
	if dir := os.Getenv(killedRunEnv); dir != "" {
		// The child: a long virtual run, killed by the parent.
		e, err := Decode("v.toml", strings.Replace(longFlowsOnly, "duration_ms = 30", "duration_ms = 600_000", 1), ".")
		if err != nil {
			t.Fatal(err)
		}
		e.Experiment.OutputDir = dir
		Run(context.Background(), e, nil)
		t.Fatal("the run ended before it was killed")
	}
	out := t.TempDir()
	prev := runVirtual(t, virtualRoCC, out)
	before, _ := os.ReadFile(filepath.Join(prev.Dir, report.SummaryFile))
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunLeavesNothingComplete$", "-test.count=1")
	cmd.Env = append(os.Environ(), killedRunEnv+"="+out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for its staging directory, then let it run a little.
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(out, "v", ".*.partial-*"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never staged its results")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	after, err := os.ReadFile(filepath.Join(prev.Dir, report.SummaryFile))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the previous run's summary changed: %v", err)
	}
	summaries, _ := filepath.Glob(filepath.Join(out, "v", "[!l]*", report.SummaryFile)) // not latest/
	if len(summaries) != 1 {
		t.Errorf("summaries after the kill: %v, want only the previous run's", summaries)
	}
	// The next run keeps what the dead run streamed, as <its run id>-killed,
	// with the summary that says it did not finish, and leaves nothing
	// hidden.
	runVirtual(t, longFlowsOnly, out)
	if m, _ := filepath.Glob(filepath.Join(out, "v", ".*")); len(m) != 0 {
		t.Errorf("left beside the results: %v", m)
	}
	killed, _ := filepath.Glob(filepath.Join(out, "v", "*-killed"))
	if len(killed) != 1 {
		t.Fatalf("killed runs kept: %v, want one", killed)
	}
	s, err := report.LoadSummary(filepath.Join(killed[0], report.SummaryFile))
	if err != nil || !s.Interrupted || !s.Degraded || len(s.DegradedReasons) == 0 || !strings.Contains(s.DegradedReasons[0], "not finished") {
		t.Errorf("the killed run's summary: %v, interrupted %v, degraded %v %q", err, s.Interrupted, s.Degraded, s.DegradedReasons)
	}
	if b, err := os.ReadFile(filepath.Join(killed[0], report.QueueCSVFile)); err != nil || !strings.HasPrefix(string(b), report.QueueCSVHeader) {
		t.Errorf("the killed run's queue.csv: %v", err)
	}
}

// TestInterruptedRunIsMarked ends a virtual run's context early: the results
// are written and marked interrupted.
func TestInterruptedRunIsMarked(t *testing.T) {
	e, err := Decode("v.toml", strings.Replace(longFlowsOnly, "duration_ms = 30", "duration_ms = 600_000", 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var table bytes.Buffer
	res, err := Run(ctx, e, &table)
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.LoadSummary(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil || !res.Interrupted || !back.Interrupted || back.DurationS <= 0 || back.DurationS >= 600 {
		t.Errorf("interrupted %v, summary.json interrupted %v, duration %v s, %v", res.Interrupted, back.Interrupted, back.DurationS, err)
	}
	if !strings.Contains(table.String(), "INTERRUPTED") {
		t.Errorf("table:\n%s", table.String())
	}
}

// TestSummaryRecordsWhatProducedIt: the experiment file's path, hash, text
// and effective settings, the build, the machine, the start, seed and clock.
func TestSummaryRecordsWhatProducedIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.toml")
	os.WriteFile(path, []byte(virtualRoCC), 0o644)
	e, err := LoadWith(path, []string{"experiment.seed=7", "cc.params.q_ref_bytes=60000"})
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = dir
	before := time.Now()
	res, err := Run(context.Background(), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := report.LoadSummary(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(virtualRoCC))
	c := s.Config
	if c == nil || c.Path != path || c.SHA256 != hex.EncodeToString(sum[:]) || c.Text != virtualRoCC ||
		strings.Join(c.Overrides, " ") != "experiment.seed=7 cc.params.q_ref_bytes=60000" {
		t.Fatalf("config snapshot %+v", c)
	}
	cc, _ := c.Effective["cc"].(map[string]any)
	params, _ := cc["params"].(map[string]any)
	if cc["scheme"] != "rocc" || params["q_ref_bytes"] != float64(60000) || params["q_mid_bytes"] != float64(150000) {
		t.Errorf("effective cc %v", cc)
	}
	// Every parameter the scheme ran with, defaults included, -set applied.
	sp := c.SchemeParams
	if sp["q_ref_bytes"] != float64(60000) || sp["q_mid_bytes"] != float64(150000) || sp["t_ns"] == nil || sp["flow_table_size"] != float64(1024) {
		t.Errorf("scheme params %v", sp)
	}
	started, err := time.Parse(time.RFC3339Nano, s.StartedAt)
	if err != nil || started.Before(before.Add(-time.Second)) || started.After(time.Now()) || !strings.HasSuffix(s.StartedAt, "Z") {
		t.Errorf("started_at %q: %v", s.StartedAt, err)
	}
	if s.Seed != 7 || s.Clock != ClockVirtual || s.ResultsVersion != report.ResultsVersion || s.Build.Version == "" ||
		s.Build.GoVersion == "" || s.Machine.CPUs < 1 || s.Machine.OS == "" || s.Degraded || s.Interrupted {
		t.Errorf("summary %+v", s)
	}
}

// TestRateAndFCTColumns: rate.csv has the sender's rate beside the goodput,
// the rate never above line rate; fct.csv names the endpoints, the start and
// the flow's priority (the hosts' default, 3).
func TestRateAndFCTColumns(t *testing.T) {
	res := runVirtual(t, virtualRoCC, t.TempDir())
	read := func(name string) [][]string { return resultRows(t, res.Dir, name) }
	rate := read(report.RateCSVFile)
	if strings.Join(rate[0], ",") != "t_us,flow,goodput_gbps,rate_gbps,window_bytes" || len(rate) < 100 {
		t.Fatalf("rate.csv header %v, %d rows", rate[0], len(rate))
	}
	for _, r := range rate[1:] {
		g, err := strconv.ParseFloat(r[3], 64)
		if err != nil || g <= 0 || g > 10 {
			t.Fatalf("rate.csv row %v: sender rate %q, want (0, 10] Gb/s", r, r[3])
		}
	}
	if res.Summary.Trace != nil {
		t.Errorf("summary trace %+v: the run wrote none", res.Summary.Trace)
	}
	fct := read(report.FCTCSVFile)
	if strings.Join(fct[0], ",") != "flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority" || len(fct) != 2 {
		t.Fatalf("fct.csv %v", fct)
	}
	if r := fct[1]; r[0] != "3" || r[1] != "h2" || r[2] != "h3" || r[3] != "2000000" || r[4] != "5000" || r[7] != "3" {
		t.Errorf("fct.csv row %v, want flow 3 h2 -> h3, 2 MB from 5000 us, priority 3", r)
	}
}

// TestDegradedReasons: each way a run can lose what it measures marks it
// degraded with a reason that names the count: an lcore stall over the
// experiment's bound (3 ms on a 20 us-RTT experiment: the case), flows
// dropped from a full pending queue or never started, data frames a full
// receiver flow table refused, control events lost, rate samples and FCT
// records not kept, frames an adapter lost, telemetry samples a switch
// dropped, and captures that could not keep up. The counts are fed through
// the structs the drivers fill (lcore.Stats, hostd.Report, switchd.Snapshot).
func TestDegradedReasons(t *testing.T) {
	e, err := DecodeWith("v.toml", virtualRoCC, ".", []string{"topology.base_rtt_us=20"})
	if err != nil {
		t.Fatal(err)
	}
	bound := e.StallBound(20_000)
	if bound.Ns != StallFloorNs {
		t.Fatalf("bound %v, want the %d ns floor (half of 20 us is below it)", bound, StallFloorNs)
	}
	host := func(r hostd.Report) []hostd.Report { return []hostd.Report{{}, r} }
	for _, tc := range []struct {
		name string
		res  Result
		want []string
	}{
		{"clean", Result{Loops: []lcore.Stats{{Lcore: 1, Name: "hosts", Iterations: 10, MaxStallNs: bound.Ns}},
			Hosts: host(hostd.Report{}), Switches: []switchd.Snapshot{{Ports: make([]switchd.PortCounters, 4)}}}, nil},
		{"stall", Result{Loops: []lcore.Stats{{Lcore: 1, Name: "hosts", Iterations: 10, MaxStallNs: 3e6}}},
			[]string{"lcore 1 (hosts) stalled for up to 3.000 ms, over the stall bound of 100 us: 0.5 of min(base RTT 20.0 us, RoCC's fair-rate update interval T (t_ns) 40.0 us) = 10.0 us, raised to the 100 us floor"}},
		{"pending full", Result{Hosts: host(hostd.Report{Tx: hostd.TxCounters{PendingDropped: 7}})},
			[]string{"host h1 dropped 7 flows unstarted: the queue of flows waiting for a free QP was full (hostd max_pending)"}},
		{"not started", Result{Hosts: host(hostd.Report{Tx: hostd.TxCounters{FlowsWaiting: 5}})},
			[]string{"host h1 never started 5 flows that arrived: every QP stayed busy until the end (hostd max_qps)"}},
		{"rx table full", Result{Hosts: host(hostd.Report{Rx: hostd.RxCounters{FlowTableFull: 11}})},
			[]string{"host h1 refused 11 data frames: its receiver's flow table was full (hostd max_rx_flows)"}},
		{"events", Result{Hosts: host(hostd.Report{Rx: hostd.RxCounters{EventsDropped: 2}})},
			[]string{"host h1 lost 2 control events"}},
		{"samples and fcts", Result{Hosts: host(hostd.Report{Tx: hostd.TxCounters{SamplesDropped: 3, FCTsDropped: 1}})},
			[]string{"host h1 dropped 3 rate samples (hostd max_samples", "host h1 dropped 1 FCT records (hostd max_fcts"}},
		{"host port", Result{Hosts: host(hostd.Report{Port: hostd.PortCounter{TxDrops: 4, NoMbuf: 6, CtlRingDrops: 8}})},
			[]string{"host h1 lost 4 frames its port did not take", "host h1 lost 6 frames for want of an mbuf", "host h1 lost 8 control frames"}},
		{"switch", Result{Switches: []switchd.Snapshot{{SamplesDropped: 9, Ports: []switchd.PortCounters{{DropCounters: switchd.DropCounters{DropTx: 2}}, {DropCounters: switchd.DropCounters{DropTx: 3}}}}}},
			[]string{"switch s0 dropped 9 telemetry samples", "switch s0 lost 5 frames its ports did not take"}},
		{"capture", Result{Captures: []fabric.CaptureFile{{Port: "s0.p3", Path: "/x/s0.p3-h3.pcap", Dropped: 9}}},
			[]string{"capture of s0.p3 could not keep up: 9 frames"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := report.NewRecorder(report.Meta{})
			e.provenance(rec, &tc.res, time.Now())
			s := rec.Summarize()
			if s.Degraded != (len(tc.want) > 0) || len(s.DegradedReasons) != len(tc.want) {
				t.Fatalf("degraded %v %q, want %q", s.Degraded, s.DegradedReasons, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(s.DegradedReasons[i], w) {
					t.Errorf("reason %q, want %q", s.DegradedReasons[i], w)
				}
			}
			if len(tc.res.Loops) > 0 && (len(s.Lcores) != 1 || s.Lcores[0].MaxStallMs != float64(tc.res.Loops[0].MaxStallNs)/1e6) {
				t.Errorf("lcores %+v", s.Lcores)
			}
		})
	}
}

// TestStallBound: the bound is StallFraction of the smaller of the base RTT
// and the scheme's control period as [cc.params] sets it, never below the
// floor; a scheme without a period (DCTCP, TIMELY) takes the base RTT alone.
func TestStallBound(t *testing.T) {
	for _, tc := range []struct {
		scheme, params string
		rttNs          int64
		want           int64
		says           string
	}{
		{"rocc", "t_ns = 1_000_000", 20_000, StallFloorNs, "min(base RTT 20.0 us, RoCC's fair-rate update interval T (t_ns) 1000.0 us) = 10.0 us, raised to the 100 us floor"},
		{"rocc", "t_ns = 400_000", 2_000_000, 200_000, "min(base RTT 2000.0 us, RoCC's fair-rate update interval T (t_ns) 400.0 us) = 200.0 us"},
		{"dcqcn", "increase_timer_us = 600\nalpha_timer_us = 800", 4_000_000, 300_000, "DCQCN's rate-increase timer T (increase_timer_us) 600.0 us"},
		{"dcqcn", "increase_timer_us = 900\nalpha_timer_us = 500", 4_000_000, 250_000, "DCQCN's alpha timer K (alpha_timer_us) 500.0 us"},
		{"hpcc", "", 1_000_000, 500_000, "HPCC's per-RTT update period T (t_ns) 1000.0 us"},
		{"dctcp", "", 600_000, 300_000, "0.5 of base RTT 600.0 us = 300.0 us"},
	} {
		t.Run(tc.scheme+" "+tc.params, func(t *testing.T) {
			text := strings.Replace(virtualRoCC, "q_ref_bytes = 75_000\nq_mid_bytes = 150_000\nq_max_bytes = 210_000", tc.params, 1)
			text = strings.Replace(text, `scheme = "rocc"`, fmt.Sprintf("scheme = %q", tc.scheme), 1)
			e, err := Decode("v.toml", text, ".")
			if err != nil {
				t.Fatal(err)
			}
			b := e.StallBound(tc.rttNs)
			if b.Ns != tc.want || !strings.Contains(b.String(), tc.says) {
				t.Errorf("bound %d ns %q, want %d ns saying %q", b.Ns, b, tc.want, tc.says)
			}
		})
	}
}

// TestOverrides: -set key=value overrides decode with the file's strict
// decoder; a typo or a bad value is an error naming the override and key.
func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		sets  []string
		check func(e *Experiment) bool
		err   string // "" for none
	}{
		{[]string{"cc.scheme=dcqcn", "cc.params={}"}, func(e *Experiment) bool { return e.CC.Scheme == "dcqcn" }, ""},
		{[]string{"topology.link_gbps=25"}, func(e *Experiment) bool { return e.Topology.LinkGbps == 25 }, ""},
		{[]string{"cc.params.q_ref_bytes=50_000"}, func(e *Experiment) bool {
			return e.CC.Params["q_ref_bytes"] == int64(50000) && e.CC.Params["q_mid_bytes"] == int64(150000)
		}, ""},
		{[]string{"experiment.seed=3", "experiment.seed=4"}, func(e *Experiment) bool { return e.Experiment.Seed == 4 }, ""},
		{[]string{`experiment.name="a-b.2"`}, func(e *Experiment) bool { return e.Experiment.Name == "a-b.2" }, ""},
		{[]string{`experiment.name="a b"`}, nil, "-set experiment.name=\"a b\": experiment.name: \"a b\": want a letter or digit"},
		{[]string{"lcores.hosts=[1, 1]"}, func(e *Experiment) bool { return len(e.Lcores.Hosts) == 2 }, ""},
		{[]string{"cc.shceme=dcqcn"}, nil, "-set cc.shceme=dcqcn: cc.shceme: unknown key"},
		{[]string{"topology.link_gbps=fast"}, nil, "-set topology.link_gbps=fast: topology.link_gbps: incompatible types"},
		{[]string{"topology.link_gbps=-5"}, nil, "-set topology.link_gbps=-5: topology.link_gbps: got -5"},
		{[]string{"cc.scheme=nosuch"}, nil, "-set cc.scheme=nosuch: cc.scheme"},
		{[]string{"novalue"}, nil, `-set "novalue": want key=value`},
		{[]string{"flows[0].src=1"}, nil, "want a dotted path"},
		// [[flows]] entries by index, from 0.
		{[]string{"flows.1.rate_gbps=5", "flows.2.start_us=100"}, func(e *Experiment) bool {
			return e.Flows[1].RateGbps == 5 && e.Flows[0].RateGbps == 0 && e.Flows[2].StartUs == 100 && e.Flows[2].SizeBytes == 2_000_000
		}, ""},
		{[]string{"flows.3.rate_gbps=5"}, nil, "-set flows.3.rate_gbps=5: flows.3.rate_gbps: index 3 out of range: the experiment has 3 [[flows]], flows.0 to flows.2"},
		{[]string{"flows.99999999999999999999.src=1"}, nil, "flows.99999999999999999999.src: index 99999999999999999999 out of range"},
		{[]string{"incast.0.dst=3"}, nil, "-set incast.0.dst=3: incast.0.dst: index 0 out of range: the experiment has no [[incast]]"},
		{[]string{"flows.0.rate_gbs=5"}, nil, "-set flows.0.rate_gbs=5: flows.0.rate_gbs: unknown key"},
		{[]string{"flows.0.rate_gbps=fast"}, nil, "-set flows.0.rate_gbps=fast: flows.0.rate_gbps: incompatible types"},
		{[]string{"flows.0=1"}, nil, "-set flows.0=1: flows.0: want flows.0.KEY"},
		// Validation blames the override, naming the key as validation does.
		{[]string{"flows.0.rate_gbps=50"}, nil, "-set flows.0.rate_gbps=50: flows[0].rate_gbps: 50 Gb/s exceeds"},
	} {
		t.Run(strings.Join(tc.sets, " "), func(t *testing.T) {
			e, err := DecodeWith("v.toml", virtualRoCC, ".", tc.sets)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.HasPrefix(tc.sets[0], "cc.") || strings.HasPrefix(tc.sets[0], "topology.") {
					var ce *config.Error
					if !errors.As(err, &ce) {
						t.Errorf("error %T without a place", err)
					}
				}
				return
			}
			if err != nil || !tc.check(e) {
				t.Fatalf("error %v; experiment %+v", err, e)
			}
		})
	}
}

// TestSweep runs a 2 x 2 grid (two Q_refs, two seeds): four run
// directories, each a whole results directory with its settings, an index
// listing them with their metrics, and plots of the metrics against Q_ref,
// not against the seed.
func TestSweep(t *testing.T) {
	points, err := SweepPoints([]string{"cc.params.q_ref_bytes=50000,75000,100000", "experiment.seed=1,2"})
	if err != nil || len(points) != 6 || strings.Join(points[5], " ") != "cc.params.q_ref_bytes=100000 experiment.seed=2" {
		t.Fatalf("points %v %v", points, err)
	}
	if p, _ := SweepPoints([]string{"lcores.hosts=[1,2],[3]"}); len(p) != 2 || p[0][0] != "lcores.hosts=[1,2]" {
		t.Errorf("bracketed values: %v", p)
	}
	if _, err := SweepPoints([]string{"a=1", "a=2"}); err == nil {
		t.Error("a key given twice")
	}
	text := strings.Replace(longFlowsOnly, "duration_ms = 30", "duration_ms = 4", 1)
	load := func(sets []string) (*Experiment, error) { return DecodeWith("v.toml", text, ".", sets) }
	parent := filepath.Join(t.TempDir(), "sweep")
	points, _ = SweepPoints([]string{"cc.params.q_ref_bytes=50000,100000", "experiment.seed=1,2"})
	dir, runs, err := Sweep(context.Background(), parent, points, load, SweepOptions{})
	if err != nil || len(runs) != 4 || filepath.Dir(dir) != parent {
		t.Fatalf("%d runs in %s, %v", len(runs), dir, err)
	}
	if got, err := os.Readlink(filepath.Join(parent, LatestLink)); err != nil || got != filepath.Base(dir) {
		t.Errorf("sweep's latest -> %q, %v", got, err)
	}
	for i, r := range runs {
		s, err := report.LoadSummary(filepath.Join(dir, r.Dir, report.SummaryFile))
		if err != nil || r.Dir != fmt.Sprintf("run-%03d", i) {
			t.Fatalf("run %d in %s: %v", i, r.Dir, err)
		}
		if s.Seed != uint64(1+i%2) || strings.Join(s.Config.Overrides, " ") != strings.Join(points[i], " ") {
			t.Errorf("run %d: seed %d, overrides %v", i, s.Seed, s.Config.Overrides)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, SweepIndexCSV))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := "run,dir,cc.params.q_ref_bytes,experiment.seed,status,interrupted,degraded,jain_index,max_steady_queue_bytes,flows_completed"
	for _, m := range report.SweepMetrics()[3:] {
		header += "," + m.Name
	}
	header += ",error"
	if err != nil || len(lines) != 5 || lines[0] != header ||
		!strings.HasPrefix(lines[4], "3,run-003,100000,2,ok,false,false,") || !strings.HasSuffix(lines[4], ",") {
		t.Errorf("index.csv:\n%s", b)
	}
	// No flow completes: the FCT metrics are null (an empty cell), not 0.
	if j, err := os.ReadFile(filepath.Join(dir, SweepIndexJSON)); err != nil || !bytes.Contains(j, []byte(`"p99_slowdown": null`)) {
		t.Errorf("index.json: %v\n%s", err, j)
	}
	// The queue grows with Q_ref; the seed is a repeat, no axis.
	for _, f := range []string{"sweep_max_steady_queue_bytes_vs_cc.params.q_ref_bytes.png", "sweep_max_steady_queue_bytes_vs_cc.params.q_ref_bytes.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "sweep_*_vs_experiment.seed.*")); len(m) > 0 {
		t.Errorf("plots against the seed: %v", m)
	}
	// A typo in any point fails before the first run.
	bad, _ := SweepPoints([]string{"cc.params.q_ref_bytes=1,2", "topology.link_gbs=1"})
	if _, _, err := Sweep(context.Background(), filepath.Join(t.TempDir(), "bad"), bad, load, SweepOptions{}); err == nil ||
		!strings.Contains(err.Error(), "topology.link_gbs: unknown key") {
		t.Errorf("typo: %v", err)
	}
}

// TestResultsDocCoversWhatARunWrites checks docs/results.md against the files
// a run writes: every summary.json key (nested ones too) and every CSV column
// is named there, in backquotes.
func TestResultsDocCoversWhatARunWrites(t *testing.T) {
	doc, err := os.ReadFile("../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	res := runVirtual(t, virtualRoCC, t.TempDir())
	raw, err := os.ReadFile(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	named := func(what, key string) {
		if !bytes.Contains(doc, []byte("`"+key+"`")) {
			t.Errorf("docs/results.md does not name %s %q", what, key)
		}
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				named("summary key", k)
				// The experiment file's keys and the scheme's parameters
				// are docs/reference.md's (TestReference).
				if k != "effective" && k != "scheme_params" {
					walk(prefix+k+".", x)
				}
			}
		case []any:
			for _, x := range v {
				walk(prefix, x)
			}
		}
	}
	walk("", sum)
	// Keys a virtual run does not write.
	for _, k := range []string{"lcores", "captures", "samples_rejected", "vcs_revision", "vcs_modified", "overrides", "name",
		"busy_fraction", "max_stall_ms"} {
		named("summary key", k)
	}
	for _, h := range []string{report.QueueCSVHeader, report.RateCSVHeader, report.FairRateCSVHeader, report.FCTCSVHeader} {
		if !bytes.Contains(doc, []byte("`"+h+"`")) {
			t.Errorf("docs/results.md lacks the header %q", h)
		}
		for _, c := range strings.Split(h, ",") {
			named("CSV column", c)
		}
	}
}
