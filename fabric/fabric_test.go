package fabric_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

func TestRoutesECMP(t *testing.T) {
	// 2 leaves of 2 hosts, 3 spines: a leaf reaches its own hosts on their
	// port and the other leaf's through every spine.
	ls := fabric.LeafSpine(2, 3, 2, 100e9, 100e9, 1000)
	if len(ls.Hosts) != 4 || len(ls.Switches) != 5 {
		t.Fatalf("leaf-spine: %d hosts, %d switches", len(ls.Hosts), len(ls.Switches))
	}
	r := ls.Routes(0)
	if fmt.Sprint(r) != "[[0] [1] [2 3 4] [2 3 4]]" {
		t.Fatalf("leaf0 routes %v", r)
	}
	if r := ls.Routes(2); fmt.Sprint(r) != "[[0] [0] [1] [1]]" {
		t.Fatalf("spine0 routes %v", r)
	}
	// A k = 4 fat-tree: 16 hosts, 20 switches; an edge switch reaches another
	// pod through both its aggregation switches, an aggregation switch through
	// both its cores.
	ft, err := fabric.FatTree(4, 100e9, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ft.Hosts) != 16 || len(ft.Switches) != 20 {
		t.Fatalf("fat-tree: %d hosts, %d switches", len(ft.Hosts), len(ft.Switches))
	}
	if err := ft.Validate(); err != nil {
		t.Fatal(err)
	}
	if r := ft.Routes(0); len(r[15]) != 2 || len(r[1]) != 1 || len(r[2]) != 2 {
		t.Fatalf("edge0 routes %v", r)
	}
	if r := ft.Routes(8); len(r[15]) != 2 || len(r[0]) != 1 {
		t.Fatalf("agg0_0 routes %v", r)
	}
	// A chain: the middle switch sends left and right.
	ch := fabric.Chain([]int{1, 1, 1}, 10e9, 40e9, 1000)
	if r := ch.Routes(1); fmt.Sprint(r) != "[[1] [0] [2]]" {
		t.Fatalf("chain middle routes %v", r)
	}
	if _, err := fabric.FatTree(3, 1e9, 0); err == nil {
		t.Fatal("odd k accepted")
	}
}

func TestTopologyErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() *fabric.Topology
		want  string
	}{
		{"two links on a host", func() *fabric.Topology {
			t := &fabric.Topology{}
			a, b := t.AddHost(""), t.AddHost("")
			s := t.AddSwitch("")
			t.ConnectSym(a, s, 1e9, 0)
			t.ConnectSym(a, s, 1e9, 0)
			t.ConnectSym(b, s, 1e9, 0)
			return t
		}, "has 2 links"},
		{"unreachable", func() *fabric.Topology {
			t := &fabric.Topology{}
			a, b := t.AddHost(""), t.AddHost("")
			s0, s1 := t.AddSwitch(""), t.AddSwitch("")
			t.ConnectSym(a, s0, 1e9, 0)
			t.ConnectSym(b, s1, 1e9, 0)
			return t
		}, "cannot reach"},
		{"host to host", func() *fabric.Topology {
			t := &fabric.Topology{}
			a, b, c := t.AddHost(""), t.AddHost(""), t.AddHost("")
			s := t.AddSwitch("")
			t.ConnectSym(a, b, 1e9, 0)
			t.ConnectSym(c, s, 1e9, 0)
			return t
		}, "two hosts"},
		{"zero rate", func() *fabric.Topology {
			return fabric.Star(2, 0, 0)
		}, "rate must be > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build().Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestLineRate: one long flow with no congestion control fills its link: the
// payload goodput is C x MTU / (MTU + headers + wire overhead), exactly.
func TestLineRate(t *testing.T) {
	for _, gbps := range []float64{10, 100, 400} {
		s := &fabric.Spec{Topo: fabric.Star(2, gbps*1e9, 1000), Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 1}}}
		r, err := fabric.Simulate(s, 2_000_000)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Goodput(1, 1_000_000, 2_000_000)
		want := gbps * 1e9 * 1000 / (1000 + hostd.DataOverhead + 24)
		t.Logf("%g Gb/s: goodput %.4f Gb/s, want %.4f", gbps, got/1e9, want/1e9)
		if math.Abs(got-want) > 0.002*want {
			t.Errorf("%g Gb/s link: goodput %.4f Gb/s, want %.4f", gbps, got/1e9, want/1e9)
		}
	}
}

// TestPropagationExact: a one-packet message's completion time grows by
// exactly the four one-way delays it crosses (data out over two links, the
// ACK back over two) when every link's delay grows.
func TestPropagationExact(t *testing.T) {
	fct := func(delayNs int64) int64 {
		s := &fabric.Spec{Topo: fabric.Star(2, 25e9, delayNs), Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 1, SizeBytes: 1000}}}
		r, err := fabric.Simulate(s, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := r.FCTOf(1)
		if !ok {
			t.Fatal("message did not complete")
		}
		return f.FCTNs
	}
	a, b := fct(1000), fct(3500)
	if b-a != 4*2500 {
		t.Fatalf("FCT %d ns at 1 us links, %d ns at 3.5 us: difference %d, want %d", a, b, b-a, 4*2500)
	}
	// Serialisation: a 1000-byte message is one 1066-byte frame; at 25 Gb/s
	// it takes (1066+24) x 0.32 ns on each of its two links.
	if lo := int64(4*1000 + 2*349); a < lo || a > lo+200 {
		t.Fatalf("FCT %d ns, want the data frame's serialisation and propagation plus an ACK's (~%d ns)", a, lo)
	}
}

// workloadSpec is a small leaf-spine under the web-search workload.
func workloadSpec(seed uint64, hosts int) *fabric.Spec {
	leaves := hosts / 4
	topo := fabric.LeafSpine(leaves, 2, 4, 100e9, 100e9, 1000)
	all := make([]int, hosts)
	for i := range all {
		all[i] = i
	}
	return &fabric.Spec{Topo: topo, Scheme: "dcqcn", Seed: seed, SampleNs: 20_000,
		Workloads: []fabric.Workload{{CDF: webSearchCDF(), Senders: all, Dsts: all,
			Load: 0.3, StopNs: 2_000_000}}}
}

// TestDeterministic: the same spec and seed give identical samples, FCTs and
// counters; another seed gives another run.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) (*fabric.Result, string) {
		r, err := fabric.Simulate(workloadSpec(seed, 8), 3_000_000)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, h := range r.Hosts {
			fmt.Fprint(&b, h.Samples(), h.FCTs())
			rc, tc := h.Counters()
			fmt.Fprint(&b, rc, tc)
		}
		fmt.Fprint(&b, r.Samples)
		for _, s := range r.Switches {
			fmt.Fprint(&b, s.Snapshot())
		}
		return r, b.String()
	}
	r1, a := run(1)
	_, b := run(1)
	_, c := run(2)
	if len(r1.FCTs()) < 10 {
		t.Fatalf("only %d flows completed: the workload is too light to test anything", len(r1.FCTs()))
	}
	if a != b {
		t.Fatal("two runs of the same spec and seed differ")
	}
	if a == c {
		t.Fatal("seeds 1 and 2 gave the same run")
	}
}

// TestECMPSpreadsFlows: many flows between two leaves use every spine.
func TestECMPSpreadsFlows(t *testing.T) {
	topo := fabric.LeafSpine(2, 4, 4, 10e9, 10e9, 1000)
	s := &fabric.Spec{Topo: topo}
	id := 1
	for src := 0; src < 4; src++ {
		for k := 0; k < 4; k++ {
			s.Flows = append(s.Flows, fabric.Flow{ID: id, Src: src, Dst: 4 + (src+k)%4, SizeBytes: 100_000})
			id++
		}
	}
	r, err := fabric.Simulate(s, 2_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.FCTs()); n != len(s.Flows) {
		t.Fatalf("%d of %d flows completed", n, len(s.Flows))
	}
	var used []uint64
	for p := 4; p < 8; p++ { // leaf 0's uplinks
		used = append(used, r.Port(0, p).TxPackets)
	}
	for i, n := range used {
		if n < 100 {
			t.Fatalf("uplinks of leaf 0 sent %v packets: spine %d unused", used, i)
		}
	}
	t.Logf("packets per uplink of leaf 0: %v", used)
}

// TestVirtualAllocatesNothing: once flows run, advancing the virtual clock
// allocates nothing (engines, nodes, wires, event heap).
func TestVirtualAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		par  fabric.Parallel
	}{
		{"serial", fabric.Parallel{Workers: 1}},
		// The parallel driver's windows, mailboxes and barrier, every node a
		// partition, on the caller's goroutine (more workers start
		// goroutines once per Run).
		{"partitioned", fabric.Parallel{Workers: 1, Partition: fabric.PartitionNode}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &fabric.Spec{Topo: fabric.Star(4, 100e9, 1000), Scheme: "rocc", Exact: true}
			for i := 0; i < 3; i++ {
				s.Flows = append(s.Flows, fabric.Flow{ID: i + 1, Src: i, Dst: 3})
			}
			p, err := s.Plan()
			if err != nil {
				t.Fatal(err)
			}
			v, err := fabric.NewVirtual(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.SetParallel(tc.par); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := v.Run(ctx, 5_000_000, nil); err != nil {
				t.Fatal(err)
			}
			before := v.Events()
			allocs := testing.AllocsPerRun(20, func() {
				if err := v.Run(ctx, v.Now()+10_000, nil); err != nil {
					t.Fatal(err)
				}
			})
			if ev := v.Events() - before; ev < 1000 {
				t.Fatalf("only %d events in the measured steps", ev)
			}
			if allocs != 0 {
				t.Fatalf("%.1f allocations per 10 us step of a 3-to-1 RoCC run", allocs)
			}
		})
	}
}

// TestSameStateAfterReplan: Plan is a pure function of the spec.
func TestPlanDeterministic(t *testing.T) {
	a, err := workloadSpec(1, 8).Plan()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := workloadSpec(1, 8).Plan()
	if !reflect.DeepEqual(a.Switches, b.Switches) || !reflect.DeepEqual(a.Hosts, b.Hosts) {
		t.Fatal("two plans of one spec differ")
	}
}

func TestProgressString(t *testing.T) {
	p := fabric.Progress{SimNs: 2_500_000, EndNs: 10_000_000, Events: 3_000_000, Wall: 2 * time.Second}
	got := p.String()
	for _, want := range []string{"2.500 ms of 10.000 ms", "(25%)", "1.50 M events/s", "1.25e-03 sim s / wall s", "ETA 6s"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress %q lacks %q", got, want)
		}
	}
}

// TestPaceMeter: a run whose pace changes (a busy network, then an idle one
// 100 times faster) reports its recent pace and an ETA at that pace within
// a few windows, not the mean since the start; the memory figures are the
// process's.
func TestPaceMeter(t *testing.T) {
	var m fabric.PaceMeter
	p := fabric.Progress{EndNs: 1e9}
	step := func(simNs, events int64) fabric.Progress {
		p.SimNs += simNs
		p.Events += events
		p.Wall += time.Second
		q := p
		m.Fill(&q)
		return q
	}
	// 20 s at 1e-4 sim s per wall s and 1 M events/s.
	for i := 0; i < 20; i++ {
		if q := step(100_000, 1_000_000); math.Abs(q.SimPerWall-1e-4) > 1e-12 || math.Abs(q.EventsPerS-1e6) > 1e-3 {
			t.Fatalf("steady pace: %g sim/wall, %g events/s", q.SimPerWall, q.EventsPerS)
		}
	}
	// Then 100 times faster for 5 windows: the pace follows it (within 1 %),
	// where the mean since the start is still far below.
	var q fabric.Progress
	for i := 0; i < 5*int(fabric.PaceWindow/time.Second); i++ {
		q = step(10_000_000, 1_000_000)
	}
	if math.Abs(q.SimPerWall-1e-2)/1e-2 > 0.01 {
		t.Errorf("after the change: pace %g sim/wall, want about 1e-2", q.SimPerWall)
	}
	wantETA := time.Duration(float64(q.EndNs-q.SimNs) / 1e-2)
	if d := q.ETA(); d < wantETA*99/100 || d > wantETA*101/100 {
		t.Errorf("ETA %v, want about %v at the recent pace", d, wantETA)
	}
	if mean := float64(q.SimNs) / float64(q.Wall.Nanoseconds()); mean > 0.9e-2 {
		t.Fatalf("the test's mean pace %g is not below the recent one", mean)
	}
	if q.HeapBytes == 0 || q.PeakRSSBytes < q.HeapBytes/2 {
		t.Errorf("memory: heap %d B, peak RSS %d B", q.HeapBytes, q.PeakRSSBytes)
	}
	if s := q.String(); !strings.Contains(s, fmt.Sprintf("%.2e sim s / wall s", q.SimPerWall)) || !strings.Contains(s, "heap ") || !strings.Contains(s, "peak RSS ") {
		t.Errorf("progress %q", s)
	}
}

// TestPacingJitter: with jitter a paced flow keeps its rate (mean spacing
// unchanged) but its packets no longer leave in lock step: two flows paced
// alike into one port build a queue exact pacing does not, and the run stays
// deterministic for a seed.
func TestPacingJitter(t *testing.T) {
	run := func(j float64, seed uint64) *fabric.Result {
		s := &fabric.Spec{Topo: fabric.Star(3, 10e9, 1000), PacingJitter: j, Seed: seed, SampleNs: 50_000,
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 2, RateBps: 4e9}, {ID: 2, Src: 1, Dst: 2, RateBps: 4e9}}}
		r, err := fabric.Simulate(s, 4_000_000)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	exact, jit, again := run(0, 1), run(0.5, 1), run(0.5, 1)
	for _, id := range []int64{1, 2} {
		want := exact.Goodput(id, 1_000_000, 4_000_000)
		if got := jit.Goodput(id, 1_000_000, 4_000_000); math.Abs(got-want) > 0.01*want {
			t.Errorf("flow %d: goodput %.4f Gb/s with jitter, %.4f without: the mean rate moved", id, got/1e9, want/1e9)
		}
	}
	qe, qj := exact.MaxQueue(0, 2, 0, 4_000_000), jit.MaxQueue(0, 2, 0, 4_000_000)
	t.Logf("largest queue sample: %d B exact, %d B with jitter 0.5", qe, qj)
	if qj <= qe {
		t.Errorf("jitter left the queue at %d B (exact pacing %d B): packets still leave in lock step", qj, qe)
	}
	if fmt.Sprint(jit.Samples) != fmt.Sprint(again.Samples) {
		t.Error("two runs with one seed differ")
	}
}

// TestEventRingNeverFills checks the plan's small host event ring (16
// events, Spec.Plan): the virtual driver serves a host's send side after
// every frame, so no control event is ever dropped, under an incast with PFC
// pauses and under web search on a leaf-spine, for schemes whose receivers
// send ACKs, CNPs or feedback.
func TestEventRingNeverFills(t *testing.T) {
	incast := func(scheme string) *fabric.Spec {
		return &fabric.Spec{Topo: fabric.Star(16, 25e9, 1000), Scheme: scheme, ExpectedFlows: 30, MTU: 1000,
			PFC: fabric.PFC{Enabled: true}, Buffer: switchd.BufferConfig{SizeBytes: 300_000}, Seed: 2,
			Incast: []fabric.Incast{{IDBase: 1, Senders: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
				Dst: 0, FlowsPerSender: 2, SizeBytes: 100_000}}}
	}
	for _, tc := range []struct {
		name string
		spec *fabric.Spec
		end  int64
	}{
		{"incast dcqcn", incast("dcqcn"), 2_000_000},
		{"incast hpcc", incast("hpcc"), 2_000_000},
		{"incast rocc", incast("rocc"), 2_000_000},
		{"leaf-spine web search dcqcn", leafSpineWebSearch(2, "dcqcn"), 1_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := fabric.Simulate(tc.spec, tc.end)
			if err != nil {
				t.Fatal(err)
			}
			var acks uint64
			for i, h := range r.Hosts {
				rc := h.RxCounters()
				acks += rc.Acks
				if rc.EventsDropped != 0 {
					t.Errorf("host %d dropped %d events", i, rc.EventsDropped)
				}
			}
			if acks == 0 {
				t.Fatalf("no ACKs received: the case tests nothing")
			}
		})
	}
}
