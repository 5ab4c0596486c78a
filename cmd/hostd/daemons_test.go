package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/hostd"
	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/switchd"
)

// hostdConfigEnv, when set, makes the test binary the hostd daemon: TestMain runs
// main's logic on the file it names, so that TestDaemonsOverVeth runs each host
// as its own process (own EAL, signals, exit code) without a separate go build.
const hostdConfigEnv = "HOSTD_TEST_CONFIG"

// hostdStartAtEnv, with hostdConfigEnv, is the daemon's -start-at.
const hostdStartAtEnv = "HOSTD_TEST_START_AT"

func TestMain(m *testing.M) {
	if args := os.Getenv(hostdArgsEnv); args != "" {
		os.Exit(command(strings.Fields(args)))
	}
	if path := os.Getenv(hostdConfigEnv); path != "" {
		if err := run(path, os.Getenv(hostdStartAtEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "hostd:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// daemon is one child process with its combined stdout and stderr.
type daemon struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	// ready is closed at the first output line starting with the readiness
	// prefix given to startDaemon (never when it is empty).
	ready chan struct{}
	done  chan struct{} // closed once the process has exited; err is then set
	err   error
	// logged: the test has logged the output already; the cleanup does not
	// repeat it on failure.
	logged bool
}

// startDaemon runs name's command line argv with extra environment env; a line
// of its output starting with readyPrefix closes d.ready. The process is killed
// in t's cleanup if it is still running.
func startDaemon(t *testing.T, name, readyPrefix string, env []string, argv ...string) *daemon {
	t.Helper()
	d := &daemon{name: name, ready: make(chan struct{}), done: make(chan struct{})}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = append(os.Environ(), env...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stdout, d.cmd.Stderr = w, w
	if err := d.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("%s: %v", name, err)
	}
	w.Close()
	go func() {
		sc := bufio.NewScanner(r)
		isReady := false
		for sc.Scan() {
			l := sc.Text()
			d.mu.Lock()
			d.out.WriteString(l + "\n")
			d.mu.Unlock()
			if !isReady && readyPrefix != "" && strings.HasPrefix(l, readyPrefix) {
				isReady = true
				close(d.ready)
			}
		}
		io.Copy(io.Discard, r)
		r.Close()
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() && !d.logged {
			t.Logf("%s output:\n%s", d.name, d.output())
		}
	})
	return d
}

func (d *daemon) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// wait waits up to timeout for the process to exit and fails t unless it
// exited 0.
func (d *daemon) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(timeout):
		t.Fatalf("%s still running after %v:\n%s", d.name, timeout, d.output())
	}
	if d.err != nil {
		t.Fatalf("%s exit: %v\n%s", d.name, d.err, d.output())
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemon) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-d.done:
		t.Fatalf("%s exited before SIGTERM (%v):\n%s", d.name, d.err, d.output())
	default:
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("%s: SIGTERM: %v", d.name, err)
	}
	d.wait(t, timeout)
}

func mustRun(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// vethMAC reads the MAC of interface dev in network namespace ns.
func vethMAC(tb testing.TB, ns, dev string) string {
	tb.Helper()
	f := strings.Fields(mustRun(tb, "ip", "-n", ns, "-o", "link", "show", "dev", dev))
	for i, w := range f {
		if w == "link/ether" && i+1 < len(f) {
			return f[i+1]
		}
	}
	tb.Fatalf("no MAC in ip link output for %s/%s: %v", ns, dev, f)
	return ""
}

// hasPacketSocket reports whether process pid has entered network namespace
// ns and that namespace has a packet socket: the af_packet PMD of a daemon alone
// in its namespace has opened its interface.
func hasPacketSocket(pid int, ns string) bool {
	want, err1 := os.Stat(filepath.Join("/var/run/netns", ns))
	got, err2 := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err1 != nil || err2 != nil || !os.SameFile(want, got) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/packet", pid))
	return err == nil && strings.Count(strings.TrimSpace(string(b)), "\n") >= 1
}

// TestDaemonsOverVeth is the real-NIC path end to end, with veth pairs for
// cables: one switchd and two hostd processes, each its own DPDK primary
// process (--no-huge, one lcore), whose ports are net_af_packet vdevs on veths,
// each process in its own network namespace:
//
//	ns H0                     ns S                                  ns H1
//	sender 10.78.1.2          switchd (rocc)                        receiver 10.78.2.2
//	af_packet0 H0 == veth == S0 af_packet0 p0 -- p1 af_packet1 S1 == veth == H1 af_packet0
//	400 Mb/s                  200 Mb/s per port                     200 Mb/s
//
// The port to the receiver is a 2:1 bottleneck, so its queue builds and the
// switch's RoCC CP sends the sender rate messages. The sender posts one 1 MiB
// message; the test checks its FCT record, that every byte was acknowledged,
// the switch's forwarding and feedback counters on both ports, that switchd
// returned every mbuf, and that every process exits 0 (the sender after
// duration_s, the receiver and switchd on SIGTERM).
//
// Why RoCC at these rates: its fair rate is counted in Delta_F = 10 Mb/s units
// above F_min = 10 units, so any link above 100 Mb/s has a valid parameter set
// (the queue thresholds scale with the link; at exactly 100 Mb/s F_max = F_min
// is rejected), and its feedback goes from the switch straight to the sender,
// so every rate message crosses two processes, not three (DCQCN's needs the
// switch to mark and the receiver to send a CNP; it is not exercised here).
func TestDaemonsOverVeth(t *testing.T) {
	r := newVethRig(t, "ccbd", 2)
	h0, h1, macS0, macS1 := r.hIf[0], r.hIf[1], r.swMAC[0], r.swMAC[1]
	switchdBin := buildSwitchd(t)
	dir := t.TempDir()

	const (
		senderIP   = "10.78.1.2"
		receiverIP = "10.78.2.2"
		msgBytes   = 1 << 20
		mtu        = 1024
		durationS  = 3.0
	)
	swJSON, swCSV := filepath.Join(dir, "switch.json"), filepath.Join(dir, "switch.csv")
	swFile := r.switchFile(t, "10.78", 4095, "", 0.2, 0.2)
	swFile.Scheme, swFile.CSV, swFile.JSON = "rocc", swCSV, swJSON
	// The receiver runs until SIGTERM (duration_s 0); the sender's message
	// starts 200 ms into its run.
	rxCfg := hostTOML(dir, vethHost{name: "receiver", ip: receiverIP, gatewayMAC: macS1,
		eal: r.eal(t, "h1", "0", "net_af_packet0,iface="+h1), linkGbps: 0.2, mtu: mtu, scheme: "rocc", rtoUs: 20000, nakUs: 5000})
	txCfg := hostTOML(dir, vethHost{name: "sender", ip: senderIP, gatewayMAC: macS0,
		eal: r.eal(t, "h0", "0", "net_af_packet0,iface="+h0), linkGbps: 0.4, durationS: durationS, mtu: mtu, scheme: "rocc", rtoUs: 20000, nakUs: 5000,
		flows: fmt.Sprintf(`
[[host.flows]]
id = 1
dst = "%s"
size_bytes = %d
start_us = 200000
`, receiverIP, msgBytes)})
	swPath, rxPath, txPath := swFile.Write(t, filepath.Join(dir, "switch.toml")), writeFile(t, dir, "receiver.toml", rxCfg), writeFile(t, dir, "sender.toml", txCfg)

	begin := time.Now()
	sw := r.startSwitchd(t, switchdBin, swPath)
	rx := r.startHost(t, "receiver", 1, rxPath, time.Time{})
	// The sender waits for a common start instant, as on real nodes.
	startAt := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	tx := r.startHost(t, "sender", 0, txPath, startAt)
	tx.wait(t, time.Duration(durationS*float64(time.Second))+18*time.Second)
	rx.stop(t, 10*time.Second)
	sw.stop(t, 10*time.Second)
	t.Logf("three daemons ran for %.1f s", time.Since(begin).Seconds())
	for _, d := range []*daemon{sw, rx, tx} {
		t.Logf("%s:\n%s", d.name, strings.TrimSpace(d.output()))
		d.logged = true
	}

	// The sender's time 0 is the start instant, give or take its wake-up:
	// never before it, and (how late is the scheduler's call, which
	// testbed collect judges against the stall bound) not a whole run
	// after it, which would be a wait for something else.
	var info hostd.RunInfo
	daemontest.ReadJSON(t, filepath.Join(dir, "sender", hostd.RunInfoFile), &info)
	t.Logf("sender run.json: %+v (clock offset %s)", info, info.ClockOffset)
	if late := info.T0UnixNs - startAt.UnixNano(); info.StartAtUnixNs != startAt.UnixNano() || late < 0 || late > int64(durationS*1e9) {
		t.Errorf("sender: start instant %d, time 0 at %d (%d ns late): want the instant %d and time 0 after it, within the run's %g s",
			info.StartAtUnixNs, info.T0UnixNs, late, startAt.UnixNano(), durationS)
	}
	if info.ClockOffset.OffsetNs == nil && info.ClockOffset.Source == "" {
		t.Errorf("sender: clock offset unknown without a reason")
	}
	if info.ReadyUnixNs == 0 || info.ReadyUnixNs > info.StartAtUnixNs || info.DurationS < durationS*0.9 {
		t.Errorf("sender: ready at %d, instant %d, ran %.3f s (want ready before the instant, about %g s)",
			info.ReadyUnixNs, info.StartAtUnixNs, info.DurationS, durationS)
	}

	// The sender: one FCT row for the message, every byte acknowledged.
	f, err := os.Open(filepath.Join(dir, "sender", "fct.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || strings.Join(rows[0], ",") != hostd.FCTCSVHeader {
		t.Fatalf("sender fct.csv: want a header and one row, got %q", rows)
	}
	// flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority
	fctUs, _ := strconv.ParseFloat(rows[1][5], 64)
	if rows[1][0] != "1" || rows[1][3] != strconv.Itoa(msgBytes) || !(fctUs > 0) || fctUs > durationS*1e6 || rows[1][7] != "3" {
		t.Errorf("sender fct.csv row %q: want flow 1, %d bytes, 0 < fct_us < %g, priority 3 (the default)", rows[1], msgBytes, durationS*1e6)
	}
	var snd, rcv hostd.Report
	daemontest.ReadJSON(t, filepath.Join(dir, "sender", "counters.json"), &snd)
	daemontest.ReadJSON(t, filepath.Join(dir, "receiver", "counters.json"), &rcv)
	t.Logf("sender: fct %.0f us (slowdown %s); tx %+v; rx acks %d naks %d rocc_rate %d; port %+v",
		fctUs, rows[1][6], snd.Tx, snd.Rx.Acks, snd.Rx.Naks, snd.Rx.RoCCRate, snd.Port)
	t.Logf("receiver: rx %+v; %d control frames sent; flows %+v; port %+v", rcv.Rx, rcv.Tx.ControlFrames, rcv.RxFlows, rcv.Port)
	frames := uint64((msgBytes + mtu - 1) / mtu)
	if snd.Tx.FlowsStarted != 1 || snd.Tx.FlowsCompleted != 1 || len(snd.Active) != 0 {
		t.Errorf("sender: %d flows started, %d completed, %d still active (%+v): want 1, 1, 0",
			snd.Tx.FlowsStarted, snd.Tx.FlowsCompleted, len(snd.Active), snd.Active)
	}
	if snd.Tx.DataFrames < frames || snd.Tx.PayloadBytes < msgBytes || snd.Rx.Acks == 0 {
		t.Errorf("sender sent %d data frames (%d payload bytes) and got %d ACKs: want >= %d frames, >= %d bytes, > 0 ACKs",
			snd.Tx.DataFrames, snd.Tx.PayloadBytes, snd.Rx.Acks, frames, msgBytes)
	}
	if len(rcv.RxFlows) != 1 || rcv.RxFlows[0].Src != senderIP || rcv.RxFlows[0].Bytes != msgBytes || rcv.RxFlows[0].Messages != 1 {
		t.Errorf("receiver flows %+v: want one from %s with %d bytes in order, 1 message", rcv.RxFlows, senderIP, msgBytes)
	}
	if rcv.Tx.ControlFrames == 0 || snd.Rx.Acks > rcv.Tx.ControlFrames {
		t.Errorf("receiver sent %d control frames, sender got %d ACKs", rcv.Tx.ControlFrames, snd.Rx.Acks)
	}

	// The switch: data in on p0 and out on p1, ACKs in on p1 and out on p0.
	var res switchd.Results
	daemontest.ReadJSON(t, swJSON, &res)
	if len(res.Counters.Ports) != 2 {
		t.Fatalf("switch counters: %d ports, want 2", len(res.Counters.Ports))
	}
	p0, p1 := res.Counters.Ports[0], res.Counters.Ports[1]
	t.Logf("switch p0: rx %d tx %d drops %d rocc_rate_sent %d feedback_no_route %d queue_max %d B; p1: rx %d tx %d drops %d rocc_rate_sent %d queue_max %d B fair %.3f Gb/s",
		p0.RxPackets, p0.TxPackets, p0.DropsTotal, p0.RoCCRateSent, p0.FeedbackNoPort, p0.QueueMaxBytes,
		p1.RxPackets, p1.TxPackets, p1.DropsTotal, p1.RoCCRateSent, p1.QueueMaxBytes, p1.FairRateGbps)
	// Every frame of the message crossed p0 -> p1 at least once; every data
	// frame the receiver counted left p1; every ACK and rate message the sender
	// counted left p0.
	if p0.RxPackets < frames || p1.TxPackets < rcv.Rx.Data || p0.RxPackets < p1.TxPackets {
		t.Errorf("switch forwarded rx(p0) %d -> tx(p1) %d; the message has %d frames, the receiver got %d",
			p0.RxPackets, p1.TxPackets, frames, rcv.Rx.Data)
	}
	if p1.RxPackets < snd.Rx.Acks || p0.TxPackets < snd.Rx.Acks+snd.Rx.RoCCRate {
		t.Errorf("switch forwarded rx(p1) %d -> tx(p0) %d, the sender got %d ACKs and %d rate messages",
			p1.RxPackets, p0.TxPackets, snd.Rx.Acks, snd.Rx.RoCCRate)
	}
	// The 2:1 bottleneck queues frames on p1 (one frame at 200 Mb/s outlasts
	// RoCC's T = 40 us), so its CP sends the sender rate messages through p0.
	if sent := p0.RoCCRateSent + p1.RoCCRateSent; p1.RoCCRateSent == 0 || snd.Rx.RoCCRate == 0 || snd.Rx.RoCCRate > sent {
		t.Errorf("RoCC rate messages: p1 sent %d (p0 %d), the sender counted %d: want > 0 sent and 0 < received <= sent",
			p1.RoCCRateSent, p0.RoCCRateSent, snd.Rx.RoCCRate)
	}
	if !strings.Contains(sw.output(), `"mbufs_in_use": 0}`) {
		t.Errorf("switchd did not return every mbuf to its pool")
	}
	if p0.DropMalformed+p1.DropMalformed+p0.DropNoRoute+p1.DropNoRoute != 0 {
		t.Errorf("switch dropped malformed / unroutable frames: p0 %+v p1 %+v", p0, p1)
	}
}

// TestStartAtChecked: -check refuses a start instant in the past or too far
// ahead, with a message that says so, before DPDK starts.
func TestStartAtChecked(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.toml")
	os.WriteFile(p, []byte("port = \"net_null0\"\nlcores = [0]\n[host]\nname = \"h0\"\nip = \"10.0.0.1\"\ngateway_mac = \"02:00:00:00:00:02\"\n"), 0o644)
	f, err := hostdaemon.LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if at, err := startInstant(f, "", now); err != nil || !at.IsZero() {
		t.Errorf("no instant: %v, %v", at, err)
	}
	if _, err := startInstant(f, now.Add(-time.Second).Format(time.RFC3339Nano), now); err == nil || !strings.Contains(err.Error(), "in the past") {
		t.Errorf("past instant: %v", err)
	}
	if _, err := startInstant(f, strconv.FormatInt(now.Add(time.Hour).UnixNano(), 10), now); err == nil {
		t.Error("an instant an hour ahead was accepted")
	}
	at, err := startInstant(f, strconv.FormatInt(now.Add(5*time.Second).UnixNano(), 10), now)
	if err != nil || at.Sub(now) != 5*time.Second {
		t.Errorf("5 s ahead: %v, %v", at, err)
	}
	f.StartAtUnixNs = now.Add(-time.Second).UnixNano()
	if _, err := startInstant(f, "", now); err == nil {
		t.Error("a past start_at_unix_ns in the file was accepted")
	}
}
