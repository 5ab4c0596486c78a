package crosscheck

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ns3"
)

// ns3Line formats f as the simulator's qp_finish prints it.
func ns3Line(f FCT) string {
	ip := func(id int) uint32 { return 0x0b000001 + uint32(id/256)*0x10000 + uint32(id%256)*0x100 }
	return fmt.Sprintf("%08x %08x 10000 100 %d %d %d 0\n", ip(f.Src), ip(f.Dst), f.SizeBytes, f.StartNs, f.FCTNs)
}

// checkRead runs read on in and wants the flows want, or an error that
// contains err when err is not empty.
func checkRead(t *testing.T, read func(io.Reader, string) ([]FCT, error), in string, want []FCT, err string) {
	t.Helper()
	got, e := read(strings.NewReader(in), "x")
	if err != "" {
		if e == nil || !strings.Contains(e.Error(), err) {
			t.Fatalf("error %v: want one containing %q", e, err)
		}
		return
	}
	if e != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v: want %v", got, e, want)
	}
}

func TestReadNS3FCT(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []FCT
		err      string
	}{
		{name: "two flows and a blank line",
			// node 3 -> node 300 (0x0b010001 + 44 * 0x100), then 300 -> 3.
			in:   "0b000301 0b012c01 10000 100 5000 1000 12000 9000\n\n0b012c01 0b000301 10001 100 2000000 4000 900000 1000\n",
			want: []FCT{{3, 300, 5000, 1000, 12000}, {300, 3, 2000000, 4000, 900000}}},
		{name: "empty", in: "", want: nil},
		{name: "seven fields", in: "0b000301 0b012c01 10000 100 5000 1000 12000\n", err: "x:1: 7 fields"},
		{name: "bad address", in: "\nzz 0b012c01 10000 100 5000 1000 12000 0\n", err: "x:2: address \"zz\""},
		{name: "negative start", in: "0b000301 0b012c01 10000 100 5000 -1 12000 0\n", err: "field 6 \"-1\""},
		{name: "size 0", in: "0b000301 0b012c01 10000 100 0 1 12000 0\n", err: "size 0"},
		{name: "overflow", in: "0b000301 0b012c01 1 1 1 9223372036854775807 1 0\n", err: "overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRead(t, ReadNS3FCT, tc.in, tc.want, tc.err) })
	}
}

func TestReadCcbedFCT(t *testing.T) {
	const head = "flow,src,dst,size_bytes,start_us,fct_us,slowdown\n"
	for _, tc := range []struct {
		name, in string
		want     []FCT
		err      string
	}{
		{name: "rounded to the ns", in: head + "86,n0,n52,45878,245.385,12.552,1.01\n7,n52,n0,10,0.0005,1,2\n",
			want: []FCT{{0, 52, 45878, 245385, 12552}, {52, 0, 10, 1, 1000}}},
		{name: "columns in another order", in: "start_us,fct_us,dst,src,size_bytes\n1,2,n3,n4,5\n",
			want: []FCT{{4, 3, 5, 1000, 2000}}},
		{name: "header only", in: head},
		{name: "no header", in: "", err: "x: header"},
		{name: "missing column", in: "flow,src,dst,size_bytes,start_us\n", err: `no "fct_us" column`},
		{name: "host not of an ns3 topology", in: head + "1,h0,n1,10,1,1,1\n", err: `x:2: host "h0"`},
		{name: "bad size", in: head + "1,n0,n1,0,1,1,1\n", err: "size_bytes \"0\""},
		{name: "bad time", in: head + "1,n0,n1,5,NaN,1,1\n", err: "start_us \"NaN\""},
		{name: "short row", in: head + "1,n0\n", err: "wrong number of fields"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRead(t, ReadCcbedFCT, tc.in, tc.want, tc.err) })
	}
}

// twoLeaves is hosts 0, 1 on leaf 3, host 2 on leaf 4, one spine 5; 100 Gb/s
// and 1 us, but host 2's link 25 Gb/s.
func twoLeaves(t testing.TB) *ns3.Topology {
	t.Helper()
	nt, err := ns3.ReadTopology(strings.NewReader(`6 3 2 5
3 4 5
0 3 100Gbps 1us 0
1 3 100Gbps 1us 0
2 4 25Gbps 1us 0
3 5 100Gbps 1us 0
4 5 100Gbps 1us 0
`), "topology.txt")
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

func TestIdeal(t *testing.T) {
	d := NewIdeal(twoLeaves(t), 1000)
	for _, tc := range []struct {
		src, dst int
		size     int64
		want     float64
		err      bool
	}{
		// Two hops of 80 ns + 1 us out, 2 us back, 10 KB at 100 Gb/s.
		{src: 0, dst: 1, size: 10000, want: 2*1080 + 2000 + 800},
		{src: 1, dst: 0, size: 1, want: 2*1080 + 2000 + 0.08},
		// Four hops, the last at 25 Gb/s (320 ns a payload), the path's
		// line rate 25 Gb/s.
		{src: 0, dst: 2, size: 1000, want: 3*1080 + 1320 + 4000 + 320},
		{src: 0, dst: 0, size: 1, err: true},
		{src: 0, dst: 3, size: 1, err: true},
		{src: 9, dst: 0, size: 1, err: true},
	} {
		got, err := d.Ns(tc.src, tc.dst, tc.size)
		if tc.err != (err != nil) || !tc.err && math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Ns(%d, %d, %d) = %v, %v: want %v (error %v)", tc.src, tc.dst, tc.size, got, err, tc.want, tc.err)
		}
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		in   []float64
		p    float64
		want float64
	}{
		{v, 0.5, 5}, {v, 0.95, 10}, {v, 0.99, 10}, {v, 0.05, 1}, {v, 0.11, 2}, {v, 0, 1},
		{[]float64{7}, 0.99, 7},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v: want %v", tc.in, tc.p, got, tc.want)
		}
	}
	if got := Percentile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Percentile of nothing = %v: want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	d := NewIdeal(twoLeaves(t), 1000)
	ideal := func(size int64) int64 { v, _ := d.Ns(0, 1, size); return int64(math.Round(v)) }
	// Slowdowns 1, 2, 3 under 100 KB; 4 at 500 KB; 1.5 at 2 MB.
	fcts := []FCT{
		{0, 1, 10000, 0, ideal(10000)}, {0, 1, 20000, 5, 2 * ideal(20000)}, {0, 1, 50000, 9, 3 * ideal(50000)},
		{0, 1, 500000, 0, 4 * ideal(500000)}, {0, 1, 2000000, 0, ideal(2000000) * 3 / 2},
	}
	s, err := Summarize(fcts, d)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{2, 3, 3}, {4, 4, 4}, {1.5, 1.5, 1.5}, {2, 4, 4}}
	wantN := []int{3, 1, 1, 5}
	if s.Completed != 5 || len(s.Buckets) != len(Buckets) {
		t.Fatalf("completed %d, %d buckets: want 5, %d", s.Completed, len(s.Buckets), len(Buckets))
	}
	for i, b := range s.Buckets {
		if b.N != wantN[i] {
			t.Errorf("bucket %s: %d flows: want %d", Buckets[i].Name, b.N, wantN[i])
		}
		for j, q := range b.Q {
			if math.Abs(q-want[i][j]) > 1e-3 {
				t.Errorf("bucket %s p%v = %v: want %v", Buckets[i].Name, Quantiles[j]*100, q, want[i][j])
			}
		}
	}
	if _, err := Summarize([]FCT{{0, 5, 1, 0, 1}}, d); err == nil {
		t.Error("a flow to a switch summarised: want an error")
	}
}

func TestMatchRatios(t *testing.T) {
	theirs := []FCT{{0, 1, 100, 0, 1000}, {0, 1, 100, 0, 3000}, {1, 0, 100, 0, 1000}, {1, 2, 5, 7, 400}}
	for _, tc := range []struct {
		name    string
		ccbed   []FCT
		matched int
		median  float64
	}{
		{"same", theirs, 4, 1},
		{"twice as slow", []FCT{{0, 1, 100, 0, 2000}, {0, 1, 100, 0, 6000}, {1, 0, 100, 0, 2000}, {1, 2, 5, 7, 800}}, 4, 2},
		// Equal keys pair up in FCT order: 500 with 1000, 3000 with 3000.
		{"equal keys", []FCT{{0, 1, 100, 0, 3000}, {0, 1, 100, 0, 500}}, 2, 0.5},
		{"unmatched start, size, direction", []FCT{{0, 1, 100, 1, 1}, {0, 1, 99, 0, 1}, {2, 1, 5, 7, 1}}, 0, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := MatchRatios(tc.ccbed, theirs)
			med := r.Q[slices.Index(RatioQuantiles, 0.5)]
			if r.Matched != tc.matched || !(med == tc.median || math.IsNaN(med) && math.IsNaN(tc.median)) {
				t.Fatalf("matched %d, median %v: want %d, %v", r.Matched, med, tc.matched, tc.median)
			}
		})
	}
}

func TestParseTimes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Times
		err  bool
	}{
		{in: "20.855 0.288 29.830\n", want: Times{21.143, 29.83}},
		{in: "\nsomething\n1 2 3\n\n", want: Times{3, 3}},
		{in: "1 2\n", err: true},
		{in: "1 x 3\n", err: true},
		{in: "1 -2 3\n", err: true},
		{in: "", err: true},
	} {
		got, err := ParseTimes(tc.in)
		if tc.err != (err != nil) || !tc.err && (math.Abs(got.CPU-tc.want.CPU) > 1e-9 || got.Wall != tc.want.Wall) {
			t.Errorf("ParseTimes(%q) = %v, %v: want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCaseWrite(t *testing.T) {
	d := NewIdeal(twoLeaves(t), 1000)
	theirs := []FCT{{0, 1, 10000, 0, 10000}, {0, 2, 2000000, 0, 1000000}}
	cc := []FCT{{0, 1, 10000, 0, 12000}}
	c, err := Compare("dcqcn-load30", 3, theirs, cc, d, Times{40, 41}, Times{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"== dcqcn-load30: 3 flows in flow.txt\n",
		"completed       ns-3     2   ccbed     1   (-50%)",
		"ns-3 / ccbed cpu 10.0x",
		">= 1 MB          1/    0  1.54 / - -",
		"over 1 flows both completed: p5 1.20 p25 1.20 p50 1.20",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table\n%s\nlacks %q", b.String(), want)
		}
	}
}

func FuzzReadNS3FCT(f *testing.F) {
	f.Add("0b000301 0b012c01 10000 100 5000 1000 12000 9000\n")
	f.Add("0b000001 0b000101 1 1 1 0 0 0\n\n0b000101 0b000001 2 2 2 2 2 2")
	f.Add("zz 1 2\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ReadNS3FCT(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		// What parses formats back to lines that parse to the same flows
		// (node ids as the simulator numbers them: 16 bits).
		var b strings.Builder
		for _, g := range got {
			if g.SizeBytes <= 0 || g.StartNs < 0 || g.FCTNs < 0 || g.Src > 0xffff || g.Dst > 0xffff {
				t.Fatalf("parsed %+v from %q", g, in)
			}
			b.WriteString(ns3Line(g))
		}
		again, err := ReadNS3FCT(strings.NewReader(b.String()), "again")
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("round trip of %q: %v, %v: want %v", in, again, err, got)
		}
	})
}

func FuzzReadCcbedFCT(f *testing.F) {
	f.Add("flow,src,dst,size_bytes,start_us,fct_us,slowdown\n86,n0,n52,45878,245.385,12.552,1.01\n")
	f.Add("src,dst,size_bytes,start_us,fct_us\nn1,n2,3,4e3,5\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ReadCcbedFCT(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for _, g := range got {
			if g.SizeBytes <= 0 || g.StartNs < 0 || g.FCTNs < 0 || g.Src < 0 || g.Dst < 0 {
				t.Fatalf("parsed %+v from %q", g, in)
			}
		}
	})
}
