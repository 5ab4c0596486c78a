package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// The CSV headers of the results contract (docs/results.md). An empty cell
// is a missing value (pandas reads NaN).
const (
	QueueCSVHeader    = "t_us,port,queue_bytes"
	RateCSVHeader     = "t_us,flow,goodput_gbps,rate_gbps,window_bytes"
	FairRateCSVHeader = "t_us,port,gbps"
	// FCTCSVHeader is fct.csv's: priority, the flow's traffic class, was
	// appended last, after the columns of results written before it.
	FCTCSVHeader = "flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority"
	// PrioQueueCSVHeader is queue_prio.csv's: each priority's queue of a
	// port, one row per sample, port and priority the traffic uses.
	PrioQueueCSVHeader = "t_us,port,priority,queue_bytes"
	// PFCCSVHeader is pfc.csv's: one row per XOFF or XON of a priority of
	// an ingress port.
	PFCCSVHeader = "t_us,port,priority,event,ingress_bytes"
)

// The file names WriteAll writes into the results directory.
const (
	SummaryFile      = "summary.json"
	QueueCSVFile     = "queue.csv"
	RateCSVFile      = "rate.csv"
	FairRateCSVFile  = "fairrate.csv"
	FCTCSVFile       = "fct.csv"
	PrioQueueCSVFile = "queue_prio.csv"
	PFCCSVFile       = "pfc.csv"
	QueuePlotFile    = "queue.png"
	RatePlotFile     = "rate.png"
	FairPlotFile     = "fairrate.png"
	FCTPlotFile      = "fct_slowdown.png"
)

// appendFloat appends x in the shortest form that reads back exactly.
func appendFloat(b []byte, x float64) []byte {
	return strconv.AppendFloat(b, x, 'f', -1, 64)
}

// appendOpt appends x, or nothing (an empty cell) when x is NaN.
func appendOpt(b []byte, x float64) []byte {
	if math.IsNaN(x) {
		return b
	}
	return appendFloat(b, x)
}

// appendQueueValues appends a queue row's value: bytes, an integer.
func appendQueueValues(b []byte, r *row) []byte { return strconv.AppendInt(b, int64(r.v), 10) }

// appendPFCValues appends a PFC row's event (rp: 1 XOFF, 0 XON) and
// ingress bytes.
func appendPFCValues(b []byte, r *row) []byte {
	if r.rp == 1 {
		b = append(b, "xoff,"...)
	} else {
		b = append(b, "xon,"...)
	}
	return strconv.AppendInt(b, int64(r.v), 10)
}

// appendFairValues appends a fair-rate row's value.
func appendFairValues(b []byte, r *row) []byte { return appendFloat(b, r.v) }

// appendRateValues appends a rate row's goodput, sender rate and window
// (empty cells when unknown).
func appendRateValues(b []byte, r *row) []byte {
	b = appendFloat(b, r.v)
	b = append(b, ',')
	b = appendOpt(b, r.rp)
	b = append(b, ',')
	if !math.IsNaN(r.win) {
		b = strconv.AppendInt(b, int64(r.win), 10)
	}
	return b
}

// writeHeld writes tb's header and the rows it holds, in order, to w.
func writeHeld(w io.Writer, tb *table) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(tb.header)
	bw.WriteByte('\n')
	var buf []byte
	for i, rs := 0, tb.sorted(); i < len(rs); i++ {
		buf = tb.appendRow(buf[:0], &rs[i])
		bw.Write(buf)
	}
	return bw.Flush()
}

// writeHeld writes the rows tb holds to w under r's lock, or says that
// they went to the results directory.
func (r *Recorder) writeHeld(w io.Writer, tb *table) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir != "" {
		return r.errStreamed(tb.name)
	}
	return writeHeld(w, tb)
}

// errStreamed is what the writers of one file return once the rows went to
// the results directory.
func (r *Recorder) errStreamed(name string) error {
	return fmt.Errorf("report: the rows of %s were written to %s", name, r.dir)
}

// WriteQueueCSV writes queue.csv (t_us,port,queue_bytes), in time order:
// for a Recorder that has not written its files (Stream, WriteFiles).
func (r *Recorder) WriteQueueCSV(w io.Writer) error {
	return r.writeHeld(w, r.queue)
}

// WriteRateCSV writes rate.csv (RateCSVHeader), in time order: for a
// Recorder that has not written its files.
func (r *Recorder) WriteRateCSV(w io.Writer) error {
	return r.writeHeld(w, r.rate)
}

// WriteFairRateCSV writes fairrate.csv (t_us,port,gbps), in time order: for
// a Recorder that has not written its files.
func (r *Recorder) WriteFairRateCSV(w io.Writer) error {
	return r.writeHeld(w, r.fair)
}

// WriteFCTCSV writes fct.csv (FCTCSVHeader), by source, each source's
// records in the order added: for a Recorder that has not written its
// files.
func (r *Recorder) WriteFCTCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir != "" {
		return r.errStreamed(FCTCSVFile)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(FCTCSVHeader)
	bw.WriteByte('\n')
	var buf []byte
	for _, p := range r.fct.sortedPending() {
		buf = appendFCT(buf[:0], &p.rec)
		bw.Write(buf)
	}
	return bw.Flush()
}

// HasFairRate reports whether any fair-rate sample was recorded.
func (r *Recorder) HasFairRate() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fair.rows() > 0
}

// Stream makes r write its files into the existing directory dir while the
// run goes (a StageDir's path): queue.csv, rate.csv, pfc.csv and fct.csv
// are created now, with their headers; fairrate.csv and queue_prio.csv with
// their first row; summary.json
// now, saying the run has not finished (interrupted, degraded: a run killed
// before WriteFiles leaves it so), and again by WriteFiles at the end.
// From then on, the rows of every series sampled before the time given to
// Advance are written, in order, and summarized; later samples must not be
// earlier than that time. The steady half is that of Meta.DurationS (or, when
// it is zero, of the latest sample so far); when the run turns out another
// length (interrupted, SetDuration), WriteFiles summarizes the files again.
func (r *Recorder) Stream(dir string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir != "" {
		return fmt.Errorf("report: the results already go to %s", r.dir)
	}
	return r.stream(dir)
}

// stream is Stream with r.mu held.
func (r *Recorder) stream(dir string) error {
	r.durUs = r.durationUs()
	for _, tb := range r.tables() {
		tb.stats.reset(r.durUs / 2)
	}
	for _, tb := range []*table{r.queue, r.rate, r.pfc} {
		if err := tb.open(dir); err != nil {
			r.closeFiles(dir)
			return err
		}
	}
	if err := r.fct.open(dir); err != nil {
		r.closeFiles(dir)
		return err
	}
	r.dir = dir
	s := r.summary(r.view())
	s.Interrupted, s.Degraded = true, true
	s.DegradedReasons = append(s.DegradedReasons, "the run has not finished: written when it started; "+
		"the CSV files hold the rows written until it stopped")
	return WriteSummaryFile(dir, s)
}

// tables are r's series files whose statistics the summary reads, in the
// order of view's fields.
func (r *Recorder) tables() []*table { return r.all[:4] }

// files are every table r writes.
func (r *Recorder) files() []*table { return r.all }

// Advance writes the rows of every series sampled before tUs, in time order
// (ties by port or flow id), and every FCT record added so far, into the
// files (Stream), and flushes them; nothing when r does not stream.
func (r *Recorder) Advance(tUs float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.advance(tUs, true)
}

// advance is Advance with r.mu held; with flush, the files are flushed.
func (r *Recorder) advance(tUs float64, flush bool) error {
	if r.dir == "" || r.done {
		return nil
	}
	for _, tb := range r.files() {
		if err := tb.emit(r.dir, tUs); err != nil {
			return fmt.Errorf("report: write %s: %w", tb.name, err)
		}
		if flush {
			if err := tb.flush(); err != nil {
				return fmt.Errorf("report: write %s: %w", tb.name, err)
			}
		}
	}
	if err := r.fct.emit(r.dir); err != nil {
		return fmt.Errorf("report: write %s: %w", FCTCSVFile, err)
	}
	if flush && r.fct.w != nil {
		if err := r.fct.w.Flush(); err != nil {
			return fmt.Errorf("report: write %s: %w", FCTCSVFile, err)
		}
	}
	return nil
}

// closeFiles closes every open file, reporting the first error.
func (r *Recorder) closeFiles(dir string) error {
	var err error
	for _, tb := range r.files() {
		if cerr := tb.close(); err == nil && cerr != nil {
			err = fmt.Errorf("report: write %s: %w", tb.name, cerr)
		}
	}
	if cerr := r.fct.close(dir); err == nil {
		err = cerr
	}
	return err
}

// finish writes every row still held, completes and closes the files, and,
// when the run's length is not the one the steady halves assumed, computes
// the series' statistics again from the files written.
func (r *Recorder) finish() error {
	if r.done {
		return fmt.Errorf("report: the results were written to %s", r.dir)
	}
	err := r.advance(math.Inf(1), false)
	if cerr := r.closeFiles(r.dir); err == nil {
		err = cerr
	}
	r.done = true
	if err != nil {
		return err
	}
	if final := r.durationUs(); final != r.durUs {
		r.durUs = final
		for _, tb := range r.tables() {
			if err := tb.replay(r.dir, final/2); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFile creates path and fills it with write, reporting the first error
// of write, flush or close.
func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// WriteAll writes the results contract into dir, whole or not at all: into
// a staging directory beside dir (StageDir), renamed into dir's place when
// every file is written, so an earlier run's files never remain beside the
// new ones and a crash leaves no directory that looks complete. It returns
// the summary written.
func (r *Recorder) WriteAll(dir string) (Summary, error) {
	st, err := StageDir(dir)
	if err != nil {
		return Summary{}, err
	}
	s, err := r.WriteFiles(st.Path())
	if err != nil {
		st.Abort()
		return s, err
	}
	return s, st.Commit()
}

// WriteFiles writes the results contract into the existing directory dir
// (use it on a StageDir's path; WriteAll does both): summary.json,
// queue.csv, rate.csv, pfc.csv and fct.csv always (a CSV with no rows has
// its header), fairrate.csv and queue_prio.csv when they have rows, and the PNG plots
// whose data exist (see WritePlots); summary.json last. A Recorder that
// streams (Stream) completes its files in dir, which must be the one it
// streams into; one that does not streams every row now. It returns the
// summary written. The files are written once.
func (r *Recorder) WriteFiles(dir string) (Summary, error) {
	r.mu.Lock()
	var err error
	switch {
	case r.dir == "":
		err = r.stream(dir)
	case r.dir != dir:
		err = fmt.Errorf("report: the results go to %s, not %s", r.dir, dir)
	}
	if err == nil {
		err = r.finish()
	}
	r.mu.Unlock()
	if err != nil {
		return Summary{}, err
	}
	s := r.Summarize()
	if _, err := r.WritePlots(dir); err != nil {
		return s, err
	}
	return s, WriteSummaryFile(dir, s)
}

// WriteSummaryFile writes s as dir's summary.json.
func WriteSummaryFile(dir string, s Summary) error {
	return writeFile(filepath.Join(dir, SummaryFile), func(w io.Writer) error { return WriteSummaryJSON(w, s) })
}
