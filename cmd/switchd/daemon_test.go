package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/daemontest"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/daemon"
)

// vdevConfig is a 2-port rtc switch on two looping net_ring vdevs (each
// port's tx comes back on its rx), lcore 0 on CPU 1, with extra appended
// to the [switch] table and the given telemetry paths.
func vdevConfig(t *testing.T, dir, extraSwitch, csv, json string, mtu int) string {
	t.Helper()
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	t.Cleanup(func() { os.RemoveAll("/var/run/dpdk/ccbsd" + id) })
	f := daemontest.SwitchFile{IP: "10.0.255.254", Mode: "rtc", Lcores: []int{0},
		EALArgs: `["--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry", "--lcores=0@1", "--file-prefix=ccbsd` + id + `", "--log-level=lib.eal:error"]`,
		Mbufs:   4095, Switch: extraSwitch, Scheme: "dcqcn", CC: fmt.Sprintf("mtu = %d\n", mtu), CSV: csv, JSON: json}
	for i := range 2 {
		f.Ports = append(f.Ports, daemontest.SwitchPort{Name: fmt.Sprintf("p%d", i), Device: fmt.Sprintf("net_ring%d", i),
			MAC: fmt.Sprintf("02:00:00:00:ff:%02x", i), PeerMAC: fmt.Sprintf("02:00:00:00:00:%02x", i), LinkGbps: 10,
			Route: fmt.Sprintf("10.0.%d.0/24", i)})
	}
	return f.Write(t, filepath.Join(dir, "switch.toml"))
}

// proc is switchd run as a child process (the test binary in daemon mode).
type proc struct {
	cmd     *exec.Cmd
	lines   chan string
	out     strings.Builder
	exited  chan struct{}
	waitErr error
}

func startSwitchd(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{lines: make(chan string, 1024), exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), "SWITCHD_TEST_MAIN=1", "SWITCHD_ARGS="+strings.Join(args, " "))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		r.Close()
		p.waitErr = p.cmd.Wait()
		close(p.lines)
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitFor reads output lines until one starts with prefix (true) or the
// process exits or timeout passes (false).
func (p *proc) waitFor(prefix string, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return false
			}
			p.out.WriteString(l + "\n")
			if strings.HasPrefix(l, prefix) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// finish collects the rest of the output and the exit code (-1: killed).
func (p *proc) finish(t *testing.T, timeout time.Duration) int {
	t.Helper()
	p.waitFor("\x00never", timeout)
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Fatalf("switchd did not exit:\n%s", p.out.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func readResults(t *testing.T, path string) switchd.Results {
	t.Helper()
	var r switchd.Results
	daemontest.ReadJSON(t, path, &r)
	return r
}

// TestUnwritableOutputFailsAtStart: a JSON, CSV or PFC event log path that
// cannot be written fails before the loops run, naming the key (it used to fail at exit, after the
// run, losing every counter).
func TestUnwritableOutputFailsAtStart(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	dir := t.TempDir()
	for _, tc := range []struct {
		key, csv, json string
		args           []string
	}{
		{"telemetry.json", filepath.Join(dir, "q.csv"), filepath.Join(dir, "missing", "s.json"), nil},
		{"telemetry.csv", filepath.Join(dir, "missing", "q.csv"), filepath.Join(dir, "s.json"), nil},
		{"PFC event log", filepath.Join(dir, "q.csv"), filepath.Join(dir, "s.json"), []string{"-pfc-csv", filepath.Join(dir, "missing", "pfc.csv")}},
	} {
		cfg := vdevConfig(t, dir, "", tc.csv, tc.json, 1024)
		p := startSwitchd(t, append([]string{"-c", cfg, "-duration", "2s"}, tc.args...)...)
		begin := time.Now()
		ran := p.waitFor("switchd: running", 20*time.Second)
		rc := p.finish(t, 20*time.Second)
		if ran || rc == 0 || !strings.Contains(p.out.String(), tc.key) {
			t.Errorf("%s unwritable: ran %v, exit %d after %.1f s, want a refusal naming %s before running:\n%s",
				tc.key, ran, rc, time.Since(begin).Seconds(), tc.key, p.out.String())
		}
	}
}

// TestCheckpointsAndInterrupted: while switchd runs, its JSON is a
// checkpoint at most -checkpoint old (final false), so a SIGKILL keeps the
// counters up to then; after SIGTERM it is final, with interrupted and the
// signal; after -duration it is final and not interrupted.
func TestCheckpointsAndInterrupted(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	dir := t.TempDir()
	csvPath, jsonPath := filepath.Join(dir, "q.csv"), filepath.Join(dir, "s.json")
	cfg := vdevConfig(t, dir, "", csvPath, jsonPath, 1024)

	// SIGKILL: the last checkpoint survives.
	p := startSwitchd(t, "-c", cfg, "-checkpoint", "300ms")
	if !p.waitFor("switchd: running", 20*time.Second) {
		t.Fatalf("switchd did not start:\n%s", p.out.String())
	}
	time.Sleep(1500 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.finish(t, 10*time.Second)
	r := readResults(t, jsonPath)
	if r.Final || r.DurationS < 0.9 || len(r.Counters.Ports) != 2 {
		t.Errorf("after SIGKILL at 1.5 s: final %v, duration %.2f s, %d ports: want a checkpoint of >= 0.9 s", r.Final, r.DurationS, len(r.Counters.Ports))
	}
	if fi, err := os.Stat(csvPath); err != nil || fi.Size() < int64(len(daemon.CSVHeader)+100) {
		t.Errorf("after SIGKILL the CSV has %v bytes (%v): want the flushed samples", fi.Size(), err)
	}

	// SIGTERM: final, interrupted.
	p = startSwitchd(t, "-c", cfg)
	if !p.waitFor("switchd: running", 20*time.Second) {
		t.Fatalf("switchd did not start:\n%s", p.out.String())
	}
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if rc := p.finish(t, 10*time.Second); rc != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", rc, p.out.String())
	}
	r = readResults(t, jsonPath)
	if !r.Final || !r.Interrupted || r.Signal != "terminated" {
		t.Errorf("after SIGTERM: final %v interrupted %v signal %q", r.Final, r.Interrupted, r.Signal)
	}

	// -duration: final, not interrupted; the engine's time 0 on the wall
	// clock lies between the start of the command and its end.
	before := time.Now().UnixNano()
	p = startSwitchd(t, "-c", cfg, "-duration", "500ms")
	if rc := p.finish(t, 20*time.Second); rc != 0 {
		t.Fatalf("exit %d:\n%s", rc, p.out.String())
	}
	after := time.Now().UnixNano()
	r = readResults(t, jsonPath)
	if !r.Final || r.Interrupted || r.Signal != "" {
		t.Errorf("after -duration: final %v interrupted %v signal %q", r.Final, r.Interrupted, r.Signal)
	}
	if o := r.ClockOriginUnixNs; o < before || o > after {
		t.Errorf("clock_origin_unix_ns %d outside the run [%d, %d]", o, before, after)
	}
	// The PFC event log beside the JSON: its header, and as many rows as
	// the JSON says (none: nothing paused in this lossy run).
	if b, err := os.ReadFile(filepath.Join(dir, daemon.PFCCSVFile)); err != nil || !strings.HasPrefix(string(b), daemon.PFCCSVHeader+"\n") ||
		uint64(strings.Count(string(b), "\n")-1) != r.PFCRows {
		t.Errorf("pfc.csv beside the JSON: %q (%v), want its header and %d rows", b, err, r.PFCRows)
	}
	if !strings.Contains(p.out.String(), `"mbufs_in_use": 0}`) {
		t.Errorf("mbufs not all returned:\n%s", p.out.String())
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestCheckBringsUp: -check brings up the EAL, the lcores, the mempool and
// the ports (link, flow control, speed) without traffic; it refuses lcores
// the EAL does not enable and a mempool the memory cannot hold, which the
// syntax check alone accepts; jumbo MTUs get mbufs that hold their frames.
func TestCheckBringsUp(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	dir := t.TempDir()
	good := vdevConfig(t, dir, "", filepath.Join(dir, "q.csv"), filepath.Join(dir, "s.json"), 8192)
	p := startSwitchd(t, "-c", good, "-check")
	if rc := p.finish(t, 30*time.Second); rc != 0 {
		t.Fatalf("-check of a good config: exit %d\n%s", rc, p.out.String())
	}
	out := p.out.String()
	t.Logf("-check:\n%s", out)
	for _, want := range []string{`"link_mbps": 10000`, `"nic_flow_control"`, `"data_room_bytes": 9216`, "devices, lcores and memory checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("-check output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s.json")); err == nil {
		t.Error("-check wrote the results file")
	}
	for _, tc := range []struct{ name, extra, want string }{
		{"lcore", "", "lcores 3"},
		{"memory", "", "mempool"},
	} {
		d := t.TempDir()
		cfg := vdevConfig(t, d, tc.extra, "", "", 1024)
		b, _ := os.ReadFile(cfg)
		text := string(b)
		switch tc.name {
		case "lcore":
			text = strings.Replace(text, "lcores = [0]", "lcores = [3]", 1)
		case "memory":
			text = strings.Replace(text, "mbufs = 4095", "mbufs = 1000000", 1)
		}
		os.WriteFile(cfg, []byte(text), 0o644)
		if rc := run([]string{"-c", cfg, "-check-syntax"}); rc != 0 {
			t.Fatalf("%s: the syntax check refused it (exit %d): the test needs a file that only bring-up refuses", tc.name, rc)
		}
		p := startSwitchd(t, "-c", cfg, "-check")
		rc := p.finish(t, 30*time.Second)
		if rc == 0 || !strings.Contains(p.out.String(), tc.want) {
			t.Errorf("-check with a bad %s: exit %d, want a failure naming %q:\n%s", tc.name, rc, tc.want, p.out.String())
		}
	}
}

// TestShardedDaemon runs switchd in the sharded mode, one rx lcore and two
// tx+CC lcores (one per port), for 1 s: it starts, runs and stops cleanly
// with every mbuf returned and both ports' counters in its results.
func TestShardedDaemon(t *testing.T) {
	daemontest.SkipUnlessRoot(t, "switchd")
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "s.json")
	cfg := vdevConfig(t, dir, "", filepath.Join(dir, "q.csv"), jsonPath, 1024)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "mode = \"rtc\"\nlcores = [0]", "mode = \"sharded\"\ntx_lcores = 2\nlcores = [0, 1, 2]", 1)
	text = strings.Replace(text, "--lcores=0@1", "--lcores=0@1,1@0,2@1", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSwitchd(t, "-c", cfg, "-duration", "1s")
	if rc := p.finish(t, 30*time.Second); rc != 0 {
		t.Fatalf("exit %d:\n%s", rc, p.out.String())
	}
	out := p.out.String()
	if !strings.Contains(out, `"mode": "sharded"`) || !strings.Contains(out, `"mbufs_in_use": 0}`) {
		t.Errorf("want a sharded run that returned every mbuf:\n%s", out)
	}
	if r := readResults(t, jsonPath); !r.Final || len(r.Counters.Ports) != 2 {
		t.Errorf("results: final %v, %d ports", r.Final, len(r.Counters.Ports))
	}
}
