package fabric

import (
	"fmt"
	"io"

	"github.com/ccbed/ccbed/trace"
)

// TraceFilter is what a run's per-packet trace keeps (Virtual.Trace).
type TraceFilter struct {
	// Nodes are the traced switches by node index (Topology.NodeName);
	// none: every switch.
	Nodes []int
	// Kinds are the event kinds kept; 0: every kind.
	Kinds trace.KindMask
}

// TraceStats is what a trace wrote.
type TraceStats struct {
	Records uint64
	Bytes   int64
}

// traceFlushBytes is how much a trace buffers before it writes: the
// buffer's bound.
const traceFlushBytes = 1 << 20

// traceWriter is the switches' trace.Sink in virtual time: it encodes each
// record into a bounded buffer and writes the buffer to w when full. The
// serial driver calls every switch in the order of its events, so records
// come in time order, a node's in its events' order, and a rerun writes
// the same bytes. The first write error stops the trace (CloseTrace
// returns it).
type traceWriter struct {
	w     io.Writer
	buf   []byte
	kinds trace.KindMask
	err   error
	st    TraceStats
}

// Record encodes r when its kind is kept.
func (t *traceWriter) Record(r *trace.Record) {
	if !t.kinds.Has(r.Kind) || t.err != nil {
		return
	}
	t.buf = trace.AppendRecord(t.buf, r)
	t.st.Records++
	if len(t.buf) >= traceFlushBytes {
		t.flush()
	}
}

// flush writes the buffer out.
func (t *traceWriter) flush() {
	if t.err == nil && len(t.buf) > 0 {
		var n int
		n, t.err = t.w.Write(t.buf)
		t.st.Bytes += int64(n)
	}
	t.buf = t.buf[:0]
}

// Trace writes a per-packet trace of the switches f selects to w from now
// on (package trace's format: a header naming every node of the topology,
// a record's node its index), until CloseTrace; call it before Run. The
// trace needs the serial driver (one worker: SetParallel refuses more
// after it, and it refuses a parallel run): the records are written in the
// order of the run's events, so their times never decrease, and a run
// writes the same bytes every time. Tracing changes nothing in the run.
func (v *Virtual) Trace(w io.Writer, f TraceFilter) error {
	t := v.plan.Topo
	switch {
	case v.trace != nil:
		return fmt.Errorf("fabric: a trace is already open")
	case v.par != nil:
		return fmt.Errorf("fabric: a trace needs the serial driver (one worker)")
	case t.NumNodes() > trace.MaxNodes:
		return fmt.Errorf("fabric: a trace names at most %d nodes, the topology has %d", trace.MaxNodes, t.NumNodes())
	}
	names := make([]string, t.NumNodes())
	for n := range names {
		names[n] = t.NodeName(n)
	}
	hdr, err := trace.AppendHeader(nil, names)
	if err != nil {
		return fmt.Errorf("fabric: %w", err)
	}
	sw := make([]bool, len(v.swNodes))
	if len(f.Nodes) == 0 {
		for i := range sw {
			sw[i] = true
		}
	}
	for _, n := range f.Nodes {
		if n < 0 || n >= t.NumNodes() || t.IsHost(n) {
			return fmt.Errorf("fabric: trace: node %d is not a switch", n)
		}
		sw[n-len(t.Hosts)] = true
	}
	tw := &traceWriter{w: w, buf: make([]byte, 0, traceFlushBytes+trace.RecordSize), kinds: f.Kinds}
	if tw.kinds == 0 {
		tw.kinds = trace.AllKinds
	}
	n, err := w.Write(hdr)
	tw.st.Bytes = int64(n)
	if err != nil {
		return fmt.Errorf("fabric: trace: %w", err)
	}
	for i, sn := range v.swNodes {
		if !sw[i] {
			continue
		}
		if err := sn.Engine().SetTrace(uint16(len(t.Hosts)+i), tw); err != nil {
			return fmt.Errorf("fabric: switch %s: %w", t.Switches[i].Name, err)
		}
	}
	v.trace = tw
	return nil
}

// CloseTrace stops the trace, writes what it buffered and returns what it
// wrote, with its first write error; a zero TraceStats when no trace is
// open. It does not close the writer.
func (v *Virtual) CloseTrace() (TraceStats, error) {
	tw := v.trace
	if tw == nil {
		return TraceStats{}, nil
	}
	for _, sn := range v.swNodes {
		sn.Engine().SetTrace(0, nil)
	}
	tw.flush()
	v.trace = nil
	if tw.err != nil {
		return tw.st, fmt.Errorf("fabric: trace: %w", tw.err)
	}
	return tw.st, nil
}
