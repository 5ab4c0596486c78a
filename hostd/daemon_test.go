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
	// The priority comes last, as in a testbed run's fct.csv: the flow's
	// (its host's default, 3).
	if len(lines) != 2 || lines[0] != "flow,src,dst,size_bytes,start_us,fct_us,slowdown,priority" ||
		!strings.HasPrefix(lines[1], "7,"+wire.FormatIPv4(a.IP)+","+wire.FormatIPv4(b.IP)+",50000,0.000,") ||
		!strings.HasSuffix(lines[1], ",3") {
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

// TestWriteFCTCSVPriority: each row's last column is its message's
// priority, whatever it is.
func TestWriteFCTCSVPriority(t *testing.T) {
	var b strings.Builder
	fcts := []FCT{
		{Flow: 1, Dst: 0x0a000002, SizeBytes: 1000, StartNs: 2000, FCTNs: 5000, IdealNs: 2500, Priority: 0},
		{Flow: 2, Dst: 0x0a000003, SizeBytes: 2000, StartNs: 3000, FCTNs: 8000, IdealNs: 4000, Priority: 1},
		{Flow: 3, Dst: 0x0a000004, SizeBytes: 3000, StartNs: 4000, FCTNs: 9000, IdealNs: 9000, Priority: 7},
	}
	if err := WriteFCTCSV(&b, 0x0a000001, fcts, 1000); err != nil {
		t.Fatal(err)
	}
	want := FCTCSVHeader + "\n" +
		"1,10.0.0.1,10.0.0.2,1000,1.000,5.000,2.0000,0\n" +
		"2,10.0.0.1,10.0.0.3,2000,2.000,8.000,2.0000,1\n" +
		"3,10.0.0.1,10.0.0.4,3000,3.000,9.000,1.0000,7\n"
	if b.String() != want {
		t.Errorf("fct.csv:\n%s\nwant\n%s", b.String(), want)
	}
}
