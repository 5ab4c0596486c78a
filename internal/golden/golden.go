// Package golden checks a test's output against a golden file that
// changes only on purpose: the digest tests of fabric and testbed keep
// their hashes in one.
package golden

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// File is a golden file and the flag of its test that rewrites it.
type File struct {
	// Path is the file, relative to the test's package directory.
	Path string
	// Flag is the name of the test flag that rewrites it (without "-").
	Flag string
	// What names what moved when the text differs ("the engines' behaviour").
	What string
}

// Check compares text with the file's content and fails t when they
// differ, with both in the message. With update it writes text to the file
// instead.
func (f File) Check(t testing.TB, text string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(f.Path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", f.Path)
		return
	}
	want, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatalf("%v (make it with -%s)", err, f.Flag)
	}
	if string(want) != text {
		t.Errorf("%s moved; if on purpose, rerun with -%s and say why in the commit.\ngot:\n%swant:\n%s", f.What, f.Flag, text, want)
	}
}

// Hashes reads the file as a digest test writes it, one "name hash" line
// per case, into a map from name to hash.
func (f File) Hashes(t testing.TB) map[string]string {
	t.Helper()
	b, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatalf("%v (make it with -%s)", err, f.Flag)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, hash, _ := strings.Cut(line, " ")
		m[name] = hash
	}
	return m
}

// Hash is the SHA-256 a digest test takes of what a run produced: files,
// each as a line "name length" and then its bytes, and values as JSON, in
// the order they are added.
type Hash struct{ h hash.Hash }

// NewHash returns an empty Hash.
func NewHash() *Hash { return &Hash{sha256.New()} }

// File adds the file at path under name; a file that does not exist
// counts as empty (a run that wrote no such file).
func (h *Hash) File(t testing.TB, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	fmt.Fprintf(h.h, "%s %d\n", name, len(b))
	h.h.Write(b)
}

// JSON adds v as encoding/json writes it.
func (h *Hash) JSON(t testing.TB, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	h.h.Write(b)
}

// String is the hash in hexadecimal.
func (h *Hash) String() string { return hex.EncodeToString(h.h.Sum(nil)) }
