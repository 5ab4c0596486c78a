package testbed

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

var updateReference = flag.Bool("update-reference", false, "rewrite testbed/refdocs_gen.go and docs/reference.md from the source's doc comments")

const (
	modulePath    = "github.com/ccbed/ccbed"
	refDocsFile   = "refdocs_gen.go"
	referenceFile = "../docs/reference.md"
)

// TestReference: docs/reference.md and the doc comments compiled into
// testbed (refdocs_gen.go) are what the source's comments say today, every
// scheme has a section with its parameters, and every key of the experiment
// file and of every scheme has a meaning. -update-reference rewrites both.
func TestReference(t *testing.T) {
	docs, err := sourceDocs()
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := writeReference(&md, docs); err != nil {
		t.Fatal(err)
	}
	gen, err := refDocsSource(docs)
	if err != nil {
		t.Fatal(err)
	}
	if *updateReference {
		if err := os.WriteFile(refDocsFile, gen, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referenceFile, md.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s and %s", refDocsFile, referenceFile)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{refDocsFile, gen}, {referenceFile, md.Bytes()}} {
		if have, err := os.ReadFile(f.path); err != nil || !bytes.Equal(have, f.want) {
			t.Errorf("%s is not what the doc comments say today (%v): go test ./testbed -run TestReference -update-reference", f.path, err)
		}
	}
	text := md.String()
	for _, s := range ccalgo.Schemes() {
		if !strings.Contains(text, "\n### "+s.Name+" (") {
			t.Errorf("no section for scheme %s", s.Name)
		}
	}
	for _, want := range []string{"### `[topology]`", "### `[[flows]]`", "| `scheme` | string | `\"none\"` |",
		"| `eta` | float | `0.95` |", "| `src` | integer | *required* |"} {
		if !strings.Contains(text, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	// Every key has a meaning.
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "| `") && strings.HasSuffix(line, "|  |") {
			t.Errorf("a key without a meaning (a field without a doc comment): %s", line)
		}
	}
}

// TestWriteSchemeParams: one scheme's table, as testbed schemes -v prints it;
// an unknown scheme is an error.
func TestWriteSchemeParams(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSchemeParams(&b, "hpcc"); err != nil || !strings.Contains(b.String(), "| `max_stage` | integer | `5` |") {
		t.Errorf("hpcc: %v\n%s", err, b.String())
	}
	if err := WriteSchemeParams(&b, "nope"); err == nil {
		t.Error("an unknown scheme: want an error")
	}
}

// sourceDocs reads the doc comments of every struct type the reference
// walks, and of their fields, from the repository's source.
func sourceDocs() (map[string]string, error) {
	types := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || types[t] || !strings.HasPrefix(t.PkgPath(), modulePath) {
			return
		}
		types[t] = true
		for i := 0; i < t.NumField(); i++ {
			if tomlName(t.Field(i)) != "" {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeOf(Experiment{}))
	for _, s := range ccalgo.Schemes() {
		walk(reflect.TypeOf(s.DefaultParams(ReferenceEnv)))
	}
	byPkg := map[string]map[string]bool{}
	for t := range types {
		if byPkg[t.PkgPath()] == nil {
			byPkg[t.PkgPath()] = map[string]bool{}
		}
		byPkg[t.PkgPath()][t.Name()] = true
	}
	docs := map[string]string{}
	for pkg, names := range byPkg {
		dir := filepath.Join("..", strings.TrimPrefix(strings.TrimPrefix(pkg, modulePath), "/"))
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					gd, ok := d.(*ast.GenDecl)
					if !ok || gd.Tok != token.TYPE {
						continue
					}
					for _, sp := range gd.Specs {
						ts := sp.(*ast.TypeSpec)
						st, ok := ts.Type.(*ast.StructType)
						if !ok || !names[ts.Name.Name] {
							continue
						}
						key := pkg + "." + ts.Name.Name
						doc := ts.Doc
						if doc == nil && len(gd.Specs) == 1 {
							doc = gd.Doc
						}
						if text := strings.TrimSpace(doc.Text()); text != "" {
							docs[key] = text
						}
						// A comment on a run of fields that names them ("QRefBytes,
						// QMidBytes and QMaxBytes are ...") is each one's.
						var shared string
						for _, fl := range st.Fields.List {
							text := strings.TrimSpace(strings.TrimSpace(fl.Doc.Text()) + " " + strings.TrimSpace(fl.Comment.Text()))
							if fl.Doc != nil {
								shared = text
							}
							for _, n := range fl.Names {
								switch {
								case text != "":
									docs[key+"."+n.Name] = text
								case fl.Doc == nil && namesField(shared, n.Name):
									docs[key+"."+n.Name] = shared
								}
							}
						}
					}
				}
			}
		}
	}
	return docs, nil
}

// namesField reports whether doc names the field name as a word.
func namesField(doc, name string) bool {
	for _, w := range strings.FieldsFunc(doc, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '.' }) {
		if w == name {
			return true
		}
	}
	return false
}

// refDocsSource is refdocs_gen.go holding docs.
func refDocsSource(docs map[string]string) ([]byte, error) {
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("// Code generated by go test ./testbed -run TestReference -update-reference; DO NOT EDIT.\n\npackage testbed\n\n")
	b.WriteString("// referenceDocs are the doc comments of the types behind the experiment file\n// and the schemes' parameters, keyed by docKey.\nvar referenceDocs = map[string]string{\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%s: %s,\n", strconv.Quote(k), strconv.Quote(docs[k]))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
