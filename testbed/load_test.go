package testbed

import (
	"reflect"
	"strings"
	"testing"
)

// TestSetReachesEveryArrayOfTables: every array of tables of the experiment
// file ([[flows]], [[topology.links]], ...) is one tableArray knows, so that
// -set KEY.i.field reaches into each; a new one added to Experiment without
// a case there fails here.
func TestSetReachesEveryArrayOfTables(t *testing.T) {
	var e Experiment
	var walk func(prefix string, v reflect.Value)
	found := 0
	walk = func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(prefix+name+".", fv)
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				found++
				key := prefix + name
				fv.Set(reflect.MakeSlice(f.Type, 2, 2))
				entry, n, ok := e.tableArray(key, 1)
				if !ok || n != 2 || entry == nil || entry != fv.Index(1).Addr().Interface() {
					t.Errorf("[[%s]]: tableArray gives %v, %d, %v; want entry 1 of 2", key, entry, n, ok)
				}
				if entry, _, _ := e.tableArray(key, 2); entry != nil {
					t.Errorf("[[%s]]: entry 2 of 2 found", key)
				}
			}
		}
	}
	walk("", reflect.ValueOf(&e).Elem())
	if found < 5 {
		t.Errorf("found %d arrays of tables, want flows, incast, workloads, host_priority, topology.links at least", found)
	}
}
