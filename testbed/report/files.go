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
	FCTCSVHeader      = "flow,src,dst,size_bytes,start_us,fct_us,slowdown"
)

// The file names WriteAll writes into the results directory.
const (
	SummaryFile     = "summary.json"
	QueueCSVFile    = "queue.csv"
	RateCSVFile     = "rate.csv"
	FairRateCSVFile = "fairrate.csv"
	FCTCSVFile      = "fct.csv"
	QueuePlotFile   = "queue.png"
	RatePlotFile    = "rate.png"
	FairPlotFile    = "fairrate.png"
	FCTPlotFile     = "fct_slowdown.png"
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

// appendRate appends the goodput, sender rate and window of sample i of a
// rate series.
func appendRate(b []byte, s *series, i int) []byte {
	b = appendFloat(b, s.v[i])
	b = append(b, ',')
	if s.rp != nil {
		b = appendOpt(b, s.rp[i])
	}
	b = append(b, ',')
	if s.win != nil && !math.IsNaN(s.win[i]) {
		b = strconv.AppendInt(b, int64(s.win[i]), 10)
	}
	return b
}

// appendInt appends sample i's value as an integer.
func appendInt(b []byte, s *series, i int) []byte { return strconv.AppendInt(b, int64(s.v[i]), 10) }

// appendValue appends sample i's value.
func appendValue(b []byte, s *series, i int) []byte { return appendFloat(b, s.v[i]) }

// writeSeriesCSV writes header, then one row "t,id,values" per sample of all
// series, merged in time order (ties by id); values appends the row's values.
// The merge keeps the series' next samples in a binary heap: O(rows x log
// series), so a run with one series per flow writes in time linear in its
// rows.
func writeSeriesCSV(w io.Writer, header string, ss []*series, values func([]byte, *series, int) []byte) error {
	_, err := mergeSeriesCSV(w, header, ss, values)
	return err
}

// mergeSeriesCSV is writeSeriesCSV, and returns how many comparisons the
// merge made (the measure of its cost that a test can hold to a bound).
func mergeSeriesCSV(w io.Writer, header string, ss []*series, values func([]byte, *series, int) []byte) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(header)
	bw.WriteByte('\n')
	m := seriesMerge{ss: ss, pos: make([]int, len(ss))}
	for k, s := range ss {
		if len(s.t) > 0 {
			m.heap = append(m.heap, k)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	var buf []byte
	for len(m.heap) > 0 {
		k := m.heap[0]
		s, i := ss[k], m.pos[k]
		buf = appendFloat(buf[:0], s.t[i])
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(s.id), 10)
		buf = append(buf, ',')
		buf = values(buf, s, i)
		buf = append(buf, '\n')
		bw.Write(buf)
		if m.pos[k]++; m.pos[k] == len(s.t) { // this series is done
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
		}
		m.down(0)
	}
	return m.compares, bw.Flush()
}

// seriesMerge is a binary min-heap of the series (by index in ss, which is
// ordered by id) that have samples left, keyed by the time of their next
// sample, then by index: the order writeSeriesCSV writes rows in.
type seriesMerge struct {
	ss   []*series
	pos  []int // next sample of each series
	heap []int
	// compares counts comparisons (less).
	compares int
}

// less orders heap entries a and b.
func (m *seriesMerge) less(a, b int) bool {
	m.compares++
	ka, kb := m.heap[a], m.heap[b]
	ta, tb := m.ss[ka].t[m.pos[ka]], m.ss[kb].t[m.pos[kb]]
	return ta < tb || (ta == tb && ka < kb)
}

// down moves entry i down to its place.
func (m *seriesMerge) down(i int) {
	n := len(m.heap)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && m.less(c+1, c) {
			c++
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

// WriteQueueCSV writes queue.csv (t_us,port,queue_bytes), in time order.
func (r *Recorder) WriteQueueCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return writeSeriesCSV(w, QueueCSVHeader, r.queue.prepare(), appendInt)
}

// WriteRateCSV writes rate.csv (RateCSVHeader), in time order.
func (r *Recorder) WriteRateCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return writeSeriesCSV(w, RateCSVHeader, r.rate.prepare(), appendRate)
}

// WriteFairRateCSV writes fairrate.csv (t_us,port,gbps), in time order.
func (r *Recorder) WriteFairRateCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return writeSeriesCSV(w, FairRateCSVHeader, r.fair.prepare(), appendValue)
}

// WriteFCTCSV writes fct.csv (FCTCSVHeader), in the order the records were
// added.
func (r *Recorder) WriteFCTCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(FCTCSVHeader)
	bw.WriteByte('\n')
	var buf []byte
	for _, rec := range r.fct {
		buf = strconv.AppendInt(buf[:0], int64(rec.Flow), 10)
		buf = append(buf, ',')
		buf = append(buf, rec.Src...)
		buf = append(buf, ',')
		buf = append(buf, rec.Dst...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, rec.SizeBytes, 10)
		buf = append(buf, ',')
		buf = appendOpt(buf, rec.StartUs)
		buf = append(buf, ',')
		buf = appendFloat(buf, rec.FCTUs)
		buf = append(buf, ',')
		buf = appendFloat(buf, rec.Slowdown)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// HasFairRate reports whether any fair-rate sample was recorded.
func (r *Recorder) HasFairRate() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fair.samples() > 0
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

// WriteFiles writes the results contract into the existing directory dir:
// summary.json, queue.csv, rate.csv and fct.csv always (a CSV with no rows
// has its header), fairrate.csv when a fair rate was recorded, and the PNG
// plots whose data exist (see WritePlots); summary.json last. It returns the
// summary written. Use it on a StageDir's path; WriteAll does both.
func (r *Recorder) WriteFiles(dir string) (Summary, error) {
	s := r.Summarize()
	writers := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{QueueCSVFile, r.WriteQueueCSV},
		{RateCSVFile, r.WriteRateCSV},
		{FCTCSVFile, r.WriteFCTCSV},
	}
	if r.HasFairRate() {
		writers = append(writers, struct {
			name string
			fn   func(io.Writer) error
		}{FairRateCSVFile, r.WriteFairRateCSV})
	}
	for _, wr := range writers {
		if err := writeFile(filepath.Join(dir, wr.name), wr.fn); err != nil {
			return s, err
		}
	}
	if _, err := r.WritePlots(dir); err != nil {
		return s, err
	}
	return s, WriteSummaryFile(dir, s)
}

// WriteSummaryFile writes s as dir's summary.json.
func WriteSummaryFile(dir string, s Summary) error {
	return writeFile(filepath.Join(dir, SummaryFile), func(w io.Writer) error { return WriteSummaryJSON(w, s) })
}
