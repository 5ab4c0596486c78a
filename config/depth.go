package config

import (
	"fmt"
	"strings"
)

// MaxDepth is the deepest nesting a TOML file may have: table-header parts,
// dotted-key parts, arrays and inline tables together ("[a.b]" then
// "c = [{d = 1}]" puts d at depth 5). The files in configs/ nest 5 deep at
// most.
// The TOML decoder's time and memory grow with the square of the depth (an
// inline table 30,000 deep, 300 KB of text, takes 15 GB), so Decode measures
// the depth with a linear scan first and refuses deeper text.
const MaxDepth = 32

// depthScan is the state of checkDepth's scan.
type depthScan struct {
	name string
	text string
	i    int
	line int
	// stack holds the open arrays and inline tables: the bracket and the
	// depth of the value the bracket opens.
	stack []frame
	key   string // the current top-level key or table header, for errors
	limit int    // the depth refused
	// arrays holds the paths of arrays of tables (the parts, each ended by
	// a NUL byte).
	arrays map[string]bool
	// deepest is the deepest nesting seen.
	deepest int
}

type frame struct {
	open byte // '[' or '{'
	base int  // depth of the array or inline table itself
}

// checkDepth returns an *Error at the first place text nests deeper than
// MaxDepth.
func checkDepth(name, text string) error {
	_, err := scanDepth(name, text, MaxDepth)
	return err
}

// scanDepth returns the deepest nesting of text, or an *Error at the first
// place it nests deeper than limit. It follows TOML's lexical structure
// (strings, comments, headers, keys, brackets) well enough never to count
// less than the depth of valid text; on invalid text it may count wrongly
// past the first syntax error, where the decoder stops.
func scanDepth(name, text string, limit int) (int, error) {
	s := &depthScan{name: name, text: text, line: 1, limit: limit}
	header := 0 // depth of the current table
	for s.i < len(text) {
		// At the start of a top-level line: blank, comment, header or key.
		s.skipSpace()
		if s.i >= len(text) {
			break
		}
		switch c := text[s.i]; c {
		case '\n':
			s.i++
			s.line++
			continue
		case '#':
			s.skipLine()
			continue
		case '[':
			s.i++
			array := s.i < len(text) && text[s.i] == '['
			if array {
				s.i++
			}
			start := s.i
			parts := s.keyParts("]")
			s.key = strings.TrimSpace(text[start:s.i])
			if err := s.at(parts); err != nil {
				return s.deepest, err
			}
			header = s.tableDepth(text[start:s.i], array)
			if err := s.at(header); err != nil {
				return s.deepest, err
			}
			s.skipLine()
			continue
		}
		start := s.i
		parts := s.keyParts("=")
		s.key = strings.TrimSpace(text[start:s.i])
		if s.i >= len(text) || text[s.i] != '=' {
			s.skipLine() // not a key = value line: the decoder will say so
			continue
		}
		s.i++
		if err := s.value(header + parts); err != nil {
			return s.deepest, err
		}
	}
	return s.deepest, nil
}

// tableDepth is the depth of the table a header names (its key, the text
// between the brackets, of at most limit parts): one level a part, and one
// more for each part that names an array of tables (declared by an earlier
// [[header]], or this one when array), whose elements are a level below it.
func (s *depthScan) tableDepth(key string, array bool) int {
	if s.arrays == nil {
		s.arrays = map[string]bool{}
	}
	var path strings.Builder
	d := 0
	for k := 0; k < len(key); {
		// One part: a quoted string or a bare key, then a dot or the end.
		for k < len(key) && (key[k] == ' ' || key[k] == '\t') {
			k++
		}
		start := k
		if k < len(key) && (key[k] == '"' || key[k] == '\'') {
			q := key[k]
			for k++; k < len(key) && key[k] != q; k++ {
				if key[k] == '\\' && q == '"' {
					k++
				}
			}
			k = min(k+1, len(key))
		}
		for k < len(key) && key[k] != '.' {
			k++
		}
		part := strings.TrimSpace(key[start:k])
		if len(part) >= 2 && (part[0] == '"' || part[0] == '\'') && part[len(part)-1] == part[0] {
			part = part[1 : len(part)-1]
		}
		path.WriteString(part)
		path.WriteByte(0)
		d++
		if s.arrays[path.String()] {
			d++
		}
		k++ // the dot
	}
	if array && !s.arrays[path.String()] {
		s.arrays[path.String()] = true
		d++
	}
	return d
}

// at notes depth d at the current place: an error beyond the limit.
func (s *depthScan) at(d int) error {
	s.deepest = max(s.deepest, d)
	if d > s.limit {
		return s.errorf(d)
	}
	return nil
}

// keyParts reads a dotted key up to (not past) one of the bytes in stop or
// the end of the line, and returns its number of parts.
func (s *depthScan) keyParts(stop string) int {
	parts := 1
	for s.i < len(s.text) {
		c := s.text[s.i]
		switch {
		case c == '\n' || strings.IndexByte(stop, c) >= 0:
			return parts
		case c == '"' || c == '\'':
			s.skipString()
			continue
		case c == '.':
			parts++
		}
		s.i++
	}
	return parts
}

// value scans a top-level value at depth d to the end of its line (and of
// every line its arrays, inline tables and strings span).
func (s *depthScan) value(d int) error {
	if err := s.at(d); err != nil {
		return err
	}
	s.stack = s.stack[:0]
	for s.i < len(s.text) {
		c := s.text[s.i]
		switch c {
		case '\n':
			if len(s.stack) == 0 {
				return nil
			}
			s.line++
		case '#':
			s.skipLine()
			continue
		case '"', '\'':
			s.skipString()
			continue
		case '[':
			s.stack = append(s.stack, frame{'[', d})
			d++
			if err := s.at(d); err != nil {
				return err
			}
		case '{':
			s.stack = append(s.stack, frame{'{', d})
			s.i++
			var err error
			if d, err = s.inlineKey(d); err != nil {
				return err
			}
			continue
		case ']', '}':
			if n := len(s.stack); n > 0 {
				d = s.stack[n-1].base
				s.stack = s.stack[:n-1]
			}
		case ',':
			if n := len(s.stack); n > 0 {
				top := s.stack[n-1]
				if top.open == '[' {
					d = top.base + 1
				} else {
					s.i++
					var err error
					if d, err = s.inlineKey(top.base); err != nil {
						return err
					}
					continue
				}
			}
		}
		s.i++
	}
	return nil
}

// inlineKey reads a key of an inline table at depth base, up to its '=' (or
// the '}' of an empty table), and returns the depth of its value.
func (s *depthScan) inlineKey(base int) (int, error) {
	parts := s.keyParts("=}")
	if s.i < len(s.text) && s.text[s.i] == '=' {
		s.i++
	}
	d := base + parts
	return d, s.at(d)
}

// skipString skips a basic or literal string, single- or multi-line, from
// its opening quote; a single-line string also ends at a newline (invalid
// TOML), which is left for the caller.
func (s *depthScan) skipString() {
	s.skipStringBody()
	s.i = min(s.i, len(s.text)) // an escape may have stepped past the end
}

func (s *depthScan) skipStringBody() {
	q := s.text[s.i]
	if strings.HasPrefix(s.text[s.i:], strings.Repeat(string(q), 3)) {
		s.i += 3
		for s.i < len(s.text) {
			c := s.text[s.i]
			switch {
			case c == '\\' && q == '"':
				s.i++
				if s.i < len(s.text) && s.text[s.i] == '\n' {
					s.line++
				}
			case c == '\n':
				s.line++
			case c == q && strings.HasPrefix(s.text[s.i:], strings.Repeat(string(q), 3)):
				s.i += 3
				for s.i < len(s.text) && s.text[s.i] == q { // up to two quotes of content
					s.i++
				}
				return
			}
			s.i++
		}
		return
	}
	s.i++
	for s.i < len(s.text) {
		c := s.text[s.i]
		switch {
		case c == '\n':
			return
		case c == '\\' && q == '"':
			s.i++
		case c == q:
			s.i++
			return
		}
		s.i++
	}
}

func (s *depthScan) skipSpace() {
	for s.i < len(s.text) && (s.text[s.i] == ' ' || s.text[s.i] == '\t' || s.text[s.i] == '\r') {
		s.i++
	}
}

// skipLine moves to the newline that ends the line (not past it).
func (s *depthScan) skipLine() {
	if j := strings.IndexByte(s.text[s.i:], '\n'); j >= 0 {
		s.i += j
	} else {
		s.i = len(s.text)
	}
}

func (s *depthScan) errorf(d int) error {
	key := s.key
	if len(key) > 40 {
		key = key[:40] + "..."
	}
	return &Error{File: s.name, Line: s.line, Key: key,
		Msg: fmt.Sprintf("nested %d deep or more: at most %d (table headers, dotted keys, arrays and inline tables together); refused before decoding", d, s.limit)}
}
