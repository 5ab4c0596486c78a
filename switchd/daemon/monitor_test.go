package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/internal/switchtest"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// testEngine is an engine of n ports at linkGbps, port i's peer host
// 10.0.i.1 (MAC 02:00:00:00:00:0i) behind port MAC 02:00:00:00:ff:0i, with
// c's other settings from edit.
func testEngine(t *testing.T, n int, linkGbps float64, edit func(*Config)) *switchd.Engine {
	t.Helper()
	c := DefaultConfig()
	for i := 0; i < n; i++ {
		c.Ports = append(c.Ports, PortConfig{
			Name: fmt.Sprintf("p%d", i), MAC: fmt.Sprintf("02:00:00:00:ff:%02x", i),
			PeerMAC: fmt.Sprintf("02:00:00:00:00:%02x", i), LinkGbps: linkGbps, BufferBytes: 1 << 20,
		})
		c.Routes = append(c.Routes, RouteConfig{Prefix: fmt.Sprintf("10.0.%d.0/24", i), Port: fmt.Sprintf("p%d", i)})
	}
	if edit != nil {
		edit(&c)
	}
	s, err := c.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := switchd.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
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
			cw.Write(&switchd.Sample{TNs: tNs, Port: p, QueueBytes: q, FairRateBps: -1})
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
	if uint64(len(lines)-1) != cw.Rows() || int64(buf.Len()) != cw.Bytes() {
		t.Errorf("Rows() %d Bytes() %d, file %d rows %d bytes", cw.Rows(), cw.Bytes(), len(lines)-1, buf.Len())
	}
	t.Logf("10 s x 4 ports of 100 us samples: %d rows, %d bytes (decimated from t = %.1f s)", len(lines)-1, buf.Len(), float64(from)/1e9)
}

// countingWriter counts the writes that reach it and their bytes.
type countingWriter struct {
	writes int
	bytes  int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// TestPFCWriter: each event is one row in the columns of a testbed run's
// pfc.csv; rows go out through a bounded buffer (nothing reaches the file
// until 64 KiB or a Flush), and writing a row allocates nothing.
func TestPFCWriter(t *testing.T) {
	cases := []struct {
		ev   switchd.PFCEvent
		want string
	}{
		{switchd.PFCEvent{TNs: 0, Port: 0, Prio: 3, XOFF: true, IngressBytes: 20_096}, "0.000,0,3,xoff,20096"},
		{switchd.PFCEvent{TNs: 1_234_567, Port: 2, Prio: 3, XOFF: false, IngressBytes: 14_999}, "1234.567,2,3,xon,14999"},
		{switchd.PFCEvent{TNs: 3_600_000_000_001, Port: 63, Prio: 7, XOFF: true}, "3600000000.001,63,7,xoff,0"},
		{switchd.PFCEvent{TNs: 999, Port: 1, Prio: 0, XOFF: false, IngressBytes: 1 << 40}, "0.999,1,0,xon,1099511627776"},
	}
	var buf bytes.Buffer
	pw := NewPFCWriter(&buf)
	for i := range cases {
		pw.Write(&cases[i].ev)
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes reached the file before a flush", buf.Len())
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if lines[0] != PFCCSVHeader || len(lines) != len(cases)+1 || pw.Rows() != uint64(len(cases)) {
		t.Fatalf("header %q, %d lines, Rows %d: want %q and %d rows", lines[0], len(lines), pw.Rows(), PFCCSVHeader, len(cases))
	}
	for i, c := range cases {
		if lines[i+1] != c.want {
			t.Errorf("event %+v: row %q, want %q", c.ev, lines[i+1], c.want)
		}
	}

	// Bounded: a storm of events reaches the file in 64 KiB writes.
	var cw countingWriter
	pw = NewPFCWriter(&cw)
	ev := cases[1].ev
	if n := testing.AllocsPerRun(100_000, func() { ev.TNs++; pw.Write(&ev) }); n != 0 {
		t.Errorf("Write: %v allocations per event, want 0", n)
	}
	if cw.writes == 0 || cw.bytes/cw.writes < 60<<10 || int64(cw.bytes) > pw.Bytes() || pw.Bytes()-int64(cw.bytes) > 64<<10 {
		t.Errorf("%d writes of %d bytes for %d written: want 64 KiB writes, at most 64 KiB held", cw.writes, cw.bytes, pw.Bytes())
	}
	if err := pw.Close(); err != nil || int64(cw.bytes) != pw.Bytes() {
		t.Errorf("Close: %v, %d of %d bytes out", err, cw.bytes, pw.Bytes())
	}
}

// TestPFCPath: the event log goes beside the JSON, else the CSV.
func TestPFCPath(t *testing.T) {
	for _, c := range []struct{ json, csv, want string }{
		{"results/switch.json", "results/switch.csv", "results/pfc.csv"},
		{"", "out/q.csv", "out/pfc.csv"},
		{"s.json", "", "pfc.csv"},
		{"", "", ""},
	} {
		if got := PFCPath(c.json, c.csv); got != c.want {
			t.Errorf("PFCPath(%q, %q) = %q, want %q", c.json, c.csv, got, c.want)
		}
	}
}

// pfcFrame is a PFC frame from port's peer pausing prio for quanta.
func pfcFrame(port int, prio int, quanta uint16) []byte {
	b := make([]byte, 64)
	var q [wire.PFCPriorities]uint16
	q[prio] = quanta
	n, _ := wire.BuildPFC(b, wire.MAC{2, 0, 0, 0, 0, byte(port)}, 1<<prio, &q)
	return b[:n]
}

// TestMonitorWritesPFCEvents: a port that backs up behind a paused egress
// goes into XOFF and, once the egress resumes and drains, back to XON; the
// Monitor drains both events from the engine into the event log, whose rows
// are as many as the port's XOFF and XON counters, and whose count the JSON
// records. Its ticks allocate nothing.
func TestMonitorWritesPFCEvents(t *testing.T) {
	e := testEngine(t, 3, 10, func(c *Config) {
		c.Buffer.Mode = switchd.BufferStatic
		c.PFC.Enabled = true
		c.PFC.XOFFBytes = 20_000
		c.PFC.XONOffsetBytes = 5_000
	})
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "s.json")
	pfc, err := CreatePFCCSV(PFCPath(jsonPath, ""))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m, err := NewMonitor(e, MonitorConfig{PFC: pfc, JSONPath: jsonPath, Start: start, Checkpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	var meta switchd.Meta
	out := make([]switchd.TxItem, 64)
	inject := func(now int64, in int, f []byte) {
		if e.Classify(in, f, &meta) {
			e.Enqueue(now, &meta, f, switchd.Handle(uintptr(unsafe.Pointer(&f[0]))))
		}
	}
	tx := func(now int64, p int) int { e.Service(now); return e.Transmit(now, p, out) }
	inject(0, 2, pfcFrame(2, 3, 0xffff)) // port 2's peer pauses it
	for i := 0; i < 30; i++ {
		inject(int64(i), 0, switchtest.DataFrame(t, 0, 2, 1, 1000))
		tx(int64(i), 0)
	}
	if err := m.Tick(start.Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	inject(1000, 2, pfcFrame(2, 3, 0)) // resumed: port 2 drains, port 0 resumes
	for now := int64(1000); now < 1_000_000; now += 100 {
		tx(now, 2)
		tx(now, 0)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := m.Tick(start.Add(200 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Tick: %v allocations, want 0", n)
	}
	e.PublishEgress() // as the loops do every millisecond of engine time
	e.PublishIngress()
	res, err := m.Finish(start.Add(time.Second), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, PFCCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	want := PFCCSVHeader + "\n"
	p0 := res.Counters.Ports[0]
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || lines[0] != PFCCSVHeader || !strings.HasPrefix(lines[1], "0.") || !strings.Contains(lines[1], ",0,3,xoff,") ||
		!strings.Contains(lines[2], ",0,3,xon,") {
		t.Fatalf("pfc.csv:\n%s\nwant %s and an XOFF then an XON of port 0's priority 3", b, want)
	}
	if rows := uint64(len(lines) - 1); rows != p0.PFCOnsets+p0.ResumesSent || p0.PFCOnsets != 1 || res.PFCRows != rows ||
		res.Counters.PFCEventsDropped != 0 {
		t.Errorf("%d rows; port 0 counted %d XOFF and %d XON; the JSON says %d rows, %d dropped",
			rows, p0.PFCOnsets, p0.ResumesSent, res.PFCRows, res.Counters.PFCEventsDropped)
	}
	var r switchd.Results
	if b, err := os.ReadFile(jsonPath); err != nil || json.Unmarshal(b, &r) != nil || r.PFCRows != 2 || !r.Final {
		t.Errorf("final JSON: pfc_rows %d final %v (%v)", r.PFCRows, r.Final, err)
	}
}

// TestMonitorChecksPathAndCheckpoints: an unwritable JSON path fails when the
// monitor is made (before any traffic), not at exit; a checkpoint lands while
// the switch runs (Final false); Finish marks the file final and whether a
// signal ended the run.
func TestMonitorChecksPathAndCheckpoints(t *testing.T) {
	e := testEngine(t, 2, 10, nil)
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
	read := func() switchd.Results {
		t.Helper()
		var r switchd.Results
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
