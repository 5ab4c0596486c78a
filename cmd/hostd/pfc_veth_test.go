package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/switchd"
	swdaemon "github.com/ccbed/ccbed/switchd/daemon"
)

// TestPFCOverVeth is a lossless run over af_packet on veths: one switchd and
// two hostd processes (as TestDaemonsOverVeth), PFC on priority 3 (every
// frame: untagged frames take pfc.priority), no congestion control, and a
// sender whose link is twice the receiver's, so that the switch's port to the
// receiver backs up into p0's ingress count and PFC alone holds the sender:
//
//	sender 0.1 Gb/s == p0 (0.1) [switchd, PFC] p1 (0.05) == receiver 0.05 Gb/s
//
// The run is lossless when the switch dropped no frame for a full headroom,
// every frame the kernel delivered to p0's veth was read by the switch (none
// lost in its af_packet receive ring), every data frame the sender sent
// reached the switch, and the sender retransmitted nothing. The derived
// headroom of an af_packet port holds its whole receive ring
// (swdaemon.KernelRxFrames): everything in that ring when XOFF goes out still
// arrives. The rings hold 4096 frames (framecnt), 350 ms at 0.1 Gb/s: a
// daemon on the loaded 2-core test machine may stall for hundreds of
// milliseconds, and frames arriving beyond a full ring are lost in the kernel,
// where no pause can help (docs/switch.md, "PFC over af_packet"). The test
// logs the switch's record of what arrived on p0 after each XOFF
// (PortCounters.PFCAfterXOFFHist) against p0's headroom.
func TestPFCOverVeth(t *testing.T) {
	r := newVethRig(t, "pfcveth", 2)
	switchdBin := buildSwitchd(t)
	dir := t.TempDir()
	const (
		senderIP   = "10.79.1.2"
		receiverIP = "10.79.2.2"
		msgBytes   = 4 << 20
		mtu        = 1024
		durationS  = 3.0
		framecnt   = ",framecnt=4096"
	)
	swJSON := filepath.Join(dir, "switch.json")
	// alpha 1/64: p0's shared bytes reach the threshold (1/65 of the pool
	// left after 2 x 4.6 MB of headroom) within the message.
	swFile := r.switchFile(t, "10.79", 8191, framecnt, 0.1, 0.05)
	swFile.Scheme, swFile.JSON = "none", swJSON
	swFile.Tables = "[pfc]\nenabled = true\n\n[buffer]\nsize_bytes = 16777216\nalpha = 0.015625\n"
	rxCfg := hostTOML(dir, vethHost{name: "receiver", ip: receiverIP, gatewayMAC: r.swMAC[1],
		eal: r.eal(t, "h1", "0", "net_af_packet0,iface="+r.hIf[1]+framecnt), linkGbps: 0.05, mtu: mtu, scheme: "none",
		rtoUs: 200000, nakUs: 50000})
	txCfg := hostTOML(dir, vethHost{name: "sender", ip: senderIP, gatewayMAC: r.swMAC[0],
		eal: r.eal(t, "h0", "0", "net_af_packet0,iface="+r.hIf[0]+framecnt), linkGbps: 0.1, durationS: durationS, mtu: mtu, scheme: "none",
		rtoUs: 200000, nakUs: 50000, flows: fmt.Sprintf(`
[[host.flows]]
id = 1
dst = "%s"
size_bytes = %d
start_us = 100000
`, receiverIP, msgBytes)})
	swPath := swFile.Write(t, filepath.Join(dir, "switch.toml"))
	rxPath, txPath := writeFile(t, dir, "receiver.toml", rxCfg), writeFile(t, dir, "sender.toml", txCfg)

	sw := r.startSwitchd(t, switchdBin, swPath)
	rx := r.startHost(t, "receiver", 1, rxPath, time.Time{})
	tx := r.startHost(t, "sender", 0, txPath, time.Now().Add(2*time.Second).Truncate(time.Millisecond))
	tx.wait(t, time.Duration(durationS*float64(time.Second))+18*time.Second)
	delivered := vethRxPackets(t, r.nsS, r.swIf[0])
	rx.stop(t, 10*time.Second)
	sw.stop(t, 10*time.Second)

	var snd, rcv hostd.Report
	daemontest.ReadJSON(t, filepath.Join(dir, "sender", "counters.json"), &snd)
	daemontest.ReadJSON(t, filepath.Join(dir, "receiver", "counters.json"), &rcv)
	var res switchd.Results
	daemontest.ReadJSON(t, swJSON, &res)
	p0, p1 := res.Counters.Ports[0], res.Counters.Ports[1]
	cfg, err := swdaemon.LoadConfig(swPath)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cfg.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sender: %d data frames (%d retransmitted), %d pause frames; port %+v", snd.Tx.DataFrames, snd.Tx.RetxFrames, snd.Tx.PauseFrames, snd.Port)
	t.Logf("switch p0: the kernel delivered %d frames, the switch read %d; headroom %d B; drops: headroom_full %d, total %d; XOFF %d (pauses %d, resumes %d)",
		delivered, p0.RxPackets, spec.Headroom(0), p0.DropHeadroom, p0.DropsTotal, p0.PFCOnsets, p0.PausesSent, p0.ResumesSent)
	t.Logf("switch p1: tx %d, drops %d, queue max %d B", p1.TxPackets, p1.DropsTotal, p1.QueueMaxBytes)
	t.Logf("p0 bytes after XOFF, max %d B:%s", p0.PFCAfterXOFFMax, afterXOFFHistText(p0.PFCAfterXOFFHist))
	if p0.PFCOnsets == 0 || snd.Tx.PauseFrames == 0 {
		t.Errorf("no PFC: the switch paused p0 %d times, the sender counted %d pause frames", p0.PFCOnsets, snd.Tx.PauseFrames)
	}
	if p0.DropHeadroom+p1.DropHeadroom != 0 {
		t.Errorf("lossless frames dropped for a full headroom: p0 %d, p1 %d (p0 headroom %d B, most after an XOFF %d B)",
			p0.DropHeadroom, p1.DropHeadroom, spec.Headroom(0), p0.PFCAfterXOFFMax)
	}
	if delivered != p0.RxPackets {
		t.Errorf("p0's af_packet ring lost %d of %d frames: the switch stalled longer than its ring lasts (see its lcore loop line)",
			delivered-p0.RxPackets, delivered)
	}
	// ACKs go the other way: the frames p0 received are the sender's.
	if p0.RxPackets != snd.Port.TxFrames || snd.Tx.RetxFrames != 0 {
		t.Errorf("the sender sent %d frames (%d retransmitted), the switch received %d on p0",
			snd.Port.TxFrames, snd.Tx.RetxFrames, p0.RxPackets)
	}
	if len(rcv.RxFlows) != 1 || rcv.RxFlows[0].Bytes != msgBytes {
		t.Errorf("receiver flows %+v: want one with %d bytes", rcv.RxFlows, msgBytes)
	}
	// switchd's PFC event log beside its JSON: one row per XOFF and XON of
	// p0's priority 3, as many as p0's activations and XON frames.
	b, err := os.ReadFile(filepath.Join(dir, swdaemon.PFCCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var xoffs, xons uint64
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 5 || f[1] != "0" || f[2] != "3" {
			t.Fatalf("pfc.csv row %q: want port 0's priority 3", l)
		}
		if f[3] == "xoff" {
			xoffs++
		} else {
			xons++
		}
	}
	t.Logf("switchd's pfc.csv: %d XOFF, %d XON rows", xoffs, xons)
	if lines[0] != swdaemon.PFCCSVHeader || xoffs != p0.PFCOnsets || xons != p0.ResumesSent || res.PFCRows != xoffs+xons ||
		res.Counters.PFCEventsDropped != 0 {
		t.Errorf("pfc.csv: header %q, %d XOFF and %d XON rows; p0 counted %d activations and %d XON frames; the JSON says %d rows, %d dropped",
			lines[0], xoffs, xons, p0.PFCOnsets, p0.ResumesSent, res.PFCRows, res.Counters.PFCEventsDropped)
	}
}

// afterXOFFHistText is a PFCAfterXOFFHist as "range: events" pairs, the
// empty buckets left out.
func afterXOFFHistText(h [switchd.AfterXOFFBuckets]uint64) string {
	var b strings.Builder
	for k, n := range h {
		if n == 0 {
			continue
		}
		lo, hi := 0, 1
		if k > 0 {
			lo, hi = 1<<(k-1), 1<<k
		}
		if k == len(h)-1 {
			fmt.Fprintf(&b, " >=%dKiB:%d", lo, n)
			continue
		}
		fmt.Fprintf(&b, " [%d,%d)KiB:%d", lo, hi, n)
	}
	return b.String()
}
