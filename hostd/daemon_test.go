package hostd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExampleConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../configs/host-*.toml")
	if err != nil || len(files) < 4 {
		t.Fatalf("example configs: %v %v", files, err)
	}
	for _, path := range files {
		f, err := LoadFile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if f.Host.MAC == "" {
			f.Host.MAC = "02:00:00:00:00:01"
		}
		e, err := f.NewEngine(0)
		if err != nil {
			t.Errorf("%s: engine: %v", path, err)
			continue
		}
		if e.LinkBps() != f.Host.LinkGbps*1e9 {
			t.Errorf("%s: link %v", path, e.LinkBps())
		}
	}
}

func TestLoadFileErrorsNameLine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text, want string
	}{
		{"unknown key", "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\nbogus = 1\n", ":5: host.bogus: unknown key"},
		{"bad flow", "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\n[[host.flows]]\nid = 1\ndst = \"10.0.0\"\n", ":7: host.flows[0].dst"},
		{"bad cc", "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\nscheme = \"dcqcn\"\n[host.cc]\ng = -1\n", ":6: host.cc"},
		{"three lcores", "port = \"x\"\nlcores = [1, 2, 3]\n[host]\nip = \"10.0.0.1\"\n", ":2: lcores"},
		{"no lcores", "port = \"x\"\n[host]\nip = \"10.0.0.1\"\n", "lcores: want 1 lcore"},
		{"both lcore keys", "port = \"x\"\nlcores = [1]\ntx_lcores = [2, 3]\n[host]\nip = \"10.0.0.1\"\n", ":3: tx_lcores: give lcores"},
		{"17 engines", "port = \"x\"\ntx_lcores = [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]\n[host]\nip = \"10.0.0.1\"\n", ":2: tx_lcores: 17 entries"},
		{"rx lcores count", "port = \"x\"\ntx_lcores = [2, 3]\nrx_lcores = [1]\n[host]\nip = \"10.0.0.1\"\n", ":3: rx_lcores: 1 entries"},
		{"rx without tx", "port = \"x\"\nlcores = [1]\nrx_lcores = [1]\n[host]\nip = \"10.0.0.1\"\n", ":3: rx_lcores: needs tx_lcores"},
		{"tx lcore range", "port = \"x\"\ntx_lcores = [2, 300]\n[host]\nip = \"10.0.0.1\"\n", ":2: tx_lcores: lcore 300 (entry 1)"},
		{"rx lcore range", "port = \"x\"\ntx_lcores = [2, 3]\nrx_lcores = [1, 128]\n[host]\nip = \"10.0.0.1\"\n", ":3: rx_lcores: lcore 128 (entry 1)"},
		{"QPs per engine", "port = \"x\"\ntx_lcores = [2, 3, 4]\n[host]\nip = \"10.0.0.1\"\nmax_qps = 2\n", ":2: tx_lcores: 3 engines need max_qps >= 3"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".toml")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestWriteResults(t *testing.T) {
	a, b := oneFlow("none", 50_000, 0)
	v := newVnet(t, a, b)
	v.run(500_000)
	dir := t.TempDir()
	if err := writeResults(dir, "h1-", v.eng[0], &PortCounter{TxFrames: 3}, 0); err != nil {
		t.Fatal(err)
	}
	fct, _ := os.ReadFile(filepath.Join(dir, "h1-fct.csv"))
	lines := strings.Split(strings.TrimSpace(string(fct)), "\n")
	if len(lines) != 2 || lines[0] != "flow,src,dst,size_bytes,start_us,fct_us,slowdown" ||
		!strings.HasPrefix(lines[1], "7,"+a.IP+","+b.IP+",50000,0.000,") {
		t.Fatalf("fct.csv:\n%s", fct)
	}
	rate, _ := os.ReadFile(filepath.Join(dir, "h1-rate.csv"))
	if !strings.HasPrefix(string(rate), "t_us,flow,goodput_gbps,rate_gbps,window_bytes\n10.000,7,") {
		t.Fatalf("rate.csv:\n%.200s", rate)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "h1-counters.json"))
	for _, want := range []string{`"host": "h1"`, `"flows_completed": 1`, `"tx_frames": 3`} {
		if !strings.Contains(string(js), want) {
			t.Fatalf("counters.json lacks %s:\n%s", want, js)
		}
	}
}

// TestFileLoops checks the lcore loops and engine counts the lcore keys ask
// for.
func TestFileLoops(t *testing.T) {
	tests := []struct {
		name    string
		f       File
		engines int
		want    string
	}{
		{"one loop", File{Lcores: []uint{1}}, 1, "[{1 host [0] [0]}]"},
		{"rx and tx", File{Lcores: []uint{1, 2}}, 1, "[{1 rx [0] []} {2 tx [] [0]}]"},
		{"one lcore twice", File{Lcores: []uint{3, 3}}, 1, "[{3 host [0] [0]}]"},
		{"engines, rx in the tx loops", File{TxLcores: []uint{2, 3, 4}}, 3,
			"[{2 host0 [0] [0]} {3 host1 [1] [1]} {4 host2 [2] [2]}]"},
		{"engines, rx lcores", File{TxLcores: []uint{3, 4}, RxLcores: []uint{1, 2}}, 2,
			"[{1 rx0 [0] []} {3 tx0 [] [0]} {2 rx1 [1] []} {4 tx1 [] [1]}]"},
		{"one rx lcore for all", File{TxLcores: []uint{2, 3, 4}, RxLcores: []uint{1, 1, 1}}, 3,
			"[{1 rx0+rx1+rx2 [0 1 2] []} {2 tx0 [] [0]} {3 tx1 [] [1]} {4 tx2 [] [2]}]"},
		{"two engines a loop", File{TxLcores: []uint{2, 2, 3, 3}, RxLcores: []uint{2, 1, 3, 1}}, 4,
			"[{2 host0+tx1 [0] [0 1]} {1 rx1+rx3 [1 3] []} {3 host2+tx3 [2] [2 3]}]"},
	}
	for _, tc := range tests {
		if got := fmt.Sprint(tc.f.Loops()); got != tc.want || tc.f.Engines() != tc.engines {
			t.Errorf("%s: %d engines, loops %s; want %d, %s", tc.name, tc.f.Engines(), got, tc.engines, tc.want)
		}
	}
}

// TestFileEngines loads a file with tx_lcores and builds its engines.
func TestFileEngines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.toml")
	text := "port = \"net_ring0\"\ntx_lcores = [1, 2, 3]\n[host]\nname = \"h1\"\nip = \"10.0.0.1\"\nmac = \"02:00:00:00:00:01\"\n" +
		"[[host.incast]]\ndst = \"10.0.0.2\"\nflows = 7\nsize_bytes = 1000\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	engs, err := f.NewEngines(0)
	if err != nil || len(engs) != 3 {
		t.Fatalf("%d engines, %v", len(engs), err)
	}
	total := 0
	for _, e := range engs {
		total += len(e.starts)
	}
	if total != 7 {
		t.Errorf("the engines start %d flows, want 7", total)
	}
}

// TestLoadFileRequiredKeys: a flow, incast or workload of a host file
// without its identity is an error at its line, never flow 0 or no
// destination.
func TestLoadFileRequiredKeys(t *testing.T) {
	head := "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\n"
	for _, tc := range []struct{ name, text, want string }{
		{"flow without id", "[[host.flows]]\ndst = \"10.0.0.2\"\n", ":5: host.flows[0].id: missing"},
		{"flow without dst", "[[host.flows]]\nid = 1\n", ":5: host.flows[0].dst: missing"},
		{"incast without dst", "[[host.incast]]\nflows = 1\nsize_bytes = 1\n", ":5: host.incast[0].dst: missing"},
		{"workload without dsts", "[[host.workloads]]\ncdf = \"CDF\"\nload = 0.5\n", ":5: host.workloads[0].dsts: missing"},
		{"peer without mac", "[[host.peers]]\nip = \"10.0.0.2\"\n", ":5: host.peers[0].mac: missing"},
	} {
		p := filepath.Join(t.TempDir(), "h.toml")
		os.WriteFile(p, []byte(head+tc.text), 0o644)
		if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// writeResults writes e's result files into dir with names prefixed by
// prefix, as hostd/daemon.WriteResults does.
func writeResults(dir, prefix string, e *Engine, port *PortCounter, origin int64) error {
	return WriteResultFiles(func(name string) (io.WriteCloser, error) {
		return os.Create(filepath.Join(dir, prefix+name))
	}, e, port, origin)
}
