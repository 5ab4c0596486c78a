package switchd

import (
	"fmt"

	"github.com/ccbed/ccbed/trace"
)

// tracer hands the engine's per-packet events to a trace.Sink (SetTrace):
// the data queues' enqueues, dequeues, drops and ECN marks, and the PFC
// pauses and resumes the switch sends. Every port holds the same *tracer,
// nil when tracing is off: each hook is then one predictable branch on
// state the hot path has loaded.
type tracer struct {
	sink trace.Sink
	rec  trace.Record // reused for every event: Sink.Record gets a pointer to it
}

// SetTrace hands every event of the engine's data queues and PFC to s from
// now on, its records' Node set to node (a trace's node index); nil turns
// tracing off. The sink runs on the tx+CC lcore. One tx shard only (the
// sink is not shared across lcores): an engine that ShardTx split is an
// error.
func (e *Engine) SetTrace(node uint16, s trace.Sink) error {
	var t *tracer
	if s != nil {
		if len(e.tx) > 1 {
			return fmt.Errorf("switchd: a trace needs one tx+CC shard, the engine has %d", len(e.tx))
		}
		t = &tracer{sink: s, rec: trace.Record{Node: node}}
	}
	for i := range e.eg {
		e.eg[i].tr = t
	}
	return nil
}

// tracing reports whether a trace is on (SetTrace).
func (e *Engine) tracing() bool { return e.n > 0 && e.eg[0].tr != nil }

// The hooks below are what the engine calls where an event happens, each a
// nil check on the port's tracer (kept in the egress state the hot paths
// have at hand) that inlines, with the work out of line.

// frame records an event of a data frame at port, priority prio, whose
// queue holds qBytes after it (the IPv4 header at ipOff).
func (t *tracer) frame(now int64, k trace.Kind, port int, prio uint8, qBytes int64, frame []byte, ipOff uint16) {
	r := &t.rec
	r.TimeNs, r.Kind, r.Prio, r.Port = now, k, prio, uint16(port)
	r.FrameBytes = uint16(min(len(frame), 0xffff))
	r.QueueBytes = uint32(min(max(qBytes, 0), 0xffffffff))
	trace.FlowOf(&r.Flow, frame, int(ipOff))
	t.sink.Record(r)
}

// traceEnq records frame's enqueue at g's queue of its priority (Enqueue).
func (e *Engine) traceEnq(now int64, g *egress, m *Meta, frame []byte) {
	if g.tr != nil {
		g.tr.enqueued(now, g, m, frame)
	}
}

// traceDrop records frame's drop by g's queue of its priority (Enqueue).
func (e *Engine) traceDrop(now int64, g *egress, m *Meta, frame []byte) {
	if g.tr != nil {
		g.tr.dropped(now, g, m, frame)
	}
}

// enqueued is traceEnq's work, kept out of line (the hook's call then
// costs the inliner little, and Enqueue's code stays as it was).
//
//go:noinline
func (t *tracer) enqueued(now int64, g *egress, m *Meta, frame []byte) {
	p := m.Prio & 7
	t.frame(now, trace.Enqueue, g.idx, p, g.qPrio[p], frame, m.IPOff)
}

// dropped is traceDrop's work, out of line as enqueued.
//
//go:noinline
func (t *tracer) dropped(now int64, g *egress, m *Meta, frame []byte) {
	p := m.Prio & 7
	t.frame(now, trace.Drop, g.idx, p, g.qPrio[p], frame, m.IPOff)
}

// traceDeq records en's dequeue from g's queue prio for the wire
// (dequeueData).
func (e *Engine) traceDeq(now int64, g *egress, en *qEntry, prio int) {
	if g.tr != nil {
		g.tr.frame(now, trace.Dequeue, g.idx, uint8(prio), g.qPrio[prio], en.frame(), en.ipOff)
	}
}

// traceDrained records the dequeues of the frames drainData just took from
// q, g's queue prio (q.head was from), which it put into out, in order: one
// check per call, none per frame.
func (e *Engine) traceDrained(now int64, g *egress, q *dataQueue, prio uint8, from uint32, out []TxItem) {
	if g.tr != nil {
		g.tr.drained(now, g, q, prio, from, out)
	}
}

// drained is traceDrained's work: each frame's queue after it is the
// queue's now plus the frames that left after it.
func (t *tracer) drained(now int64, g *egress, q *dataQueue, prio uint8, from uint32, out []TxItem) {
	if len(out) == 0 {
		return
	}
	after := g.qPrio[prio]
	for i := range out {
		after += int64(len(out[i].Frame))
	}
	for i := range out {
		en := &q.buf[(from+uint32(i))&q.mask]
		after -= int64(len(out[i].Frame))
		t.frame(now, trace.Dequeue, g.idx, prio, after, out[i].Frame, en.ipOff)
	}
}

// traceMark records the ECN mark applyMark just set on en, queued at g's
// queue prio.
func (e *Engine) traceMark(now int64, g *egress, en *qEntry, prio uint8) {
	if g.tr != nil {
		g.tr.frame(now, trace.ECNMark, g.idx, prio, g.qPrio[prio], en.frame(), en.ipOff)
	}
}

// tracePFC records an XOFF (xoff) or XON of priority prio sent out of
// ingress port g, inBytes of that priority from it still in the switch
// (pfcEvent).
func (e *Engine) tracePFC(now int64, g *egress, prio uint8, xoff bool, inBytes int64) {
	if g.tr != nil {
		g.tr.pfc(now, g, prio, xoff, inBytes)
	}
}

// pfc is tracePFC's work.
func (t *tracer) pfc(now int64, g *egress, prio uint8, xoff bool, inBytes int64) {
	k := trace.PFCResume
	if xoff {
		k = trace.PFCPause
	}
	r := &t.rec
	r.TimeNs, r.Kind, r.Prio, r.Port, r.FrameBytes = now, k, prio, uint16(g.idx), 0
	r.QueueBytes = uint32(min(max(inBytes, 0), 0xffffffff))
	r.Flow = trace.Flow{}
	t.sink.Record(r)
}
