package config

import "github.com/ccbed/ccbed/ccalgo"

// DecodeOverrides decodes tbl, a scheme's parameter table of a file already
// decoded into a map (an experiment's [cc.params]), once, into the
// ccalgo.Overrides that the nodes lay over their own defaults: strictly, as
// DecodeTable (unknown keys and wrong types are DecodeTable's errors, Key
// relative to the table), and without any scheme defaults, which depend on
// each node's link. Laid over a node's DefaultParams(env), the result holds
// what DecodeTable(tbl, DefaultParams(env)) would.
func DecodeOverrides(scheme string, tbl map[string]any) (ccalgo.Overrides, error) {
	return ccalgo.NewOverrides(scheme, func(params any) error { return DecodeTable(tbl, params) })
}
