package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// parsed runs a command with the log flags on args and returns it with its
// standard error, or fails t when Parse does.
func parsed(t *testing.T, args ...string) (*Command, *bytes.Buffer) {
	t.Helper()
	var errb bytes.Buffer
	c := New("prog sub", "", "").Logging()
	c.Stderr = &errb
	if _, err := c.Parse(args); err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return c, &errb
}

// logAll logs one entry of each level.
func logAll(l *zap.Logger) {
	l.Debug("d")
	l.Info("i", zap.String("port", "p0"), zap.Int("n", 3))
	l.Warn("w")
	l.Error("e", zap.Error(errors.New("boom")))
}

// TestLogLevels: the default is info, -v adds debug, -q leaves warnings and
// errors; the console format starts every line with the command's name.
func TestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "prog: i {\"port\": \"p0\", \"n\": 3}\nprog: WARN: w\nprog: ERROR: e {\"error\": \"boom\"}\n"},
		{[]string{"-v"}, "prog: DEBUG: d\nprog: i {\"port\": \"p0\", \"n\": 3}\nprog: WARN: w\nprog: ERROR: e {\"error\": \"boom\"}\n"},
		{[]string{"-q"}, "prog: WARN: w\nprog: ERROR: e {\"error\": \"boom\"}\n"},
		{[]string{"-q", "-log-format", "console"}, "prog: WARN: w\nprog: ERROR: e {\"error\": \"boom\"}\n"},
	} {
		c, errb := parsed(t, tc.args...)
		logAll(c.Log())
		if errb.String() != tc.want {
			t.Errorf("%q: logged\n%s\nwant\n%s", tc.args, errb, tc.want)
		}
	}
}

// TestLogJSON: -log-format json writes one JSON object per line with level,
// ts, logger, msg and the fields; -q still drops info.
func TestLogJSON(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		levels string
	}{
		{[]string{"-log-format", "json"}, "info warn error"},
		{[]string{"-log-format=json", "-v"}, "debug info warn error"},
		{[]string{"-q", "-log-format", "json"}, "warn error"},
	} {
		c, errb := parsed(t, tc.args...)
		logAll(c.Log())
		var levels []string
		for _, line := range strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%q: line %q is not JSON: %v", tc.args, line, err)
			}
			level, _ := m["level"].(string)
			levels = append(levels, level)
			if _, err := time.Parse(time.RFC3339Nano, m["ts"].(string)); err != nil || m["logger"] != "prog" || m["msg"] == "" {
				t.Errorf("%q: entry %v: want ts, logger prog, msg", tc.args, m)
			}
			if m["msg"] == "i" && (m["port"] != "p0" || m["n"] != 3.0) {
				t.Errorf("%q: info entry %v: want its fields", tc.args, m)
			}
		}
		if got := strings.Join(levels, " "); got != tc.levels {
			t.Errorf("%q: levels %q, want %q", tc.args, got, tc.levels)
		}
	}
}

// TestLogFlagErrors: a bad format and -v with -q are usage errors.
func TestLogFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-log-format", "xml"}, `invalid value "xml" for flag -log-format: want console or json`},
		{[]string{"-v", "-q"}, "give -v or -q, not both"},
	} {
		c := New("prog", "", "").Logging()
		_, err := c.Parse(tc.args)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
	if _, err := NewLogger(&bytes.Buffer{}, "prog", LogOptions{Format: "xml"}); err == nil {
		t.Error("NewLogger accepted the format xml")
	}
}

// TestCommandExit: a run-time error is "prog: error" in the console format
// and one JSON entry under -log-format json; a usage error stays text.
func TestCommandExit(t *testing.T) {
	c, errb := parsed(t)
	if code := c.Exit(errors.New("no such file")); code != ExitRuntime || errb.String() != "prog: no such file\n" {
		t.Errorf("console: exit %d, %q", code, errb)
	}
	c, errb = parsed(t, "-log-format", "json")
	if code := c.Exit(errors.New("no such file")); code != ExitRuntime {
		t.Errorf("json: exit %d", code)
	}
	var m map[string]any
	if err := json.Unmarshal(errb.Bytes(), &m); err != nil || m["level"] != "error" || m["error"] != "no such file" {
		t.Errorf("json: %q (%v): want one error entry", errb, err)
	}
	c, errb = parsed(t, "-log-format", "json")
	if code := c.Exit(c.Errorf("bad")); code != ExitUsage || !strings.HasPrefix(errb.String(), "prog: bad\nusage: prog sub") {
		t.Errorf("json usage error: exit %d, %q", code, errb)
	}
}

// TestProgress: reports at most once a period, as log entries off a
// terminal; none under -q or for a period of 0; on a terminal one line
// rewritten in place, ended before the next log line or write to stdout.
func TestProgress(t *testing.T) {
	c, errb := parsed(t, "-log-format", "json")
	p := c.Progress(2 * time.Second)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	for i := 0; i < 5; i++ { // reports at 0 s, 2 s, 4 s
		p.Report("line", zap.Int("i", i))
		now = now.Add(time.Second)
	}
	p.Done()
	var is []float64
	for _, line := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["msg"] != "progress" || m["level"] != "info" {
			t.Fatalf("progress entry %q (%v)", line, err)
		}
		is = append(is, m["i"].(float64))
	}
	if len(is) != 3 || is[0] != 0 || is[1] != 2 || is[2] != 4 {
		t.Errorf("reported %v, want 0, 2, 4", is)
	}

	for _, args := range [][]string{{"-q"}, nil} {
		c, errb := parsed(t, args...)
		every := time.Second
		if args == nil {
			every = 0
		}
		p := c.Progress(every)
		p.Report("line")
		p.Done()
		if p != nil || errb.Len() != 0 {
			t.Errorf("%q, every %v: progress %v, wrote %q; want none", args, every, p, errb)
		}
	}

	c, errb = parsed(t)
	p = c.Progress(time.Nanosecond)
	p.tty = true // as on a terminal
	var out bytes.Buffer
	stdout := p.Writer(&out)
	p.Report("10%")
	p.Report("20%")
	c.Log().Warn("w")
	p.Report("30%")
	stdout.Write([]byte("table\n"))
	p.Report("40%")
	p.Done()
	p.Done()
	want := "\r\x1b[K10%\r\x1b[K20%\nprog: WARN: w\n\r\x1b[K30%\n\r\x1b[K40%\n"
	if errb.String() != want || out.String() != "table\n" {
		t.Errorf("terminal: stderr %q, stdout %q; want %q, \"table\\n\"", errb, out.String(), want)
	}
}
