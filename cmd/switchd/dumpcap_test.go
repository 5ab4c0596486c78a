package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk/dpdktest"
	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/wire"
)

// TestDumpcap: a switchd with -pdump, on hugepages, serves DPDK's own
// capture tool. Port p0 is a net_pcap vdev that replays a ccbed data frame
// (10.0.0.1 to 10.0.1.1) without end, p1 a net_null vdev the switch routes it
// to. dpdk-dumpcap (a secondary process) lists both ports and captures p0:
// every frame it writes is the replayed frame, byte for byte, received by the
// switch (inbound). The switch's loop runs on lcore 1: dumpcap's own is 0
// (dpdk.PdumpLcoreClash).
func TestDumpcap(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	prefix := dpdktest.HugeDaemon(t, 96)
	dir := t.TempDir()
	frame := make([]byte, 256)
	ep := wire.Endpoints{DstMAC: wire.MAC{2, 0, 0, 0, 0xff, 0}, SrcMAC: wire.MAC{2, 0, 0, 0, 0, 0},
		SrcIP: 0x0a000001, DstIP: 0x0a010101, SrcPort: 50000}
	n, err := wire.BuildData(frame, &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: 7, PSN: 1, PayloadLen: 100})
	if err != nil {
		t.Fatal(err)
	}
	frame = frame[:n]
	in := filepath.Join(dir, "in.pcap")
	w, err := pcapw.Create(in, 0)
	if err == nil {
		err = w.Append(0, frame)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	sw := daemontest.SwitchFile{IP: "10.0.255.254", Lcores: []int{1},
		EALArgs: `["-m", "64", "--no-pci", "--no-telemetry", "--lcores=1@1", "--file-prefix=` + prefix + `", "--log-level=lib.eal:error"]`,
		Mbufs:   4095, Scheme: "dcqcn", Ports: []daemontest.SwitchPort{
			{Name: "p0", Device: "net_pcap0,rx_pcap=" + in + ",infinite_rx=1", MAC: "02:00:00:00:ff:00", PeerMAC: "02:00:00:00:00:00", LinkGbps: 10},
			{Name: "p1", Device: "net_null0", MAC: "02:00:00:00:ff:01", PeerMAC: "02:00:00:00:00:01", LinkGbps: 10, Route: "10.0.1.0/24"},
		}}
	cfg := sw.Write(t, filepath.Join(dir, "switch.toml"))
	p := startSwitchd(t, "-c", cfg, "-pdump")
	if !p.waitFor("switchd: running", 30*time.Second) {
		t.Fatalf("switchd not running after 30 s:\n%s", p.out.String())
	}
	if !strings.Contains(p.out.String(), "pdump: serving dpdk-dumpcap") {
		t.Errorf("switchd did not log that it serves dpdk-dumpcap:\n%s", p.out.String())
	}
	if out := dpdktest.Dumpcap(t, prefix, 30*time.Second, "-D"); !regexp.MustCompile(`(?m)^0\. net_pcap0$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^1\. net_null0$`).MatchString(out) {
		t.Errorf("dpdk-dumpcap -D does not list 0. net_pcap0 and 1. net_null0:\n%s", out)
	}
	capPath := filepath.Join(dir, "p0.pcapng")
	out := dpdktest.Dumpcap(t, prefix, 30*time.Second, "-i", "net_pcap0", "-c", "20", "-w", capPath)
	t.Logf("dpdk-dumpcap:\n%s", out)
	p.cmd.Process.Signal(os.Interrupt)
	if rc := p.finish(t, 10*time.Second); rc != 0 {
		t.Errorf("switchd exit %d:\n%s", rc, p.out.String())
	}
	recs, err := pcapw.ReadFile(capPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 20 {
		t.Fatalf("%d frames captured, want at least 20", len(recs))
	}
	for i, r := range recs {
		if r.Dir != pcapw.DirInbound || !bytes.Equal(r.Data, frame) {
			t.Fatalf("frame %d (direction %v, %d bytes) is not the replayed frame received", i, r.Dir, len(r.Data))
		}
	}
}

// TestPdumpNeedsHugepages: -pdump with eal_args a secondary cannot join
// (--no-huge, --no-shconf) fails before DPDK starts.
func TestPdumpNeedsHugepages(t *testing.T) {
	dir := t.TempDir()
	cfg := vdevConfig(t, dir, "", "", "", 1024) // --no-huge --no-shconf
	if rc := run([]string{"-c", cfg, "-check-syntax"}); rc != 0 {
		t.Fatalf("-check-syntax: exit %d, want 0", rc)
	}
	if rc := run([]string{"-c", cfg, "-check-syntax", "-pdump"}); rc != 1 {
		t.Errorf("-check-syntax -pdump on a --no-huge file: exit %d, want 1", rc)
	}
}
