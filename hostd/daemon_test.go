package hostd

import (
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
		{"bad flow", "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\n[[host.flows]]\ndst = \"10.0.0\"\n", ":6: host.flows[0].dst"},
		{"bad cc", "port = \"x\"\nlcores = [1]\n[host]\nip = \"10.0.0.1\"\nscheme = \"dcqcn\"\n[host.cc]\ng = -1\n", ":6: host.cc"},
		{"three lcores", "port = \"x\"\nlcores = [1, 2, 3]\n[host]\nip = \"10.0.0.1\"\n", ":2: lcores"},
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
	if err := WriteResults(dir, "h1-", v.eng[0], &PortCounter{TxFrames: 3}, 0); err != nil {
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
