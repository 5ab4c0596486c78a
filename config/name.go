package config

import (
	"fmt"
	"regexp"
)

// MaxNameBytes bounds a name that becomes a file or directory name (Name):
// far below a file system's 255-byte limit on one path element, so that the
// suffixes ccbed adds (-sweep, .partial-<pid>-<random>) still fit.
const MaxNameBytes = 128

// nameRe is the shape of a name that is safe as one path element: a letter
// or digit first (never . or .., never a hidden file, never an option), then
// letters, digits, dots, underscores and hyphens: no separator, no space, no
// control character.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Name returns nil when s can name a file or directory: one path element
// that cannot climb out of its parent or name it (.., ., a/b, /abs), that
// no shell or tool reads as an option or a hidden file, with no space,
// control character or newline, of 1 to MaxNameBytes bytes. Experiment,
// switch and node names go through it before they become paths.
func Name(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty: want a name")
	case len(s) > MaxNameBytes:
		return fmt.Errorf("%d bytes: at most %d", len(s), MaxNameBytes)
	case !nameRe.MatchString(s):
		return fmt.Errorf("%q: want a letter or digit, then letters, digits, '.', '_' or '-' (it becomes a directory or file name)", s)
	}
	return nil
}
