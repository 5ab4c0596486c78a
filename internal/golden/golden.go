// Package golden checks a test's output against a golden file that
// changes only on purpose: the digest tests of fabric and testbed keep
// their hashes in one.
package golden

import (
	"os"
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
