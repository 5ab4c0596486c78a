package testbed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyOut: -o DIR is the command's own directory when DIR is
// absent, empty or one the command wrote; a directory holding other files is
// the deprecated results root; a file is an error.
func TestClassifyOut(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		d := filepath.Join(root, name)
		os.MkdirAll(d, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), nil, 0o644)
		}
		return d
	}
	os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
	for _, tc := range []struct {
		dir, marker string
		want        OutKind
		err         string
	}{
		{filepath.Join(root, "absent"), "summary.json", OutNew, ""},
		{mk("empty"), "summary.json", OutNew, ""},
		{mk("run", "summary.json", "queue.csv"), "summary.json", OutSame, ""},
		{mk("sweep", "plan.json"), SweepPlanFile, OutSame, ""},
		{mk("results", "notes.txt"), "summary.json", OutLegacy, ""},
		{mk("sweepish", "summary.json"), SweepPlanFile, OutLegacy, ""},
		{filepath.Join(root, "file"), "summary.json", 0, "not a directory"},
	} {
		got, err := ClassifyOut(tc.dir, tc.marker)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.dir, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s (%s): %v, %v; want %v", tc.dir, tc.marker, got, err, tc.want)
		}
	}
}

// TestExportFlowsPath: -o DIR writes DIR/flow.txt; "-" and "" standard
// output; a .txt path or an existing file is the deprecated file meaning.
func TestExportFlowsPath(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "flows.dat"), nil, 0o644)
	os.MkdirAll(filepath.Join(root, "d.txt"), 0o755)
	for _, tc := range []struct {
		out, want string
		legacy    bool
	}{
		{"", "", false},
		{"-", "", false},
		{filepath.Join(root, "new"), filepath.Join(root, "new", ExportFlowsFile), false},
		{filepath.Join(root, "d.txt"), filepath.Join(root, "d.txt", ExportFlowsFile), false},
		{filepath.Join(root, "mine.txt"), filepath.Join(root, "mine.txt"), true},
		{filepath.Join(root, "flows.dat"), filepath.Join(root, "flows.dat"), true},
	} {
		got, legacy, err := ExportFlowsPath(tc.out)
		if err != nil || got != tc.want || legacy != tc.legacy {
			t.Errorf("%q: %q, legacy %v, %v; want %q, %v", tc.out, got, legacy, err, tc.want, tc.legacy)
		}
	}
}
