package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/wire"
)

// TestDumpcap: a hostd with -pdump, on hugepages, serves DPDK's own capture
// tool. dpdk-dumpcap (a secondary process) lists the host's port and
// captures its traffic into a pcapng file: the host's data frames of its flow
// (10.0.0.1 to 10.0.0.4, RoCEv2), both as sent and as received back (a
// net_ring port loops its tx into its rx), with timestamps of today (DPDK
// 22.11's capture clock set before the first frame, see dpdk.PdumpInit).
// The host's loop runs on lcore 1: dumpcap's own is 0 (dpdk.PdumpLcoreClash).
func TestDumpcap(t *testing.T) {
	prefix := dpdktest.HugeDaemon(t, 96)
	dir := t.TempDir()
	cfg := hostFile(t, dir, `"-m", "64", "--file-prefix=`+prefix+`"`, "net_ring0", 1, 1024, 0, `
[[host.flows]]
id = 7
dst = "10.0.0.4"
size_bytes = 0
rate_gbps = 0.01
`)
	d := startDaemon(t, "hostd", "hostd: port up", []string{hostdArgsEnv + "=-c " + cfg + " -pdump"}, os.Args[0], "-test.run=^$")
	select {
	case <-d.ready:
	case <-d.done:
		t.Fatalf("hostd exited before its port came up (%v):\n%s", d.err, d.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("hostd's port not up after 30 s:\n%s", d.output())
	}
	if out := d.output(); !strings.Contains(out, "pdump: serving dpdk-dumpcap") || strings.Contains(out, "pdump: a loop runs on lcore 0") {
		t.Errorf("hostd did not log that it serves dpdk-dumpcap, or warned of lcore 0 with its loop on lcore 1:\n%s", out)
	}

	// Listing attaches to the primary and shows its port.
	if out := dpdktest.Dumpcap(t, prefix, 30*time.Second, "-D"); !regexp.MustCompile(`(?m)^0\. net_ring0$`).MatchString(out) {
		t.Errorf("dpdk-dumpcap -D does not list 0. net_ring0:\n%s", out)
	}

	// A capture of 20 frames ends by itself (bounded by the timeout).
	const want = 20
	capPath := filepath.Join(dir, "h0.pcapng")
	out := dpdktest.Dumpcap(t, prefix, 30*time.Second, "-i", "net_ring0", "-c", strconv.Itoa(want), "-w", capPath)
	t.Logf("dpdk-dumpcap:\n%s", out)
	d.stop(t, 10*time.Second)
	recs, err := pcapw.ReadFile(capPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < want {
		t.Fatalf("%d frames captured, want at least %d (dumpcap: %s)", len(recs), want, out)
	}
	var f wire.Frame
	dirs := map[pcapw.Direction]int{}
	now := time.Now()
	for i, r := range recs {
		if err := wire.Decode(r.Data, &f); err != nil || f.Kind != wire.KindData {
			t.Fatalf("frame %d: %v, kind %v; want the host's data frames", i, err, f.Kind)
		}
		if src, dst := f.IP.Src(), f.IP.Dst(); src != 0x0a000001 || dst != 0x0a000004 {
			t.Errorf("frame %d: %08x -> %08x, want 10.0.0.1 -> 10.0.0.4", i, src, dst)
		}
		if at := time.Unix(0, r.TimeNs); at.Before(now.Add(-time.Hour)) || at.After(now.Add(time.Hour)) {
			t.Errorf("frame %d: timestamp %v, not within an hour of now (%v)", i, at, now)
		}
		dirs[r.Dir]++
	}
	if dirs[pcapw.DirInbound] == 0 || dirs[pcapw.DirOutbound] == 0 {
		t.Errorf("directions %v: want both the frames sent and the same frames received back", dirs)
	}
}

// TestPdumpNeedsHugepages: -pdump with eal_args a secondary cannot join
// (--no-huge, --no-shconf) fails before DPDK starts, naming the argument.
func TestPdumpNeedsHugepages(t *testing.T) {
	cfg := nullHost(t, t.TempDir(), 1024, 0) // --no-huge --no-shconf
	f, err := options{pdump: true}.load(cfg)
	if err == nil || !strings.Contains(err.Error(), "-pdump: eal_args") || !strings.Contains(err.Error(), "--no-huge") {
		t.Fatalf("load with -pdump = %v, %v; want an error naming --no-huge", f, err)
	}
	if rc := command([]string{"-c", cfg, "-check-syntax", "-pdump"}); rc != 1 {
		t.Errorf("-check-syntax -pdump on a --no-huge file: exit %d, want 1", rc)
	}
}
