package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTraceCommand: testbed run -trace writes trace.bin; testbed trace
// prints its counts, and with -csv one header line and a row per record
// (as many as the counts say), filtered by -kind; -workers 2 with -trace
// and a trace file that is not one are errors.
func TestTraceCommand(t *testing.T) {
	path := writeExperiment(t, strings.Replace(long, "600_000", "1", 1))
	dir := filepath.Join(t.TempDir(), "r")
	if err := run([]string{path, "-q", "-trace", "-o", dir}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "trace.bin")
	testbed := func(args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), testbedMainEnv+"=1")
		out, err := cmd.Output()
		return string(out), err
	}
	sum, err := testbed("trace", bin)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^s0 +(\d+) +(\d+) +0 +0 +0 +0$`).FindStringSubmatch(sum)
	if m == nil || m[1] == "0" || m[1] != m[2] {
		t.Fatalf("summary:\n%s\nwant s0's enqueues and as many dequeues, nothing else", sum)
	}
	csv, err := testbed("trace", bin, "-csv", "-kind", "dequeue", "-node", "s0")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	if n, _ := strconv.Atoi(m[2]); lines[0] != "time_ns,node,kind,port,priority,frame_bytes,queue_bytes,src_ip,dst_ip,src_port,dst_port,qp" ||
		len(lines)-1 != n || !strings.Contains(lines[1], ",s0,dequeue,1,") {
		t.Fatalf("-csv -kind dequeue: %d lines, first %q %q: want the header and %s dequeues out of port 1", len(lines), lines[0], lines[1], m[2])
	}
	if err := run([]string{path, "-q", "-trace", "-workers", "2", "-o", filepath.Join(t.TempDir(), "r2")}); err == nil ||
		!strings.Contains(err.Error(), "needs the serial driver") {
		t.Fatalf("-trace -workers 2: error %v", err)
	}
	if _, err := testbed("trace", path); err == nil {
		t.Fatal("testbed trace of a TOML file: exit 0")
	}
}
