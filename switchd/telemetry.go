package switchd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Sample is one telemetry point of one port.
type Sample struct {
	TNs         int64   // engine time, ns
	Port        int     // port index
	QueueBytes  int64   // egress data queue
	FairRateBps float64 // RoCC fair rate; negative when the port's CP has none
}

// SampleRing is a single-producer (tx+CC lcore), single-consumer (the CSV
// writer) ring of samples. A full ring drops the new sample and counts it.
type SampleRing struct {
	buf        []Sample
	mask       uint64
	head, tail atomic.Uint64
	dropped    atomic.Uint64
}

// NewSampleRing makes a ring of at least n samples.
func NewSampleRing(n int) *SampleRing {
	n = nextPow2(max(n, 2))
	return &SampleRing{buf: make([]Sample, n), mask: uint64(n - 1)}
}

func (r *SampleRing) push(s *Sample) {
	t := r.tail.Load()
	if t-r.head.Load() >= uint64(len(r.buf)) {
		r.dropped.Add(1)
		return
	}
	r.buf[t&r.mask] = *s
	r.tail.Store(t + 1)
}

// Drain calls fn on every sample written so far, oldest first, and returns how
// many. One reader at a time.
func (r *SampleRing) Drain(fn func(*Sample)) int {
	h, t := r.head.Load(), r.tail.Load()
	for i := h; i < t; i++ {
		fn(&r.buf[i&r.mask])
	}
	r.head.Store(t)
	return int(t - h)
}

// Dropped is the number of samples lost to a full ring.
func (r *SampleRing) Dropped() uint64 { return r.dropped.Load() }

// Snapshot is the switch's counters at one time.
type Snapshot struct {
	Ports          []PortCounters `json:"ports"`
	SamplesDropped uint64         `json:"samples_dropped"`
}

// CSVHeader is the first line of the time-series file.
const CSVHeader = "t_us,port,queue_bytes,fair_rate_gbps"

// CSVWriter writes samples as CSV lines (t_us,port,queue_bytes,fair_rate_gbps;
// fair_rate_gbps empty for a port without a fair rate).
type CSVWriter struct {
	w   *bufio.Writer
	c   io.Closer
	buf []byte
	err error
}

// NewCSVWriter writes the header to w; Close closes w if it is an io.Closer.
func NewCSVWriter(w io.Writer) *CSVWriter {
	cw := &CSVWriter{w: bufio.NewWriterSize(w, 1<<16)}
	if c, ok := w.(io.Closer); ok {
		cw.c = c
	}
	_, cw.err = cw.w.WriteString(CSVHeader + "\n")
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

// Write appends one sample.
func (cw *CSVWriter) Write(s *Sample) {
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

// Close flushes and closes.
func (cw *CSVWriter) Close() error {
	err := cw.Flush()
	if cw.c != nil {
		if cerr := cw.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Results is the final JSON the switch writes on exit.
type Results struct {
	DurationS float64        `json:"duration_s"`
	Mode      string         `json:"mode"`
	Counters  Snapshot       `json:"counters"`
	Lcores    []LcoreResults `json:"lcores,omitempty"`
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

// WriteResultsJSON writes r to path, indented.
func WriteResultsJSON(path string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// SummaryLine is the one-line console summary of the interval from prev to cur
// (dtS seconds): rates per port, queue, drops, marks, feedback and pauses.
func SummaryLine(tS, dtS float64, prev, cur *Snapshot) string {
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
