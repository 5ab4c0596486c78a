package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/testbed/report"
	"github.com/ccbed/ccbed/wire"
)

const small = `
[experiment]
name = "e2e"
duration_ms = 150
sample_us = 500

[topology]
hosts = 4
link_gbps = 1
buffer_bytes = 1_000_000
mtu_bytes = 1024

[cc]
scheme = "rocc"
expected_flows = 3

[cc.params]
delta_f_bps = 1e6
t_ns = 500_000
` + threeToOne + `size_bytes = 200_000
start_us = 20_000
`

// threeToOne is the [[flows]] of a 3-to-1: hosts 0, 1 and 2 send flows 1,
// 2 and 3 to host 3. It ends inside flow 3's table, so that an experiment
// may give that flow more keys after it.
const threeToOne = `
[[flows]]
id = 1
src = 0
dst = 3

[[flows]]
id = 2
src = 1
dst = 3

[[flows]]
id = 3
src = 2
dst = 3
`

func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name, edit, from, key string
		line                  int
	}{
		{"no name", `name = "e2e"`, `name = ""`, "experiment.name", 3},
		{"bad scheme", `scheme = "rocc"`, `scheme = "roc"`, "cc.scheme", 14},
		{"host range", "src = 2", "src = 7", "flows[2].src", 33},
		{"self flow", "src = 1\ndst = 3", "src = 1\ndst = 1", "flows[1].dst", 29},
		{"unknown key", "sample_us = 500", "sample_usec = 500", "experiment.sample_usec", 5},
		{"bad rate", "link_gbps = 1", "link_gbps = -1", "topology.link_gbps", 9},
		{"bad priority", "start_us = 20_000", "start_us = 20_000\npriority = 8", "flows[2].priority", 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(small, tc.edit, tc.from, 1)
			_, err := Decode("x.toml", text, ".")
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line != tc.line || ce.File != "x.toml" {
				t.Fatalf("got %v, want x.toml:%d: %s", err, tc.line, tc.key)
			}
		})
	}
}

// mac formats a MAC as the configs write it.
func mac(m [6]byte) string { return net.HardwareAddr(m[:]).String() }

func TestConfigsMapping(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	sc := e.SwitchConfig()
	if len(sc.Ports) != 4 || len(sc.Routes) != 4 || sc.Ports[3].LinkGbps != 1 || sc.CC.Scheme != "rocc" ||
		sc.Routes[2].Prefix != "10.0.0.3/32" || sc.Routes[2].Port != "p2" ||
		sc.Ports[2].PeerMAC != mac(HostMAC(2)) || sc.CC.Params["rocc"]["t_ns"] != int64(500_000) {
		t.Fatalf("switch config %+v", sc)
	}
	hc := e.HostConfigs()
	if len(hc) != 4 || len(hc[0].Flows) != 1 || len(hc[3].Flows) != 0 || hc[2].Flows[0].SizeBytes != 200_000 ||
		hc[0].Flows[0].Dst != 0x0a000004 || hc[1].GatewayMAC != wire.MAC(SwitchPortMAC(1)) || hc[0].Scheme != "rocc" {
		t.Fatalf("host configs %+v", hc)
	}
	// 1 MB at 1 Gb/s drains in 8000 us: timeouts wait for a full queue. The
	// base RTT is the topology's (no base_rtt_us in the file).
	p, err := e.Plan()
	if err != nil {
		t.Fatal(err)
	}
	base := p.BaseRTTNs
	if base < 15_000 || base > 25_000 || hc[0].BaseRTTNs != base {
		t.Fatalf("derived base RTT %v ns (hosts %v): want one 1 Gb/s round trip of a frame and its ACK, ~20 us", base, hc[0].BaseRTTNs)
	}
	if want := 2*(base+8_000_000) + 100_000; hc[0].RTONs != want || hc[0].NakIntervalNs != want {
		t.Fatalf("RTO %v ns, NAK interval %v ns, want %v", hc[0].RTONs, hc[0].NakIntervalNs, want)
	}
	args := strings.Join(e.EALArgs(), " ")
	if !strings.Contains(args, "--no-huge") || !strings.Contains(args, "--lcores=0@0,1@1") {
		t.Fatalf("EAL args %q", args)
	}
}

// TestFlowPriorities: a flow's priority reaches its sender's config, flows
// without one keep their host's, and a host of priority 0 (which hostd's
// pfc_priority cannot say: 0 is its default, 3) has its flows name 0.
func TestFlowPriorities(t *testing.T) {
	text := strings.Replace(small, "start_us = 20_000", "start_us = 20_000\npriority = 1", 1) +
		"\n[[host_priority]]\nhosts = [0]\npriority = 0\n\n[[host_priority]]\nhosts = [1]\npriority = 5\n"
	e, err := Decode("x.toml", text, ".")
	if err != nil {
		t.Fatal(err)
	}
	hc := e.HostConfigs()
	prio := func(p *int) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	got := fmt.Sprintf("%s %d, %s %d, %s %d", prio(hc[0].Flows[0].Priority), hc[0].PFCPriority,
		prio(hc[1].Flows[0].Priority), hc[1].PFCPriority, prio(hc[2].Flows[0].Priority), hc[2].PFCPriority)
	if want := "0 0, nil 5, 1 3"; got != want {
		t.Fatalf("flow priority and host pfc_priority of hosts 0, 1, 2: %s, want %s", got, want)
	}
}

func TestDefaultHostLcores(t *testing.T) {
	for _, tc := range []struct {
		sw          uint
		hosts, cpus int
		want        string
	}{
		{0, 4, 2, "[1]"},
		{0, 4, 1, "[1]"},
		{0, 4, 16, "[1 2 3 4]"},
		{0, 3, 3, "[1 2]"},
		{2, 3, 16, "[0 1 3]"},
	} {
		if got := fmt.Sprint(defaultHostLcores(tc.sw, tc.hosts, tc.cpus)); got != tc.want {
			t.Errorf("switch %d, %d hosts, %d CPUs: %s, want %s", tc.sw, tc.hosts, tc.cpus, got, tc.want)
		}
	}
}

func TestEveryExampleExperimentValidates(t *testing.T) {
	files, _ := filepath.Glob("../configs/experiments/*.toml")
	bench, _ := filepath.Glob("../configs/bench/*.toml") // benchmarks: validated, not run by the tests
	files = append(files, bench...)
	if len(files) == 0 {
		t.Fatal("no experiments in configs/experiments")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestRunEndToEnd runs a short RoCC experiment on DPDK virtual devices and
// checks the results contract: flows delivered bytes, the congested port's queue
// and feedback, files and plots written, every mbuf returned.
//
// What it checks needs the hosts' lcore to have run: a run of a fixed wall
// time (the file's 150 ms) proved nothing on two busy CPUs, where that lcore
// once got no CPU for the whole run (it stalled 215 ms in a 208 ms run) and no
// flow delivered anything. So the run lasts until its finite flow (flow 3,
// 200 KB) is done, as the hosts report it in the run's progress (about every
// second), bounded by a duration of 60 s it cannot reach unless the flow never
// finishes; ending it then is an interruption, which the results say.
func TestRunEndToEnd(t *testing.T) {
	const bound = 60 * time.Second
	e, err := Decode("e2e.toml", strings.Replace(small, "duration_ms = 150", fmt.Sprintf("duration_ms = %d", bound.Milliseconds()), 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.OutputDir = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	res, err := RunWith(ctx, e, &out, RunOptions{Progress: func(p fabric.Progress) {
		if p.FlowsDone > 0 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Errorf("the run ended at its %v bound: flow 3 was never reported done", bound)
	}
	t.Log(out.String())
	if res.MbufsLeaked != 0 {
		t.Errorf("%d mbufs leaked", res.MbufsLeaked)
	}
	s := res.Summary
	if s.Experiment != "e2e" || s.Scheme != "rocc" || s.DurationS < 0.1 {
		t.Errorf("summary header %+v", s)
	}
	var total int64
	for _, f := range s.Flows {
		total += f.Bytes
		if f.Bytes <= 0 {
			t.Errorf("flow %d delivered nothing", f.ID)
		}
	}
	if len(s.Flows) != 3 {
		t.Fatalf("flows %+v", s.Flows)
	}
	for _, f := range s.Flows {
		if f.ID == 3 && (f.Bytes != 200_000 || f.FCTUs.Or(0) <= 0) {
			t.Errorf("finite flow: %+v", f)
		}
	}
	// Queue counters are consistent with the traffic: only the receiver's port
	// builds a queue, it is the one whose CP sends rate messages, and the switch
	// forwarded at least what the flows delivered.
	if len(s.Ports) != 4 {
		t.Fatalf("ports %+v", s.Ports)
	}
	for i, p := range s.Ports {
		if i < 3 && (p.P99QueueBytes.Or(0) > 10_000 || p.CNPsSent != 0) {
			t.Errorf("port %d (toward a sender): %+v", i, p)
		}
	}
	// Only properties that hold however loaded the machine is: control quality
	// (the fair rate's value, the steady queue) depends on the lcores getting
	// their CPUs, and is measured by the experiments, not asserted here.
	if p := s.Ports[3]; p.P99QueueBytes.Or(0) <= 0 || p.CNPsSent == 0 || p.FairRateGbps.Or(0) < 0 || p.FairRateGbps.Or(0) > 1 ||
		p.AvgQueueBytes.Or(0) > p.P99QueueBytes.Or(0)+1 {
		t.Errorf("receiver port: %+v", p)
	}
	fair, err := os.ReadFile(filepath.Join(res.Dir, "fairrate.csv"))
	if err != nil || !bytes.Contains(fair, []byte("\n")) || !bytes.Contains(fair, []byte(",3,")) {
		t.Errorf("fairrate.csv has no samples of port 3: %v", err)
	}
	tx := res.Switch.Ports[3].TxBytes
	if tx < uint64(total) {
		t.Errorf("switch sent %d bytes to the receiver, flows delivered %d", tx, total)
	}
	for _, name := range []string{"summary.json", "queue.csv", "rate.csv", "fairrate.csv", "fct.csv"} {
		if st, err := os.Stat(filepath.Join(res.Dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"queue.png", "rate.png", "fairrate.png"} {
		f, err := os.Open(filepath.Join(res.Dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 100 {
			t.Errorf("%s: not a PNG plot: %v", name, err)
		}
	}
	back, err := report.LoadSummary(filepath.Join(res.Dir, "summary.json"))
	if err != nil || back.Experiment != "e2e" || len(back.Flows) != 3 {
		t.Errorf("summary.json round trip: %v %+v", err, back)
	}
}

// TestSIGINTStillWritesResults interrupts a long run and checks that the results
// cover the run up to the signal.
func TestSIGINTStillWritesResults(t *testing.T) {
	e, err := Decode("e2e.toml", strings.Replace(small, "duration_ms = 150", "duration_ms = 60000", 1), ".")
	if err != nil {
		t.Fatal(err)
	}
	e.Experiment.Name = "sigint"
	e.Experiment.OutputDir = t.TempDir()
	go func() {
		// Late enough for the set-up (and the run's 50 ms pre-roll) to be over
		// on a loaded machine, so that flows have delivered data.
		time.Sleep(time.Second)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	start := time.Now()
	res, err := Run(context.Background(), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 30*time.Second || !res.Interrupted {
		t.Fatalf("run not interrupted (took %v, interrupted %v)", time.Since(start), res.Interrupted)
	}
	if res.MbufsLeaked != 0 || len(res.Summary.Flows) == 0 {
		t.Fatalf("after SIGINT: leaked %d, flows %+v", res.MbufsLeaked, res.Summary.Flows)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "summary.json")); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeExperiment(f *testing.F) {
	f.Add(small)
	f.Add("[experiment]\nname='x'\n[[flows]]\nsrc=0\ndst=1\n")
	f.Add("[experiment]\nname='x'\nclock='virtual'\n[topology]\nkind='chain'\nhosts_per_switch=[1,0,1]\n[[flows]]\nsrc=0\ndst=1\n")
	f.Add("[experiment]\nname='x'\n[topology]\nkind='explicit'\nhosts=2\nswitches=['a']\nlinks=[{a='h0',b='a',gbps=1},{a='a',b='h1',gbps=1,delay_us_ba=2}]\n[[flows]]\nsrc=0\ndst=1\n")
	f.Add("[experiment]\nname='x'\n[topology]\nkind='leaf-spine'\nleaves=2\nspines=1\nhosts_per_leaf=1\n[[flows]]\nsrc=0\ndst=1\n")
	f.Fuzz(func(t *testing.T, text string) {
		e, err := Decode("fuzz.toml", text, ".")
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error without a place: %v", err)
			}
			return
		}
		_ = e.SwitchConfig()
		_ = e.HostConfigs()
	})
}
