package golden

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Errorf(f string, a ...any) { r.failed, r.msg = true, f }
func (r *recorder) Fatalf(f string, a ...any) { r.failed, r.msg = true, f; panic(r) }
func (r *recorder) Fatal(a ...any)            { r.failed = true; panic(r) }

func check(f File, text string, update bool) (r *recorder) {
	r = &recorder{}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f.Check(r, text, update)
	return r
}

func TestCheck(t *testing.T) {
	f := File{Path: filepath.Join(t.TempDir(), "x.golden"), Flag: "update-x", What: "x"}
	for _, tc := range []struct {
		name, text string
		update     bool
		fail       string // "" for none; else a part of the message
	}{
		{"missing", "a 1\n", false, "make it with"},
		{"write", "a 1\n", true, ""},
		{"same", "a 1\n", false, ""},
		{"moved", "a 2\n", false, "rerun with"},
		{"rewrite", "a 2\n", true, ""},
		{"same again", "a 2\n", false, ""},
	} {
		r := check(f, tc.text, tc.update)
		if r.failed != (tc.fail != "") || !strings.Contains(r.msg, tc.fail) {
			t.Errorf("%s: failed %v (%q), want failure %q", tc.name, r.failed, r.msg, tc.fail)
		}
	}
}

// TestHash: a Hash is SHA-256 of "name length" lines, each followed by the
// file's bytes, then values' JSON; a missing file hashes as an empty one.
// The digests in fabric's and testbed's golden files were made this way.
func TestHash(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "q.csv")
	if err := os.WriteFile(p, []byte("t,q\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := NewHash()
	h.File(t, "q.csv", p)
	h.File(t, "fct.csv", filepath.Join(dir, "fct.csv"))
	h.JSON(t, map[string]int{"b": 2, "a": 1})
	want := sha256.Sum256([]byte("q.csv 8\nt,q\n1,2\nfct.csv 0\n" + `{"a":1,"b":2}`))
	if got := h.String(); got != hex.EncodeToString(want[:]) {
		t.Errorf("hash %s, want %x", got, want)
	}
}

// TestHashes: a golden file's "name hash" lines, read back by name.
func TestHashes(t *testing.T) {
	f := File{Path: filepath.Join(t.TempDir(), "x.golden"), Flag: "update-x", What: "x"}
	if err := os.WriteFile(f.Path, []byte("star-none ab12\nleafspine-dcqcn cd34\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := f.Hashes(t)
	if len(got) != 2 || got["star-none"] != "ab12" || got["leafspine-dcqcn"] != "cd34" {
		t.Errorf("Hashes = %v", got)
	}
}
