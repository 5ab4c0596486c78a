package testbed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
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
	if err != nil {
		return nil, err
	}
	e.file, e.dir = f, dir
	e.source = &source{path: name, text: text}
	for _, o := range overrides {
		if err := e.override(o); err != nil {
			return nil, err
		}
	}
	if err := e.Validate(); err != nil {
		return nil, e.blameOverride(err)
	}
	return &e, nil
}

// source is the experiment file as read, and the overrides applied over it.
type source struct {
	path, text string
	overrides  []string
}

// overrideKey is a dotted key of bare TOML key parts.
var overrideKey = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// ParseOverride splits a key=value override: key a dotted path of the
// experiment file's keys (cc.scheme, topology.link_gbps,
// cc.params.q_ref_bytes), value a TOML value (25, 1e-3, true, [1, 2],
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
	if _, err := config.Decode("-set "+kv, key+" = "+value+"\n", e); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			ce.Line = 0
			if ce.Key == "" {
				ce.Key = key
			}
		}
		return err
	}
	e.source.overrides = append(e.source.overrides, kv)
	return nil
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
		key = strings.TrimSpace(key)
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
