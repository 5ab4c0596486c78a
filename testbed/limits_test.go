package testbed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/config"
)

// TestValidateRanges: durations and rates are finite and bounded (before: a
// NaN duration_ms ran, wrote a 0-second summary and exited 0; duration_ms =
// 1e15 and a NaN link_gbps passed validate).
func TestValidateRanges(t *testing.T) {
	for _, tc := range []struct {
		name, edit, from, key, want string
		line                        int
	}{
		{"duration nan", "duration_ms = 150", "duration_ms = nan", "experiment.duration_ms", "got NaN: want a time in (0, 1.153e+12] ms", 4},
		{"duration inf", "duration_ms = 150", "duration_ms = inf", "experiment.duration_ms", "got +Inf", 4},
		{"duration huge", "duration_ms = 150", "duration_ms = 1e15", "experiment.duration_ms", "got 1e+15", 4},
		{"samples beyond memory", "duration_ms = 150", "duration_ms = 1e11", "experiment.duration_ms", "at most a quarter of this machine's", 4},
		{"warmup nan", "duration_ms = 150", "duration_ms = 150\nwarmup_ms = nan", "experiment.warmup_ms", "got NaN", 5},
		{"sample nan", "sample_us = 500", "sample_us = nan", "experiment.sample_us", "got NaN", 5},
		{"link nan", "link_gbps = 1", "link_gbps = nan", "topology.link_gbps", "got NaN: want a finite number in (0, 400]", 9},
		{"link inf", "link_gbps = 1", "link_gbps = inf", "topology.link_gbps", "got +Inf", 9},
		{"delay nan", "link_gbps = 1", "link_gbps = 1\ndelay_us = nan", "topology.delay_us", "got NaN", 10},
		{"rto inf", "link_gbps = 1", "link_gbps = 1\nrto_us = inf", "topology.rto_us", "got +Inf", 10},
		{"base rtt nan", "link_gbps = 1", "link_gbps = 1\nbase_rtt_us = nan", "topology.base_rtt_us", "got NaN", 10},
		{"nak inf", "link_gbps = 1", "link_gbps = 1\nnak_interval_us = inf", "topology.nak_interval_us", "got +Inf", 10},
		{"flow start nan", "start_us = 20_000", "start_us = nan", "flows[2].start_us", "got NaN", 36},
		{"flow rate nan", "start_us = 20_000", "start_us = 20_000\nrate_gbps = nan", "flows[2].rate_gbps", "got NaN", 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(small, tc.edit) {
				t.Fatalf("small has no %q", tc.edit)
			}
			text := strings.Replace(small, tc.edit, tc.from, 1)
			_, err := Decode("x.toml", text, ".")
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line != tc.line || ce.File != "x.toml" || !strings.Contains(ce.Msg, tc.want) {
				t.Fatalf("got %v, want x.toml:%d: %s: ...%s", err, tc.line, tc.key, tc.want)
			}
		})
	}
	// An explicit topology gives its links their own rates: link_gbps is
	// checked all the same (before, a NaN passed validate).
	explicit := "[experiment]\nname = \"x\"\n[topology]\nkind = \"explicit\"\nlink_gbps = nan\nhosts = 2\nswitches = [\"s\"]\n" +
		"links = [{ a = \"h0\", b = \"s\", gbps = 1 }, { a = \"s\", b = \"h1\", gbps = 1 }]\n[[flows]]\nid = 1\nsrc = 0\ndst = 1\n"
	_, err := Decode("x.toml", explicit, ".")
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "topology.link_gbps" || ce.Line != 5 {
		t.Fatalf("explicit topology, link_gbps = nan: got %v", err)
	}
}

// TestLoadRefusesNonRegularFiles: the experiment file, its CDFs and its ns-3
// files must be regular files (before: testbed validate /dev/zero ran out of
// memory, and a FIFO never returned).
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"/dev/zero": "a character device", "/dev/urandom": "a character device", fifo: "a FIFO", dir: "a directory"}
	write := func(t *testing.T, text string) string {
		p := filepath.Join(t.TempDir(), "e.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for path, kind := range cases {
		for _, tc := range []struct{ name, file, key string }{
			{"experiment", path, ""},
			{"cdf", write(t, "[experiment]\nname = \"x\"\n[topology]\nhosts = 2\n[[workloads]]\ncdf = \""+path+"\"\nsenders = [0]\ndsts = [1]\nload = 0.5\n"), "workloads[0].cdf"},
			{"ns3 topology", write(t, "[experiment]\nname = \"x\"\n[topology]\nkind = \"ns3\"\nns3_topology = \""+path+"\"\n"), "topology.ns3_topology"},
			{"ns3 flows", write(t, "[experiment]\nname = \"x\"\n[topology]\nkind = \"ns3\"\nns3_topology = \""+nsTopology(t)+"\"\nns3_flows = \""+path+"\"\n"), "topology.ns3_flows"},
		} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				done := make(chan error, 1)
				go func() {
					_, err := Load(tc.file)
					done <- err
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("still reading after 5 s")
				}
				var ce *config.Error
				if !errors.As(err, &ce) || ce.Key != tc.key || !strings.HasSuffix(err.Error(), path+": not a regular file ("+kind+")") {
					t.Fatalf("got %v, want an error at key %q ending %s: not a regular file (%s)", err, tc.key, path, kind)
				}
			})
		}
	}
}

// nsTopology is the path of the fabric's ns-3 test topology.
func nsTopology(tb testing.TB) string {
	p, err := filepath.Abs("../ns3/testdata/topology.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
