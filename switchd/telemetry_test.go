package switchd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// summaryLineFmt is the console line as fmt wrote it before
// AppendSummaryLine: the two must agree.
func summaryLineFmt(tS, dtS float64, prev, cur *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%6.1fs", tS)
	for i := range cur.Ports {
		c := &cur.Ports[i]
		var p PortCounters
		if prev != nil && i < len(prev.Ports) {
			p = prev.Ports[i]
		}
		mpps := float64(c.TxPackets-p.TxPackets) / dtS / 1e6
		gbps := float64(c.TxBytes-p.TxBytes) * 8 / dtS / 1e9
		fmt.Fprintf(&b, " | %s tx %.3fMpps %.2fGb/s q %dB drop %d mark %d fb %d pfc %d/%d",
			c.Name, mpps, gbps, c.QueueBytes, c.DropsTotal-p.DropsTotal,
			c.ECNMarkedTotal-p.ECNMarkedTotal, c.FeedbackSent-p.FeedbackSent,
			c.PausesSent-p.PausesSent, c.PausesRecv-p.PausesRecv)
		if c.FairRateGbps > 0 {
			fmt.Fprintf(&b, " F %.2fGb/s", c.FairRateGbps)
		}
	}
	return b.String()
}

// TestSummaryLineAllocatesNothing: the console line every second and the
// snapshot behind it allocate nothing once their buffers exist (they were
// the garbage behind a running switchd's slow RSS rise), and the line reads
// as it did.
func TestSummaryLineAllocatesNothing(t *testing.T) {
	c := testSpec(4, 10)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	var prev, cur Snapshot
	e.SnapshotInto(&prev)
	e.SnapshotInto(&cur)
	cur.Ports[1].TxPackets, cur.Ports[1].TxBytes, cur.Ports[1].QueueBytes = 12345, 12345*1000, 77
	cur.Ports[2].FairRateGbps, cur.Ports[3].DropsTotal = 3.33, 9
	for _, tS := range []float64{0, 1.04, 12.5, 123456.7} {
		want := summaryLineFmt(tS, 1, &prev, &cur)
		if got := SummaryLine(tS, 1, &prev, &cur); got != want {
			t.Errorf("t %g:\n got %q\nwant %q", tS, got, want)
		}
	}
	if got, want := SummaryLine(3, 0.5, nil, &cur), summaryLineFmt(3, 0.5, nil, &cur); got != want {
		t.Errorf("no prev:\n got %q\nwant %q", got, want)
	}
	line := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		e.SnapshotInto(&cur)
		line = AppendSummaryLine(line[:0], 5, 1, &prev, &cur)
	}); n != 0 {
		t.Errorf("SnapshotInto + AppendSummaryLine: %v allocations per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = e.Snapshot() }); n == 0 {
		t.Log("Snapshot allocates nothing?")
	}
}

// TestCSVDecimation: past its full-resolution budget the CSV keeps one row per
// port per window, with the window's largest queue, so an hour-long run stays
// bounded; the header and columns do not change.
func TestCSVDecimation(t *testing.T) {
	var buf bytes.Buffer
	cw := NewCSVWriter(&buf)
	const full = 100_000
	cw.SetDecimation(full, 100*time.Millisecond)
	// 10 s of 100 us samples on 4 ports: 400,000 rows raw (about 10 MB).
	const periodNs, ports = 100_000, 4
	for tNs := int64(0); tNs < 10e9; tNs += periodNs {
		for p := 0; p < ports; p++ {
			q := int64(1000 * p)
			if tNs%(1e9) == 5*periodNs { // one spike per second on every port
				q = 1 << 20
			}
			cw.Write(&Sample{TNs: tNs, Port: p, QueueBytes: q, FairRateBps: -1})
		}
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	dec, from := cw.Decimated()
	if !dec {
		t.Fatal("never decimated")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != CSVHeader {
		t.Fatalf("header %q", lines[0])
	}
	// Full rows up to about 100 KB, then 4 ports x 10 rows/s for the rest.
	rest := float64(10e9-from) / 1e9
	maxRows := int(from/periodNs+1)*ports + int(rest*10*ports) + ports + 1
	if len(lines) > maxRows || int64(buf.Len()) > full+int64(rest*10*ports*40)+1000 {
		t.Errorf("%d rows, %d bytes after %v s decimated: want <= %d rows", len(lines), buf.Len(), rest, maxRows)
	}
	spikes := 0
	for _, l := range lines[1:] {
		if strings.Contains(l, ",1048576,") {
			spikes++
		}
	}
	if spikes < 9*ports {
		t.Errorf("%d rows carry a queue spike, want one per port per second (%d): the window keeps its max", spikes, 9*ports)
	}
	if uint64(len(lines)-1) != cw.Rows() {
		t.Errorf("Rows() %d, file %d", cw.Rows(), len(lines)-1)
	}
	t.Logf("10 s x 4 ports of 100 us samples: %d rows, %d bytes (decimated from t = %.1f s)", len(lines)-1, buf.Len(), float64(from)/1e9)
}

// TestMonitorChecksPathAndCheckpoints: an unwritable JSON path fails when the
// monitor is made (before any traffic), not at exit; a checkpoint lands while
// the switch runs (Final false); Finish marks the file final and whether a
// signal ended the run.
func TestMonitorChecksPathAndCheckpoints(t *testing.T) {
	c := testSpec(2, 10)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := NewMonitor(e, MonitorConfig{JSONPath: filepath.Join(dir, "no", "such", "dir", "s.json")}); err == nil {
		t.Error("a JSON path in a missing directory was accepted")
	}
	if err := CheckOutputPath(filepath.Join(dir, "no", "x.csv")); err == nil {
		t.Error("CheckOutputPath accepted a missing directory")
	}
	if err := CheckOutputPath(dir); err == nil {
		t.Error("CheckOutputPath accepted a directory as the file")
	}
	if err := CheckOutputPath(filepath.Join(dir, "ok.csv")); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("CheckOutputPath left %d files", len(ents))
	}
	path := filepath.Join(dir, "s.json")
	start := time.Now()
	m, err := NewMonitor(e, MonitorConfig{JSONPath: path, Mode: "rtc", Start: start, Checkpoint: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	read := func() Results {
		t.Helper()
		var r Results
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := read(); r.Final || r.Mode != "rtc" || len(r.Counters.Ports) != 2 {
		t.Errorf("the file at start: %+v", r)
	}
	if err := m.Tick(start.Add(1500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if r := read(); r.Final || r.DurationS != 1.5 {
		t.Errorf("checkpoint: final %v duration %v, want false 1.5", r.Final, r.DurationS)
	}
	res, err := m.Finish(start.Add(2*time.Second), nil, "terminated")
	if err != nil {
		t.Fatal(err)
	}
	if r := read(); !r.Final || !r.Interrupted || r.Signal != "terminated" || !res.Interrupted {
		t.Errorf("final file: final %v interrupted %v signal %q", r.Final, r.Interrupted, r.Signal)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want s.json alone (no temporaries)", len(ents))
	}
}

// TestRingGrowthBytes: RingGrowthBytes is what the rings allocated by
// growing, so that a soak can tell the data plane's growing queues from
// control-plane garbage. 1,000 frames queued on one port grow its data
// queue from nothing to 256, 512 and 1,024 slots; the heap's count of
// allocated bytes must move by that much (size classes may round it up a
// little), and nothing grows when the same depth comes back.
func TestRingGrowthBytes(t *testing.T) {
	c := testSpec(2, 100)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = dataFrame(t, 0, 1, uint32(i%16), 64, false)
	}
	out := make([]TxItem, 64)
	var meta Meta
	var ms runtime.MemStats
	fill := func(now int64) (grown, allocated uint64) {
		e.PublishEgress()
		g0 := e.RingGrowthBytes()
		runtime.ReadMemStats(&ms)
		a0 := ms.TotalAlloc
		for _, f := range frames {
			if !e.Classify(0, f, &meta) || !e.Enqueue(now, &meta, f, handleOf(f)) {
				t.Fatal("frame not queued")
			}
		}
		runtime.ReadMemStats(&ms)
		e.PublishEgress()
		return e.RingGrowthBytes() - g0, ms.TotalAlloc - a0
	}
	grown, allocated := fill(0)
	if want := uint64(256+512+1024) * uint64(unsafe.Sizeof(qEntry{})); grown != want {
		t.Errorf("first fill: RingGrowthBytes moved %d, want %d", grown, want)
	}
	if allocated < grown || allocated > grown+grown/8+4096 {
		t.Errorf("first fill: %d bytes allocated, RingGrowthBytes moved %d", allocated, grown)
	}
	// Drain the port, then fill it to the same depth: no growth.
	now := int64(0)
	for sent := 0; sent < n; {
		now += 1000
		e.Service(now)
		sent += e.Transmit(now, 1, out)
	}
	if grown, allocated := fill(now); grown != 0 || allocated > 4096 {
		t.Errorf("second fill: RingGrowthBytes moved %d, %d bytes allocated; want 0 and 0", grown, allocated)
	}
}
