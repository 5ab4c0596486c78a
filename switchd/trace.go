package switchd

import (
	"fmt"

	"github.com/ccbed/ccbed/trace"
)

// tracer hands the engine's per-packet events to a trace.Sink (SetTrace):
// the data queues' enqueues, dequeues, drops and ECN marks, and the PFC
// pauses and resumes the switch sends. The engine holds a nil *tracer when
// tracing is off: each hook is then one predictable branch.
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
	if s == nil {
		e.tr = nil
		return nil
	}
	if len(e.tx) > 1 {
		return fmt.Errorf("switchd: a trace needs one tx+CC shard, the engine has %d", len(e.tx))
	}
	e.tr = &tracer{sink: s, rec: trace.Record{Node: node}}
	return nil
}

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
func (e *Engine) traceEnq(now int64, m *Meta, frame []byte) {
	if e.tr != nil {
		e.tr.enqueue(e, now, m, frame)
	}
}

// traceDrop records frame's drop by the queue of its priority at port m.Out
// (Enqueue).
func (e *Engine) traceDrop(now int64, m *Meta, frame []byte) {
	if e.tr != nil {
		e.tr.drop(e, now, m, frame)
	}
}

// enqueue is traceEnq's work.
func (t *tracer) enqueue(e *Engine, now int64, m *Meta, frame []byte) {
	p := m.Prio & 7
	t.frame(now, trace.Enqueue, int(m.Out), p, e.eg[m.Out].qPrio[p], frame, m.IPOff)
}

// drop is traceDrop's work.
func (t *tracer) drop(e *Engine, now int64, m *Meta, frame []byte) {
	p := m.Prio & 7
	t.frame(now, trace.Drop, int(m.Out), p, e.eg[m.Out].qPrio[p], frame, m.IPOff)
}

// traceDeq records en's dequeue from g's queue prio for the wire
// (dequeueData, drainData).
func (e *Engine) traceDeq(now int64, g *egress, en *qEntry, prio int) {
	if e.tr != nil {
		e.tr.frame(now, trace.Dequeue, g.idx, uint8(prio), g.qPrio[prio], en.frame, en.ipOff)
	}
}

// traceMark records the ECN mark applyMark just set on en, queued at g.
func (e *Engine) traceMark(now int64, g *egress, en *qEntry) {
	if e.tr != nil {
		e.tr.frame(now, trace.ECNMark, g.idx, en.prio, g.qPrio[en.prio], en.frame, en.ipOff)
	}
}

// tracePFC records an XOFF (xoff) or XON of priority prio sent out of
// ingress port g, inBytes of that priority from it still in the switch
// (pfcEvent).
func (e *Engine) tracePFC(now int64, g *egress, prio uint8, xoff bool, inBytes int64) {
	if e.tr != nil {
		e.tr.pfc(now, g, prio, xoff, inBytes)
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
