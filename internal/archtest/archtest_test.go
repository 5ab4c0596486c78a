package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ccbed/ccbed"

// enginePackages are the packages that run in both clocks and so must not
// reach files, processes, DPDK or the TOML decoder: their daemons (cmd/,
// the dataplane adapters, the testbed) turn files into the values they take.
// A pattern ending in "/..." takes the directory and every one below it.
var enginePackages = []string{"ccalgo/...", "pacer", "wire", "hostd", "switchd"}

// forbidden are the imports an engine package may not reach, directly or
// through another package of the module.
var forbidden = map[string]string{
	"os":                            "files and the environment belong to the daemon",
	"os/exec":                       "running tools (chronyc, pmc) belongs to the daemon",
	module + "/dpdk":                "DPDK belongs to the dataplane adapters",
	"github.com/BurntSushi/toml":    "TOML files belong to the daemon",
	module + "/internal/atomicfile": "result files belong to the daemon",
}

// knownException is an engine package that still breaks the rule: the
// forbidden imports it may still reach, and why.
type knownException struct {
	imports []string
	why     string
}

// knownExceptions are the engine packages that still break the rule: the
// to-do list of issue 27. The test fails when one of them reaches another
// forbidden import, or no longer breaks it, so that the list only shrinks.
var knownExceptions = map[string]knownException{}

// shapedPackages are the packages whose types and files are bounded
// (maxFields, maxLines): the two engines, which issue 27 split by concern,
// with their daemons and DPDK adapters.
var shapedPackages = []string{"hostd/...", "switchd/..."}

// maxFields bounds the fields of a struct type in a shaped package: a type
// with more holds more than one concern.
const maxFields = 40

// knownWideTypes are the struct types over maxFields, with why: none
// left; one added needs its reason.
var knownWideTypes = map[string]string{}

// maxLines bounds a shaped package's Go files, tests included.
const maxLines = 700

// knownLongFiles are the files over maxLines, with why: none left; one
// added needs its reason.
var knownLongFiles = map[string]string{}

// root is the module's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", dir, err)
	}
	return dir
}

// expand lists the package directories (relative to the module) of the
// patterns.
func expand(t *testing.T, dir string, patterns []string) []string {
	t.Helper()
	var out []string
	for _, p := range patterns {
		base, all := strings.CutSuffix(p, "/...")
		if !all {
			out = append(out, p)
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, base), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 {
				rel, _ := filepath.Rel(dir, path)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// pkgFiles parses the Go files of the package in dir/rel: its tests too
// when tests is true.
func pkgFiles(t *testing.T, dir, rel string, mode parser.Mode, tests bool) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	names, err := filepath.Glob(filepath.Join(dir, rel, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !tests && strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(rel)+"/"+filepath.Base(name)] = f
	}
	return fset, files
}

// imports maps each of the module's packages reached from rel to its
// direct imports, by file: what a forbidden import is reached through.
type importGraph struct {
	t     *testing.T
	dir   string
	files map[string]map[string][]string // package (relative) -> import path -> files importing it
}

func (g *importGraph) load(rel string) map[string][]string {
	if m, ok := g.files[rel]; ok {
		return m
	}
	m := map[string][]string{}
	g.files[rel] = m
	_, files := pkgFiles(g.t, g.dir, rel, parser.ImportsOnly, false)
	for name, f := range files {
		for _, is := range f.Imports {
			p := strings.Trim(is.Path.Value, `"`)
			m[p] = append(m[p], name)
		}
	}
	return m
}

// violation is a forbidden import reached, and how.
type violation struct {
	imp, text string
}

// violations returns, for package rel, each forbidden import it reaches
// with the chain of module packages and the file that imports it.
func (g *importGraph) violations(rel string) []violation {
	var out []violation
	seen := map[string]bool{}
	var walk func(rel string, chain []string)
	walk = func(rel string, chain []string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		m := g.load(rel)
		paths := make([]string, 0, len(m))
		for p := range m {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if why, bad := forbidden[p]; bad {
				files := m[p]
				sort.Strings(files)
				out = append(out, violation{p, strings.Join(append(chain, strings.Join(files, ", ")), " -> ") + " imports " + p + " (" + why + ")"})
			}
			if sub, ok := strings.CutPrefix(p, module+"/"); ok {
				if _, bad := forbidden[p]; !bad {
					walk(sub, append(chain, sub))
				}
			}
		}
	}
	walk(rel, []string{rel})
	return out
}

// TestEnginesReadNoFiles fails when an engine package imports os, os/exec,
// dpdk, the TOML decoder or the atomic file writer, directly or through
// another package of the module, unless it is a known exception; and when
// a known exception no longer does.
func TestEnginesReadNoFiles(t *testing.T) {
	dir := root(t)
	g := &importGraph{t: t, dir: dir, files: map[string]map[string][]string{}}
	pkgs := expand(t, dir, enginePackages)
	if len(pkgs) < 5 {
		t.Fatalf("engine packages %v: the patterns found too few", pkgs)
	}
	for _, rel := range pkgs {
		ex, known := knownExceptions[rel]
		var bad, allowed []string
		for _, v := range g.violations(rel) {
			if contains(ex.imports, v.imp) {
				allowed = append(allowed, v.text)
			} else {
				bad = append(bad, v.text)
			}
		}
		switch {
		case len(bad) > 0:
			t.Errorf("engine package %s reaches what daemons own (engines take specs, daemons read files: docs/architecture.md):\n\t%s",
				rel, strings.Join(bad, "\n\t"))
		case len(allowed) == 0 && known:
			t.Errorf("engine package %s no longer reaches %s: remove it from knownExceptions", rel, strings.Join(ex.imports, ", "))
		case len(allowed) > 0:
			t.Logf("known exception %s (%s):\n\t%s", rel, ex.why, strings.Join(allowed, "\n\t"))
		}
	}
	for rel := range knownExceptions {
		if !contains(pkgs, rel) {
			t.Errorf("known exception %s is not an engine package", rel)
		}
	}
}

// TestEngineShapes fails when a package under hostd or switchd has a struct
// type of more than maxFields fields (an embedded field counts as one) or a
// source file (tests included) of more than maxLines lines, unless it is a
// known one; and when a known one no longer is. Types are named by package
// directory: switchd/dataplane.Switch.
func TestEngineShapes(t *testing.T) {
	dir := root(t)
	wide, long := map[string]int{}, map[string]int{}
	pkgs := expand(t, dir, shapedPackages)
	if len(pkgs) < 4 {
		t.Fatalf("shaped packages %v: the patterns found too few", pkgs)
	}
	for _, rel := range pkgs {
		fset, files := pkgFiles(t, dir, rel, 0, true)
		for name, f := range files {
			if n := fset.Position(f.End()).Line; n > maxLines {
				long[name] = n
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					k := 0
					for _, fl := range st.Fields.List {
						k += max(len(fl.Names), 1)
					}
					if k > maxFields {
						wide[rel+"."+ts.Name.Name] = k
					}
				}
				return true
			})
		}
	}
	check := func(what string, got map[string]int, known map[string]string, limit int) {
		for name, n := range got {
			if _, ok := known[name]; !ok {
				t.Errorf("%s %s has %d, more than %d: split it by concern", what, name, n, limit)
			}
		}
		for name := range known {
			if _, ok := got[name]; !ok {
				t.Errorf("%s %s is within %d now: remove it from the known list", what, name, limit)
			}
		}
	}
	check("struct type", wide, knownWideTypes, maxFields)
	check("file", long, knownLongFiles, maxLines)
}

// addressParsers are the functions that read an address from text: an
// engine that calls one is handed text where it should get a value.
var addressParsers = map[string]bool{
	"ParseIPv4": true, "parseIPv4": true, "ParseMAC": true, "ParseIP": true, "ParseCIDR": true,
	"ParseAddr": true, "ParsePrefix": true, "ParseAddrPort": true, "MustParseAddr": true, "MustParsePrefix": true,
}

// knownParsers are the engine packages that still parse addresses, with
// why.
var knownParsers = map[string]string{}

// TestEnginesParseNoAddresses fails when an engine package (wire, which
// defines the parsers, aside) calls an address parser (addressParsers):
// engines take addresses as values (uint32, wire.MAC, netip), and only the
// daemon side turns text into them. With TestEnginesReadNoFiles it keeps
// fabric.Plan's path to hostd and switchd free of text: the plan holds
// hostd.Spec and switchd.Spec values, and neither engine has a way to read
// text into one.
func TestEnginesParseNoAddresses(t *testing.T) {
	dir := root(t)
	for _, rel := range expand(t, dir, enginePackages) {
		if rel == "wire" {
			continue
		}
		fset, files := pkgFiles(t, dir, rel, 0, false)
		var calls []string
		for name, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var fn string
				switch e := c.Fun.(type) {
				case *ast.Ident:
					fn = e.Name
				case *ast.SelectorExpr:
					fn = e.Sel.Name
				}
				if addressParsers[fn] {
					calls = append(calls, name+":"+strconv.Itoa(fset.Position(c.Pos()).Line)+" "+fn)
				}
				return true
			})
		}
		sort.Strings(calls)
		_, known := knownParsers[rel]
		switch {
		case len(calls) > 0 && !known:
			t.Errorf("engine package %s parses addresses (engines take values: docs/architecture.md):\n\t%s", rel, strings.Join(calls, "\n\t"))
		case len(calls) == 0 && known:
			t.Errorf("engine package %s no longer parses addresses: remove it from knownParsers", rel)
		}
	}
	for rel := range knownParsers {
		if !contains(expand(t, dir, enginePackages), rel) {
			t.Errorf("known parser %s is not an engine package", rel)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// addressFormatters are the functions that write an address (or any value)
// as text: fabric.Plan's path to the engines calls none of them.
var addressFormatters = map[string]bool{
	"FormatIPv4": true, "String": true, "MarshalText": true, "AppendText": true, "Sprint": true,
}

// tomlDecoders are config's (and the TOML packages') decoders.
var tomlDecoders = map[string]bool{
	"DecodeTable": true, "DecodeOverrides": true, "Decode": true, "Load": true,
	"Unmarshal": true, "NewDecoder": true, "DecodeFile": true, "DecodeFS": true,
}

// tomlPackages are the TOML packages a file could import.
var tomlPackages = map[string]bool{
	"github.com/BurntSushi/toml":      true,
	"github.com/pelletier/go-toml":    true,
	"github.com/pelletier/go-toml/v2": true,
}

// specPackages are the packages between fabric.Plan and the engines: the
// plan, both clocks' drivers, and the engines that take what the plan
// built. None imports a TOML package or calls a TOML decoder of config:
// the experiment's file was decoded where it was read (testbed, the
// daemons), the scheme's [cc.params] included (ccalgo.Overrides).
var specPackages = append([]string{"fabric", "fabric/dpdkrun"}, enginePackages...)

// tomlUse lists where the files import a TOML package or call a TOML
// decoder (tomlDecoders) of config or of a TOML package, as file:line.
func tomlUse(fset *token.FileSet, files map[string]*ast.File) []string {
	var out []string
	for name, f := range files {
		decoders := map[string]bool{} // local names of config and the TOML packages
		for _, is := range f.Imports {
			p := strings.Trim(is.Path.Value, `"`)
			local := p[strings.LastIndexByte(p, '/')+1:]
			if is.Name != nil {
				local = is.Name.Name
			}
			if tomlPackages[p] {
				out = append(out, fmt.Sprintf("%s:%d imports %s", name, fset.Position(is.Pos()).Line, p))
				decoders[local] = true
			}
			if p == module+"/config" {
				decoders[local] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && decoders[x.Name] && tomlDecoders[sel.Sel.Name] {
				out = append(out, fmt.Sprintf("%s:%d %s.%s", name, fset.Position(sel.Pos()).Line, x.Name, sel.Sel.Name))
			}
			return true
		})
	}
	sort.Strings(out)
	return out
}

// pathEntry is where a path from fabric.Plan's specs to the engines starts:
// a function (or, with method, a method) of a package.
type pathEntry struct {
	pkg, name string
	method    bool
}

// specPaths are the paths between fabric.Plan and the engines: the plan
// that builds the specs, and each clock's driver that builds the engines
// from them (virtual time, DPDK).
var specPaths = []pathEntry{{"fabric", "Plan", true}, {"fabric", "NewVirtual", false}, {"fabric/dpdkrun", "Run", false}}

// fileSide are the packages whose calls read files or the machine's state
// (config's readers and limits, which read /proc/meminfo): the daemons and
// testbed call them and hand the plan values.
var fileSide = map[string]bool{"os": true, "exec": true, "config": true}

// pathCalls walks the path from e (its function and the functions of its
// package it calls, by name, transitively) and returns how many functions
// it visited and each call on it that formats or parses an address,
// decodes TOML or reads files or machine state, as file:line in function:
// name.
func pathCalls(t *testing.T, dir string, e pathEntry) (int, []string) {
	t.Helper()
	fset, files := pkgFiles(t, dir, e.pkg, 0, false)
	funcs := map[string][]*ast.FuncDecl{}
	imported := map[string]bool{}
	for _, f := range files {
		for _, is := range f.Imports {
			p := strings.Trim(is.Path.Value, `"`)
			name := p[strings.LastIndexByte(p, '/')+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			imported[name] = true
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs[fd.Name.Name] = append(funcs[fd.Name.Name], fd)
			}
		}
	}
	var entry *ast.FuncDecl
	for _, fd := range funcs[e.name] {
		if (fd.Recv != nil) == e.method {
			entry = fd
		}
	}
	if entry == nil {
		t.Fatalf("no function %s in package %s", e.name, e.pkg)
	}
	seen := map[*ast.FuncDecl]bool{}
	var bad []string
	var visit func(fd *ast.FuncDecl)
	visit = func(fd *ast.FuncDecl) {
		if seen[fd] {
			return
		}
		seen[fd] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name, pkg string
			switch e := c.Fun.(type) {
			case *ast.Ident:
				name = e.Name
			case *ast.SelectorExpr:
				name = e.Sel.Name
				if x, ok := e.X.(*ast.Ident); ok && imported[x.Name] {
					pkg = x.Name
				}
			}
			where := fmt.Sprintf("%s:%d in %s: %s", filepath.Base(fset.Position(c.Pos()).Filename), fset.Position(c.Pos()).Line, fd.Name.Name, name)
			switch {
			case addressParsers[name] || addressFormatters[name]:
				bad = append(bad, where)
			case tomlDecoders[name] && (pkg == "config" || pkg == "toml"):
				bad = append(bad, where+" (TOML)")
			case fileSide[pkg]:
				bad = append(bad, where+" (files or machine state: "+pkg+")")
			}
			if pkg == "" {
				for _, g := range funcs[name] {
					visit(g)
				}
			}
			return true
		})
	}
	visit(entry)
	sort.Strings(bad)
	return len(seen), bad
}

// TestPlanFormatsNoAddresses fails when a path between fabric.Plan and the
// engines (specPaths: the plan, and each driver's construction of the
// engines, with the functions of its package they call, by name,
// transitively) formats or parses an address, decodes TOML or reads files
// or the machine's state (fileSide); and when
// fabric, fabric/dpdkrun or an engine package imports a TOML package or
// calls a TOML decoder anywhere (specPackages). The plan hands hostd and
// switchd their specs as values (MACs as wire.MAC, addresses and prefixes
// as numbers, ports as indices, each scheme's parameters as its own
// struct, laid over each node's defaults from ccalgo.Overrides), and the
// drivers hand them on, with no text between the plan and the engines.
func TestPlanFormatsNoAddresses(t *testing.T) {
	dir := root(t)
	pkgs := expand(t, dir, specPackages)
	if len(pkgs) < 7 {
		t.Fatalf("spec packages %v: the patterns found too few", pkgs)
	}
	for _, rel := range pkgs {
		if use := tomlUse(pkgFiles(t, dir, rel, 0, false)); len(use) > 0 {
			t.Errorf("package %s, between fabric.Plan and the engines, decodes TOML (files are decoded where they are read: docs/architecture.md):\n\t%s",
				rel, strings.Join(use, "\n\t"))
		}
	}
	for _, e := range specPaths {
		n, bad := pathCalls(t, dir, e)
		if n < 3 {
			t.Fatalf("%s.%s's path has %d functions: the walk found too few", e.pkg, e.name, n)
		}
		t.Logf("%s.%s's path: %d functions", e.pkg, e.name, n)
		if len(bad) > 0 {
			t.Errorf("%s.%s's path formats or parses addresses, decodes TOML or reads files (engines take specs: docs/architecture.md):\n\t%s",
				e.pkg, e.name, strings.Join(bad, "\n\t"))
		}
	}
}
