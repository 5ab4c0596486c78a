package fabric_test

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/internal/golden"
	"github.com/ccbed/ccbed/switchd"
)

// updateEngineDigest rewrites testdata/engine-digest.golden from this build:
// go test ./fabric -run TestEngineDigest -update-engine-digest. Only when a
// change moves the engines' behaviour on purpose; its commit says why.
var updateEngineDigest = flag.Bool("update-engine-digest", false, "rewrite testdata/engine-digest.golden")

const engineDigestGolden = "testdata/engine-digest.golden"

// TestEngineDigest is the fabric's digest below the results layer: every
// scheme on a 4-host star (a 3-to-1 of two long flows and a 300 KB one, PFC
// with a small shared buffer, 10 % pacing jitter), DCQCN and HPCC on a
// 2-leaf, 2-spine fabric (ECMP, multi-hop PFC, a 5-to-1 incast, web search
// at 60 %), DCQCN with the hosts' ICRC, and DCQCN with injected loss and a
// link failure, each in virtual time. It hashes what the engines and the
// driver produced (the switches' queue and fair-rate samples, the hosts'
// rate samples and FCTs, every engine's counters, the links' losses) and, for
// the star, every byte of the frames the receiver's port saw (a pcap
// capture): a refactor or a speed-up of the engines or the driver must leave
// every hash as it was, whatever the results files do (testbed's
// TestFabricDigest covers those).
func TestEngineDigest(t *testing.T) {
	var got []string
	for _, c := range engineDigestCases() {
		h := engineDigest(t, c.spec, c.endNs, strings.HasPrefix(c.name, "star"), fabric.Parallel{Workers: 1})
		got = append(got, c.name+" "+h)
	}
	text := strings.Join(got, "\n") + "\n"
	golden.File{Path: engineDigestGolden, Flag: "update-engine-digest", What: "the engines' behaviour"}.Check(t, text, *updateEngineDigest)
}

// engineDigestCase is a run TestEngineDigest hashes.
type engineDigestCase struct {
	name  string
	spec  *fabric.Spec
	endNs int64
}

// engineDigestCases are TestEngineDigest's runs, each with a spec of its own.
func engineDigestCases() []engineDigestCase {
	star := func(scheme string) *fabric.Spec {
		return &fabric.Spec{Topo: fabric.Star(4, 10e9, 1000), Scheme: scheme, ExpectedFlows: 3, MTU: 1000,
			BufferBytes: 400_000, PFC: fabric.PFC{Enabled: true}, Buffer: switchd.BufferConfig{SizeBytes: 1_000_000},
			SampleNs: 50_000, Seed: 3, PacingJitter: 0.1,
			Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 3}, {ID: 2, Src: 1, Dst: 3, StartNs: 200_000},
				{ID: 3, Src: 2, Dst: 3, SizeBytes: 300_000, StartNs: 500_000}}}
	}
	leafSpine := func(scheme string) *fabric.Spec {
		all := []int{0, 1, 2, 3, 4, 5, 6, 7}
		return &fabric.Spec{Topo: fabric.LeafSpine(2, 2, 4, 25e9, 25e9, 1000), Scheme: scheme, ExpectedFlows: 8,
			MTU: 1000, BufferBytes: 1_000_000, PFC: fabric.PFC{Enabled: true},
			Buffer: switchd.BufferConfig{SizeBytes: 600_000}, SampleNs: 50_000, Seed: 5, PacingJitter: 0.05,
			Incast: []fabric.Incast{{IDBase: 1, Senders: []int{3, 4, 5, 6, 7}, Dst: 0, FlowsPerSender: 2,
				SizeBytes: 200_000, StartNs: 100_000}},
			Workloads: []fabric.Workload{{IDBase: 1000, CDF: webSearchCDF(), Senders: all, Dsts: all,
				Load: 0.6, StopNs: 1_500_000}}}
	}
	type tc = engineDigestCase
	var cases []tc
	for _, s := range ccalgo.Schemes() {
		cases = append(cases, tc{"star-" + s.Name, star(s.Name), 3_000_000})
	}
	for _, s := range []string{"dcqcn", "hpcc"} {
		cases = append(cases, tc{"leafspine-" + s, leafSpine(s), 2_000_000})
	}
	icrc := star("dcqcn")
	icrc.ICRC = true
	cases = append(cases, tc{"star-dcqcn-icrc", icrc, 3_000_000})
	failing := star("dcqcn")
	failing.Failures = fabric.Failures{LossRate: 0.002, LinkDown: []fabric.LinkDown{{A: 1, B: 4, DownNs: 1_000_000, UpNs: 1_500_000}}}
	cases = append(cases, tc{"star-dcqcn-failures", failing, 3_000_000})
	return cases
}

// engineDigest runs spec in virtual time to endNs and hashes what the
// engines and the driver produced; capture adds the frames host 3's port
// (a star's receiver) saw. par is how the driver runs.
func engineDigest(t *testing.T, spec *fabric.Spec, endNs int64, capture bool, par fabric.Parallel) string {
	t.Helper()
	spec.Exact = true
	p, err := spec.Plan()
	if err != nil {
		t.Fatal(err)
	}
	v, err := fabric.NewVirtual(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetParallel(par); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if capture {
		// pcap, as the digest was made with; pcapng files record the build
		if err := v.Capture(&fabric.Capture{Ports: []fabric.CapturePort{{Node: 3, Port: 0}}, Dir: dir, Format: fabric.FormatPcap}); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Run(context.Background(), endNs, nil); err != nil {
		t.Fatal(err)
	}
	if n := fabric.AgendaEarly(v); n != 0 {
		t.Errorf("the driver set %d agenda entries before the event being run", n)
	}
	files, err := v.CloseCapture()
	if err != nil {
		t.Fatal(err)
	}
	r := v.Result()
	sum := golden.NewHash()
	for _, f := range files {
		sum.File(t, filepath.Base(f.Path), f.Path)
	}
	type hostOut struct {
		Samples, FCTs, Rx, Tx any
	}
	var hosts []hostOut
	for _, he := range r.Hosts {
		rx, tx := he.Counters()
		hosts = append(hosts, hostOut{he.Samples(), he.FCTs(), rx, tx})
	}
	var switches []switchd.Snapshot
	for _, se := range r.Switches {
		switches = append(switches, se.Snapshot())
	}
	sum.JSON(t, struct {
		Samples, Hosts, Switches, LinkLosses any
		EndNs                                int64
	}{digestSamples(r.Samples), hosts, switches, r.LinkLosses, r.EndNs})
	return sum.String()
}

// digestSamples are the switches' samples as the digest has hashed them
// since it was made: without the per-priority split of the queue
// (switchd.Sample.PrioBytes, which sums to QueueBytes; testbed's
// TestTrafficClassesInResults checks it), so that adding that field left
// every hash as it was.
func digestSamples(ss []fabric.SwitchSample) any {
	if ss == nil {
		return ss
	}
	type sample struct {
		Switch      int
		TNs         int64
		Port        int
		QueueBytes  int64
		FairRateBps float64
	}
	out := make([]sample, len(ss))
	for i, s := range ss {
		out[i] = sample{s.Switch, s.TNs, s.Port, s.QueueBytes, s.FairRateBps}
	}
	return out
}
