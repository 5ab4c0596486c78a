package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
)

// tableFor is a [cc.params] table setting every key of the parameter
// struct t to a value its default (def) does not hold: numbers, flags
// flipped, strings, one entry of an array of tables.
func tableFor(t reflect.Type, def reflect.Value) map[string]any {
	tbl := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Bool:
			tbl[key] = !def.Field(i).Bool()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			tbl[key] = int64(100+i) * 7
		case reflect.Float32, reflect.Float64:
			tbl[key] = 0.4375 + float64(i)
		case reflect.String:
			tbl[key] = fmt.Sprintf("v%d", i)
		case reflect.Struct:
			tbl[key] = tableFor(f.Type, def.Field(i))
		case reflect.Slice:
			if f.Type.Elem().Kind() == reflect.Struct {
				tbl[key] = []map[string]any{tableFor(f.Type.Elem(), reflect.New(f.Type.Elem()).Elem())}
			}
		}
	}
	return tbl
}

// TestDecodeOverrides: for every scheme, a [cc.params] table decoded once
// into Overrides and laid over a node's defaults holds what the table
// decoded over those defaults (DecodeTable) holds, for hosts and ports of
// different links, with every key set, each key alone and none; and the
// errors of a bad table are DecodeTable's.
func TestDecodeOverrides(t *testing.T) {
	envs := []ccalgo.Env{
		{LinkBps: 25e9, BaseRTT: 8_000, MTU: 1000, MaxFlows: 1024, ExpectedFlows: 16, ID: 1},
		{LinkBps: 100e9, BaseRTT: 20_000, MTU: 4096, MaxFlows: 64, ExpectedFlows: 4, ID: 7},
		{LinkBps: 400e9, BaseRTT: 3_000, MTU: 9000, MaxFlows: 16, ExpectedFlows: 64, ID: 3},
	}
	for _, s := range ccalgo.Schemes() {
		p := reflect.ValueOf(s.DefaultParams(envs[0])).Elem()
		all := tableFor(p.Type(), p)
		tables := map[string]map[string]any{"none": nil, "every key": all}
		for k, v := range all {
			tables[k] = map[string]any{k: v}
		}
		for name, tbl := range tables {
			t.Run(s.Name+"/"+name, func(t *testing.T) {
				o, err := DecodeOverrides(s.Name, tbl)
				if err != nil {
					t.Fatal(err)
				}
				if o.Empty() != (len(tbl) == 0) {
					t.Errorf("empty %v for %v (fields %v)", o.Empty(), tbl, o.Fields())
				}
				for _, env := range envs {
					want, got := s.DefaultParams(env), s.DefaultParams(env)
					if err := DecodeTable(tbl, want); err != nil {
						t.Fatal(err)
					}
					if err := o.Apply(got); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("link %g: overrides %v laid over the defaults\n%+v\nthe table decoded over them\n%+v", env.LinkBps, o.Fields(), got, want)
					}
				}
			})
		}
	}
	for _, tc := range []struct {
		name, scheme string
		tbl          map[string]any
		key, msg     string
	}{
		{"unknown key", "rocc", map[string]any{"t_nss": int64(1)}, "t_nss", "unknown key"},
		{"wrong type", "rocc", map[string]any{"t_ns": "fast"}, "t_ns", "incompatible types"},
		{"wrong type in a table", "dcqcn", map[string]any{"ecn_by_link": []map[string]any{{"gbps": "x"}}}, "ecn_by_link.gbps", "incompatible types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch, err := ccalgo.Lookup(tc.scheme)
			if err != nil {
				t.Fatal(err)
			}
			want := DecodeTable(tc.tbl, sch.DefaultParams(envs[0]))
			_, err = DecodeOverrides(tc.scheme, tc.tbl)
			var ce *Error
			if err == nil || want == nil || err.Error() != want.Error() || !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Fatalf("got %v (%#v), want %v: key %s, ...%s", err, ce, want, tc.key, tc.msg)
			}
		})
	}
	if _, err := DecodeOverrides("nope", nil); err == nil || !strings.Contains(err.Error(), `unknown scheme "nope"`) {
		t.Errorf("unknown scheme: %v", err)
	}
}

// FuzzDecodeOverrides: for any [cc.params] text of any scheme, the
// overrides decoded once and laid over a node's defaults hold what the
// table decoded over them holds, and a table DecodeTable refuses
// DecodeOverrides refuses with the same error.
func FuzzDecodeOverrides(f *testing.F) {
	f.Add(uint8(0), "mixed_ce = \"increase\"\nri_low_bps = 1e6")
	f.Add(uint8(1), "g = 0.5\n[[ecn_by_link]]\ngbps = 25.0\nkmin_bytes = 1000\n[[ecn_by_link]]\ngbps = 100.0\npmax = 0.2")
	f.Add(uint8(1), "ecn_by_link = []\nmark_at = \"enqueue\"")
	f.Add(uint8(3), "eta = nan\nmax_stage = 0")
	f.Add(uint8(8), "q_ref_bytes = 1\nq_mid_bytes = -3\nt_ns = 1.5")
	f.Add(uint8(8), "t_nss = 1")
	f.Add(uint8(9), "alpha = -0.0\nbeta = inf")
	schemes := ccalgo.Schemes()
	env := ccalgo.Env{LinkBps: 40e9, BaseRTT: 12_000, MTU: 1500, MaxFlows: 64, ExpectedFlows: 8, ID: 2}
	f.Fuzz(func(t *testing.T, scheme uint8, text string) {
		var tbl map[string]any
		if _, err := Decode("fuzz", text, &tbl); err != nil {
			return
		}
		s := schemes[int(scheme)%len(schemes)]
		want := s.DefaultParams(env)
		werr := DecodeTable(tbl, want)
		o, err := DecodeOverrides(s.Name, tbl)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("%s: DecodeOverrides: %v; DecodeTable: %v", s.Name, err, werr)
		}
		if err != nil {
			return
		}
		got := s.DefaultParams(env)
		if err := o.Apply(got); err != nil {
			t.Fatal(err)
		}
		g, w := fmt.Sprintf("%#v", reflect.ValueOf(got).Elem()), fmt.Sprintf("%#v", reflect.ValueOf(want).Elem())
		if g != w {
			t.Fatalf("%s %q: overrides %v laid over the defaults\n%s\nthe table decoded over them\n%s", s.Name, text, o.Fields(), g, w)
		}
	})
}
