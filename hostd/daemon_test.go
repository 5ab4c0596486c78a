package hostd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

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
		!strings.HasPrefix(lines[1], "7,"+wire.FormatIPv4(a.IP)+","+wire.FormatIPv4(b.IP)+",50000,0.000,") {
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

// writeResults writes e's result files into dir with names prefixed by
// prefix, as hostd/daemon.WriteResults does.
func writeResults(dir, prefix string, e *Engine, port *PortCounter, origin int64) error {
	return WriteResultFiles(func(name string) (io.WriteCloser, error) {
		return os.Create(filepath.Join(dir, prefix+name))
	}, e, port, origin)
}
