package switchd

import (
	"bufio"
	"encoding/json"
	"errors"
	"github.com/ccbed/ccbed/internal/ring"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ccbed/ccbed/internal/atomicfile"
	"github.com/ccbed/ccbed/wire"
)

// Sample is one telemetry point of one port.
type Sample struct {
	TNs         int64   // engine time, ns
	Port        int     // port index
	QueueBytes  int64   // egress data queue
	FairRateBps float64 // RoCC fair rate; negative when the port's CP has none
	// PrioBytes are the bytes in each priority's data queue (they sum to
	// QueueBytes).
	PrioBytes [wire.PFCPriorities]int64
}

// PFCEvent is one change of a lossless priority of an ingress port: XOFF
// (the switch paused the port's peer for it) or XON (resumed it). Pause
// refreshes are not events.
type PFCEvent struct {
	TNs  int64 // engine time, ns
	Port int32 // the ingress port whose peer is paused or resumed
	Prio uint8 // the priority
	XOFF bool  // true: XOFF; false: XON
	// IngressBytes are the priority's bytes from the port held in the
	// switch at the change (with several tx shards, those on the shard of
	// the port's egress), headroom included.
	IngressBytes int64
}

// Ring is a single-producer (tx+CC lcore), single-consumer (the results
// writer) ring of records: telemetry samples (SampleRing), PFC events. A
// full ring drops the new record and counts it.
type Ring[T any] struct {
	r       *ring.SPSC[T]
	dropped atomic.Uint64
}

// SampleRing is the ring of a shard's telemetry samples.
type SampleRing = Ring[Sample]

// NewSampleRing makes a ring of at least n samples.
func NewSampleRing(n int) *SampleRing { return NewRing[Sample](n) }

// NewRing makes a ring of at least n records.
func NewRing[T any](n int) *Ring[T] { return &Ring[T]{r: ring.New[T](max(n, 2))} }

func (r *Ring[T]) push(s *T) {
	p := r.r.Slot()
	if p == nil {
		r.dropped.Add(1)
		return
	}
	*p = *s
	r.r.Commit()
}

// Drain calls fn on every record written so far, oldest first, and returns how
// many. One reader at a time.
func (r *Ring[T]) Drain(fn func(*T)) int { return r.r.Drain(fn) }

// Dropped is the number of records lost to a full ring.
func (r *Ring[T]) Dropped() uint64 { return r.dropped.Load() }

// Snapshot is the switch's counters at one time.
type Snapshot struct {
	Ports          []PortCounters `json:"ports"`
	SamplesDropped uint64         `json:"samples_dropped"`
	// PFCEventsDropped counts PFC events (PFCEvents) lost to a full ring.
	PFCEventsDropped uint64 `json:"pfc_events_dropped,omitempty"`
}

// CSVHeader is the first line of the time-series file.
const CSVHeader = "t_us,port,queue_bytes,fair_rate_gbps"

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
	w     *bufio.Writer
	c     io.Closer
	buf   []byte
	err   error
	bytes int64  // written so far, header included
	rows  uint64 // data rows written

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

// Bytes is the size of what the writer has written (buffered bytes included).
func (cw *CSVWriter) Bytes() int64 { return cw.bytes }

// Rows is the number of data rows written.
func (cw *CSVWriter) Rows() uint64 { return cw.rows }

// NewCSVWriter writes the header to w; Close closes w if it is an io.Closer.
func NewCSVWriter(w io.Writer) *CSVWriter {
	cw := &CSVWriter{w: bufio.NewWriterSize(w, 1<<16)}
	if c, ok := w.(io.Closer); ok {
		cw.c = c
	}
	_, cw.err = cw.w.WriteString(CSVHeader + "\n")
	cw.bytes = int64(len(CSVHeader) + 1)
	return cw
}

// CreateCSV creates path and returns a writer on it.
func CreateCSV(path string) (*CSVWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return NewCSVWriter(f), nil
}

// Write appends one sample (or, once decimating, folds it into its port's
// window).
func (cw *CSVWriter) Write(s *Sample) {
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
	s := Sample{TNs: tNs, Port: port, QueueBytes: queue, FairRateBps: fairBps}
	b := cw.buf[:0]
	b = strconv.AppendFloat(b, float64(s.TNs)/1e3, 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.Port), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.QueueBytes, 10)
	b = append(b, ',')
	if s.FairRateBps >= 0 {
		b = strconv.AppendFloat(b, s.FairRateBps/1e9, 'f', 4, 64)
	}
	b = append(b, '\n')
	cw.buf = b
	if cw.err == nil {
		_, cw.err = cw.w.Write(b)
	}
	cw.bytes += int64(len(b))
	cw.rows++
}

// DrainFrom writes every sample waiting in r and returns how many.
func (cw *CSVWriter) DrainFrom(r *SampleRing) int { return r.Drain(cw.Write) }

// Flush writes buffered lines out.
func (cw *CSVWriter) Flush() error {
	if err := cw.w.Flush(); cw.err == nil {
		cw.err = err
	}
	return cw.err
}

// Close writes the open decimation windows, flushes and closes.
func (cw *CSVWriter) Close() error {
	cw.flushWindows()
	err := cw.Flush()
	if cw.c != nil {
		if cerr := cw.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Results is the JSON the switch writes: at start (to check that it can), every
// few seconds while it runs (a checkpoint: Final false, so that a SIGKILL
// loses only the last seconds), and on exit (Final true).
type Results struct {
	DurationS float64        `json:"duration_s"`
	Mode      string         `json:"mode"`
	Counters  Snapshot       `json:"counters"`
	Lcores    []LcoreResults `json:"lcores,omitempty"`
	// Final is true only in the file written at a clean exit; a file with
	// Final false is a checkpoint of a run that is still going or was killed.
	Final bool `json:"final"`
	// Interrupted is true when SIGINT or SIGTERM ended the run (Signal names
	// it), false when it ran its -duration or, in a checkpoint, still runs.
	Interrupted bool   `json:"interrupted"`
	Signal      string `json:"signal,omitempty"`
	// CSVRows is the number of rows in the telemetry CSV; CSVDecimatedFromUs,
	// when not nil, the engine time from which it holds one row per port per
	// window (CSVWriter.SetDecimation) instead of every sample.
	CSVRows            uint64   `json:"csv_rows,omitempty"`
	CSVDecimatedFromUs *float64 `json:"csv_decimated_from_us,omitempty"`
	// ClockOriginUnixNs is the wall-clock time (Unix ns) of the engine's
	// time 0, read as its clock started: the CSV's t_us counts from it, so a
	// run's series can be put on another node's time base (testbed collect).
	// 0: not recorded.
	ClockOriginUnixNs int64 `json:"clock_origin_unix_ns,omitempty"`
}

// LcoreResults is one loop's statistics (from lcore.Stats).
type LcoreResults struct {
	Name       string `json:"name"`
	Lcore      uint   `json:"lcore"`
	Iterations uint64 `json:"iterations"`
	BusyPolls  uint64 `json:"busy_polls"`
	Work       uint64 `json:"packets"`
	MaxStallNs int64  `json:"max_stall_ns"`
	Panic      string `json:"panic,omitempty"`
}

// WriteResultsJSON writes r to path, indented, atomically: into a temporary
// file beside it, renamed over path once complete, so that a reader (or a
// crash) never sees half a file.
func WriteResultsJSON(path string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// SummaryLine is the one-line console summary of the interval from prev to cur
// (dtS seconds): rates per port, queue, drops, marks, feedback and pauses.
func SummaryLine(tS, dtS float64, prev, cur *Snapshot) string {
	return string(AppendSummaryLine(nil, tS, dtS, prev, cur))
}

// AppendSummaryLine appends SummaryLine's text to b (no newline) and returns
// it; with a reused b it allocates nothing, so that a long-running switch's
// console leaves no garbage behind.
func AppendSummaryLine(b []byte, tS, dtS float64, prev, cur *Snapshot) []byte {
	b = append(b, "t="...)
	b = appendPadded(b, tS, 1, 6)
	b = append(b, 's')
	var zero PortCounters
	for i := range cur.Ports {
		c := &cur.Ports[i]
		p := &zero
		if prev != nil && i < len(prev.Ports) {
			p = &prev.Ports[i]
		}
		mpps := float64(c.TxPackets-p.TxPackets) / dtS / 1e6
		gbps := float64(c.TxBytes-p.TxBytes) * 8 / dtS / 1e9
		b = append(b, " | "...)
		b = append(b, c.Name...)
		b = append(b, " tx "...)
		b = strconv.AppendFloat(b, mpps, 'f', 3, 64)
		b = append(b, "Mpps "...)
		b = strconv.AppendFloat(b, gbps, 'f', 2, 64)
		b = append(b, "Gb/s q "...)
		b = strconv.AppendUint(b, c.QueueBytes, 10)
		b = append(b, "B drop "...)
		b = strconv.AppendUint(b, c.DropsTotal-p.DropsTotal, 10)
		b = append(b, " mark "...)
		b = strconv.AppendUint(b, c.ECNMarkedTotal-p.ECNMarkedTotal, 10)
		b = append(b, " fb "...)
		b = strconv.AppendUint(b, c.FeedbackSent-p.FeedbackSent, 10)
		b = append(b, " pfc "...)
		b = strconv.AppendUint(b, c.PausesSent-p.PausesSent, 10)
		b = append(b, '/')
		b = strconv.AppendUint(b, c.PausesRecv-p.PausesRecv, 10)
		if c.FairRateGbps > 0 {
			b = append(b, " F "...)
			b = strconv.AppendFloat(b, c.FairRateGbps, 'f', 2, 64)
			b = append(b, "Gb/s"...)
		}
	}
	return b
}

// appendPadded appends v with prec decimals, right-aligned in width (%*.*f).
func appendPadded(b []byte, v float64, prec, width int) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	if pad := width - (len(b) - n); pad > 0 {
		for i := 0; i < pad; i++ {
			b = append(b, ' ')
		}
		copy(b[n+pad:], b[n:len(b)-pad])
		for i := 0; i < pad; i++ {
			b[n+i] = ' '
		}
	}
	return b
}

// SnapshotInto is Snapshot into s, reusing s.Ports: a control plane that
// polls the counters every second allocates nothing after the first call.
func (e *Engine) SnapshotInto(s *Snapshot) {
	if cap(s.Ports) < e.n {
		s.Ports = make([]PortCounters, e.n)
	}
	s.Ports = s.Ports[:e.n]
	s.SamplesDropped = e.samplesDropped()
	s.PFCEventsDropped = e.pfcEventsDropped()
	for i := range s.Ports {
		pc := &s.Ports[i]
		*pc = PortCounters{}
		pc.Port, pc.Name, pc.Scheme = i, e.eg[i].name, e.eg[i].scheme
		pc.fill(&e.ing[i].pub, &e.eg[i].pub)
	}
}

// DefaultCheckpoint is how often a running switch rewrites its JSON: a SIGKILL
// loses at most this much of its counters.
const DefaultCheckpoint = 2 * time.Second

// Monitor is the control plane's side of a running switch, polled by one
// goroutine (Tick, every 100 ms in cmd/switchd): it drains the sample ring
// into the CSV, prints the one-line summary every second, and every
// checkpoint period flushes the CSV and rewrites the JSON (Final false). It
// reuses its snapshots and line buffer, so that hours of ticks leave next to
// no garbage (the JSON checkpoint allocates a few hundred bytes).
type Monitor struct {
	eng        *Engine
	csv        *CSVWriter // nil: none
	console    io.Writer  // nil: no summary lines
	jsonPath   string     // "": no JSON
	start      time.Time
	checkpoint time.Duration

	lastLine, lastCkpt time.Time
	prev, cur          Snapshot
	havePrev           bool
	line               []byte
	res                Results
	jbuf               bytesBuffer
	enc                *json.Encoder
	decimUs            float64
	err                error
}

// bytesBuffer is a reusable byte buffer for the JSON encoder.
type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// MonitorConfig is what a Monitor writes where. Checkpoint 0 is
// DefaultCheckpoint; negative turns checkpoints off.
type MonitorConfig struct {
	CSV        *CSVWriter
	Console    io.Writer
	JSONPath   string
	Mode       string
	Start      time.Time
	Checkpoint time.Duration
}

// SetClockOrigin records the wall-clock time (Unix ns) of the engine's time
// 0 in the results (Results.ClockOriginUnixNs).
func (m *Monitor) SetClockOrigin(unixNs int64) { m.res.ClockOriginUnixNs = unixNs }

// NewMonitor makes the monitor of eng. With a JSON path it writes the first
// checkpoint at once: an unwritable path fails here, before any traffic, not
// at exit with the run's counters lost.
func NewMonitor(eng *Engine, c MonitorConfig) (*Monitor, error) {
	if c.Checkpoint == 0 {
		c.Checkpoint = DefaultCheckpoint
	}
	if c.Start.IsZero() {
		c.Start = time.Now()
	}
	m := &Monitor{eng: eng, csv: c.CSV, console: c.Console, jsonPath: c.JSONPath, start: c.Start,
		checkpoint: c.Checkpoint, lastLine: c.Start, lastCkpt: c.Start, res: Results{Mode: c.Mode}}
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

// Tick does what is due at now: drain samples, the summary line, a
// checkpoint. It returns the first checkpoint error (the run goes on).
func (m *Monitor) Tick(now time.Time) error {
	if m.csv != nil {
		for k := range m.eng.tx {
			m.csv.DrainFrom(m.eng.tx[k].samples)
		}
	}
	// The daemon writes no PFC event log (its counters count the XOFFs):
	// the events are let go, so that the ring never fills and counts them
	// as dropped.
	for k := range m.eng.tx {
		m.eng.tx[k].pfcEvents.Drain(discardPFCEvent)
	}
	if m.console != nil && now.Sub(m.lastLine) >= time.Second {
		m.eng.SnapshotInto(&m.cur)
		var prev *Snapshot
		if m.havePrev {
			prev = &m.prev
		}
		m.line = AppendSummaryLine(m.line[:0], now.Sub(m.start).Seconds(), now.Sub(m.lastLine).Seconds(), prev, &m.cur)
		m.line = append(m.line, '\n')
		m.console.Write(m.line)
		m.prev, m.cur = m.cur, m.prev
		m.havePrev, m.lastLine = true, now
	}
	if m.checkpoint > 0 && now.Sub(m.lastCkpt) >= m.checkpoint {
		m.lastCkpt = now
		if m.csv != nil {
			if err := m.csv.Flush(); err != nil && m.err == nil {
				m.err = err
			}
		}
		if m.jsonPath != "" {
			if err := m.writeJSON(now); err != nil && m.err == nil {
				m.err = err
			}
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
	m.jbuf.b = m.jbuf.b[:0]
	if err := m.enc.Encode(&m.res); err != nil {
		return err
	}
	return atomicfile.Write(m.jsonPath, m.jbuf.b)
}

// discardPFCEvent lets a PFC event go (Monitor.Tick).
func discardPFCEvent(*PFCEvent) {}

// Finish ends the run at now (after the loops stopped): it drains the last
// samples, closes the CSV and writes the final JSON with the loops'
// statistics. sig is the signal that stopped the run ("" when it ran its
// course). It returns the results and the errors of the files.
func (m *Monitor) Finish(now time.Time, lcores []LcoreResults, sig string) (*Results, error) {
	var errs []error
	if m.err != nil {
		errs = append(errs, m.err)
	}
	if m.csv != nil {
		for k := range m.eng.tx {
			m.csv.DrainFrom(m.eng.tx[k].samples)
		}
		if err := m.csv.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.res.Lcores = lcores
	m.res.Final, m.res.Interrupted, m.res.Signal = true, sig != "", sig
	if m.jsonPath != "" {
		if err := m.writeJSON(now); err != nil {
			errs = append(errs, err)
		}
	} else {
		m.res.DurationS = now.Sub(m.start).Seconds()
		m.eng.SnapshotInto(&m.res.Counters)
	}
	return &m.res, errors.Join(errs...)
}
