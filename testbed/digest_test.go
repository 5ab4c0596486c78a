package testbed

import (
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/internal/golden"
	"github.com/ccbed/ccbed/testbed/report"
)

// updateDigest rewrites testdata/fabric-digest.golden from this build:
// go test ./testbed -run TestFabricDigest -update-digest. Only when a change
// moves behaviour on purpose; its commit says why.
var updateDigest = flag.Bool("update-digest", false, "rewrite testdata/fabric-digest.golden")

// digestFile holds one line per case: its name and the SHA-256 of what
// it measured.
var digestFile = golden.File{Path: "testdata/fabric-digest.golden", Flag: "update-digest", What: "the fabric's behaviour"}

// digestStar is every scheme's case: a 4-host star, a 3-to-1 of two long
// flows and a 300 KB one, PFC on (lossless priority 3, a small shared buffer
// so that it pauses), 10 % pacing jitter, in virtual time.
const digestStar = `
[experiment]
name = "digest"
duration_ms = 3
sample_us = 50
clock = "virtual"
seed = 3

[topology]
hosts = 4
link_gbps = 10
delay_us = 1
buffer_bytes = 400_000
mtu_bytes = 1000
pacing_jitter = 0.1

[cc]
scheme = "SCHEME"
expected_flows = 3

[pfc]
enabled = true

[buffer]
size_bytes = 1_000_000

[[flows]]
id = 1
src = 0
dst = 3

[[flows]]
id = 2
src = 1
dst = 3
start_us = 200

[[flows]]
id = 3
src = 2
dst = 3
size_bytes = 300_000
start_us = 500
`

// digestLeafSpine covers ECMP, multi-hop PFC, incast and the workload
// generator: a 2-leaf, 2-spine fabric of 8 hosts under web search at 60 %
// load and a 5-to-1 incast into a small shared buffer.
const digestLeafSpine = `
[experiment]
name = "digest-ls"
duration_ms = 2
sample_us = 50
clock = "virtual"
seed = 5

[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
link_gbps = 25
delay_us = 1
buffer_bytes = 1_000_000
mtu_bytes = 1000
pacing_jitter = 0.05

[cc]
scheme = "SCHEME"
expected_flows = 8

[pfc]
enabled = true

[buffer]
size_bytes = 600_000

[[incast]]
id_base = 1
senders = [3, 4, 5, 6, 7]
dst = 0
flows_per_sender = 2
size_bytes = 200_000
start_us = 100

[[workloads]]
id_base = 1000
cdf = "../configs/workloads/websearch.cdf"
senders = [0, 1, 2, 3, 4, 5, 6, 7]
dsts = [0, 1, 2, 3, 4, 5, 6, 7]
load = 0.6
stop_us = 1500
`

// TestFabricDigest runs every scheme on the star, and DCQCN and HPCC on the
// leaf-spine, and compares a hash of every series, FCT and per-flow and
// per-port summary value with the golden file: a change that should not
// move behaviour (a refactor, a speed-up, a results-layout change) must
// leave every hash as it was.
func TestFabricDigest(t *testing.T) {
	var got []string
	for _, r := range digestRuns() {
		res := runDigestCase(t, r, RunOptions{})
		got = append(got, r.name+" "+runDigest(t, res))
		var pauses, fcts int
		for _, p := range res.Summary.Ports {
			pauses += int(p.PFCPauses)
		}
		for _, f := range res.Summary.Flows {
			if f.FCTUs.Valid() {
				fcts++
			}
		}
		t.Logf("%s: %d PFC pauses, %d FCTs", r.name, pauses, fcts)
		// What the digest is for: PFC pauses (no scheme holds the queue
		// below XOFF at once), flows complete.
		if (r.name == "star-none" && pauses == 0) || (r.name == "leafspine-dcqcn" && pauses == 0) || fcts == 0 {
			t.Errorf("%s: %d PFC pauses, %d FCTs: the case does not exercise what it should", r.name, pauses, fcts)
		}
	}
	text := strings.Join(got, "\n") + "\n"
	digestFile.Check(t, text, *updateDigest)
}

// TestFabricDigestParallel runs TestFabricDigest's cases with the parallel
// driver, every node a partition of its own, on 2 and 16 workers, and
// asserts that every results file and counter hashes as in the golden file
// (the serial driver's).
func TestFabricDigestParallel(t *testing.T) {
	want := digestFile.Hashes(t)
	for _, r := range digestRuns() {
		for _, n := range []int{2, 16} {
			par := fabric.Parallel{Workers: n, Partition: fabric.PartitionNode}
			res := runDigestCase(t, r, RunOptions{Parallel: par})
			if got := runDigest(t, res); got != want[r.name] {
				t.Errorf("%s with %d workers: digest %s, the serial driver's %s", r.name, n, got, want[r.name])
			}
		}
	}
}

// digestRun is a case of TestFabricDigest: its name and experiment file.
type digestRun struct{ name, text string }

// runDigestCase runs r with o into a temporary directory.
func runDigestCase(t *testing.T, r digestRun, o RunOptions) *Result {
	t.Helper()
	e, err := Decode(r.name+".toml", r.text, ".")
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	e.Experiment.OutputDir = t.TempDir()
	res, err := RunWith(context.Background(), e, nil, o)
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	return res
}

// digestRuns are TestFabricDigest's cases: every scheme on the star, DCQCN
// and HPCC on the leaf-spine, DCQCN with the hosts' ICRC.
func digestRuns() []digestRun {
	type run = digestRun
	var runs []run
	for _, s := range ccalgo.Schemes() {
		runs = append(runs, run{"star-" + s.Name, strings.Replace(digestStar, "SCHEME", s.Name, 1)})
	}
	for _, s := range []string{"dcqcn", "hpcc"} {
		runs = append(runs, run{"leafspine-" + s, strings.Replace(digestLeafSpine, "SCHEME", s, 1)})
	}
	// Hosts that compute the RoCEv2 ICRC of every frame.
	runs = append(runs, run{"star-dcqcn-icrc", strings.Replace(strings.Replace(digestStar, "SCHEME", "dcqcn", 1), "seed = 3", "seed = 3\nicrc = true", 1)})
	return runs
}

// runDigest hashes a run's CSVs, the measured parts of its summary (the
// flows and the ports) and every engine's counters (switch snapshots, host
// reports), none of which depend on when or where it ran.
func runDigest(t *testing.T, res *Result) string {
	t.Helper()
	h := golden.NewHash()
	for _, name := range []string{report.QueueCSVFile, report.RateCSVFile, report.FairRateCSVFile, report.FCTCSVFile} {
		h.File(t, name, filepath.Join(res.Dir, name))
	}
	m, err := json.Marshal(struct {
		Flows, Ports any
		Jain         any
		// Every engine's own counters: the switches' snapshots, the hosts'
		// reports.
		Switches, Hosts any
	}{res.Summary.Flows, res.Summary.Ports, res.Summary.JainIndex, res.Switches, res.Hosts})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		t.Fatal(err)
	}
	h.JSON(t, dropZeros(v)) // keys sorted
	return h.String()
}

// dropZeros removes zero numbers, false, "" and null from the objects in
// v, so that a counter added to the engines moves the digest only where it
// counts something.
func dropZeros(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch e {
			case float64(0), false, "", nil:
				delete(x, k)
				continue
			}
			x[k] = dropZeros(e)
		}
	case []any:
		for i := range x {
			x[i] = dropZeros(x[i])
		}
	}
	return v
}
