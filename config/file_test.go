package config

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// SpecialFiles returns paths that are not regular files: two devices that
// never end, a FIFO nobody writes (opening it for reading blocks) and a
// directory, each with the words the refusal names it by.
func specialFiles(tb testing.TB) []struct{ name, path, kind string } {
	tb.Helper()
	dir := tb.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		tb.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.toml")
	if err := os.Mkdir(sub, 0o700); err != nil {
		tb.Fatal(err)
	}
	return []struct{ name, path, kind string }{
		{"dev zero", "/dev/zero", "a character device"},
		{"dev urandom", "/dev/urandom", "a character device"},
		{"fifo", fifo, "a FIFO"},
		{"directory", sub, "a directory"},
	}
}

// within runs f and fails the test if it takes longer than d: today's bugs
// are reads that never end.
func within(tb testing.TB, d time.Duration, f func() error) error {
	tb.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		tb.Fatalf("still reading after %v", d)
		return nil
	}
}

// TestLoadRefusesWhatIsNotARegularFile: switchd, hostd, pktgen and testbed
// read their files through Load, which must refuse devices, FIFOs and
// directories at once (before: /dev/zero ran out of memory, /dev/urandom
// and a FIFO never returned), and files over the size cap.
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.toml")
	// A valid TOML file (one comment) one byte over the cap.
	if err := os.WriteFile(big, []byte("#"+strings.Repeat("x", MaxTOMLBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := specialFiles(t)
	cases = append(cases,
		struct{ name, path, kind string }{"over the cap", big, "larger than the 1048576-byte cap"},
		struct{ name, path, kind string }{"missing", "/nonexistent/x.toml", "no such file"},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := within(t, 5*time.Second, func() error {
				var c testCfg
				_, err := Load(tc.path, &c)
				return err
			})
			var ce *Error
			if !errors.As(err, &ce) || ce.File != tc.path || !strings.Contains(ce.Msg, tc.kind) {
				t.Fatalf("got %v, want an *Error at %s saying %q", err, tc.path, tc.kind)
			}
		})
	}
	if _, err := Load("/nonexistent/x.toml", new(testCfg)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v does not unwrap to fs.ErrNotExist", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.cdf")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		max  int64
		want string // "" for the content
	}{
		{"under the cap", 10, ""},
		{"at the cap", 5, ""},
		{"over the cap", 4, "5 bytes: larger than the 4-byte cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(p, tc.max)
			switch {
			case tc.want == "" && (err != nil || string(b) != "12345"):
				t.Fatalf("got %q, %v", b, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	for _, tc := range specialFiles(t) {
		t.Run(tc.name, func(t *testing.T) {
			err := within(t, 5*time.Second, func() error {
				_, err := ReadFile(tc.path, 1<<20)
				return err
			})
			if err == nil || err.Error() != tc.path+": not a regular file ("+tc.kind+")" {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestOpenFileGrows: a file that grows past the cap after Open checked its
// size fails the read instead of being read to its end.
func TestOpenFileGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows.txt")
	if err := os.WriteFile(p, []byte("0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Repeat("x", 100)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := io.ReadAll(r)
	if err == nil || !strings.Contains(err.Error(), "grew past the 8-byte cap") || len(b) != 8 {
		t.Fatalf("read %d bytes, %v", len(b), err)
	}
}

// TestDecodeRefusesDeepNesting: the TOML decoder's cost grows with the
// square of the depth (before: 30,000 nested inline tables, 300 KB, took
// 14.7 GB), so Decode refuses nesting beyond MaxDepth by a linear scan,
// with the line it found it on; anything as deep as MaxDepth still decodes.
func TestDecodeRefusesDeepNesting(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	const head = "name = 'x'\n# [[{ a comment }]]\n"
	long := ("a" + strings.Repeat(".b", 30000))[:40] + "..."
	for _, tc := range []struct {
		name, text string
		line       int    // 0: accepted
		key        string // the top-level key or table the depth is under
	}{
		{"inline tables 30000", head + "x = " + nest("{a=", "}", 30000) + "\n", 3, "x"},
		{"arrays 100000", head + "x = " + nest("[", "]", 100000) + "\n", 3, "x"},
		{"dotted key 30000", head + "a" + strings.Repeat(".b", 30000) + " = 1\n", 3, long},
		{"header 30000", head + "[a" + strings.Repeat(".b", 30000) + "]\n", 3, long},
		{"arrays of inline tables", head + "x = [\n" + nest("[{a=", "}]", 20) + "\n]\n", 4, "x"},
		{"inline tables after a multi-line string", head + "s = '''\n[[[[\n'''\nx = " + nest("{a=", "}", 40) + "\n", 6, "x"},
		{"depth 33", head + "x = " + nest("[", "]", 32) + "\n", 3, "x"},
		{"depth 32", head + "x = " + nest("[", "]", 31) + "\n", 0, ""},
		{"header and keys 32", head + "[t" + strings.Repeat(".u", 29) + "]\na.b = 1\n", 0, ""},
		{"header and keys 33", head + "[t" + strings.Repeat(".u", 29) + "]\na.b.c = 1\n", 4, "a.b.c"},
		{"brackets in strings", head + `y = "[[[[{{{{\"[[[["` + "\nz = '{{{{[[[['\nw = \"\"\"\n" + strings.Repeat("[{", 100) + "\n\"\"\"\n", 0, ""},
		{"brackets in comments", head + "y = 1 # " + strings.Repeat("[{", 100) + "\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The cost is bounded by the refusal itself: each deep case
			// below must be refused by the scan, at its line, before the
			// decoder sees it.
			var v map[string]any
			_, err := Decode("deep.toml", tc.text, &v)
			if tc.line == 0 {
				// (The decoder may still refuse: an empty deep table is an
				// unknown key to it.)
				if err != nil && strings.Contains(err.Error(), "refused before decoding") {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "deep.toml" || ce.Line != tc.line || ce.Key != tc.key ||
				!strings.Contains(ce.Msg, "at most 32") {
				t.Fatalf("got %#v (%v), want deep.toml:%d: %s: ... at most 32", ce, err, tc.line, tc.key)
			}
		})
	}
}

func TestRangeHelpers(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for nil
	}{
		{"float in", Float(0.5, 0, 1), ""},
		{"float bounds", Float(1, 0, 1), ""},
		{"float NaN", Float(nan, 0, 1), "got NaN: want a finite number in [0, 1]"},
		{"float inf", Float(inf, 0, inf), "got +Inf: want a finite number in [0, +Inf]"},
		{"float -inf", Float(-inf, -inf, 0), "got -Inf"},
		{"float over", Float(2, 0, 1), "got 2: want a finite number in [0, 1]"},
		{"positive 0", Positive(0, 1), "got 0: want a finite number in (0, 1]"},
		{"positive NaN", Positive(nan, 1), "got NaN"},
		{"positive in", Positive(1, 1), ""},
		{"int in", Int(7, 0, 7), ""},
		{"int over", Int(8, 0, 7), "got 8: want 0..7"},
		{"time in", Time(1.5, "ms"), ""},
		{"time zero", Time(0, "s"), ""},
		{"time NaN", Time(nan, "s"), "got NaN: want a time in [0, 1.153e+09] s (2^60 ns"},
		{"time huge", Time(1e15, "ms"), "got 1e+15: want a time in [0, 1.153e+12] ms"},
		{"time negative", Time(-1, "us"), "got -1"},
		{"time at the bound", Time(MaxTime("ns"), "ns"), ""},
		{"positive time zero", PositiveTime(0, "us"), "got 0: want a time in (0, 1.153e+15] us"},
		{"positive time inf", PositiveTime(inf, "us"), "got +Inf"},
		{"entries at the bound", Entries(MaxEntries(48), 1, 48), ""},
		{"entries over", Entries(MaxEntries(48)+1, 1, 48), "48 B each, at most a quarter of this machine's"},
		{"entries under", Entries(0, 1, 48), "got 0: want 1.."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == "" && tc.err != nil:
				t.Fatalf("got %v, want nil", tc.err)
			case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", tc.err, tc.want)
			}
		})
	}
	if m := MemTotal(); m < 1<<20 {
		t.Errorf("MemTotal %d", m)
	}
}

// TestScanDepth: the scan counts valid text exactly as deep as it decodes,
// and every config file of the repository is far from MaxDepth.
func TestScanDepth(t *testing.T) {
	files, err := filepath.Glob("../configs/*.toml")
	more, _ := filepath.Glob("../configs/*/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("configs: %v %v", files, err)
	}
	texts := map[string]string{
		"flat":             "a = 1\n",
		"table":            "[t]\na = 1\n",
		"dotted":           "a.b.c = 1\n",
		"array of tables":  "[[t]]\na = 1\n[[t]]\nb = [1]\n",
		"nested arrays":    "[[t]]\n[[t.u]]\na = 1\n[t.v]\nb = 2\n",
		"quoted parts":     "[[\"t\"]]\n['t'.u]\na = {b = [{c = 1}]}\n",
		"multi-line value": "a = [\n  [1, 2], # [[[\n  [[3]],\n]\ns = \"\"\"\n[[[[\"\"\"\n",
	}
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(b)
	}
	for name, text := range texts {
		var v map[string]any
		if _, err := toml.Decode(text, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := scanDepth(name, text, MaxDepth)
		if want := valueDepth(v); err != nil || got != want || (strings.HasSuffix(name, ".toml") && got > 6) {
			t.Errorf("%s: scanDepth %d, %v; decoded %d deep", name, got, err, want)
		}
	}
}

// valueDepth is the nesting depth of a decoded TOML value as checkDepth
// counts it: a key or an array element one level below its table or array.
func valueDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			d = max(d, 1+valueDepth(x))
		}
	case []map[string]any:
		for _, x := range v {
			d = max(d, 1+valueDepth(x))
		}
	case []any:
		for _, x := range v {
			d = max(d, 1+valueDepth(x))
		}
	}
	return d
}

// FuzzCheckDepth: the scan never undercounts. Text the decoder takes nests
// at most as deep as scanDepth says (so at most MaxDepth when checkDepth
// lets it through).
func FuzzCheckDepth(f *testing.F) {
	f.Add("[a.b]\nc = [{d = 1}]\n")
	f.Add("a.'b.c'.\"d\" = {e = [[1], [2, {f.g = 3}]]}\n")
	f.Add("[[t]]\nx = '''\n[[\n'''\ny = \"\\\"[\" # [\n")
	f.Add("x = [ # c\n  [1],\n  {a = 2},\n]\n")
	f.Fuzz(func(t *testing.T, text string) {
		deepest, err := scanDepth("f.toml", text, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if _, err := toml.Decode(text, &v); err != nil {
			return
		}
		if d := valueDepth(v); d > deepest {
			t.Fatalf("scanDepth counted %d, the decoded value is %d deep", deepest, d)
		}
	})
}
