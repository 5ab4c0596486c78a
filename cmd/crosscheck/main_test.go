package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCase writes a case directory of the script's layout under dir and
// returns its path; files maps names to contents ("" leaves a file out).
func writeCase(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	c := filepath.Join(dir, "hpcc-load30")
	if err := os.MkdirAll(filepath.Join(c, "ccbed"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if text == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(c, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "topology.txt")
	if err := os.WriteFile(topo, []byte("3 1 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"flow.txt":      "2\n0 1 3 100 10000 0.000001\n1 0 3 100 20000 0.000002\n",
		"ns3-fct.txt":   "0b000001 0b000101 10000 100 10000 1000 9920 0\n0b000101 0b000001 10000 100 20000 2000 10000 0\n",
		"ccbed/fct.csv": "flow,src,dst,size_bytes,start_us,fct_us,slowdown\n1,n0,n1,10000,1,19.84,2\n",
		"ns3.time":      "30 1 32\n",
		"ccbed.time":    "2.5 0.5 3.1\n",
	}
	for _, tc := range []struct {
		name  string
		args  []string
		edit  map[string]string
		want  []string
		error string
		// noTopology runs the case directory alone, without -topology.
		noTopology bool
	}{
		{name: "a case", want: []string{
			"== hpcc-load30: 2 flows in flow.txt",
			"completed       ns-3     2   ccbed     1   (-50%)",
			"ns-3 / ccbed cpu 10.3x",
			// ideal 10 KB: 2 x 1080 + 2000 + 800 = 4960 ns; 20 KB 5760 ns.
			"< 100 KB         2/    1  1.74 / 4.00 +130%",
			"p50 2.00"}},
		{name: "no arguments", args: []string{}, error: "missing CASE_DIR"},
		{name: "no topology", args: []string{}, noTopology: true, error: "want -topology"},
		{name: "bad mtu", args: []string{"-mtu", "0"}, error: "-mtu 0"},
		{name: "no flow count", edit: map[string]string{"flow.txt": "x\n"}, error: `flow.txt:1: "x"`},
		{name: "bad ns-3 line", edit: map[string]string{"ns3-fct.txt": "1 2 3\n"}, error: "ns3-fct.txt:1: 3 fields"},
		{name: "bad time", edit: map[string]string{"ccbed.time": "real 3\n"}, error: "ccbed.time: time report"},
		{name: "flow to a switch", edit: map[string]string{"ns3-fct.txt": "0b000001 0b000201 1 1 5 0 1 0\n"},
			error: "ns-3: flow 0 -> 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range good {
				files[k] = v
			}
			for k, v := range tc.edit {
				files[k] = v
			}
			c := writeCase(t, t.TempDir(), files)
			args := tc.args
			if tc.noTopology {
				args = []string{c}
			} else if args == nil {
				args = []string{"-topology", topo, c}
			} else if len(args) > 0 {
				args = append(args, "-topology", topo, c)
			}
			var out strings.Builder
			err := run(args, &out)
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("error %v: want one containing %q", err, tc.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output\n%s\nlacks %q", out.String(), w)
				}
			}
		})
	}
}
