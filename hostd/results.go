package hostd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// RateCSVHeader and FCTCSVHeader are the columns of hostd's rate.csv and
// fct.csv, those of a testbed run's (testbed/report.RateCSVHeader and
// FCTCSVHeader; docs/results.md), so that a hostd run on its own, on a real
// node, writes results in the same format as a testbed run. An empty cell is
// a missing value. fct.csv's priority came last, as in a testbed run's;
// FCTCSVHeaderNoPriority is the header of a hostd from before it.
const (
	RateCSVHeader          = "t_us,flow,goodput_gbps,rate_gbps,window_bytes"
	FCTCSVHeader           = FCTCSVHeaderNoPriority + ",priority"
	FCTCSVHeaderNoPriority = "flow,src,dst,size_bytes,start_us,fct_us,slowdown"
)

// WriteRateCSV writes the per-flow rate time series (RateCSVHeader), t
// relative to origin (ns): the goodput (bytes acknowledged over the sampling
// period), the rate the flow's RP set, and its window in bytes (empty when
// the RP has none).
func WriteRateCSV(w io.Writer, samples []RateSample, origin int64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, RateCSVHeader)
	var buf []byte
	for _, s := range samples {
		buf = buf[:0]
		buf = strconv.AppendFloat(buf, float64(s.T-origin)/1000, 'f', 3, 64)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, s.Flow, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, s.Gbps, 'f', 6, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, s.RateGbps, 'f', 6, 64)
		buf = append(buf, ',')
		if s.Window != ccalgo.NoWindow && s.Window >= 0 {
			buf = strconv.AppendInt(buf, s.Window, 10)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// WriteFCTCSV writes the completed messages (FCTCSVHeader) that host src (an
// IPv4 address, host byte order) sent: their destinations' addresses, sizes,
// start times relative to origin (ns), FCTs, slowdowns (FCT / ideal FCT
// at line rate) and priorities (the message's traffic class, 0-7).
func WriteFCTCSV(w io.Writer, src uint32, fcts []FCT, origin int64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, FCTCSVHeader)
	srcIP := wire.FormatIPv4(src)
	for i := range fcts {
		f := &fcts[i]
		fmt.Fprintf(bw, "%d,%s,%s,%d,%.3f,%.3f,%.4f,%d\n", f.Flow, srcIP, wire.FormatIPv4(f.Dst), f.SizeBytes,
			float64(f.StartNs-origin)/1000, float64(f.FCTNs)/1000, f.Slowdown(), f.Priority)
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

// Add adds o's counts to c's.
func (c *PortCounter) Add(o *PortCounter) { addCounts(c, o) }

// Report builds the counters report of e; port may be nil.
func (e *Engine) Report(port *PortCounter) Report {
	rx, tx := e.Counters()
	rep := Report{Host: e.r.cfg.Name, IP: wire.FormatIPv4(e.r.ip), Scheme: e.r.cfg.Scheme, Rx: rx, Tx: tx,
		Active: e.ActiveFlows()}
	if port != nil {
		rep.Port = *port
	}
	for _, f := range e.RxFlows() {
		row := RxFlowRow{Src: wire.FormatIPv4(f.SrcIP), QPN: f.QPN, Bytes: f.Bytes, Frames: f.Frames, Messages: f.Messages}
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

// WriteResultFiles writes e's rate.csv, fct.csv and counters.json, each
// into the writer create returns for its name, and closes it; times in
// rate.csv and fct.csv are relative to origin (ns). Call it once the loops
// have stopped. The daemon side names the files and makes them
// (hostd/daemon.WriteResults: a results directory).
func WriteResultFiles(create func(name string) (io.WriteCloser, error), e *Engine, port *PortCounter, origin int64) error {
	write := func(name string, fn func(io.Writer) error) error {
		f, err := create(name)
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
	if err := write("fct.csv", func(w io.Writer) error { return WriteFCTCSV(w, e.r.ip, e.FCTs(), origin) }); err != nil {
		return err
	}
	return write("counters.json", func(w io.Writer) error { return WriteCountersJSON(w, e.Report(port)) })
}
