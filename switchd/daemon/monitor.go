package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ccbed/ccbed/internal/atomicfile"
	"github.com/ccbed/ccbed/switchd"
)

// CSVHeader is the first line of the time-series file.
const CSVHeader = "t_us,port,queue_bytes,fair_rate_gbps"

// PFCCSVHeader is the first line of the PFC event log: the columns of a
// testbed run's pfc.csv (docs/results.md, "pfc.csv"), so that testbed
// collect merges the switch's file as it is.
const PFCCSVHeader = "t_us,port,priority,event,ingress_bytes"

// PFCCSVFile is the PFC event log's name in the switch's output directory
// (PFCPath).
const PFCCSVFile = "pfc.csv"

// lineWriter is a CSV file written line by line through a bounded buffer
// (64 KiB, written out when full, on Flush and on close): the part that
// CSVWriter and PFCWriter share.
type lineWriter struct {
	w     *bufio.Writer
	c     io.Closer
	buf   []byte // the line being built, reused
	err   error  // the first write error
	bytes int64  // written so far, header included
	rows  uint64 // data rows written
}

// init writes header to w; close closes w if it is an io.Closer.
func (lw *lineWriter) init(w io.Writer, header string) {
	lw.w = bufio.NewWriterSize(w, 1<<16)
	if c, ok := w.(io.Closer); ok {
		lw.c = c
	}
	_, lw.err = lw.w.WriteString(header + "\n")
	lw.bytes = int64(len(header) + 1)
}

// line writes lw.buf, a row ending in a newline.
func (lw *lineWriter) line() {
	if lw.err == nil {
		_, lw.err = lw.w.Write(lw.buf)
	}
	lw.bytes += int64(len(lw.buf))
	lw.rows++
}

// Flush writes buffered lines out.
func (lw *lineWriter) Flush() error {
	if err := lw.w.Flush(); lw.err == nil {
		lw.err = err
	}
	return lw.err
}

// close flushes and closes the file.
func (lw *lineWriter) close() error {
	err := lw.Flush()
	if lw.c != nil {
		if cerr := lw.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Rows is the number of data rows written.
func (lw *lineWriter) Rows() uint64 { return lw.rows }

// Bytes is the size of what the writer has written (buffered bytes included).
func (lw *lineWriter) Bytes() int64 { return lw.bytes }

// CSVWriter writes samples as CSV lines (t_us,port,queue_bytes,fair_rate_gbps;
// fair_rate_gbps empty for a port without a fair rate).
//
// A long run stays bounded on disk with SetDecimation: once the file holds
// fullBytes, each port gets at most one row per window (queue_bytes the
// largest of the window's samples, fair_rate_gbps its last, t_us its last
// sample's time). With the daemon's defaults (256 MB at full resolution, then
// 100 ms windows) an hour at 100 us samples on 4 ports takes about 260 MB
// instead of about 1 GB, and each further hour about 5 MB.
type CSVWriter struct {
	lineWriter

	fullBytes  int64 // 0: never decimate
	windowNs   int64
	decimating bool
	decimFrom  int64 // engine time of the first decimated sample
	win        []csvWindow
}

// csvWindow is one port's samples of the current decimation window.
type csvWindow struct {
	start, last int64
	maxQ        int64
	fair        float64
	n           int
}

// SetDecimation makes the writer keep full resolution for the first
// fullBytes of the file, then one row per port per window (see CSVWriter).
// fullBytes <= 0 or window <= 0 turns it off.
func (cw *CSVWriter) SetDecimation(fullBytes int64, window time.Duration) {
	if fullBytes <= 0 || window <= 0 {
		cw.fullBytes, cw.windowNs = 0, 0
		return
	}
	cw.fullBytes, cw.windowNs = fullBytes, int64(window)
}

// Decimated reports whether the writer has switched to one row per window,
// and the engine time (ns) of the first sample it decimated.
func (cw *CSVWriter) Decimated() (bool, int64) { return cw.decimating, cw.decimFrom }

// NewCSVWriter writes the header to w; Close closes w if it is an io.Closer.
func NewCSVWriter(w io.Writer) *CSVWriter {
	cw := &CSVWriter{}
	cw.init(w, CSVHeader)
	return cw
}

// CreateCSV creates path and returns a writer on it.
func CreateCSV(path string) (*CSVWriter, error) { return create(path, NewCSVWriter) }

// create creates path and returns the writer newW makes on it.
func create[W any](path string, newW func(io.Writer) *W) (*W, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return newW(f), nil
}

// Write appends one sample (or, once decimating, folds it into its port's
// window).
func (cw *CSVWriter) Write(s *switchd.Sample) {
	if !cw.decimating {
		cw.writeRow(s.TNs, s.Port, s.QueueBytes, s.FairRateBps)
		if cw.fullBytes > 0 && cw.bytes >= cw.fullBytes {
			cw.decimating, cw.decimFrom = true, s.TNs
		}
		return
	}
	if s.Port < 0 {
		return
	}
	for s.Port >= len(cw.win) { // grows once per port, then never
		cw.win = append(cw.win, csvWindow{})
	}
	w := &cw.win[s.Port]
	if w.n > 0 && s.TNs-w.start >= cw.windowNs {
		cw.writeRow(w.last, s.Port, w.maxQ, w.fair)
		w.n = 0
	}
	if w.n == 0 {
		w.start, w.maxQ = s.TNs, s.QueueBytes
	}
	w.maxQ = max(w.maxQ, s.QueueBytes)
	w.last, w.fair = s.TNs, s.FairRateBps
	w.n++
}

// flushWindows writes the decimation windows still open.
func (cw *CSVWriter) flushWindows() {
	for p := range cw.win {
		if w := &cw.win[p]; w.n > 0 {
			cw.writeRow(w.last, p, w.maxQ, w.fair)
			w.n = 0
		}
	}
}

func (cw *CSVWriter) writeRow(tNs int64, port int, queue int64, fairBps float64) {
	b := cw.buf[:0]
	b = strconv.AppendFloat(b, float64(tNs)/1e3, 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(port), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, queue, 10)
	b = append(b, ',')
	if fairBps >= 0 {
		b = strconv.AppendFloat(b, fairBps/1e9, 'f', 4, 64)
	}
	cw.buf = append(b, '\n')
	cw.line()
}

// Close writes the open decimation windows, flushes and closes.
func (cw *CSVWriter) Close() error {
	cw.flushWindows()
	return cw.close()
}

// PFCWriter writes the switch's PFC event log (PFCCSVHeader): one row per
// XOFF or XON an ingress port's lossless priority went into, t_us the
// engine time in microseconds (the time base of the samples CSV),
// ingress_bytes the priority's bytes from the port held at the change.
// Rows come in the order the events are drained: each tx shard's in time
// order.
type PFCWriter struct{ lineWriter }

// NewPFCWriter writes the header to w; Close closes w if it is an
// io.Closer.
func NewPFCWriter(w io.Writer) *PFCWriter {
	pw := &PFCWriter{}
	pw.init(w, PFCCSVHeader)
	return pw
}

// CreatePFCCSV creates path and returns a PFC event writer on it.
func CreatePFCCSV(path string) (*PFCWriter, error) { return create(path, NewPFCWriter) }

// Write appends one event. It allocates nothing once its line buffer has
// grown to a row's length.
func (pw *PFCWriter) Write(ev *switchd.PFCEvent) {
	b := pw.buf[:0]
	b = strconv.AppendFloat(b, float64(ev.TNs)/1e3, 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(ev.Port), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(ev.Prio), 10)
	if ev.XOFF {
		b = append(b, ",xoff,"...)
	} else {
		b = append(b, ",xon,"...)
	}
	b = strconv.AppendInt(b, ev.IngressBytes, 10)
	pw.buf = append(b, '\n')
	pw.line()
}

// Close flushes and closes.
func (pw *PFCWriter) Close() error { return pw.close() }

// PFCPath is where a switch whose results go to jsonPath and csvPath (the
// file's telemetry.json and telemetry.csv, either may be empty) writes its
// PFC event log: PFCCSVFile in the directory of the JSON, else of the CSV;
// "" when it writes neither.
func PFCPath(jsonPath, csvPath string) string {
	for _, p := range []string{jsonPath, csvPath} {
		if p != "" {
			return filepath.Join(filepath.Dir(p), PFCCSVFile)
		}
	}
	return ""
}

// DefaultCheckpoint is how often a running switch rewrites its JSON: a SIGKILL
// loses at most this much of its counters.
const DefaultCheckpoint = 2 * time.Second

// Monitor is the control plane's side of a running switch, polled by one
// goroutine (Tick, every 100 ms in cmd/switchd): it drains the engine's
// samples into the CSV and its PFC events into the event log, prints the
// one-line summary every second, and every checkpoint period flushes both
// files and rewrites the JSON (Final false). It reuses its snapshots and
// line buffers, so that hours of ticks leave next to no garbage (the JSON
// checkpoint allocates a few hundred bytes).
type Monitor struct {
	eng        *switchd.Engine
	csv        *CSVWriter // nil: none
	pfc        *PFCWriter // nil: none (the events are let go)
	console    io.Writer  // nil: no summary lines
	jsonPath   string     // "": no JSON
	start      time.Time
	checkpoint time.Duration
	// onSample and onPFC are the drains' callbacks, bound once.
	onSample func(*switchd.Sample)
	onPFC    func(*switchd.PFCEvent)

	lastLine, lastCkpt time.Time
	prev, cur          switchd.Snapshot
	havePrev           bool
	line               []byte
	res                switchd.Results
	jbuf               bytesBuffer
	enc                *json.Encoder
	decimUs            float64
	err                error
}

// bytesBuffer is a reusable byte buffer for the JSON encoder.
type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// MonitorConfig is what a Monitor writes where. Checkpoint 0 is
// DefaultCheckpoint; negative turns checkpoints off. PFC nil lets the PFC
// events go (the counters still count the XOFFs).
type MonitorConfig struct {
	CSV        *CSVWriter
	PFC        *PFCWriter
	Console    io.Writer
	JSONPath   string
	Mode       string
	Start      time.Time
	Checkpoint time.Duration
}

// SetClockOrigin records the wall-clock time (Unix ns) of the engine's time
// 0 in the results (switchd.Results.ClockOriginUnixNs).
func (m *Monitor) SetClockOrigin(unixNs int64) { m.res.ClockOriginUnixNs = unixNs }

// NewMonitor makes the monitor of eng. With a JSON path it writes the first
// checkpoint at once: an unwritable path fails here, before any traffic, not
// at exit with the run's counters lost.
func NewMonitor(eng *switchd.Engine, c MonitorConfig) (*Monitor, error) {
	if c.Checkpoint == 0 {
		c.Checkpoint = DefaultCheckpoint
	}
	if c.Start.IsZero() {
		c.Start = time.Now()
	}
	m := &Monitor{eng: eng, csv: c.CSV, pfc: c.PFC, console: c.Console, jsonPath: c.JSONPath, start: c.Start,
		checkpoint: c.Checkpoint, lastLine: c.Start, lastCkpt: c.Start, res: switchd.Results{Mode: c.Mode}}
	m.onPFC = discardPFCEvent
	if m.csv != nil {
		m.onSample = m.csv.Write
	}
	if m.pfc != nil {
		m.onPFC = m.pfc.Write
	}
	m.enc = json.NewEncoder(&m.jbuf)
	m.enc.SetIndent("", "  ")
	if m.jsonPath != "" {
		if err := m.writeJSON(c.Start); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// CheckOutputPath checks before a run that path can be written: its directory
// exists and takes a new file. It leaves no file behind.
func CheckOutputPath(path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return &os.PathError{Op: "write", Path: path, Err: os.ErrInvalid}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".check*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// drain moves the samples and PFC events waiting in the engine's rings
// into their files (PFC events with no log are let go, so that the rings
// never fill and count them as dropped).
func (m *Monitor) drain() {
	if m.csv != nil {
		m.eng.DrainSamples(m.onSample)
	}
	m.eng.DrainPFCEvents(m.onPFC)
}

// keep records err as the monitor's error unless it has one.
func (m *Monitor) keep(err error) {
	if err != nil && m.err == nil {
		m.err = err
	}
}

// Tick does what is due at now: drain samples and PFC events, the summary
// line, a checkpoint. It returns the first file error (the run goes on).
func (m *Monitor) Tick(now time.Time) error {
	m.drain()
	if m.console != nil && now.Sub(m.lastLine) >= time.Second {
		m.eng.SnapshotInto(&m.cur)
		var prev *switchd.Snapshot
		if m.havePrev {
			prev = &m.prev
		}
		m.line = switchd.AppendSummaryLine(m.line[:0], now.Sub(m.start).Seconds(), now.Sub(m.lastLine).Seconds(), prev, &m.cur)
		m.line = append(m.line, '\n')
		m.console.Write(m.line)
		m.prev, m.cur = m.cur, m.prev
		m.havePrev, m.lastLine = true, now
	}
	if m.checkpoint > 0 && now.Sub(m.lastCkpt) >= m.checkpoint {
		m.lastCkpt = now
		if m.csv != nil {
			m.keep(m.csv.Flush())
		}
		if m.pfc != nil {
			m.keep(m.pfc.Flush())
		}
		if m.jsonPath != "" {
			m.keep(m.writeJSON(now))
		}
	}
	return m.err
}

// writeJSON writes the counters now as a checkpoint (or, after Finish set
// Final, as the last word).
func (m *Monitor) writeJSON(now time.Time) error {
	m.res.DurationS = now.Sub(m.start).Seconds()
	m.eng.SnapshotInto(&m.res.Counters)
	if m.csv != nil {
		m.res.CSVRows = m.csv.Rows()
		if dec, from := m.csv.Decimated(); dec && m.res.CSVDecimatedFromUs == nil {
			m.decimUs = float64(from) / 1e3
			m.res.CSVDecimatedFromUs = &m.decimUs
		}
	}
	if m.pfc != nil {
		m.res.PFCRows = m.pfc.Rows()
	}
	m.jbuf.b = m.jbuf.b[:0]
	if err := m.enc.Encode(&m.res); err != nil {
		return err
	}
	return atomicfile.Write(m.jsonPath, m.jbuf.b)
}

// discardPFCEvent lets a PFC event go (a Monitor without an event log).
func discardPFCEvent(*switchd.PFCEvent) {}

// Finish ends the run at now (after the loops stopped): it drains the last
// samples and PFC events, closes the files and writes the final JSON with
// the loops' statistics. sig is the signal that stopped the run ("" when it
// ran its course). It returns the results and the errors of the files.
func (m *Monitor) Finish(now time.Time, lcores []switchd.LcoreResults, sig string) (*switchd.Results, error) {
	m.drain()
	errs := []error{m.err}
	if m.csv != nil {
		errs = append(errs, m.csv.Close())
	}
	if m.pfc != nil {
		errs = append(errs, m.pfc.Close())
	}
	m.res.Lcores = lcores
	m.res.Final, m.res.Interrupted, m.res.Signal = true, sig != "", sig
	if m.jsonPath != "" {
		errs = append(errs, m.writeJSON(now))
	} else {
		m.res.DurationS = now.Sub(m.start).Seconds()
		m.eng.SnapshotInto(&m.res.Counters)
		if m.pfc != nil {
			m.res.PFCRows = m.pfc.Rows()
		}
	}
	return &m.res, errors.Join(errs...)
}
