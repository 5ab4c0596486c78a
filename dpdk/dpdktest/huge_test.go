package dpdktest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRemoveStale: of the files in a hugetlbfs directory, removeStale
// deletes those of a HugeDaemon prefix whose test binary is gone (no
// process 999999999) and that no process holds, and keeps one still held (a
// shared flock, as every DPDK process keeps on the pages it maps), one of a
// running test binary's prefix (this one's), and every other prefix's.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name       string
		held, kept bool
	}{
		{stalePrefix + "999999999_2map_0", false, false},
		{stalePrefix + "999999999_2map_1", true, true},
		{fmt.Sprintf("%s%d_2map_0", stalePrefix, os.Getpid()), false, true}, // this test binary's: its cleanup's
		{"rtemap_0", false, true},
		{"ccbed_poolmap_0", false, true},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if tc.held {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			_, err := os.Stat(path)
			if kept := err == nil; kept != tc.kept {
				t.Errorf("%s (held %v): kept %v, want %v", tc.name, tc.held, kept, tc.kept)
			}
		}()
	}
	removeStale([]string{dir})
}
