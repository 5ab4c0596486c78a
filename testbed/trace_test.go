package testbed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/testbed/report"
	"github.com/ccbed/ccbed/trace"
)

// traceThreeToOne is a 3-to-1 on a star, three long flows starting at once
// into a small shared buffer with PFC on priority 3: in priority 3 the
// switch pauses the senders before a scheme has reacted; in a lossy
// priority it drops.
const traceThreeToOne = `
[experiment]
name = "trace"
duration_ms = 2
sample_us = 50
clock = "virtual"
seed = 3

[topology]
hosts = 4
link_gbps = 10
delay_us = 1
mtu_bytes = 1000

[cc]
scheme = "SCHEME"
expected_flows = 3

[pfc]
enabled = true

[buffer]
size_bytes = BUFFER

[[incast]]
id_base = 1
senders = [0, 1, 2]
dst = 3
size_bytes = 400_000
priority = PRIORITY
`

// runTraced runs traceThreeToOne with scheme and the trace on, and returns the run and its trace's
// records.
func runTraced(t *testing.T, scheme string, tr *Trace, par fabric.Parallel) (*Result, []string, []trace.Record, error) {
	return runTracedPrio(t, scheme, 3, tr, par)
}

// runTracedPrio is runTraced with the incast in priority prio. It checks
// summary.json's "trace": the file, its records and bytes, the filter asked.
func runTracedPrio(t *testing.T, scheme string, prio int, tr *Trace, par fabric.Parallel) (*Result, []string, []trace.Record, error) {
	t.Helper()
	e, err := Decode("v.toml", strings.NewReplacer("SCHEME", scheme, "BUFFER", "200_000", "PRIORITY", strconv.Itoa(prio)).Replace(traceThreeToOne), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = t.TempDir()
	res, err := RunWith(context.Background(), e, nil, RunOptions{Trace: tr, Parallel: par})
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := os.Open(filepath.Join(res.Dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := trace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	for {
		var r trace.Record
		if err := rd.Next(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := report.LoadSummary(filepath.Join(res.Dir, report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	want := report.TraceSummary{File: TraceFile, Records: uint64(len(recs)), Bytes: fi.Size(), Nodes: tr.Nodes, Kinds: tr.Kinds}
	for _, got := range []*report.TraceSummary{res.Summary.Trace, disk.Trace} {
		if got == nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("summary trace %+v, want %+v", got, want)
		}
	}
	return res, rd.Nodes(), recs, nil
}

// TestTraceThreeToOne reads back the trace of a 3-to-1 run and checks it
// against the run's own accounts: per switch port and priority, the bytes
// enqueued are the bytes dequeued plus those still queued at the end, and
// every record's queue is that running balance; the drops are the ports'
// drop counters; ECN marks come with DCQCN, as many as the ports counted,
// and never without a congestion point (scheme none); the PFC pauses and
// resumes are pfc.csv's rows one to one; times never decrease. DCQCN's
// incast is lossless (PFC pauses, nothing dropped), scheme none's lossy
// (drops, no pause).
func TestTraceThreeToOne(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		prio   int
	}{{"dcqcn", 3}, {"none", 1}} {
		scheme, lossless := tc.scheme, tc.prio == 3
		t.Run(scheme, func(t *testing.T) {
			res, nodes, recs, err := runTracedPrio(t, scheme, tc.prio, &Trace{Enabled: true}, fabric.Parallel{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != 5 || nodes[4] != "s0" {
				t.Fatalf("nodes %q: want 4 hosts and s0", nodes)
			}
			snap := res.Switches[0]
			type key struct{ port, prio int }
			queued := map[key]int64{}
			kinds := map[trace.Kind]int{}
			var pfc []string
			last := int64(math.MinInt64)
			for i, r := range recs {
				if r.Node != 4 || r.TimeNs < last {
					t.Fatalf("record %d %+v: want s0's (node 4), time at or after %d", i, r, last)
				}
				last = r.TimeNs
				kinds[r.Kind]++
				k := key{int(r.Port), int(r.Prio)}
				switch r.Kind {
				case trace.Enqueue:
					queued[k] += int64(r.FrameBytes)
				case trace.Dequeue:
					queued[k] -= int64(r.FrameBytes)
				case trace.PFCPause, trace.PFCResume:
					ev := "xon"
					if r.Kind == trace.PFCPause {
						ev = "xoff"
					}
					pfc = append(pfc, fmt.Sprintf("%s,%d,%d,%s,%d", strconv.FormatFloat(float64(r.TimeNs)/1e3, 'f', -1, 64),
						r.Port, r.Prio, ev, r.QueueBytes))
					continue
				}
				if r.Kind != trace.ECNMark && queued[k] != int64(r.QueueBytes) {
					t.Fatalf("record %d %+v: queue %d bytes, the records before it leave %d", i, r, r.QueueBytes, queued[k])
				}
			}
			if kinds[trace.Enqueue] == 0 || kinds[trace.Dequeue] == 0 {
				t.Fatalf("records by kind %v: want enqueues and dequeues", kinds)
			}
			var drops, marks uint64
			for p, pc := range snap.Ports {
				drops += pc.DropBuffer + pc.DropHeadroom
				marks += pc.MarkedCE + pc.MarkedUE
				for prio, b := range pc.QueuePrioBytes {
					if q := queued[key{p, prio}]; q != b {
						t.Errorf("port %d priority %d: enqueued minus dequeued %d bytes, %d still queued at the end", p, prio, q, b)
					}
				}
			}
			if uint64(kinds[trace.Drop]) != drops || lossless != (drops == 0) {
				t.Errorf("%d drop records, the ports counted %d drops: want as many, none when lossless (%v)", kinds[trace.Drop], drops, lossless)
			}
			if uint64(kinds[trace.ECNMark]) != marks || (scheme == "dcqcn") != (marks > 0) {
				t.Errorf("%s: %d ECN mark records, the ports counted %d: want as many, some with DCQCN only",
					scheme, kinds[trace.ECNMark], marks)
			}
			rows := resultRows(t, res.Dir, report.PFCCSVFile)
			if strings.Join(rows[0], ",") != report.PFCCSVHeader {
				t.Fatalf("pfc.csv header %v", rows[0])
			}
			if len(rows)-1 != len(pfc) || lossless != (len(pfc) > 0) {
				t.Fatalf("%d pfc.csv rows, %d PFC records: want as many, some when lossless (%v)", len(rows)-1, len(pfc), lossless)
			}
			for i, r := range rows[1:] {
				if got := strings.Join(r, ","); got != pfc[i] {
					t.Fatalf("pfc.csv row %d %q, trace record %q", i+1, got, pfc[i])
				}
			}
		})
	}
}

// TestTraceRerun: a rerun writes the same trace.bin, byte for byte; a node
// and kind filter keeps what it names; a trace asks for the serial driver
// and names what is wrong in its table.
func TestTraceRerun(t *testing.T) {
	read := func(res *Result) []byte {
		b, err := os.ReadFile(filepath.Join(res.Dir, TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, _, recs, _ := runTraced(t, "dcqcn", &Trace{Enabled: true}, fabric.Parallel{})
	b, _, _, _ := runTraced(t, "dcqcn", &Trace{Enabled: true}, fabric.Parallel{Workers: 1})
	if !bytes.Equal(read(a), read(b)) {
		t.Fatal("two runs of one experiment wrote different traces")
	}
	_, _, drops, err := runTraced(t, "dcqcn", &Trace{Enabled: true, Nodes: []string{"s0"}, Kinds: []string{"pfc_pause", "pfc_resume"}}, fabric.Parallel{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Kind == trace.PFCPause || r.Kind == trace.PFCResume {
			n++
		}
	}
	if len(drops) != n || n == 0 {
		t.Fatalf("filtered trace: %d records, the full one %d PFC records", len(drops), n)
	}
	for _, tc := range []struct {
		tr   *Trace
		par  fabric.Parallel
		want string
	}{
		{&Trace{Enabled: true}, fabric.Parallel{Workers: 2}, "needs the serial driver"},
		{&Trace{Enabled: true, Nodes: []string{"h0"}}, fabric.Parallel{}, `trace.nodes: "h0" is not a switch`},
		{&Trace{Enabled: true, Kinds: []string{"drops"}}, fabric.Parallel{}, `unknown event kind "drops"`},
	} {
		if _, _, _, err := runTraced(t, "dcqcn", tc.tr, tc.par); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %+v: error %v, want %q", tc.tr, tc.par, err, tc.want)
		}
	}
}

// TestTraceCSV: `testbed trace -csv`'s rows are the records, filtered by
// node and kind, with the header's units; a node the trace lacks is an
// error.
func TestTraceCSV(t *testing.T) {
	res, _, recs, _ := runTraced(t, "dcqcn", &Trace{Enabled: true}, fabric.Parallel{})
	path := filepath.Join(res.Dir, TraceFile)
	csvOf := func(q TraceQuery) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out bytes.Buffer
		err = WriteTraceCSV(&out, f, q)
		return out.String(), err
	}
	all, err := csvOf(TraceQuery{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	if lines[0] != "time_ns,node,kind,port,priority,frame_bytes,queue_bytes,src_ip,dst_ip,src_port,dst_port,qp" || len(lines)-1 != len(recs) {
		t.Fatalf("header %q and %d rows for %d records", lines[0], len(lines)-1, len(recs))
	}
	r := recs[0]
	want := fmt.Sprintf("%d,s0,enqueue,%d,3,%d,%d,10.0.0.", r.TimeNs, r.Port, r.FrameBytes, r.QueueBytes)
	if r.Kind != trace.Enqueue || !strings.HasPrefix(lines[1], want) {
		t.Fatalf("first row %q: want it to start %q", lines[1], want)
	}
	marks, err := csvOf(TraceQuery{Nodes: []string{"s0"}, Kinds: 1 << trace.ECNMark})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(marks, ",ecn_mark,"); n == 0 || n != strings.Count(marks, "\n")-1 {
		t.Fatalf("-kind ecn_mark: %d marks in %d rows", n, strings.Count(marks, "\n")-1)
	}
	if _, err := csvOf(TraceQuery{Nodes: []string{"s9"}}); err == nil || !strings.Contains(err.Error(), `no node "s9"`) {
		t.Fatalf("-node s9: error %v", err)
	}
}

// TestTraceTable: the experiment file's [trace] table turns the trace on
// by itself, its kinds filter the records, and a misspelt kind is an
// error at its key.
func TestTraceTable(t *testing.T) {
	text := strings.NewReplacer("SCHEME", "dcqcn", "BUFFER", "200_000", "PRIORITY", "3").Replace(traceThreeToOne)
	res := runVirtual(t, text+"\n[trace]\nenabled = true\nkinds = [\"pfc_resume\"]\n", t.TempDir())
	f, err := os.Open(filepath.Join(res.Dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	if err := WriteTraceSummary(&out, f, TraceQuery{}); err != nil {
		t.Fatal(err)
	}
	// s0's row: no enqueue, dequeue, drop, mark or pause; some resumes.
	if !regexp.MustCompile(`(?m)^s0 +0 +0 +0 +0 +0 +[1-9]\d*$`).MatchString(out.String()) {
		t.Fatalf("summary of a pfc_resume trace:\n%s", out.String())
	}
	e, err := Decode("v.toml", text+"\n[trace]\nenabled = true\nkinds = [\"pause\"]\n", ".")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckTrace(); err == nil || !strings.Contains(err.Error(), "trace.kinds") || !strings.Contains(err.Error(), `"pause"`) {
		t.Fatalf("kinds = [\"pause\"]: error %v", err)
	}
}
