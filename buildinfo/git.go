package buildinfo

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// maxGitFile bounds what gitRevision reads of a .git file (HEAD, a ref,
// packed-refs).
const maxGitFile = 1 << 20

// gitRevision is the commit HEAD names in the git repository holding dir
// (dir or a parent of it), a linked worktree's included; "" when there is
// none or it cannot be read. It reads files only: no git command runs.
func gitRevision(dir string) string {
	gitDir := ""
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				gitDir = p
			} else if b := readSmall(p); strings.HasPrefix(b, "gitdir:") {
				gitDir = strings.TrimSpace(strings.TrimPrefix(b, "gitdir:"))
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			break
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
	if gitDir == "" {
		return ""
	}
	common := gitDir
	if c := strings.TrimSpace(readSmall(filepath.Join(gitDir, "commondir"))); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	ref, hash := parseHead(readSmall(filepath.Join(gitDir, "HEAD")))
	if hash != "" || ref == "" {
		return hash
	}
	for _, d := range []string{gitDir, common} {
		if _, h := parseHead(readSmall(filepath.Join(d, filepath.FromSlash(ref)))); h != "" {
			return h
		}
	}
	return packedRef(readSmall(filepath.Join(common, "packed-refs")), ref)
}

// parseHead reads a HEAD (or loose ref) file: "ref: refs/heads/x" gives the
// ref, a 40- or 64-digit hex line the commit.
func parseHead(s string) (ref, hash string) {
	s = strings.TrimSpace(s)
	if r, ok := strings.CutPrefix(s, "ref:"); ok {
		r = strings.TrimSpace(r)
		if strings.HasPrefix(r, "refs/") && !strings.Contains(r, "..") {
			return r, ""
		}
		return "", ""
	}
	if isHash(s) {
		return "", s
	}
	return "", ""
}

// packedRef is ref's commit in a packed-refs file's text ("" when absent).
func packedRef(text, ref string) string {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		h, r, ok := strings.Cut(sc.Text(), " ")
		if ok && r == ref && isHash(h) {
			return h
		}
	}
	return ""
}

// isHash reports whether s is a full SHA-1 or SHA-256 object name.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// readSmall is the text of a regular file of at most maxGitFile bytes; ""
// otherwise.
func readSmall(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxGitFile {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
