package buildinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitRevision: HEAD read from .git without git: a branch's loose ref,
// a packed one, a detached HEAD, a linked worktree's .git file; none
// outside a repository.
func TestGitRevision(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	write := func(p, text string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"loose ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": a + "\n"}, a},
		{"packed ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": "# pack-refs\n" + b + " refs/heads/main\n"}, b},
		{"detached", map[string]string{".git/HEAD": a + "\n"}, a},
		{"worktree", map[string]string{".git": "gitdir: main/.git/worktrees/w\n", "main/.git/worktrees/w/HEAD": "ref: refs/heads/w\n",
			"main/.git/worktrees/w/commondir": "../..\n", "main/.git/refs/heads/w": b + "\n"}, b},
		{"ref escaping", map[string]string{".git/HEAD": "ref: refs/../../x\n"}, ""},
		{"garbage", map[string]string{".git/HEAD": "hello\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, text := range tc.files {
				write(filepath.Join(root, p), text)
			}
			sub := filepath.Join(root, "src", "pkg")
			os.MkdirAll(sub, 0o755)
			if got := gitRevision(sub); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParseHead: a ref is under refs/ without "..", a hash is a full one.
func FuzzParseHead(f *testing.F) {
	f.Add("ref: refs/heads/main\n")
	f.Add(strings.Repeat("a", 40))
	f.Fuzz(func(t *testing.T, s string) {
		ref, hash := parseHead(s)
		if ref != "" && (!strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..")) || hash != "" && !isHash(hash) || ref != "" && hash != "" {
			t.Fatalf("parseHead(%q) = %q, %q", s, ref, hash)
		}
	})
}
