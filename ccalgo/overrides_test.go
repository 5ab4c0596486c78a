package ccalgo

import (
	"errors"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ovInner is a nested table of ovParams.
type ovInner struct {
	A int
	B float64
}

// ovParams has a field of every kind Overrides carries.
type ovParams struct {
	I      int
	F      float64
	B      bool
	S      string
	U      uint64
	Sl     []ovInner
	M      map[string]int
	Ar     [2]int
	In     ovInner
	hidden int
}

func ovDefaults(env Env) any {
	return &ovParams{I: int(env.LinkBps / 1e9), F: 0.5, B: true, S: "default", U: 7,
		M: map[string]int{"keep": 1}, Ar: [2]int{1, 2}, In: ovInner{A: 3, B: 4}, hidden: 9}
}

func init() {
	Register(Scheme{Name: "ovtest", DefaultParams: ovDefaults})
	Register(Scheme{Name: "ovtest-ptr", DefaultParams: func(Env) any { return &struct{ P *int }{} }})
	Register(Scheme{Name: "ovtest-iface", DefaultParams: func(Env) any { return &struct{ V any }{} }})
	Register(Scheme{Name: "ovtest-text", DefaultParams: func(Env) any { return &struct{ Addr netip.Addr }{} }})
	Register(Scheme{Name: "ovtest-array", DefaultParams: func(Env) any { return &struct{ Ar [1]ovInner }{} }})
	Register(Scheme{Name: "ovtest-value", DefaultParams: func(Env) any { return ovParams{} }})
}

// ovSet is a set function of *ovParams.
func ovSet(f func(p *ovParams)) func(any) error {
	return func(p any) error { f(p.(*ovParams)); return nil }
}

// TestOverrides: NewOverrides finds the fields a set function sets, zero
// values and NaN included, a nested struct's key by key; Apply lays them
// over a node's defaults and keeps the rest, and what it lays is a copy.
func TestOverrides(t *testing.T) {
	env := Env{LinkBps: 25e9}
	def := func(f func(p *ovParams)) *ovParams {
		p := ovDefaults(env).(*ovParams)
		f(p)
		return p
	}
	nan := math.Float64frombits(0x7ff8000000000042)
	for _, tc := range []struct {
		name   string
		set    func(p *ovParams)
		fields []string
		want   *ovParams
	}{
		{"nothing", func(*ovParams) {}, nil, def(func(*ovParams) {})},
		{"scalars", func(p *ovParams) { p.I, p.F, p.B, p.S, p.U = 5, 0.25, false, "x", 9 },
			[]string{"I", "F", "B", "S", "U"}, def(func(p *ovParams) { p.I, p.F, p.B, p.S, p.U = 5, 0.25, false, "x", 9 })},
		{"zero values are set", func(p *ovParams) { p.I, p.F, p.S, p.U = 0, 0, "", 0 },
			[]string{"I", "F", "S", "U"}, def(func(p *ovParams) { p.I, p.F, p.S, p.U = 0, 0, "", 0 })},
		{"the probe's own values are set", func(p *ovParams) { p.I, p.B, p.S = 1, true, "\x00probe" },
			[]string{"I", "B", "S"}, def(func(p *ovParams) { p.I, p.B, p.S = 1, true, "\x00probe" })},
		{"NaN", func(p *ovParams) { p.F = nan }, []string{"F"}, def(func(p *ovParams) { p.F = nan })},
		{"negative zero", func(p *ovParams) { p.F = math.Copysign(0, -1) }, []string{"F"},
			def(func(p *ovParams) { p.F = math.Copysign(0, -1) })},
		{"nested key by key", func(p *ovParams) { p.In.A = 8 }, []string{"In.A"}, def(func(p *ovParams) { p.In.A = 8 })},
		{"slice", func(p *ovParams) { p.Sl = []ovInner{{A: 1}, {B: 2}} }, []string{"Sl"},
			def(func(p *ovParams) { p.Sl = []ovInner{{A: 1}, {B: 2}} })},
		{"empty slice", func(p *ovParams) { p.Sl = []ovInner{} }, []string{"Sl"}, def(func(p *ovParams) { p.Sl = []ovInner{} })},
		{"map keeps the defaults' keys", func(p *ovParams) { p.M = map[string]int{"new": 2} }, []string{"M"},
			def(func(p *ovParams) { p.M = map[string]int{"keep": 1, "new": 2} })},
		{"map key over a default", func(p *ovParams) { p.M = map[string]int{"keep": 0} }, []string{"M"},
			def(func(p *ovParams) { p.M = map[string]int{"keep": 0} })},
		{"array", func(p *ovParams) { p.Ar = [2]int{5, 6} }, []string{"Ar"}, def(func(p *ovParams) { p.Ar = [2]int{5, 6} })},
		{"a value from the struct's own is not an override", func(p *ovParams) { p.I *= 2 }, nil, def(func(*ovParams) {})},
		{"unexported fields are never set", func(p *ovParams) { p.hidden = 3 }, nil, def(func(*ovParams) {})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewOverrides("ovtest", ovSet(tc.set))
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Fields(); !slices.Equal(got, tc.fields) {
				t.Errorf("fields %q, want %q", got, tc.fields)
			}
			if o.Empty() != (len(tc.fields) == 0) || o.Scheme() != "ovtest" {
				t.Errorf("empty %v, scheme %q", o.Empty(), o.Scheme())
			}
			p := ovDefaults(env).(*ovParams)
			defaultMap := p.M
			if err := o.Apply(p); err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(p.F) != math.Float64bits(tc.want.F) {
				t.Errorf("F bits %x, want %x", math.Float64bits(p.F), math.Float64bits(tc.want.F))
			}
			p.F, tc.want.F = 0, 0 // compared by bits above (NaN)
			if !reflect.DeepEqual(p, tc.want) {
				t.Errorf("applied\n%+v\nwant\n%+v", p, tc.want)
			}
			if !reflect.DeepEqual(defaultMap, map[string]int{"keep": 1}) {
				t.Errorf("the defaults' map changed: %v", defaultMap)
			}
			// What Apply lays is a copy: a node that changes its
			// parameters changes no other node's.
			if len(p.Sl) > 0 {
				p.Sl[0].A = 99
			}
			if p.M != nil {
				p.M["keep"] = 99
			}
			q := ovDefaults(env).(*ovParams)
			if err := o.Apply(q); err != nil {
				t.Fatal(err)
			}
			q.F, p.F = 0, 0
			if len(q.Sl) > 0 && q.Sl[0].A == 99 || q.M["keep"] == 99 {
				t.Errorf("a second node shares the first's slice or map: %+v", q)
			}
		})
	}
}

// TestOverridesErrors: a set function's error comes back as it is; an
// unknown scheme, a parameter struct Overrides cannot carry, and params of
// another type are errors naming what is wrong.
func TestOverridesErrors(t *testing.T) {
	errSet := errors.New("cc.params: unknown key")
	for _, tc := range []struct {
		name, scheme string
		set          func(any) error
		want         string
		is           error
	}{
		{"set's error", "ovtest", func(any) error { return errSet }, "unknown key", errSet},
		{"unknown scheme", "nope", func(any) error { return nil }, `unknown scheme "nope"`, nil},
		{"pointer", "ovtest-ptr", func(any) error { return nil }, "parameter struct { P *int }.P: type *int", nil},
		{"interface", "ovtest-iface", func(any) error { return nil }, ".V: type interface {}", nil},
		{"text unmarshaler", "ovtest-text", func(any) error { return nil }, ".Addr: type netip.Addr decodes itself from text", nil},
		{"array of structs", "ovtest-array", func(any) error { return nil }, ".Ar: type [1]ccalgo.ovInner", nil},
		{"not a pointer", "ovtest-value", func(any) error { return nil }, "not a pointer to a struct", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewOverrides(tc.scheme, tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("got %v, want ...%s", err, tc.want)
			}
		})
	}
	o, err := NewOverrides("ovtest", ovSet(func(p *ovParams) { p.I = 1 }))
	if err != nil {
		t.Fatal(err)
	}
	var nilP *ovParams
	for _, bad := range []any{&testParams{}, ovParams{}, nilP, nil} {
		if err := o.Apply(bad); err == nil || !strings.Contains(err.Error(), "overrides of scheme ovtest laid over") {
			t.Errorf("Apply(%T): %v", bad, err)
		}
	}
	var zero Overrides
	p := &testParams{X: 4}
	if err := zero.Apply(p); err != nil || p.X != 4 || !zero.Empty() || zero.Scheme() != "" {
		t.Errorf("the zero Overrides: %v, %+v", err, p)
	}
}
