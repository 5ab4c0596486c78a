package fabric

import (
	"slices"
	"testing"
)

// TestDealGroups: units go to groups of even load, largest first to the
// lightest group; every node follows its unit; the deal is the same every
// time.
func TestDealGroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unit   []int32   // node i's unit
		weight []float64 // node i's weight
		groups int
		want   []int32 // node i's group
	}{
		// A leaf (weight 24) with its hosts as units of their own (1 each),
		// a spine (8): the leaf alone, the spine with what is left.
		{"leaf", []int32{0, 1, 2, 3, 4, 5}, []float64{24, 8, 1, 1, 1, 1}, 2, []int32{0, 1, 1, 1, 1, 1}},
		// Equal units alternate, lowest group first on a tie.
		{"equal", []int32{0, 1, 2, 3}, []float64{1, 1, 1, 1}, 2, []int32{0, 1, 0, 1}},
		// A unit of several nodes weighs their sum and keeps them together.
		{"unit", []int32{0, 0, 1, 2}, []float64{3, 3, 5, 1}, 2, []int32{0, 0, 1, 1}},
		// More groups than units: one unit a group.
		{"few", []int32{0, 1}, []float64{1, 2}, 4, []int32{1, 0}},
	} {
		of := slices.Clone(tc.unit)
		units := int(slices.Max(of)) + 1
		dealGroups(of, units, tc.groups, func(i int) float64 { return tc.weight[i] })
		if !slices.Equal(of, tc.want) {
			t.Errorf("%s: groups %v, want %v", tc.name, of, tc.want)
		}
	}
}
