// Package tsharktest runs tshark for tests that check what Wireshark shows of
// ccbed's frames (wire's, fabric's): it prints chosen fields of a pcap file,
// with or without the Lua plugin deploy/wireshark/ccbed.lua. Tests skip when
// tshark is not installed (scripts/setup.sh installs it).
package tsharktest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// PluginArgs are the tshark options that load deploy/wireshark/ccbed.lua.
func PluginArgs(t testing.TB) []string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("tsharktest: runtime.Caller failed")
	}
	return []string{"-X", "lua_script:" + filepath.Join(filepath.Dir(file), "..", "..", "deploy", "wireshark", "ccbed.lua")}
}

// Fields runs tshark on the pcap at path with the extra options opts and
// returns, per frame, the values of fields by name; several occurrences of a
// field are joined by ','. It skips the test when tshark is not installed.
func Fields(t testing.TB, path string, opts, fields []string) []map[string]string {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: skipping the Wireshark cross-check")
	}
	args := append([]string{"-r", path, "-T", "fields", "-E", "separator=|"}, opts...)
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	var rows []map[string]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		vals := strings.Split(line, "|")
		if len(vals) != len(fields) {
			t.Fatalf("tshark: %d fields, want %d, in %q", len(vals), len(fields), line)
		}
		row := make(map[string]string, len(fields))
		for j, f := range fields {
			row[f] = vals[j]
		}
		rows = append(rows, row)
	}
	return rows
}
