package fabric_test

import (
	"fmt"
	"testing"

	"github.com/ccbed/ccbed/fabric"
)

// TestParallelDigest runs every case of TestEngineDigest (every scheme, PFC,
// ECMP, pacing jitter, the hosts' ICRC, injected loss and a link failure) in
// partitions, by switch and by node, with 1 to 16 workers (more than this
// machine's cores), and asserts that each hashes as the serial driver's run
// does, without the capture (a capture needs the serial driver).
func TestParallelDigest(t *testing.T) {
	want := map[string]string{}
	for _, c := range engineDigestCases() {
		want[c.name] = engineDigest(t, c.spec, c.endNs, false, fabric.Parallel{Workers: 1})
	}
	workers := []int{1, 2, 4, 8, 16}
	if testing.Short() {
		workers = []int{1, 3}
	}
	for _, c := range engineDigestCases() {
		for _, part := range []fabric.Partitioning{fabric.PartitionSwitch, fabric.PartitionNode} {
			pars := []fabric.Parallel{{Workers: 2, Partition: part, Groups: 3}} // dealt by load
			for _, n := range workers {
				pars = append(pars, fabric.Parallel{Workers: n, Partition: part})
			}
			for _, par := range pars {
				t.Run(fmt.Sprintf("%s/partition%d/workers%d/groups%d", c.name, part, par.Workers, par.Groups), func(t *testing.T) {
					c := engineDigestCases()[indexOf(t, c.name)]
					got := engineDigest(t, c.spec, c.endNs, false, par)
					if got != want[c.name] {
						t.Errorf("%s with %+v: digest %s, the serial driver's %s", c.name, par, got, want[c.name])
					}
				})
			}
		}
	}
}

// indexOf is the index of engineDigestCases' case name.
func indexOf(t *testing.T, name string) int {
	for i, c := range engineDigestCases() {
		if c.name == name {
			return i
		}
	}
	t.Fatalf("no case %s", name)
	return -1
}
