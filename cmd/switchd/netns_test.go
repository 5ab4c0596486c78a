package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/metrics/metricstest"
)

// The test binary doubles as the switchd binary: with SWITCHD_TEST_MAIN=1 it
// runs main's logic with the arguments in SWITCHD_ARGS, so that the netns test
// runs the daemon as its own process (own EAL, signals, exit code) without a
// separate go build.
func TestMain(m *testing.M) {
	if os.Getenv("SWITCHD_TEST_MAIN") == "1" {
		os.Exit(run(strings.Fields(os.Getenv("SWITCHD_ARGS"))))
	}
	os.Exit(m.Run())
}

func TestCheckExampleConfigs(t *testing.T) {
	for _, f := range []string{"../../configs/switch-cloudlab.toml", "../../configs/switch-vdev.toml"} {
		if rc := run([]string{"-c", f, "-check-syntax"}); rc != 0 {
			t.Errorf("%s: -check-syntax exit %d", f, rc)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[switch]\nmode = \"fast\"\n"), 0o644)
	if rc := run([]string{"-c", bad, "-check-syntax"}); rc != 1 {
		t.Errorf("bad config: exit %d, want 1", rc)
	}
}

func sh(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestNetnsPeers puts two Linux network namespaces on veth pairs whose host ends
// are switch ports (net_af_packet), then checks that ping crosses the switch
// and that iperf3 -u traffic is forwarded and counted.
//
//	ns A eth0 10.77.1.2 == veth == ccbA (net_af_packet0) p0 [switchd] p1 (net_af_packet1) ccbB == veth == eth0 10.77.2.2 ns B
func TestNetnsPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("netns test skipped in -short mode")
	}
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	nsA, nsB := "ccbA"+id, "ccbB"+id
	vA, vB := "ccbA"+id, "ccbB"+id
	if out, err := exec.Command("ip", "netns", "add", nsA).CombinedOutput(); err != nil {
		t.Skipf("cannot create network namespaces (needs root and iproute2): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", nsA).Run() })
	sh(t, "ip", "netns", "add", nsB)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", nsB).Run() })
	for _, tool := range []string{"ping", "iperf3", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed (scripts/setup.sh installs it)", tool)
		}
	}
	type peer struct {
		ns, veth, ip, net, gw, mac, swMAC string
	}
	peers := []peer{
		{nsA, vA, "10.77.1.2", "10.77.1.0/24", "10.77.1.1", "02:77:00:00:00:01", "02:77:00:00:ff:01"},
		{nsB, vB, "10.77.2.2", "10.77.2.0/24", "10.77.2.1", "02:77:00:00:00:02", "02:77:00:00:ff:02"},
	}
	for _, p := range peers {
		sh(t, "ip", "link", "add", p.veth, "type", "veth", "peer", "name", "eth0", "netns", p.ns)
		t.Cleanup(func() { exec.Command("ip", "link", "del", p.veth).Run() })
		os.WriteFile("/proc/sys/net/ipv6/conf/"+p.veth+"/disable_ipv6", []byte("1"), 0o644)
		sh(t, "ip", "link", "set", p.veth, "up")
		in := func(args ...string) { sh(t, append([]string{"ip", "netns", "exec", p.ns}, args...)...) }
		in("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
		in("ip", "link", "set", "eth0", "address", p.mac)
		in("ip", "addr", "add", p.ip+"/24", "dev", "eth0")
		in("ip", "link", "set", "eth0", "up")
		in("ip", "link", "set", "lo", "up")
		// The switch computes no L4 checksums: the peers must send them whole.
		in("ethtool", "-K", "eth0", "tx", "off")
		in("ip", "route", "add", "10.77.0.0/16", "via", p.gw)
		in("ip", "neigh", "replace", p.gw, "lladdr", p.swMAC, "dev", "eth0", "nud", "permanent")
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "counters.json")
	csvPath := filepath.Join(dir, "queue.csv")
	sw := daemontest.SwitchFile{IP: "10.77.0.254", Mode: "rtc", Lcores: []int{1},
		EALArgs: `["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0-1", "--log-level=lib.eal:error"]`,
		Mbufs:   4095, Scheme: "dcqcn", CSV: csvPath, JSON: jsonPath, Quiet: true}
	for i, p := range peers {
		sw.Ports = append(sw.Ports, daemontest.SwitchPort{Name: string(rune('a' + i)), Device: fmt.Sprintf("net_af_packet%d,iface=%s", i, p.veth),
			MAC: p.swMAC, PeerMAC: p.mac, LinkGbps: 1, Route: p.net})
	}
	cfgPath := sw.Write(t, filepath.Join(dir, "switch.toml"))

	metricsAddr := metricstest.FreeLoopbackAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SWITCHD_TEST_MAIN=1", "SWITCHD_ARGS=-c "+cfgPath+" -metrics "+metricsAddr)
	// The log ("switchd: running") goes to stderr: the scanner reads both,
	// and keeps what it read for the failure messages.
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	stdout := pr
	var stderr syncBuilder
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})
	lines := make(chan string, 64)
	go func() {
		go func() { exited <- cmd.Wait(); pw.Close() }()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(15 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("switchd exited before running: %s", stderr.String())
			}
			if strings.HasPrefix(l, "switchd: running") {
				break wait
			}
		case <-timeout:
			t.Fatalf("switchd did not start: %s", stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()

	ns := func(n string, args ...string) *exec.Cmd {
		return exec.Command("ip", append([]string{"netns", "exec", n}, args...)...)
	}
	if out, err := ns(nsA, "ping", "-c", "3", "-i", "0.2", "-W", "2", peers[1].ip).CombinedOutput(); err != nil {
		t.Fatalf("ping across the switch failed: %v\n%s", err, out)
	}
	srv := ns(nsB, "iperf3", "-s", "-1", "-p", "5399")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	time.Sleep(300 * time.Millisecond)
	out, err := ns(nsA, "iperf3", "-u", "-c", peers[1].ip, "-p", "5399", "-b", "20M", "-l", "1000", "-t", "1", "--json").Output()
	if err != nil {
		t.Fatalf("iperf3 client: %v\n%s", err, out)
	}
	var ipr struct {
		End struct {
			Sum struct {
				Packets     int64 `json:"packets"`
				LostPackets int64 `json:"lost_packets"`
			} `json:"sum"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &ipr); err != nil {
		t.Fatalf("iperf3 json: %v", err)
	}
	sent, lost := ipr.End.Sum.Packets, ipr.End.Sum.LostPackets
	t.Logf("iperf3 -u: %d datagrams, %d lost", sent, lost)
	if sent < 1000 || lost*10 > sent {
		t.Errorf("iperf3 -u through the switch: %d datagrams, %d lost", sent, lost)
	}
	// The running switch's /metrics shows the traffic (counters published
	// every millisecond of the switch's time).
	text, err := metricstest.Scrape(metricsAddr)
	if err != nil {
		t.Fatalf("scrape of the running switch: %v", err)
	}
	want := float64(sent - lost + 3)
	for _, s := range []struct{ name, port string }{
		{"ccbed_switch_rx_packets_total", "a"}, {"ccbed_switch_tx_packets_total", "b"},
		{"ccbed_switch_rx_bytes_total", "a"}, {"ccbed_switch_tx_bytes_total", "b"},
	} {
		if v, ok := metricstest.Value(text, s.name, `port="`+s.port+`"`); !ok || v < want {
			t.Errorf("scrape: %s{port=%q} = %v (present %v), want >= %v", s.name, s.port, v, ok, want)
		}
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("switchd exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("switchd did not stop on SIGTERM")
	}
	res := readResults(t, jsonPath)
	a, bp := res.Counters.Ports[0], res.Counters.Ports[1]
	t.Logf("port a: rx %d tx %d; port b: rx %d tx %d; drops %d/%d", a.RxPackets, a.TxPackets, bp.RxPackets, bp.TxPackets, a.DropsTotal, bp.DropsTotal)
	// A -> B: ping requests and the datagrams enter on a and leave on b.
	if want := uint64(sent - lost + 3); a.RxPackets < want || bp.TxPackets < want {
		t.Errorf("switch counted rx(a) %d tx(b) %d, want >= %d", a.RxPackets, bp.TxPackets, want)
	}
	if fi, err := os.Stat(csvPath); err != nil || fi.Size() < 100 {
		t.Errorf("telemetry CSV missing or empty: %v", err)
	}
}

// syncBuilder is a strings.Builder that the reader goroutine writes while
// the test reads it.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
