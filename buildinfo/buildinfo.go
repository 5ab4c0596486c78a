// Package buildinfo says which ccbed build is running: the main module's
// version, the VCS revision it was built from and the Go toolchain, read from
// runtime/debug.ReadBuildInfo. Every command's -version prints it (package
// cli) and every testbed run records it in summary.json's "build"
// (testbed/report), so that the two always agree.
package buildinfo

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
)

// Info is the ccbed build that is running (summary.json's "build").
type Info struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the main module's version, or "devel" for a build from a
	// working tree without one.
	Version string `json:"version"`
	// VCSRevision is the commit the binary was built from, when the build
	// recorded it.
	VCSRevision string `json:"vcs_revision,omitempty"`
	// VCSModified is true when the working tree had uncommitted changes;
	// absent when the build did not record it.
	VCSModified *bool `json:"vcs_modified,omitempty"`
	// VCSSource says where VCSRevision came from: "buildvcs" (the Go
	// toolchain recorded it), "ldflags" (-ldflags -X ...buildinfo.Revision=),
	// "git" (read at run time from the .git of the source directory the
	// binary was built from: a build with -buildvcs=false); absent when the
	// revision is unknown.
	VCSSource string `json:"vcs_source,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
}

// Revision, when set at link time (go build -ldflags "-X
// github.com/ccbed/ccbed/buildinfo.Revision=$(git rev-parse HEAD)"), is the
// revision Read reports when the toolchain recorded none.
var Revision string

// Read describes the running binary. Without build information (a binary
// built without module support) the version is "devel" and the module and
// revision are empty.
func Read() Info {
	b := Info{Version: "devel", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = info.Main.Path
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.VCSRevision = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			b.VCSModified = &m
		}
	}
	switch {
	case b.VCSRevision != "":
		b.VCSSource = "buildvcs"
	case Revision != "":
		b.VCSRevision, b.VCSSource = Revision, "ldflags"
	default:
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			if rev := gitRevision(filepath.Dir(file)); rev != "" {
				b.VCSRevision, b.VCSSource = rev, "git"
			}
		}
	}
	return b
}

// String is the one line -version prints: module, version, revision (with
// "+modified" for a dirty tree) and Go version, for example
// "github.com/ccbed/ccbed devel rev 1a2b3c4d5e6f+modified go1.26.0".
func (b Info) String() string {
	mod := b.Module
	if mod == "" {
		mod = "ccbed"
	}
	rev := b.VCSRevision
	if rev == "" {
		rev = "unknown"
	} else if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.VCSModified != nil && *b.VCSModified {
		rev += "+modified"
	}
	return fmt.Sprintf("%s %s rev %s %s", mod, b.Version, rev, b.GoVersion)
}
