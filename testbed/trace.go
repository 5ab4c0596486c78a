package testbed

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/testbed/report"
	"github.com/ccbed/ccbed/trace"
)

// TraceFile is the per-packet trace a run writes in its results directory
// (package trace's format; docs/results.md).
const TraceFile = "trace.bin"

// Trace turns on a virtual-time run's per-packet event trace: every
// enqueue, dequeue, drop and ECN mark of the switches' data queues and
// every PFC pause and resume they send, written to trace.bin in the results
// directory (docs/results.md; `testbed trace` prints it as CSV). It is an
// experiment file's [trace] table, or testbed run's -trace flags. It needs
// the serial driver (-workers 1).
//
//	[trace]
//	enabled = true
//	nodes = ["s0"]            # switches traced; none (default): every switch
//	kinds = ["drop", "pfc_pause", "pfc_resume"]  # none (default): every kind
type Trace struct {
	// Enabled turns the trace on.
	Enabled bool `toml:"enabled"`
	// Nodes name the traced switches; none: every switch.
	Nodes []string `toml:"nodes"`
	// Kinds are the event kinds kept: enqueue, dequeue, drop, ecn_mark,
	// pfc_pause, pfc_resume; none: every kind.
	Kinds []string `toml:"kinds"`

	// flag names the flag that turned the trace on, for errors; "": the
	// file's [trace] table.
	flag string
}

// TraceFromFlags is the trace testbed run's flags ask for, over the file's
// [trace] table: on (-trace) turns it on; nodes (-trace-nodes) and kinds
// (-trace-kinds), comma-separated, replace the table's lists. Without them
// it returns the file's table (nil when not enabled). Errors name the flag.
func (e *Experiment) TraceFromFlags(on bool, nodes, kinds string) (*Trace, error) {
	t := e.Trace
	switch {
	case !on && nodes == "" && kinds == "":
		if !t.Enabled {
			return nil, nil
		}
		return &t, nil
	case !on && !t.Enabled:
		return nil, fmt.Errorf("-trace-nodes, -trace-kinds: no trace to apply them to: add -trace")
	}
	t.Enabled, t.flag = true, "-trace"
	if nodes != "" {
		t.Nodes = splitList(nodes)
	}
	if kinds != "" {
		t.Kinds = splitList(kinds)
	}
	if _, err := e.traceFilter(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// splitList is a comma-separated list's elements, trimmed.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// CheckTrace checks the file's [trace] table against the topology: every
// node names a switch, every kind is known. Errors name the file, line and
// key.
func (e *Experiment) CheckTrace() error {
	if !e.Trace.Enabled && len(e.Trace.Nodes) == 0 && len(e.Trace.Kinds) == 0 {
		return nil
	}
	_, err := e.traceFilter(&e.Trace)
	return err
}

// traceFilter resolves t into the fabric's filter.
func (e *Experiment) traceFilter(t *Trace) (fabric.TraceFilter, error) {
	fail := func(key string, err any) error {
		if t.flag != "" {
			return fmt.Errorf("%s-%s: %v", t.flag, key, err)
		}
		return e.errorf("trace."+key, "%v", err)
	}
	var f fabric.TraceFilter
	topo := e.topo
	for _, name := range t.Nodes {
		n := slices.IndexFunc(topo.Switches, func(s fabric.Switch) bool { return s.Name == name })
		if n < 0 {
			return f, fail("nodes", fmt.Sprintf("%q is not a switch of the topology", name))
		}
		f.Nodes = append(f.Nodes, len(topo.Hosts)+n)
	}
	m, err := trace.ParseKinds(strings.Join(t.Kinds, ","))
	if err != nil {
		return f, fail("kinds", err)
	}
	f.Kinds = m
	return f, nil
}

// TraceCSVHeader is the header of `testbed trace -csv`: one row per
// record, in the trace's order.
var TraceCSVHeader = []string{"time_ns", "node", "kind", "port", "priority", "frame_bytes", "queue_bytes",
	"src_ip", "dst_ip", "src_port", "dst_port", "qp"}

// TraceQuery selects a trace's records (WriteTraceCSV, SummarizeTrace):
// Nodes by name (none: every node), Kinds (0: every kind).
type TraceQuery struct {
	Nodes []string
	Kinds trace.KindMask
}

// readTrace calls fn with each record of the trace in r that q selects.
// It fails on a malformed trace and on a node name the trace does not hold.
func readTrace(r io.Reader, q TraceQuery, fn func(names []string, rec *trace.Record) error) error {
	rd, err := trace.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return err
	}
	names := rd.Nodes()
	want := make([]bool, len(names))
	for _, n := range q.Nodes {
		i := slices.Index(names, n)
		if i < 0 {
			return fmt.Errorf("trace: no node %q in the trace (it names %s)", n, strings.Join(names, ", "))
		}
		want[i] = true
	}
	kinds := q.Kinds
	if kinds == 0 {
		kinds = trace.AllKinds
	}
	var rec trace.Record
	for {
		if err := rd.Next(&rec); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if (len(q.Nodes) == 0 || want[rec.Node]) && kinds.Has(rec.Kind) {
			if err := fn(names, &rec); err != nil {
				return err
			}
		}
	}
}

// WriteTraceCSV writes the records of the trace in r that q selects as CSV
// (TraceCSVHeader, then one row per record). A record without a flow (PFC
// pause and resume) has empty flow cells.
func WriteTraceCSV(w io.Writer, r io.Reader, q TraceQuery) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(strings.Join(TraceCSVHeader, ",") + "\n")
	var line []byte
	err := readTrace(r, q, func(names []string, rec *trace.Record) error {
		f := &rec.Flow
		line = strconv.AppendInt(line[:0], rec.TimeNs, 10)
		line = append(line, ',')
		line = append(line, names[rec.Node]...)
		line = append(line, ',')
		line = append(line, rec.Kind.String()...)
		for _, v := range []uint64{uint64(rec.Port), uint64(rec.Prio), uint64(rec.FrameBytes), uint64(rec.QueueBytes)} {
			line = strconv.AppendUint(append(line, ','), v, 10)
		}
		if f.SrcIP == 0 && f.DstIP == 0 {
			line = append(line, ",,,,,\n"...) // no flow (a PFC record): empty cells, read as NaN
		} else {
			line = append(append(line, ','), ipString(f.SrcIP)...)
			line = append(append(line, ','), ipString(f.DstIP)...)
			for _, v := range []uint64{uint64(f.SrcPort), uint64(f.DstPort), uint64(f.QP)} {
				line = strconv.AppendUint(append(line, ','), v, 10)
			}
			line = append(line, '\n')
		}
		_, err := bw.Write(line)
		return err
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// ipString is a trace's IPv4 address in dotted form.
func ipString(a uint32) string {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}).String()
}

// WriteTraceSummary writes, for the records of the trace in r that q
// selects, each node's count of every kind and the time the records span.
func WriteTraceSummary(w io.Writer, r io.Reader, q TraceQuery) error {
	var counts [][8]uint64
	var nodes []string
	var first, last int64
	n := 0
	err := readTrace(r, q, func(names []string, rec *trace.Record) error {
		if counts == nil {
			counts, nodes = make([][8]uint64, len(names)), names
			first = rec.TimeNs
		}
		counts[rec.Node][rec.Kind]++
		last = rec.TimeNs
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "no records")
		return err
	}
	width := len("node")
	for _, name := range nodes {
		width = max(width, len(name))
	}
	fmt.Fprintf(w, "%d records, %d ns to %d ns\n", n, first, last)
	fmt.Fprintf(w, "%-*s", width, "node")
	kinds := trace.KindNames()
	for _, k := range kinds {
		fmt.Fprintf(w, " %11s", k)
	}
	fmt.Fprintln(w)
	for node, c := range counts {
		if c == [8]uint64{} {
			continue
		}
		fmt.Fprintf(w, "%-*s", width, nodes[node])
		for k := range kinds {
			fmt.Fprintf(w, " %11d", c[k+1])
		}
		fmt.Fprintln(w)
	}
	return nil
}

// runTrace is the trace a run with options o writes (o.Trace, else the
// file's [trace] table; nil: none) and its filter. A trace needs the
// virtual clock and the serial driver.
func (e *Experiment) runTrace(o RunOptions) (*Trace, fabric.TraceFilter, error) {
	t := o.Trace
	if t == nil && e.Trace.Enabled {
		t = &e.Trace
	}
	if t == nil {
		return nil, fabric.TraceFilter{}, nil
	}
	by := "[trace]"
	if t.flag != "" {
		by = t.flag
	}
	switch p := o.Parallel; {
	case e.Experiment.Clock != ClockVirtual:
		return nil, fabric.TraceFilter{}, fmt.Errorf("testbed: %s: the per-packet trace needs the virtual clock", by)
	case p.Workers > 1 || p.Groups > 0 || p.Partition != fabric.PartitionAuto:
		return nil, fabric.TraceFilter{}, fmt.Errorf("testbed: %s: the per-packet trace needs the serial driver: -workers 1 (no -partition-groups)", by)
	}
	f, err := e.traceFilter(t)
	return t, f, err
}

// startTrace creates the trace file at path and starts v's trace into it;
// the function it returns stops the trace, closes the file and returns what
// it wrote (once: later calls return nothing).
func startTrace(v *fabric.Virtual, path string, f fabric.TraceFilter) (func() (fabric.TraceStats, error), error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("testbed: trace: %w", err)
	}
	if err := v.Trace(file, f); err != nil {
		file.Close()
		return nil, fmt.Errorf("testbed: %w", err)
	}
	done := false
	return func() (fabric.TraceStats, error) {
		if done {
			return fabric.TraceStats{}, nil
		}
		done = true
		st, err := v.CloseTrace()
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("testbed: trace: %w", cerr)
		}
		return st, err
	}, nil
}

// traceSummary is summary.json's account of the trace t wrote into the
// results directory: st's records and bytes.
func traceSummary(t *Trace, st fabric.TraceStats) *report.TraceSummary {
	return &report.TraceSummary{File: TraceFile, Records: st.Records, Bytes: st.Bytes,
		Nodes: slices.Clone(t.Nodes), Kinds: slices.Clone(t.Kinds)}
}
