package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// unknownKeys makes an *Error of each key the decoder did not know, at its
// line, with the nearest key v's type knows at the same place when one is
// near (Suggest); nil when every key was decoded.
func (f *File) unknownKeys(und []toml.Key, v any) []error {
	var errs []error
	for _, k := range und {
		s := k.String()
		errs = append(errs, &Error{File: f.Path, Line: f.Line(s), Key: s, Msg: "unknown key", Suggest: Suggest(v, k)})
	}
	return errs
}

// Suggest is the key of v's type (a struct with toml tags, or a pointer to
// one) nearest to key's last part in the same table, by edit distance, when
// it is near enough to be a misspelling (at most a third of its length
// apart, at least 1 and at most 3 edits): "topology.link_gbps" for
// topology.link_gbs. "" when none is, or key's table is not a struct of v
// (a map, a key past a value).
func Suggest(v any, key []string) string {
	if len(key) == 0 {
		return ""
	}
	t := reflect.TypeOf(v)
	for _, part := range key[:len(key)-1] {
		t = tableType(t)
		if t == nil {
			return ""
		}
		f, ok := field(t, part)
		if !ok {
			return ""
		}
		t = f.Type
	}
	t = tableType(t)
	if t == nil {
		return ""
	}
	last := key[len(key)-1]
	best, bestD := "", min(3, max(1, len(last)/3))+1
	for _, name := range keys(t) {
		if d := editDistance(strings.ToLower(last), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" {
		return ""
	}
	return strings.Join(append(append([]string(nil), key[:len(key)-1]...), best), ".")
}

// tableType is the struct type a table of t decodes into: t itself, or its
// element for pointers, slices and arrays (an array of tables); nil when it
// is no struct.
func tableType(t reflect.Type) reflect.Type {
	for t != nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
		case reflect.Struct:
			return t
		default:
			return nil
		}
	}
	return nil
}

// tomlName is the key a struct field decodes from ("" for none: toml:"-"
// or unexported), and whether the field is embedded without a name (its
// fields are the table's own).
func tomlName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("toml")
	name, _, _ = strings.Cut(tag, ",")
	switch {
	case name == "-" || !f.IsExported() && !f.Anonymous:
		return "", false
	case name == "" && f.Anonymous:
		return "", true
	case name == "":
		return f.Name, false
	}
	return name, false
}

// field finds the field of struct t that key decodes into, as the decoder
// does: the tag's name, or the field's name case-insensitively.
func field(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := tomlName(f)
		if inline {
			if et := tableType(f.Type); et != nil {
				if g, ok := field(et, key); ok {
					return g, true
				}
			}
			continue
		}
		if name == key || name != "" && f.Tag.Get("toml") == "" && strings.EqualFold(name, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keys are the keys struct t decodes, in field order.
func keys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, inline := tomlName(f)
		if inline {
			if et := tableType(f.Type); et != nil {
				out = append(out, keys(et)...)
			}
			continue
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
