// Package config loads ccbed's TOML files strictly: unknown keys, syntax errors
// and values of the wrong type are errors that name the file, the line and the
// key, and File.Errorf gives validation errors the same shape. switchd, hostd,
// pktgen and testbed configs all go through it, so a misspelt key is caught
// when a file is loaded instead of being silently ignored.
//
// It is also the one way ccbed opens a file it reads (ReadFile, Open: TOML
// files, flow-size CDFs, ns-3 topology and flow files): regular files only, no
// larger than a cap, so that a device, a FIFO or a directory named by mistake
// is an error at once rather than a read that never ends. TOML text nested
// deeper than MaxDepth is refused before it is decoded. Float, Positive, Int,
// Time and Entries range-check numeric fields (NaN and the infinities never
// pass), with upper bounds from the machine: the int64-ns clocks (MaxTimeNs)
// and its memory (MaxEntries).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is a configuration error at a place in a file.
type Error struct {
	File string
	Line int    // 1-based; 0 when unknown
	Key  string // dotted key path, e.g. "ports.link_gbps"; may be empty
	Msg  string
	// Suggest, for an unknown key, is the nearest key the decoder knows
	// (Suggest); "" when none is near. Error adds it to the message.
	Suggest string
	// Err is the underlying error, when there is one (an os error opening
	// the file): errors.Is(err, fs.ErrNotExist) sees through an *Error.
	Err error
}

// Unwrap returns the underlying error, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Error formats the error as file:line: key: message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %s", e.Msg)
	if e.Suggest != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", e.Suggest)
	}
	return b.String()
}

// File is a loaded configuration file: its path and text, kept to locate keys
// in later validation errors.
type File struct {
	Path  string
	lines []string
	md    toml.MetaData
}

var typeErrRe = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// Load reads path and decodes it into v (a pointer to a struct with toml tags),
// strictly. Fields not in the file keep the values v had, so fill v with
// defaults first. path must be a regular file of at most MaxTOMLBytes (Open),
// and its tables, keys and values nested at most MaxDepth deep (Decode).
func Load(path string, v any) (*File, error) {
	src, err := ReadFile(path, MaxTOMLBytes)
	if err != nil {
		return nil, err
	}
	return Decode(path, string(src), v)
}

// Decode is Load on text already read; name is used in errors. Unknown keys
// are one *Error each (joined: errors.As finds the first), each with the
// nearest key v knows when one is near (Suggest); the File is returned with
// them, the rest of the text decoded into v. Text longer
// than MaxTOMLBytes, or nested deeper than MaxDepth, is refused before it is
// decoded: the decoder's time and memory grow with the square of the depth.
func Decode(name, text string, v any) (*File, error) {
	if len(text) > MaxTOMLBytes {
		return nil, tooBig(name, int64(len(text)), MaxTOMLBytes)
	}
	if err := checkDepth(name, text); err != nil {
		return nil, err
	}
	f := &File{Path: name, lines: strings.Split(text, "\n")}
	md, err := toml.Decode(text, v)
	f.md = md
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		}
		if m := typeErrRe.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{File: name, Line: line, Key: m[2], Msg: m[3]}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if und := md.Undecoded(); len(und) > 0 {
		// Every unknown key, each at its line with the nearest known key;
		// the rest of the file decoded: f is returned with them, so that
		// a caller listing every error (testbed validate) can go on.
		return f, errors.Join(f.unknownKeys(und, v)...)
	}
	return f, nil
}

// DecodeTable decodes tbl, a table of a file already decoded into a
// map (a scheme's [cc.params], say), strictly into v, over the values v has:
// unknown keys and wrong types are errors. An error is a *Error whose Key is
// relative to the table (no file or line: the caller maps it into its own
// file, as File.Errorf(prefix+"."+Key, ...)).
func DecodeTable(tbl map[string]any, v any) error {
	if len(tbl) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(tbl); err != nil {
		return &Error{Msg: err.Error(), Err: err}
	}
	_, err := Decode("", buf.String(), v)
	var ce *Error
	if errors.As(err, &ce) {
		ce.File, ce.Line = "", 0
	}
	return err
}

// IsDefined reports whether the file sets key (dotted path).
func (f *File) IsDefined(key ...string) bool { return f.md.IsDefined(key...) }

// Errorf builds an Error for key (dotted path; for arrays of tables an index may
// follow the table name: "ports[2].link_gbps") at the key's line in the file.
func (f *File) Errorf(key, format string, args ...any) error {
	return &Error{File: f.Path, Line: f.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Line finds the line (1-based) where key is set, or 0. key is a dotted path of
// table names and a final key; a table name may carry an index "[i]" to select
// the i-th table of an array of tables. A key that names a table finds its
// header.
func (f *File) Line(key string) int {
	parts := strings.Split(key, ".")
	want := make([]string, len(parts))
	wantIdx := make([]int, len(parts))
	for i, p := range parts {
		want[i], wantIdx[i] = p, -1
		if j := strings.IndexByte(p, '['); j > 0 && strings.HasSuffix(p, "]") {
			if n, err := strconv.Atoi(p[j+1 : len(p)-1]); err == nil {
				want[i], wantIdx[i] = p[:j], n
			}
		}
	}
	table := "" // current table path, without indexes
	counts := map[string]int{}
	curIdx := map[string]int{} // array table path -> index of its current element
	parent := strings.Join(want[:len(want)-1], ".")
	last := want[len(want)-1]
	full := strings.Join(want, ".")
	for n, raw := range f.lines {
		line := strings.TrimSpace(stripComment(raw))
		switch {
		case strings.HasPrefix(line, "[["):
			table = strings.TrimSpace(strings.Trim(line, "[] "))
			curIdx[table] = counts[table]
			counts[table]++
			// A new element of an array of tables starts its nested
			// arrays afresh: [[ports.flow]] counts from 0 in each [[ports]].
			for t := range counts {
				if strings.HasPrefix(t, table+".") {
					delete(counts, t)
					delete(curIdx, t)
				}
			}
			if table == full && f.indexesMatch(want, wantIdx, curIdx) {
				return n + 1
			}
			continue
		case strings.HasPrefix(line, "["):
			table = strings.TrimSpace(strings.Trim(line, "[] "))
			if table == full && f.indexesMatch(want, wantIdx, curIdx) {
				return n + 1
			}
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq <= 0 {
			continue
		}
		k := strings.Trim(strings.TrimSpace(line[:eq]), `"'`)
		path := k
		if table != "" {
			path = table + "." + k
		}
		if (table == parent && k == last) || (path == full) {
			if f.indexesMatch(want, wantIdx, curIdx) {
				return n + 1
			}
		}
	}
	return 0
}

// indexesMatch checks the array indexes asked for in the key against the
// current elements of the arrays of tables.
func (f *File) indexesMatch(want []string, wantIdx []int, curIdx map[string]int) bool {
	for i := range want {
		if wantIdx[i] < 0 {
			continue
		}
		if curIdx[strings.Join(want[:i+1], ".")] != wantIdx[i] {
			return false
		}
	}
	return true
}

// stripComment removes a # comment that is not inside a string.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}
