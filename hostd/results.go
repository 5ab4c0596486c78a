package hostd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// WriteRateCSV writes the per-flow rate time series as "t_us,flow,gbps" rows,
// t relative to origin (ns). The columns are those of rate.csv in a testbed
// run's results directory (testbed/report.RateCSVHeader), so that a hostd run
// on its own, on a real node, writes results in the same format as a testbed
// run.
func WriteRateCSV(w io.Writer, samples []RateSample, origin int64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "t_us,flow,gbps")
	var buf []byte
	for _, s := range samples {
		buf = buf[:0]
		buf = strconv.AppendFloat(buf, float64(s.T-origin)/1000, 'f', 3, 64)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, s.Flow, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, s.Gbps, 'f', 6, 64)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// WriteFCTCSV writes the completed messages as "flow,size_bytes,fct_us,slowdown"
// rows, the columns of a testbed run's fct.csv (testbed/report.FCTCSVHeader);
// slowdown is FCT / ideal FCT at line rate.
func WriteFCTCSV(w io.Writer, fcts []FCT) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "flow,size_bytes,fct_us,slowdown")
	for i := range fcts {
		f := &fcts[i]
		fmt.Fprintf(bw, "%d,%d,%.3f,%.4f\n", f.Flow, f.SizeBytes, float64(f.FCTNs)/1000, f.Slowdown())
	}
	return bw.Flush()
}

// Report is the counters JSON of one host.
type Report struct {
	Host    string      `json:"host"`
	IP      string      `json:"ip"`
	Scheme  string      `json:"scheme"`
	Rx      RxCounters  `json:"rx"`
	Tx      TxCounters  `json:"tx"`
	Port    PortCounter `json:"port"`
	RxFlows []RxFlowRow `json:"rx_flows"`
	Active  []FlowState `json:"active_flows"`
}

// RxFlowRow is an RxFlow in the counters JSON.
type RxFlowRow struct {
	Src      string  `json:"src"`
	QPN      uint32  `json:"qpn"`
	Bytes    uint64  `json:"bytes"`
	Frames   uint64  `json:"frames"`
	Messages uint32  `json:"messages"`
	Gbps     float64 `json:"gbps"` // frame bytes over first-to-last arrival
}

// PortCounter are the adapter's counters (zero for an engine driven without
// one).
type PortCounter struct {
	RxFrames     uint64 `json:"rx_frames"`
	TxFrames     uint64 `json:"tx_frames"`
	TxDrops      uint64 `json:"tx_drops"`       // the port took fewer frames than offered
	NoMbuf       uint64 `json:"no_mbuf"`        // the mempool was empty
	CtlRingDrops uint64 `json:"ctl_ring_drops"` // rx-to-tx control ring full
}

// Report builds the counters report of e; port may be nil.
func (e *Engine) Report(port *PortCounter) Report {
	rx, tx := e.Counters()
	rep := Report{Host: e.r.cfg.Name, IP: FormatIPv4(e.r.ip), Scheme: e.r.cfg.Scheme, Rx: rx, Tx: tx,
		Active: e.ActiveFlows()}
	if port != nil {
		rep.Port = *port
	}
	for _, f := range e.RxFlows() {
		row := RxFlowRow{Src: FormatIPv4(f.SrcIP), QPN: f.QPN, Bytes: f.Bytes, Frames: f.Frames, Messages: f.Messages}
		if d := f.LastNs - f.FirstNs; d > 0 {
			row.Gbps = float64(f.FrameBytes) * 8 / float64(d)
		}
		rep.RxFlows = append(rep.RxFlows, row)
	}
	return rep
}

// WriteCountersJSON writes rep as indented JSON.
func WriteCountersJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteResults writes rate.csv, fct.csv and counters.json of e into dir
// (created if needed), with file names prefixed by prefix (e.g. "h1-"; may be
// empty); times in rate.csv are relative to origin (ns). Call it once the loops
// have stopped.
func WriteResults(dir, prefix string, e *Engine, port *PortCounter, origin int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, prefix+name))
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("rate.csv", func(w io.Writer) error { return WriteRateCSV(w, e.Samples(), origin) }); err != nil {
		return err
	}
	if err := write("fct.csv", func(w io.Writer) error { return WriteFCTCSV(w, e.FCTs()) }); err != nil {
		return err
	}
	return write("counters.json", func(w io.Writer) error { return WriteCountersJSON(w, e.Report(port)) })
}
