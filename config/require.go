package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Require checks that the file sets every key that v's struct type tags
// `required:"what it is"`, in every table and in every entry of every
// array of tables that the file has (a [[flows]] entry without src, say):
// such a key would otherwise decode to its zero value, host 0 or flow 0,
// and run silently as something the file did not say. v is what the file
// was decoded into (a pointer to a struct). The first key missing is an
// *Error at the line of its table: "flows[2].src: missing: the sending
// host's index". A table the file does not have is not checked: its keys'
// defaults are the caller's.
//
// Load and Decode do not call it: a caller decodes overrides of one key
// with Decode, and calls Require once on the whole file.
func (f *File) Require(v any) error {
	var m map[string]any
	if _, err := toml.Decode(strings.Join(f.lines, "\n"), &m); err != nil {
		return &Error{File: f.Path, Msg: err.Error(), Err: err}
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return f.require(t, m, "")
}

// require checks the table m against the struct type t; prefix is the
// table's key path ("" at the top, "flows[2]" for an entry).
func (f *File) require(t reflect.Type, m map[string]any, prefix string) error {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		val, set := m[name]
		if what := sf.Tag.Get("required"); what != "" && !set {
			line := f.Line(key)
			if line == 0 && prefix != "" {
				line = f.Line(prefix)
			}
			if i := strings.LastIndexByte(prefix, '['); line == 0 && i > 0 {
				line = f.Line(prefix[:i]) // an inline table: the array's key
			}
			return &Error{File: f.Path, Line: line, Key: key, Msg: "missing: " + what}
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var entries []any // an array of tables: [[x]] entries, or x = [{...}, ...]
		switch sub := val.(type) {
		case map[string]any:
			if err := f.require(ft, sub, key); err != nil {
				return err
			}
			continue
		case []map[string]any:
			for _, e := range sub {
				entries = append(entries, e)
			}
		case []any:
			entries = sub
		}
		if len(entries) == 0 || (ft.Kind() != reflect.Slice && ft.Kind() != reflect.Array) {
			continue
		}
		et := ft.Elem()
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		for j, e := range entries {
			entry, ok := e.(map[string]any)
			if !ok {
				break // an array of values, not of tables
			}
			if err := f.require(et, entry, fmt.Sprintf("%s[%d]", key, j)); err != nil {
				return err
			}
		}
	}
	return nil
}
