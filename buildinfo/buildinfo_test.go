package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	b := Read()
	if b.GoVersion != runtime.Version() || b.Version == "" {
		t.Errorf("Read() = %+v", b)
	}
	s := b.String()
	if !strings.Contains(s, " rev ") || !strings.HasSuffix(s, runtime.Version()) {
		t.Errorf("String() = %q", s)
	}
	modified := true
	b = Info{Module: "m", Version: "v1.2.3", VCSRevision: "0123456789abcdef", VCSModified: &modified, GoVersion: "go1.26"}
	if got, want := b.String(), "m v1.2.3 rev 0123456789ab+modified go1.26"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
