package testbed

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ccbed/ccbed/testbed/report"
)

// LatestLink is the symbolic link that RunWith keeps to the newest run:
// results/<experiment>/latest points at that experiment's newest run
// directory, results/latest at the newest run of any experiment, each by a
// relative path (report.LatestLink).
const LatestLink = report.LatestLink

// LinkLatest points the symbolic link LatestLink in dir at target, a path
// relative to dir (a run id, or <experiment>/<run id>). The link is
// replaced atomically (a new link under a temporary name, renamed over the
// old one), so that at every instant it is the old link or the new one. It
// replaces only a symbolic link: a file or a directory named LatestLink is
// the user's, and is left as it is (an error).
func LinkLatest(dir, target string) error {
	link := filepath.Join(dir, LatestLink)
	if st, err := os.Lstat(link); err == nil && st.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s exists and is not a symbolic link: not replaced", link)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%s", LatestLink, os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
