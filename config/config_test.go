package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

type portCfg struct {
	Name string  `toml:"name"`
	Gbps float64 `toml:"link_gbps"`
}

type testCfg struct {
	Name   string    `toml:"name"`
	Lcores int       `toml:"lcores"`
	Ports  []portCfg `toml:"ports"`
	CC     struct {
		Scheme string `toml:"scheme"`
	} `toml:"cc"`
}

const good = `# a switch
name = "sw" # trailing comment
lcores = 3

[cc]
scheme = "rocc"

[[ports]]
name = "net_ring0"
link_gbps = 10

[[ports]]
name = "net_ring1"
link_gbps = 40
`

func TestDecodeGood(t *testing.T) {
	var c testCfg
	f, err := Decode("sw.toml", good, &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "sw" || c.Lcores != 3 || len(c.Ports) != 2 || c.Ports[1].Gbps != 40 || c.CC.Scheme != "rocc" {
		t.Fatalf("decoded %+v", c)
	}
	for _, tc := range []struct {
		key  string
		line int
	}{
		{"name", 2}, {"lcores", 3}, {"cc", 5}, {"cc.scheme", 6},
		{"ports.name", 9}, {"ports[0].link_gbps", 10}, {"ports[1].link_gbps", 14},
		{"ports[1]", 12}, {"missing", 0}, {"ports[5].name", 0},
	} {
		if got := f.Line(tc.key); got != tc.line {
			t.Errorf("Line(%q) = %d, want %d", tc.key, got, tc.line)
		}
	}
	err = f.Errorf("ports[1].link_gbps", "must be at most %d", 25)
	if err.Error() != "sw.toml:14: ports[1].link_gbps: must be at most 25" {
		t.Fatalf("Errorf = %q", err)
	}
	if !f.IsDefined("cc", "scheme") || f.IsDefined("cc", "params") {
		t.Fatal("IsDefined wrong")
	}
}

// TestLineNestedArrays: the index of a nested array of tables counts within
// its parent's element ([[ports.flow]] starts from 0 in every [[ports]]).
func TestLineNestedArrays(t *testing.T) {
	const text = `[[ports]]
name = "a"
[[ports.flow]]
rate = 1
[[ports.flow]]
rate = 2

[[ports]]
name = "b"
[[ports.flow]]
rate = 3
`
	var c struct {
		Ports []struct {
			Name string `toml:"name"`
			Flow []struct {
				Rate float64 `toml:"rate"`
			} `toml:"flow"`
		} `toml:"ports"`
	}
	f, err := Decode("n.toml", text, &c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		line int
	}{
		{"ports[0].flow[0].rate", 4}, {"ports[0].flow[1].rate", 6}, {"ports[1].flow[0].rate", 11},
		{"ports[1].flow[0]", 10}, {"ports[1].name", 9}, {"ports[1].flow[1].rate", 0},
	} {
		if got := f.Line(tc.key); got != tc.line {
			t.Errorf("Line(%q) = %d, want %d", tc.key, got, tc.line)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		key, msg   string
	}{
		{"unknown key", "name = 'a'\n[[ports]]\nname = 'p'\nlink_gpbs = 10\n", 4, "ports.link_gpbs", "unknown key"},
		{"unknown table", "name = 'a'\n[pfc]\nxoff = 1\n", 2, "pfc", "unknown key"},
		{"wrong type", "name = 'a'\n[[ports]]\nlink_gbps = 'ten'\n", 3, "ports.link_gbps", "incompatible types"},
		{"syntax", "name = 'a'\nlcores = \n", 2, "lcores", "expected value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c testCfg
			_, err := Decode("x.toml", tc.text, &c)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if ce.File != "x.toml" || ce.Line != tc.line || ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Fatalf("got %#v (%v)", ce, err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	var c testCfg
	if _, err := Load("/nonexistent/x.toml", &c); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(good)
	f.Add("name = 'a'\n[[ports]]\nlink_gbps = 'ten'\n")
	f.Add("[[a.b]]\nc = [1, {d = 2}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		var c testCfg
		file, err := Decode("fuzz.toml", text, &c)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "fuzz.toml" {
				t.Fatalf("error of the wrong shape: %v", err)
			}
			return
		}
		_ = file.Line("ports[0].name")
	})
}

func TestName(t *testing.T) {
	long := strings.Repeat("a", MaxNameBytes)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"rocc-3to1-virtual", true}, {"a", true}, {"9", true}, {"node1.cluster.example.org", true}, {"a_b-c.d", true},
		{long, true}, {long + "a", false},
		{"", false}, {".", false}, {"..", false}, {"../x", false}, {"a/b", false}, {"/abs", false},
		{".hidden", false}, {"-rf", false}, {"_x", false}, {"a b", false}, {"a\nb", false}, {"a\x00b", false},
		{"a\\b", false}, {"a:b", false}, {"é", false}, {"x/..", false},
	} {
		if err := Name(tc.name); (err == nil) != tc.ok {
			t.Errorf("Name(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// FuzzName: whatever Name accepts is one path element that stays in its
// parent directory.
func FuzzName(f *testing.F) {
	for _, s := range []string{"x", "..", "a/b", "a.b", "latest", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Name(s) != nil {
			return
		}
		if !filepath.IsLocal(s) || filepath.Base(s) != s || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00\n ") {
			t.Fatalf("Name accepted %q", s)
		}
	})
}

type requireFlow struct {
	ID  int `toml:"id" required:"the flow's id"`
	Src int `toml:"src" required:"the sending host's index"`
	Dst int `toml:"dst"`
}

type requireFile struct {
	Top struct {
		Name string `toml:"name" required:"a name"`
		Opt  int    `toml:"opt"`
	} `toml:"top"`
	Flows []requireFlow `toml:"flows"`
	Links []requireFlow `toml:"links"`
	Nums  []int         `toml:"nums"`
}

// TestRequire: a required key missing from a table or an entry of an array
// of tables is an error at the entry's line; a table the file lacks is not
// checked.
func TestRequire(t *testing.T) {
	for _, tc := range []struct {
		name, text, key string
		line            int
	}{
		{"all set", "[top]\nname = 'x'\n[[flows]]\nid = 1\nsrc = 0\n", "", 0},
		{"no tables", "", "", 0},
		{"top missing name", "[top]\nopt = 1\n", "top.name", 1},
		{"second flow no src", "[top]\nname = 'x'\n[[flows]]\nid = 1\nsrc = 2\n\n[[flows]]\nid = 2\ndst = 1\n", "flows[1].src", 7},
		{"first flow no id", "[[flows]]\nsrc = 2\n", "flows[0].id", 1},
		{"src zero is set", "[[flows]]\nid = 0\nsrc = 0\n", "", 0},
		{"inline tables", "nums = [1, 2]\nlinks = [{ id = 1, src = 2 }, { id = 2 }]\n", "links[1].src", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v requireFile
			f, err := Decode("x.toml", tc.text, &v)
			if err != nil {
				t.Fatal(err)
			}
			err = f.Require(&v)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("Require: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line != tc.line || !strings.Contains(ce.Msg, "missing") {
				t.Fatalf("Require = %v, want %s at line %d", err, tc.key, tc.line)
			}
		})
	}
}
