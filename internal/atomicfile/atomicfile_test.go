package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: a file is replaced whole, with mode 0644, and no temporary file
// stays; a failed write (a value JSON cannot encode, a missing directory)
// leaves the old content and nothing beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	if err := Write(p, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(p, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"unencodable", func() error { return WriteJSON(p, func() {}) }},
		{"no directory", func() error { return Write(filepath.Join(dir, "none", "y"), []byte("y")) }},
	} {
		if err := tc.write(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if b, _ := os.ReadFile(p); string(b) != "{\n  \"a\": 1\n}\n" {
			t.Errorf("%s: content now %q", tc.name, b)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
			t.Errorf("%s: left %v", tc.name, m)
		}
	}
}
