package testbed

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// LatestLink is the symbolic link that RunWith keeps beside the results
// directories of runs: results/latest points at the newest run's directory
// (results/<experiment>), by a relative path.
const LatestLink = "latest"

// LinkLatest points the symbolic link LatestLink in dir's parent at dir, by
// dir's base name. The link is replaced atomically (a new link under a
// temporary name, renamed over the old one), so that at every instant it is
// the old link or the new one. It refuses a dir named LatestLink itself and
// will not replace a LatestLink that is a directory.
func LinkLatest(dir string) error {
	parent, name := filepath.Split(filepath.Clean(dir))
	if name == LatestLink {
		return fmt.Errorf("%s: a results directory named %q cannot be linked as the latest", dir, LatestLink)
	}
	if parent == "" {
		parent = "."
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(parent, fmt.Sprintf(".%s.tmp-%d-%s", LatestLink, os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Symlink(name, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(parent, LatestLink)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
