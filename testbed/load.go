package testbed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/testbed/report"
)

// LoadWith reads an experiment file, applies overrides over it (Override),
// and validates the result; errors name the file, line and key, or the
// override that set the key.
func LoadWith(path string, overrides []string) (*Experiment, error) {
	text, err := config.ReadFile(path, config.MaxTOMLBytes)
	if err != nil {
		return nil, err
	}
	return decodeWith(path, string(text), filepath.Dir(path), overrides)
}

// DecodeWith is LoadWith on text already read; dir anchors relative paths.
func DecodeWith(name, text, dir string, overrides []string) (*Experiment, error) {
	return decodeWith(name, text, dir, overrides)
}

func decodeWith(name, text, dir string, overrides []string) (*Experiment, error) {
	e := Default()
	f, err := config.Decode(name, text, &e)
	if f == nil {
		return nil, err // a syntax or type error: nothing more to check
	}
	// Unknown keys (err) leave the rest decoded: the checks go on, and
	// every error found is returned, in the file's order.
	errs := []error{err}
	if err := f.Require(&e); err != nil {
		return nil, joinSorted(append(errs, err))
	}
	e.file, e.dir = f, dir
	e.source = &source{path: name, text: text}
	for _, o := range overrides {
		if err := e.override(o); err != nil {
			return nil, joinSorted(append(errs, err))
		}
	}
	if err := e.Validate(); err != nil {
		for _, one := range splitErrors(err) {
			errs = append(errs, e.blameOverride(one))
		}
	}
	if err := joinSorted(errs); err != nil {
		return nil, err
	}
	return &e, nil
}

// splitErrors is the errors err joins (errors.Join), or err alone; none for
// nil.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, one := range j.Unwrap() {
			out = append(out, splitErrors(one)...)
		}
		return out
	}
	return []error{err}
}

// joinSorted joins the errors of errs (nil ones dropped, joined ones
// flattened) in the order of their place: a file's errors by line (errors
// without one, and the overrides', after them in the order found).
func joinSorted(errs []error) error {
	var flat []error
	for _, err := range errs {
		flat = append(flat, splitErrors(err)...)
	}
	line := func(err error) int {
		var ce *config.Error
		if errors.As(err, &ce) && ce.Line > 0 && !strings.HasPrefix(ce.File, "-set ") {
			return ce.Line
		}
		return math.MaxInt
	}
	sort.SliceStable(flat, func(i, j int) bool { return line(flat[i]) < line(flat[j]) })
	switch len(flat) {
	case 0:
		return nil
	case 1:
		return flat[0]
	}
	return errors.Join(flat...)
}

// source is the experiment file as read, and the overrides applied over it.
type source struct {
	path, text string
	overrides  []string
}

// overrideKey is a dotted key of bare TOML key parts.
var overrideKey = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// arrayIndex is an index part of an override's key (.1 in flows.1.src).
var arrayIndex = regexp.MustCompile(`\.([0-9]+)\b`)

// ParseOverride splits a key=value override: key a dotted path of the
// experiment file's keys (cc.scheme, topology.link_gbps,
// cc.params.q_ref_bytes; flows.1.rate_gbps for a key of the second
// [[flows]] entry), value a TOML value (25, 1e-3, true, [1, 2],
// "text"), or, when it does not parse as one, a string (dcqcn).
func ParseOverride(kv string) (key, value string, err error) {
	key, value, ok := strings.Cut(kv, "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || key == "" {
		return "", "", fmt.Errorf("-set %q: want key=value", kv)
	}
	if !overrideKey.MatchString(key) {
		return "", "", fmt.Errorf("-set %q: key %q: want a dotted path of the experiment file's keys (cc.scheme, topology.link_gbps)", kv, key)
	}
	var probe map[string]any
	if _, err := toml.Decode("v = "+value, &probe); err != nil || value == "" {
		value = strconv.Quote(value)
	}
	return key, value, nil
}

// override decodes one key=value over the experiment with the same strict
// decoder as the file: an unknown key or a value of the wrong type is an
// error naming the override and the key. Tables merge (cc.params.q_ref_bytes
// sets one parameter), except cc.params given whole, which replaces them.
// A key of an entry of an array of tables is reached by the entry's index,
// from 0: flows.1.rate_gbps sets rate_gbps of the second [[flows]]; an index
// past the last entry is an error.
func (e *Experiment) override(kv string) error {
	key, value, err := ParseOverride(kv)
	if err != nil {
		return err
	}
	if key == "cc.params" {
		// A table given whole replaces the parameters (the decoder merges
		// into a map): -set cc.scheme=dcqcn -set cc.params={} drops another
		// scheme's keys.
		e.CC.Params = nil
	}
	// An entry of an array of tables (flows.1.rate_gbps) decodes into that
	// entry alone.
	var target any = e
	inner, outer := key, ""
	if entry, prefix, rest, err := e.arrayEntry(kv, key); err != nil {
		return err
	} else if entry != nil {
		target, inner, outer = entry, rest, prefix+"."
	}
	if _, err := config.Decode("-set "+kv, inner+" = "+value+"\n", target); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			ce.Line = 0
			if ce.Key == "" {
				ce.Key = key
			} else {
				ce.Key = outer + ce.Key
			}
			if ce.Suggest != "" {
				ce.Suggest = outer + ce.Suggest
			}
		}
		return err
	}
	e.source.overrides = append(e.source.overrides, kv)
	return nil
}

// arrayEntry finds the entry of an array of tables that key reaches into:
// for flows.1.rate_gbps, a pointer to e.Flows[1], the prefix "flows.1" and
// the rest, "rate_gbps". It returns a nil entry when key reaches into no
// array of tables (tableArray), and an error naming the override and the
// key when the index is out of range or nothing follows it.
func (e *Experiment) arrayEntry(kv, key string) (entry any, prefix, rest string, err error) {
	parts := strings.Split(key, ".")
	for j := 1; j < len(parts); j++ {
		if strings.Trim(parts[j], "0123456789") != "" {
			continue
		}
		array := strings.Join(parts[:j], ".")
		i, aerr := strconv.Atoi(parts[j])
		if aerr != nil {
			i = -1 // too large: out of range
		}
		entry, n, ok := e.tableArray(array, i)
		if !ok {
			return nil, "", "", nil
		}
		prefix, rest = strings.Join(parts[:j+1], "."), strings.Join(parts[j+1:], ".")
		fail := func(format string, args ...any) error {
			return &config.Error{File: "-set " + kv, Key: key, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case entry == nil && n == 0:
			return nil, "", "", fail("index %s out of range: the experiment has no [[%s]]", parts[j], array)
		case entry == nil:
			return nil, "", "", fail("index %s out of range: the experiment has %d [[%s]], %s.0 to %s.%d", parts[j], n, array, array, array, n-1)
		case rest == "":
			return nil, "", "", fail("want %s.KEY: set one key of the entry (%s.rate_gbps)", prefix, prefix)
		}
		return entry, prefix, rest, nil
	}
	return nil, "", "", nil
}

// tableArray returns a pointer to entry i of the array of tables named key
// (flows, incast, workloads, host_priority, topology.links) and the array's
// length; entry is nil when i is out of range, ok false when key names no
// array of tables.
func (e *Experiment) tableArray(key string, i int) (entry any, n int, ok bool) {
	switch key {
	case "flows":
		entry, n = entryAt(e.Flows, i)
	case "incast":
		entry, n = entryAt(e.Incast, i)
	case "workloads":
		entry, n = entryAt(e.Workloads, i)
	case "host_priority":
		entry, n = entryAt(e.HostPriority, i)
	case "topology.links":
		entry, n = entryAt(e.Topology.Links, i)
	case "link_failures":
		entry, n = entryAt(e.LinkFailures, i)
	default:
		return nil, 0, false
	}
	return entry, n, true
}

// entryAt returns a pointer to s[i], or nil when i is out of range, and
// len(s).
func entryAt[T any](s []T, i int) (any, int) {
	if i < 0 || i >= len(s) {
		return nil, len(s)
	}
	return &s[i], len(s)
}

// blameOverride rewrites a validation error about a key an override set
// (or a key inside it) to name the override rather than the file's line.
func (e *Experiment) blameOverride(err error) error {
	var ce *config.Error
	if e.source == nil || !errors.As(err, &ce) || ce.Key == "" {
		return err
	}
	for i := len(e.source.overrides) - 1; i >= 0; i-- {
		kv := e.source.overrides[i]
		key, _, _ := strings.Cut(kv, "=")
		// Validation names an entry of an array of tables flows[1], -set
		// flows.1.
		key = arrayIndex.ReplaceAllString(strings.TrimSpace(key), "[$1]")
		if ce.Key == key || strings.HasPrefix(ce.Key, key+".") || strings.HasPrefix(key, ce.Key+".") {
			ce.File, ce.Line = "-set "+kv, 0
			return err
		}
	}
	return err
}

// Snapshot is the experiment as run, for summary.json's "config": the file's
// path, SHA-256 and text, the overrides, and the effective experiment
// (defaults filled, overrides and flags applied) keyed as in the file. Nil
// for an experiment not read through Load, Decode or LoadWith.
func (e *Experiment) Snapshot() *report.ConfigSnapshot {
	if e.source == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(e.source.text))
	s := &report.ConfigSnapshot{Path: e.source.path, SHA256: hex.EncodeToString(sum[:]), Text: e.source.text,
		Overrides: append([]string(nil), e.source.overrides...)}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(e); err == nil {
		var m map[string]any
		if _, err := toml.Decode(b.String(), &m); err == nil {
			s.Effective = m
		}
	}
	return s
}
