package testbed

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/ccalgo"
)

// ReferenceEnv is the link and traffic the scheme defaults of the reference
// are shown for: a 100 Gb/s host link, a 10 us base RTT, and the experiment
// file's default MTU and expected_flows. Defaults that scale with them say so
// in their meaning.
var ReferenceEnv = ccalgo.Env{LinkBps: 100e9, BaseRTT: 10_000, MTU: 1024, MaxFlows: 1024, ExpectedFlows: 16, ID: 1}

// WriteReference writes the reference of the experiment file and of every
// scheme's [cc.params] as Markdown: every key with its TOML type, its
// default and its meaning (the doc comment of the field behind it). It is
// docs/reference.md, and what `testbed reference` prints.
func WriteReference(w io.Writer) error { return writeReference(w, referenceDocs) }

// WriteSchemeParams writes the [cc.params] keys of scheme as a Markdown table,
// as WriteReference does.
func WriteSchemeParams(w io.Writer, scheme string) error {
	s, err := ccalgo.Lookup(scheme)
	if err != nil {
		return err
	}
	rw := &refWriter{w: w, docs: referenceDocs}
	rw.scheme(s)
	return rw.err
}

// writeReference is WriteReference with the doc comments in docs (keyed as
// docKey makes them).
func writeReference(w io.Writer, docs map[string]string) error {
	rw := &refWriter{w: w, docs: docs}
	rw.printf(`# Reference: the experiment file and the schemes' parameters

Generated from the doc comments of the Go types the file is decoded into
(` + "`go test ./testbed -run TestReference -update-reference`" + `): to change a
meaning, change the comment. ` + "`testbed reference`" + ` prints this page and
` + "`testbed schemes -v`" + ` its scheme tables.

A key that is absent takes its default: the value shown, which is what the
code fills in before it reads the file (` + "`testbed.Default`" + `); where that is
0 or empty, the meaning says what 0 stands for. Keys marked *required* must be
given. Units are in the names (` + "`_us`, `_ns`, `_bytes`, `_gbps`" + `).

## The experiment file
`)
	def := Default()
	rw.table("", reflect.ValueOf(def), reflect.TypeOf(def), false)
	rw.printf(`
## Schemes

`+"`cc.scheme`"+` picks one; `+"`[cc.params]`"+` sets any of its keys below.
Defaults are shown for a %g Gb/s host link, a base RTT of %g us, an MTU of
%d bytes and expected_flows %d; the ones that scale with them say so.
`, ReferenceEnv.LinkBps/1e9, float64(ReferenceEnv.BaseRTT)/1e3, ReferenceEnv.MTU, ReferenceEnv.ExpectedFlows)
	for _, s := range ccalgo.Schemes() {
		rw.printf("\n### %s (%s)\n\n%s\n", s.Name, s.Roles(), s.Doc)
		rw.scheme(s)
	}
	return rw.err
}

// refWriter writes reference tables; the first write error sticks.
type refWriter struct {
	w    io.Writer
	docs map[string]string
	err  error
}

func (rw *refWriter) printf(format string, args ...any) {
	if rw.err == nil {
		_, rw.err = fmt.Fprintf(rw.w, format, args...)
	}
}

// scheme writes s's parameter table at ReferenceEnv.
func (rw *refWriter) scheme(s ccalgo.Scheme) {
	p := reflect.ValueOf(s.DefaultParams(ReferenceEnv))
	for p.Kind() == reflect.Pointer {
		p = p.Elem()
	}
	if p.Kind() != reflect.Struct || p.NumField() == 0 {
		rw.printf("\nNo parameters.\n")
		return
	}
	rw.table("cc.params", p, p.Type(), true)
}

// docKey is the key of a doc comment: the type's package path and name, and
// the field's name ("" for the type's own comment).
func docKey(t reflect.Type, field string) string {
	k := t.PkgPath() + "." + t.Name()
	if field != "" {
		k += "." + field
	}
	return k
}

// tomlName is f's key in the file ("" when it has none).
func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		name = f.Name
	}
	return name
}

// table writes the table at path (a dotted key; "" for the top level) of
// struct type t whose default is v: its scalar keys, then each sub-table and
// array of tables in a section of its own. inline keeps the scalar table
// without a section heading (a scheme's parameters).
func (rw *refWriter) table(path string, v reflect.Value, t reflect.Type, inline bool) {
	type sub struct {
		path  string
		v     reflect.Value
		t     reflect.Type
		array bool
		doc   string
	}
	var rows [][4]string
	var subs []sub
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		key := name
		if path != "" {
			key = path + "." + name
		}
		doc := rw.docs[docKey(t, f.Name)]
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct:
			subs = append(subs, sub{path: key, v: v.Field(i), t: ft, doc: doc})
			continue
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			subs = append(subs, sub{path: key, v: reflect.Zero(ft.Elem()), t: ft.Elem(), array: true, doc: doc})
			continue
		}
		def := formatDefault(v.Field(i))
		if req, ok := f.Tag.Lookup("required"); ok {
			def = "*required*"
			if doc == "" {
				doc = req
			}
		}
		if ft.Kind() == reflect.Map && path == "cc" && name == "params" {
			doc = strings.TrimSpace(doc + " The keys of the scheme's table under Schemes below.")
		}
		rows = append(rows, [4]string{"`" + name + "`", tomlType(ft), def, doc})
	}
	if !inline && path != "" && len(rows) > 0 {
		rw.printf("\n### `[%s]`\n\n", path)
	}
	if d := rw.docs[docKey(t, "")]; d != "" && (inline || path != "") {
		if inline {
			rw.printf("\n")
		}
		rw.printf("%s\n\n", d)
	} else if inline {
		rw.printf("\n")
	}
	if len(rows) > 0 {
		rw.printf("| key | type | default | meaning |\n|---|---|---|---|\n")
		for _, r := range rows {
			rw.printf("| %s | %s | %s | %s |\n", r[0], r[1], cell(r[2]), cell(r[3]))
		}
	}
	for _, s := range subs {
		if s.array {
			rw.printf("\n### `[[%s]]` (an array of tables: one per entry)\n\n", s.path)
			if s.doc != "" {
				rw.printf("%s\n\n", s.doc)
			}
			rw.table(s.path, s.v, s.t, true)
			continue
		}
		if s.doc != "" && rw.docs[docKey(s.t, "")] == "" {
			rw.printf("\n%s\n", s.doc)
		}
		rw.table(s.path, s.v, s.t, false)
	}
}

// tomlType names t's TOML type.
func tomlType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Slice, reflect.Array:
		return "array of " + tomlType(t.Elem())
	case reflect.Map:
		return "table"
	case reflect.Pointer:
		return tomlType(t.Elem())
	case reflect.Interface:
		return "any"
	}
	return t.Kind().String()
}

// formatDefault writes v as the file would hold it.
func formatDefault(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return "`" + strconv.Quote(v.String()) + "`"
	case reflect.Bool:
		return "`" + strconv.FormatBool(v.Bool()) + "`"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "`" + strconv.FormatInt(v.Int(), 10) + "`"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "`" + strconv.FormatUint(v.Uint(), 10) + "`"
	case reflect.Float32, reflect.Float64:
		return "`" + strconv.FormatFloat(v.Float(), 'g', -1, 64) + "`"
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return "`[]`"
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = strings.Trim(formatDefault(v.Index(i)), "`")
		}
		return "`[" + strings.Join(parts, ", ") + "]`"
	case reflect.Map:
		return "none"
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "none"
		}
		return formatDefault(v.Elem())
	}
	return "`" + fmt.Sprint(v.Interface()) + "`"
}

// cell is s fit for one Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
