package golden

import (
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
