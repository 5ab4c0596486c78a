package ccalgo

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Overrides are parameters set over a scheme's defaults, which differ from
// node to node (they scale with each port's and NIC's Env): the scheme's
// parameter struct holding the values set, and which of its fields are set.
// An experiment file's [cc.params] table becomes Overrides where the file is
// read (testbed decodes it once, with NewOverrides), and fabric.Plan lays
// them over each host's and switch port's DefaultParams(env) with Apply:
// Go values all the way from the file's reader to the engines, no text
// decoded per node. The zero Overrides sets nothing.
type Overrides struct {
	scheme string
	// values is a pointer to the scheme's parameter struct: the set
	// fields' values (the others zero).
	values reflect.Value
	// fields are the set fields, as Value.FieldByIndex takes them: a field
	// of a nested struct by its own path (a table sets such a struct key by
	// key), any other field whole.
	fields [][]int
}

// overridesEnv is the Env whose defaults give NewOverrides the type of a
// scheme's parameter struct (only the type is used).
var overridesEnv = Env{LinkBps: 100e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 16, ID: 1}

// NewOverrides returns the Overrides that set makes to scheme's parameter
// struct. set is called twice with a pointer to the struct, once zero and
// once with every field holding another value (a probe: 1, true, a
// non-empty string, empty non-nil slices and maps); the fields it leaves
// equal in both are the fields it sets, whatever names the decoder matched
// them by. So set must assign values that do not depend on the struct's own
// (a decoder of a table, or plain assignments), and the struct's fields must
// be plain data: booleans, numbers, strings, structs of them, slices and
// maps of them, arrays of scalars (else an error naming the field). An
// error of set is returned as it is.
func NewOverrides(scheme string, set func(params any) error) (Overrides, error) {
	sch, err := Lookup(scheme)
	if err != nil {
		return Overrides{}, err
	}
	typ := reflect.TypeOf(sch.DefaultParams(overridesEnv))
	if typ == nil || typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return Overrides{}, fmt.Errorf("ccalgo: scheme %s: parameters %v are not a pointer to a struct", scheme, typ)
	}
	if err := checkOverridable(typ.Elem(), typ.Elem().String()); err != nil {
		return Overrides{}, fmt.Errorf("ccalgo: scheme %s: %w", scheme, err)
	}
	zero, probe := reflect.New(typ.Elem()), reflect.New(typ.Elem())
	fillProbe(probe.Elem())
	if err := set(zero.Interface()); err != nil {
		return Overrides{}, err
	}
	if err := set(probe.Interface()); err != nil {
		return Overrides{}, err
	}
	return Overrides{scheme: scheme, values: zero, fields: setFields(zero.Elem(), probe.Elem(), nil)}, nil
}

// Scheme is the scheme the overrides are of ("" for the zero Overrides).
func (o Overrides) Scheme() string { return o.scheme }

// Empty reports whether o sets no field.
func (o Overrides) Empty() bool { return len(o.fields) == 0 }

// Fields are the Go names of the fields o sets, dotted for a nested
// struct's ("ECNByLink", "Outer.Inner"), in the struct's order.
func (o Overrides) Fields() []string {
	out := make([]string, 0, len(o.fields))
	for _, f := range o.fields {
		t := o.values.Type().Elem()
		var names []string
		for _, i := range f {
			sf := t.Field(i)
			names = append(names, sf.Name)
			t = sf.Type
		}
		out = append(out, strings.Join(names, "."))
	}
	return out
}

// Apply lays the fields o sets over params, a pointer to the scheme's
// parameter struct (its DefaultParams for a node): each set field takes o's
// value, a slice a copy of it; a map keeps its other keys and takes o's. The
// zero Overrides leaves params as they are; params of another type are an
// error.
func (o Overrides) Apply(params any) error {
	if len(o.fields) == 0 {
		return nil
	}
	dst := reflect.ValueOf(params)
	if !dst.IsValid() || dst.Type() != o.values.Type() || dst.IsNil() {
		return fmt.Errorf("ccalgo: overrides of scheme %s laid over %T, want a non-nil %v", o.scheme, params, o.values.Type())
	}
	for _, f := range o.fields {
		d, s := dst.Elem().FieldByIndex(f), o.values.Elem().FieldByIndex(f)
		if s.Kind() != reflect.Map || d.IsNil() || s.IsNil() {
			d.Set(deepCopy(s))
			continue
		}
		m := deepCopy(d) // the defaults' map may be shared: a copy takes the keys
		for it := s.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		d.Set(m)
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// isScalar reports whether k is a boolean, a number or a string.
func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// checkOverridable returns an error naming the first field of t (named
// name) that Overrides cannot carry: one that NewOverrides' probe cannot
// tell set from unset, or that a decoder would merge into rather than set.
func checkOverridable(t reflect.Type, name string) error {
	custom := reflect.PointerTo(t).Implements(textUnmarshaler) || hasMethod(t, "UnmarshalTOML")
	switch k := t.Kind(); {
	case isScalar(k):
		return nil
	case custom:
		return fmt.Errorf("parameter %s: type %v decodes itself from text: overrides cannot carry it", name, t)
	case k == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue // no decoder sets it
			}
			if err := checkOverridable(f.Type, name+"."+f.Name); err != nil {
				return err
			}
		}
		return nil
	case k == reflect.Slice:
		return checkOverridable(t.Elem(), name+"[]")
	case k == reflect.Map && t.Key().Kind() == reflect.String:
		return checkOverridable(t.Elem(), name+"[]")
	case k == reflect.Array && isScalar(t.Elem().Kind()):
		return nil
	}
	return fmt.Errorf("parameter %s: type %v: overrides cannot carry it", name, t)
}

// hasMethod reports whether t or *t has the method name.
func hasMethod(t reflect.Type, name string) bool {
	_, ok := reflect.PointerTo(t).MethodByName(name)
	return ok
}

// fillProbe sets every field of v (settable, of a type checkOverridable
// passed) to a value other than its zero.
func fillProbe(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("\x00probe")
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Array:
		for i := range v.Len() {
			fillProbe(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fillProbe(f)
			}
		}
	}
}

// setFields are the fields of the structs a (set over zero) and b (set over
// the probe) that hold the same value, each by its path below path.
func setFields(a, b reflect.Value, path []int) [][]int {
	var out [][]int
	for i := range a.NumField() {
		if !a.Field(i).CanSet() {
			continue
		}
		p := append(append([]int(nil), path...), i)
		if a.Field(i).Kind() == reflect.Struct {
			out = append(out, setFields(a.Field(i), b.Field(i), p)...)
		} else if same(a.Field(i), b.Field(i)) {
			out = append(out, p)
		}
	}
	return out
}

// same reports whether x and y (of one type) hold the same value: floats
// by their bits (a NaN set is the same NaN), slices and maps nil or not
// alike.
func same(x, y reflect.Value) bool {
	switch x.Kind() {
	case reflect.Bool:
		return x.Bool() == y.Bool()
	case reflect.String:
		return x.String() == y.String()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(x.Float()) == math.Float64bits(y.Float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return x.Int() == y.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return x.Uint() == y.Uint()
	case reflect.Slice, reflect.Map:
		if x.IsNil() != y.IsNil() || x.Len() != y.Len() {
			return false
		}
		if x.Kind() == reflect.Map {
			for it := x.MapRange(); it.Next(); {
				if w := y.MapIndex(it.Key()); !w.IsValid() || !same(it.Value(), w) {
					return false
				}
			}
			return true
		}
		fallthrough
	case reflect.Array:
		for i := range x.Len() {
			if !same(x.Index(i), y.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range x.NumField() {
			if !same(x.Field(i), y.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// deepCopy is v with its slices and maps copied, at every depth.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if f := c.Field(i); f.CanSet() {
				f.Set(deepCopy(v.Field(i)))
			}
		}
		return c
	}
	return v
}
