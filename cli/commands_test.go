package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The four commands, built once for the tests below.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// commands builds cmd/switchd, cmd/hostd, cmd/pktgen and cmd/testbed into a
// temporary directory and returns it.
func commands(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the commands with")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "ccbed-cli-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+"/", "../cmd/switchd", "../cmd/hostd", "../cmd/pktgen", "../cmd/testbed").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// exe is one command line and what it must give: the exit code and
// substrings of standard output and standard error ("" matches anything;
// "-" means the stream must be empty).
type exe struct {
	args           string
	code           int
	stdout, stderr string
}

func runTable(t *testing.T, table []exe) {
	t.Helper()
	bin := commands(t)
	for _, tc := range table {
		args := strings.Fields(tc.args)
		cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		cmd.Dir = ".."
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		match := func(got, want string) bool {
			if want == "-" {
				return got == ""
			}
			return strings.Contains(got, want)
		}
		if code != tc.code || !match(out.String(), tc.stdout) || !match(errb.String(), tc.stderr) {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout %q, stderr %q",
				tc.args, code, tc.code, out.String(), errb.String(), tc.stdout, tc.stderr)
		}
	}
}

// TestHelp: -h and -help print the usage to standard output and exit 0, on
// every command and every testbed subcommand.
func TestHelp(t *testing.T) {
	var table []exe
	for _, c := range []string{"switchd", "hostd", "pktgen"} {
		table = append(table, exe{c + " -h", 0, "usage: " + c, "-"}, exe{c + " -help", 0, "-version", "-"})
	}
	table = append(table, exe{"testbed -h", 0, "usage: testbed SUBCOMMAND", "-"}, exe{"testbed help", 0, "testbed validate", "-"},
		exe{"testbed help validate", 0, "usage: testbed validate", "-"})
	for _, sc := range []string{"run", "sweep", "validate", "compare", "schemes", "reference", "nodes", "collect", "version", "help"} {
		table = append(table, exe{"testbed " + sc + " -h", 0, "usage: testbed " + sc, "-"})
	}
	runTable(t, table)
}

// TestVersion: -version (and testbed version) prints the module, revision
// and Go version and exits 0.
func TestVersion(t *testing.T) {
	runTable(t, []exe{
		{"switchd -version", 0, "switchd github.com/ccbed/ccbed ", "-"},
		{"hostd -version", 0, "hostd github.com/ccbed/ccbed ", "-"},
		{"pktgen -version", 0, " rev ", "-"},
		{"testbed -version", 0, "testbed github.com/ccbed/ccbed ", "-"},
		{"testbed version", 0, " go1.", "-"},
		{"testbed run -version", 0, "testbed run github.com/ccbed/ccbed ", "-"},
	})
}

// TestUsageErrors: a bad flag, an unknown subcommand, a stray or missing
// argument is an error with the usage on standard error, exit 2.
func TestUsageErrors(t *testing.T) {
	runTable(t, []exe{
		{"switchd -nosuch", 2, "-", "flag provided but not defined: -nosuch"},
		{"hostd -nosuch", 2, "-", "usage: hostd"},
		{"pktgen -nosuch", 2, "-", "usage: pktgen"},
		{"testbed run -nosuch configs/experiments/rocc-3to1-virtual.toml", 2, "-", "usage: testbed run"},
		{"switchd", 2, "-", "-c switch.toml is required"},
		{"hostd", 2, "-", "-c host.toml is required"},
		{"switchd -c configs/switch-vdev.toml stray", 2, "-", `unexpected argument "stray"`},
		{"hostd -c configs/host-rocc-sender1.toml stray", 2, "-", `unexpected argument "stray"`},
		{"pktgen -c configs/pktgen-null.toml stray", 2, "-", `unexpected argument "stray"`},
		{"testbed", 2, "-", "missing subcommand"},
		{"testbed bogus", 2, "-", `unknown subcommand "bogus": want one of run, sweep, validate, compare, schemes, reference, export-flows, trace, nodes, collect, version, help`},
		{"testbed help bogus", 2, "-", `unknown subcommand "bogus"`},
		{"testbed schemes x", 2, "-", `unknown scheme "x"`},
		{"testbed reference x", 2, "-", `unexpected argument "x"`},
		{"testbed version x", 2, "-", `unexpected argument "x"`},
		{"testbed run a.toml b.toml", 2, "-", `unexpected argument "b.toml": want 1 EXPERIMENT.toml, got 2`},
		{"testbed run", 2, "-", "missing EXPERIMENT.toml"},
		{"testbed validate", 2, "-", "missing EXPERIMENT.toml"},
		{"testbed nodes a.toml b.toml", 2, "-", `unexpected argument "b.toml"`},
		{"testbed collect a b", 2, "-", `unexpected argument "b"`},
		{"testbed compare x", 2, "-", `"x": want LABEL=RESULTS_DIR`},
		{"testbed run a.toml -o a -results b", 2, "-", "give -results or -o, not both"},
		{"testbed sweep a.toml -o a -results b -set experiment.seed=1,2", 2, "-", "give -results or -o, not both"},
		{"testbed export-flows a.toml b.toml", 2, "-", `unexpected argument "b.toml"`},
		{"pktgen -lcores x -c configs/pktgen-null.toml", 2, "-", "-lcores"},
	})
}

// TestRuntimeErrors: a command line that parses but cannot run exits 1 with
// one line on standard error.
func TestRuntimeErrors(t *testing.T) {
	runTable(t, []exe{
		{"switchd -c /nonexistent.toml -check-syntax", 1, "-", "switchd: "},
		{"hostd -c /nonexistent.toml -check-syntax", 1, "-", "hostd: "},
		{"pktgen -c /nonexistent.toml -check", 1, "-", "pktgen: "},
		{"testbed validate /nonexistent.toml", 1, "-", "testbed: "},
	})
}

// TestDurations: every -duration is a Go duration; a bare number, a negative
// or an absurd one is a usage error; testbed's -duration-ms still works,
// saying it is deprecated.
func TestDurations(t *testing.T) {
	exp := "configs/experiments/rocc-3to1-virtual.toml"
	out := t.TempDir()
	runTable(t, []exe{
		{"switchd -c configs/switch-vdev.toml -check-syntax -duration 2s", 0, "ok", "-"},
		{"hostd -c configs/host-rocc-sender1.toml -check-syntax -duration 500ms", 0, "ok", "-"},
		{"pktgen -c configs/pktgen-null.toml -check -duration 2s", 0, "ok", "-"},
		{"switchd -c configs/switch-vdev.toml -check-syntax -duration 2", 2, "-", `"2" has no unit: write a Go duration such as "2s"`},
		{"hostd -c configs/host-rocc-sender1.toml -check-syntax -duration 2", 2, "-", `"2" has no unit`},
		{"pktgen -c configs/pktgen-null.toml -check -duration 2", 2, "-", `"2" has no unit`},
		{"testbed run " + exp + " -duration 10", 2, "-", `"10" has no unit`},
		{"testbed sweep " + exp + " -duration 10 -set seed=1", 2, "-", `"10" has no unit`},
		{"pktgen -c configs/pktgen-null.toml -check -duration -1s", 2, "-", "from 0 to 2^60 ns"},
		{"switchd -c configs/switch-vdev.toml -check-syntax -duration 1000000h", 2, "-", "from 0 to 2^60 ns"},
		{"hostd -c configs/host-rocc-sender1.toml -check-syntax -duration NaN", 2, "-", "is not a duration"},
		{"testbed run " + exp + " -duration-ms NaN", 2, "-", "-duration-ms"},
		{"testbed run " + exp + " -duration-ms 1 -duration 1ms", 2, "-", "give -duration alone"},
		{"testbed run " + exp + " -q -o " + out + " -duration 1ms", 0, ", 1 ms, clock virtual", "-"},
		{"testbed run " + exp + " -q -o " + out + " -duration-ms 1", 0, ", 1 ms, clock virtual", "-duration-ms is deprecated: write -duration 1ms"},
	})
}

// TestPktgenEALArgs: pktgen takes eal_args as the daemons do; eal is a
// deprecated alias (a notice alone, an error beside eal_args), and so is -eal.
func TestPktgenEALArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, eal string) string {
		p := filepath.Join(dir, name)
		text := eal + "\n[[ports]]\nname = \"net_null0\"\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newKey := write("new.toml", `eal_args = ["--no-huge"]`)
	oldKey := write("old.toml", `eal = ["--no-huge"]`)
	both := write("both.toml", "eal = [\"--no-huge\"]\neal_args = [\"--no-huge\"]")
	runTable(t, []exe{
		{"pktgen -check -c " + newKey, 0, "ok (1 ports)", "-"},
		{"pktgen -check -c " + oldKey, 0, "ok (1 ports)", "the key eal is deprecated: write eal_args"},
		{"pktgen -check -c " + both, 1, "-", "give eal_args alone"},
		{"pktgen -check -ports net_null0 -eal-args --no-huge", 0, "ok", "-"},
		{"pktgen -check -ports net_null0 -eal --no-huge", 0, "ok", "-eal is deprecated: write -eal-args"},
		{"pktgen -check -ports net_null0 -eal --no-huge -eal-args --no-huge", 2, "-", "give -eal-args alone"},
		{"pktgen -h", 0, "Gb/s of L1 bytes", "-"},
	})
}

// TestBadEALArgument: an EAL argument rte_eal_init rejects is one line naming
// it, without DPDK's usage text (rte_eal_init fails while parsing, before it
// touches hugepages or devices: no root needed).
func TestBadEALArgument(t *testing.T) {
	runTable(t, []exe{
		{"pktgen -ports net_null0 -eal-args --bogus-option", 1, "-", "unrecognized option '--bogus-option'"},
	})
	bin := commands(t)
	cmd := exec.Command(filepath.Join(bin, "pktgen"), "-ports", "net_null0", "-eal-args", "--no-huge --no-shconf --no-pci -l 0-zz")
	out, _ := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || strings.Contains(string(out), "Usage") || !strings.Contains(lines[0], "invalid core list") {
		t.Errorf("bad -l: want one line naming the core list, got:\n%s", out)
	}
}

// logged is a command line that runs without DPDK and logs at info level:
// per command, the line, what its stdout holds and what its log says.
var logged = []struct{ name, args, stdout, info string }{
	{"switchd", "switchd -c configs/switch-vdev.toml -check-syntax", "ok", ""},
	{"hostd", "hostd -c configs/host-rocc-sender1.toml -check-syntax", "ok", ""},
	{"pktgen", "pktgen -c configs/pktgen-null.toml -check", "ok", ""},
	{"testbed validate", "testbed validate configs/experiments/rocc-3to1-virtual.toml", "ok", ""},
	{"testbed nodes", "testbed nodes configs/experiments/rocc-3to1-virtual.toml -o NODES", "playbook.yml", "next: fill in"},
}

// TestLogFlags: the four commands and testbed's subcommands that do work
// take -v, -q and -log-format alike, through package cli: -h lists them,
// each is accepted, -q leaves no info lines, a bad format or -v with -q is a
// usage error.
func TestLogFlags(t *testing.T) {
	var table []exe
	for _, c := range []string{"switchd", "hostd", "pktgen", "testbed run", "testbed sweep", "testbed validate",
		"testbed compare", "testbed nodes", "testbed collect"} {
		table = append(table, exe{c + " -h", 0, "-log-format console|json", "-"}, exe{c + " -h", 0, "-q\tquiet: log warnings and errors only", "-"})
	}
	for _, l := range logged {
		args := strings.ReplaceAll(l.args, "NODES", t.TempDir())
		for _, f := range []string{"-v", "-log-format console", "-log-format=json", "-v -log-format json"} {
			table = append(table, exe{args + " " + f, 0, l.stdout, l.info})
		}
		table = append(table, exe{args + " -q", 0, l.stdout, "-"}, exe{args + " -q -log-format json", 0, l.stdout, "-"},
			exe{args + " -log-format xml", 2, "-", `invalid value "xml" for flag -log-format: want console or json`},
			exe{args + " -v -q", 2, "-", "give -v or -q, not both"})
	}
	exp, out := "configs/experiments/rocc-3to1-virtual.toml", t.TempDir()
	table = append(table,
		exe{"testbed run " + exp + " -o " + out + " -duration 1ms -v", 0, ", 1 ms, clock virtual", "testbed: DEBUG: results written"},
		exe{"testbed run " + exp + " -o " + out + " -duration 1ms -q -log-format json", 0, ", 1 ms, clock virtual", "-"},
		exe{"testbed sweep " + exp + " -results " + out + "/sw -duration 1ms -set experiment.seed=1,2", 0, "== run-001", "testbed: sweep done"},
		exe{"testbed sweep " + exp + " -results " + out + "/sw -duration 1ms -set experiment.seed=1,2 -q", 0, "-", "-"},
		exe{"pktgen -check -ports net_null0 -eal --no-huge -q", 0, "ok", "pktgen: WARN: -eal is deprecated"},
	)
	runTable(t, table)
}

// jsonLines runs a command line and returns its exit code and its standard
// error as JSON objects, failing t on a line that is not one or has no level.
func jsonLines(t *testing.T, line string) (int, []map[string]any) {
	t.Helper()
	bin := commands(t)
	args := strings.Fields(line)
	cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
	cmd.Dir = ".."
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var entries []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("%s: stderr line %q is not JSON: %v", line, l, err)
			continue
		}
		if _, ok := m["level"].(string); !ok {
			t.Errorf("%s: entry %q has no level", line, l)
		}
		entries = append(entries, m)
	}
	return code, entries
}

// TestLogFormatJSON: under -log-format json, standard error is one JSON
// object per line, with a level, a logger (the command) and a message, a
// run-time error included.
func TestLogFormatJSON(t *testing.T) {
	exp := "configs/experiments/rocc-3to1-virtual.toml"
	for _, tc := range []struct {
		line          string
		code          int
		level, logger string
		msg           string
	}{
		{"testbed run " + exp + " -o " + t.TempDir() + " -duration 1ms -v -log-format json", 0, "debug", "testbed", "results written"},
		{"testbed nodes " + exp + " -o " + t.TempDir() + " -log-format json", 0, "info", "testbed", "next: fill in"},
		{"pktgen -check -ports net_null0 -eal --no-huge -log-format json", 0, "warn", "pktgen", "-eal is deprecated"},
		{"switchd -c /nonexistent.toml -check-syntax -log-format json", 1, "error", "switchd", "failed"},
		{"hostd -c /nonexistent.toml -check-syntax -log-format json", 1, "error", "hostd", "failed"},
		{"testbed validate /nonexistent.toml -log-format json", 1, "error", "testbed", "failed"},
	} {
		code, entries := jsonLines(t, tc.line)
		found := false
		for _, m := range entries {
			msg, _ := m["msg"].(string)
			found = found || (m["level"] == tc.level && m["logger"] == tc.logger && strings.HasPrefix(msg, tc.msg))
		}
		if code != tc.code || !found {
			t.Errorf("%s: exit %d, entries %v; want exit %d and a %s entry of %s %q", tc.line, code, entries, tc.code, tc.level, tc.logger, tc.msg)
		}
	}
}

// TestLatestLink: testbed run points results/latest at the newest run.
func TestLatestLink(t *testing.T) {
	exp, out := "configs/experiments/rocc-3to1-virtual.toml", t.TempDir()
	for _, name := range []string{"first", "second"} {
		runTable(t, []exe{{"testbed run " + exp + " -q -results " + out + " -duration 1ms -set experiment.name=" + name, 0, "results in", "-"}})
		got, err := os.Readlink(filepath.Join(out, "latest"))
		if dir, id := filepath.Split(got); err != nil || dir != name+"/" || !strings.Contains(id, "-seed1") {
			t.Errorf("after the run %s: latest -> %q (%v), want %s/<run id>", name, got, err, name)
		}
	}
}
