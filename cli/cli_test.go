package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseDuration: Go durations in [0, 2^60 ns]; a bare number, NaN, Inf,
// a negative or an absurd duration is an error that says what to write.
func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"2s", 2 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"0s", 0, ""},
		{"2", 0, `"2" has no unit: write a Go duration such as "2s"`},
		{"1.5", 0, `such as "1.5s"`},
		{"NaN", 0, "is not a duration"},
		{"Inf", 0, "is not a duration"},
		{"-1s", 0, "from 0 to 2^60 ns"},
		{"1000000h", 0, "from 0 to 2^60 ns"},
		{"3 fortnights", 0, "is not a duration"},
		{"", 0, "is not a duration"},
	} {
		got, err := ParseDuration(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseDuration(%q) error %v; want %q", tc.in, err, tc.err)
		}
	}
}

// TestParse: the exit code and stream of each kind of command line.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max int
		args     []string
		pos      []string
		code     int
		stdout   string // a substring of standard output
		stderr   string // a substring of standard error
	}{
		{"help", 0, 0, []string{"-h"}, nil, ExitOK, "usage: cmd", ""},
		{"help long", 0, 0, []string{"-x", "1", "-help"}, nil, ExitOK, "-d duration", ""},
		{"version", 0, 0, []string{"-version"}, nil, ExitOK, "cmd ", ""},
		{"bad flag", 0, 0, []string{"-nosuch"}, nil, ExitUsage, "", "flag provided but not defined: -nosuch\nusage: cmd"},
		{"bad value", 0, 0, []string{"-d", "2"}, nil, ExitUsage, "", `"2" has no unit`},
		{"stray", 0, 0, []string{"x"}, nil, ExitUsage, "", `unexpected argument "x": cmd takes no positional arguments`},
		{"missing", 1, 1, nil, nil, ExitUsage, "", "missing FILE: want 1, got 0"},
		{"too many", 1, 1, []string{"a", "b"}, nil, ExitUsage, "", `unexpected argument "b": want 1 FILE, got 2`},
		{"interleaved", 1, -1, []string{"a", "-x", "3", "b", "-d", "1s"}, []string{"a", "b"}, ExitOK, "", ""},
		{"dashdash", 0, -1, []string{"-x", "1", "--", "-d", "e"}, []string{"-d", "e"}, ExitOK, "", ""},
	} {
		var out, errb bytes.Buffer
		c := New("cmd", "[flags] FILE", "A command.").Positional("FILE", tc.min, tc.max)
		c.Stdout = &out
		c.Flags.Int("x", 0, "a number")
		var d time.Duration
		c.Duration(&d, "d", 0, "a time")
		pos, err := c.Parse(tc.args)
		code := ExitTo(&errb, "cmd", err)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.name, code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.code == ExitOK && tc.stdout == "" && strings.Join(pos, " ") != strings.Join(tc.pos, " ") {
			t.Errorf("%s: positional %q, want %q", tc.name, pos, tc.pos)
		}
	}
	if code := ExitTo(&bytes.Buffer{}, "cmd", errors.New("disk full")); code != ExitRuntime {
		t.Errorf("runtime error: exit %d, want %d", code, ExitRuntime)
	}
}
