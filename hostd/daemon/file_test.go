package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/wire"
)

func TestExampleConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../../configs/host-*.toml")
	if err != nil || len(files) < 4 {
		t.Fatalf("example configs: %v %v", files, err)
	}
	for _, path := range files {
		f, err := LoadFile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		engs, err := f.NewEngines(0)
		if err != nil {
			t.Errorf("%s: engine: %v", path, err)
			continue
		}
		if engs[0].LinkBps() != f.Host.LinkGbps*1e9 {
			t.Errorf("%s: link %v", path, engs[0].LinkBps())
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
	if s := f.Spec(); len(s.Incast) != 1 || s.Incast[0].Dst != 0x0a000002 || s.Incast[0].Flows != 7 || s.MAC != (wire.MAC{2, 0, 0, 0, 0, 1}) {
		t.Errorf("spec %+v", s)
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
