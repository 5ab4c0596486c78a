package fabric_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/trace"
)

// traceRun runs a star 3-to-1 of DCQCN with PFC for 2 ms, tracing it into a
// buffer when f is not nil, and returns the trace and what the run
// measured (the switches' counters and the hosts' FCTs, as JSON).
func traceRun(t *testing.T, f *fabric.TraceFilter) ([]byte, string) {
	t.Helper()
	spec := &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: "dcqcn", ExpectedFlows: 3, MTU: 1000,
		BufferBytes: 400_000, PFC: fabric.PFC{Enabled: true}, Buffer: switchd.BufferConfig{SizeBytes: 1_000_000},
		SampleNs: 50_000, Seed: 3, Exact: true,
		Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 3}, {ID: 2, Src: 1, Dst: 3, StartNs: 200_000},
			{ID: 3, Src: 2, Dst: 3, SizeBytes: 300_000, StartNs: 500_000}}}
	p, err := spec.Plan()
	if err != nil {
		t.Fatal(err)
	}
	v, err := fabric.NewVirtual(p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if f != nil {
		if err := v.Trace(&buf, *f); err != nil {
			t.Fatal(err)
		}
		if err := v.SetParallel(fabric.Parallel{Workers: 2}); err == nil {
			t.Fatal("SetParallel with 2 workers after Trace: no error")
		}
	}
	if err := v.Run(context.Background(), 2_000_000, nil); err != nil {
		t.Fatal(err)
	}
	st, err := v.CloseTrace()
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Fatalf("CloseTrace says %d bytes, the writer got %d", st.Bytes, buf.Len())
	}
	r := v.Result()
	var out []any
	for _, s := range r.Switches {
		out = append(out, s.Snapshot())
	}
	for _, h := range r.Hosts {
		out = append(out, h.FCTs())
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), string(b)
}

// TestTraceDeterministic: a traced run writes the same bytes twice and
// measures what an untraced run does; a kind filter keeps only its kinds.
func TestTraceDeterministic(t *testing.T) {
	a, ma := traceRun(t, &fabric.TraceFilter{})
	b, _ := traceRun(t, &fabric.TraceFilter{})
	_, m0 := traceRun(t, nil)
	if !bytes.Equal(a, b) || len(a) < 1000*trace.RecordSize {
		t.Fatalf("two traces of one run: %d and %d bytes, equal %v: want the same, a thousand records or more", len(a), len(b), bytes.Equal(a, b))
	}
	if ma != m0 {
		t.Fatal("the traced run measured something else than the untraced one")
	}
	count := func(in []byte) map[trace.Kind]int {
		rd, err := trace.NewReader(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if n := rd.Nodes(); len(n) != 5 || n[4] != "s0" {
			t.Fatalf("nodes %q: want the 4 hosts and s0", n)
		}
		c := map[trace.Kind]int{}
		var r trace.Record
		for {
			if err := rd.Next(&r); err == io.EOF {
				return c
			} else if err != nil {
				t.Fatal(err)
			}
			if r.Node != 4 {
				t.Fatalf("record %+v of node %d: want s0's, 4", r, r.Node)
			}
			c[r.Kind]++
		}
	}
	all := count(a)
	for _, k := range []trace.Kind{trace.Enqueue, trace.Dequeue, trace.ECNMark} {
		if all[k] == 0 {
			t.Errorf("no %s record in %v", k, all)
		}
	}
	mask, _ := trace.ParseKinds("ecn_mark,drop")
	marks, _ := traceRun(t, &fabric.TraceFilter{Kinds: mask})
	if got := count(marks); len(got) == 0 || got[trace.ECNMark] != all[trace.ECNMark] || got[trace.Drop] != all[trace.Drop] || len(got) > 2 {
		t.Fatalf("filtered trace %v: want the full trace's ECN marks and drops only (%v)", got, all)
	}
	if _, err := traceRunErr(&fabric.TraceFilter{Nodes: []int{0}}); err == nil {
		t.Fatal("tracing host 0: no error")
	}
}

// traceRunErr is Trace's error for filter f on a fresh star.
func traceRunErr(f *fabric.TraceFilter) (*fabric.Virtual, error) {
	spec := &fabric.Spec{Topo: fabric.Star(2, 10e9, 1000), Scheme: "dcqcn"}
	p, err := spec.Plan()
	if err != nil {
		return nil, err
	}
	v, err := fabric.NewVirtual(p)
	if err != nil {
		return nil, err
	}
	return v, v.Trace(io.Discard, *f)
}
