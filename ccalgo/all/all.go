// Package all registers every ccalgo scheme: import it for its side effect where
// schemes are chosen by name (switchd, hostd, testbed).
package all

import (
	// Each import registers its scheme in ccalgo's registry.
	_ "github.com/ccbed/ccbed/ccalgo/acc"
	_ "github.com/ccbed/ccbed/ccalgo/dcqcn"
	_ "github.com/ccbed/ccbed/ccalgo/dctcp"
	_ "github.com/ccbed/ccbed/ccalgo/hpcc"
	_ "github.com/ccbed/ccbed/ccalgo/none"
	_ "github.com/ccbed/ccbed/ccalgo/p4qcn"
	_ "github.com/ccbed/ccbed/ccalgo/qcn"
	_ "github.com/ccbed/ccbed/ccalgo/rcc"
	_ "github.com/ccbed/ccbed/ccalgo/rocc"
	_ "github.com/ccbed/ccbed/ccalgo/timely"
)
