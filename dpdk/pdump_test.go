package dpdk_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
)

// TestCheckPdumpEAL: EAL arguments that leave no primary a secondary can
// join are refused with the argument named; hugepage primaries pass.
func TestCheckPdumpEAL(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  string // "" when accepted
	}{
		{[]string{"-m", "64", "--file-prefix", "h0", "--vdev=net_ring0"}, ""},
		{[]string{"--huge-unlink=existing", "--huge-dir", "/dev/hugepages"}, ""},
		{[]string{"--huge-unlink=never"}, ""},
		{[]string{"--no-huge", "-m", "512"}, "--no-huge"},
		{[]string{"-m", "64", "--no-shconf"}, "--no-shconf"},
		{[]string{"--in-memory"}, "--in-memory"},
		{[]string{"--huge-unlink"}, "--huge-unlink"},
		{[]string{"--huge-unlink=always"}, "--huge-unlink"},
	} {
		err := dpdk.CheckPdumpEAL(tc.args)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tc.args, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: %v, want an error naming %s", tc.args, err, tc.bad)
		}
	}
}

// TestPdumpInit: PdumpInit serves captures and sets the capture clock with
// a frame of the pool it is given, which it returns (no mbuf left in use);
// PdumpUninit stops serving. MempoolOps lists the registered drivers, DPDK's
// default ring_mp_mc among them. (A capture by dpdk-dumpcap needs a primary on
// hugepages: cmd/hostd's TestDumpcap.)
func TestPdumpInit(t *testing.T) {
	pool, err := dpdk.NewPktMbufPool("pdump_prime", 63, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	if err := dpdk.PdumpInit(pool); err != nil {
		t.Fatal(err)
	}
	if n := pool.InUse(); n != 0 {
		t.Errorf("%d mbufs in use after PdumpInit, want 0", n)
	}
	if err := dpdk.PdumpUninit(); err != nil {
		t.Error(err)
	}
	if ops := dpdk.MempoolOps(); !slices.Contains(ops, "ring_mp_mc") {
		t.Errorf("MempoolOps() = %q, want ring_mp_mc among them", ops)
	}
}

// TestPdumpLcoreClash: loops on lcore 0 share dpdk-dumpcap's default lcore
// and get a warning that says how to avoid it; loops from lcore 1 none.
func TestPdumpLcoreClash(t *testing.T) {
	for _, tc := range []struct {
		lcores []uint
		warn   bool
	}{
		{[]uint{0}, true},
		{[]uint{1, 0, 2}, true},
		{[]uint{1}, false},
		{[]uint{1, 2, 3}, false},
		{nil, false},
	} {
		w := dpdk.PdumpLcoreClash(tc.lcores)
		if (w != "") != tc.warn || (tc.warn && !strings.Contains(w, "taskset -c N dpdk-dumpcap")) {
			t.Errorf("PdumpLcoreClash(%v) = %q, want a warning %v", tc.lcores, w, tc.warn)
		}
	}
}
