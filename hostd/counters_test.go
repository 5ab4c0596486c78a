package hostd

import (
	"reflect"
	"testing"
)

// fillCounts sets every uint64 of v (a struct of counters, nested structs
// included) to a distinct value from *next on, and fails on a field of
// another kind, which Add could not sum.
func fillCounts(t *testing.T, v reflect.Value, next *uint64) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Uint64:
			f.SetUint(*next)
			*next += 1 << 20
		case reflect.Struct:
			fillCounts(t, f, next)
		default:
			t.Fatalf("%s.%s is a %s: counters are uint64 (or structs of them)", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}

// checkSums fails unless every uint64 of got is the sum of a's and b's.
func checkSums(t *testing.T, got, a, b reflect.Value, path string) {
	t.Helper()
	for i := 0; i < got.NumField(); i++ {
		name := path + "." + got.Type().Field(i).Name
		switch f := got.Field(i); f.Kind() {
		case reflect.Uint64:
			if want := a.Field(i).Uint() + b.Field(i).Uint(); f.Uint() != want {
				t.Errorf("%s = %d after Add, want %d: Add leaves the field out", name, f.Uint(), want)
			}
		case reflect.Struct:
			checkSums(t, f, a.Field(i), b.Field(i), name)
		}
	}
}

// TestCountersAdd: each counters type's Add sums every field, so that a
// field added to the struct and not to Add fails here.
func TestCountersAdd(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any            // pointers to two values of the type
		add  func(a, b any) // a.Add(b)
	}{
		{"RxCounters", &RxCounters{}, &RxCounters{}, func(a, b any) { a.(*RxCounters).Add(b.(*RxCounters)) }},
		{"TxCounters", &TxCounters{}, &TxCounters{}, func(a, b any) { a.(*TxCounters).Add(b.(*TxCounters)) }},
		{"Refusals", &Refusals{}, &Refusals{}, func(a, b any) { a.(*Refusals).Add(b.(*Refusals)) }},
		{"PortCounter", &PortCounter{}, &PortCounter{}, func(a, b any) { a.(*PortCounter).Add(b.(*PortCounter)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := reflect.ValueOf(tc.a).Elem(), reflect.ValueOf(tc.b).Elem()
			next := uint64(1)
			fillCounts(t, a, &next)
			fillCounts(t, b, &next)
			before := reflect.New(a.Type()).Elem()
			before.Set(a)
			tc.add(tc.a, tc.b)
			checkSums(t, a, before, b, tc.name)
		})
	}
}

// TestCountersAddAllocs: summing counters (the shards' totals, every
// publication) allocates nothing.
func TestCountersAddAllocs(t *testing.T) {
	var rx, rx2 RxCounters
	var tx, tx2 TxCounters
	var pc, pc2 PortCounter
	rx2.Frames, tx2.DataFrames, pc2.RxFrames = 1, 2, 3
	if a := testing.AllocsPerRun(100, func() { rx.Add(&rx2); tx.Add(&tx2); pc.Add(&pc2) }); a != 0 {
		t.Fatalf("%.1f allocs per Add of the three, want 0", a)
	}
	if rx.Frames != 101 || tx.DataFrames != 202 || pc.RxFrames != 303 {
		t.Errorf("after 101 Adds: rx frames %d, tx data frames %d, port rx frames %d", rx.Frames, tx.DataFrames, pc.RxFrames)
	}
}
