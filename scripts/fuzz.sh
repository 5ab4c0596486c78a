#!/usr/bin/env bash
# scripts/fuzz.sh: run every fuzz target (func FuzzX in a _test.go file) in
# turn, each for FUZZTIME. An optional argument is a regexp that picks targets
# by name: scripts/fuzz.sh 'Decode'. pktgen's targets need root and DPDK (its
# TestMain starts the EAL on a null vdev); the others need neither.
#
#   FUZZTIME          time per target (default 30s)
#   FUZZMINIMIZETIME  -fuzzminimizetime (default 1s; see below)
#   FUZZPARALLEL      fuzzing workers (default: the CPUs)
#
# -fuzzminimizetime: Go minimises every input that reaches new code, running
# the target over and over on shrinking copies, for up to 60 s each by
# default. For a parser whose seeds are a few KB of TOML, that minimising takes
# the whole run: switchd's FuzzDecodeConfig, seeded with the 2 KB example
# configs, ran 4 inputs in 30 s at the default and 187,000 with 1 s. Keep seed
# corpora small (a few hundred bytes that still reach the code: one table, one
# port) and the minimise time short.
#
# A failing input is written to the package's testdata/fuzz/FuzzX/ and the
# script stops; `go test -run FuzzX/NAME ./pkg` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-30s}
minimize=${FUZZMINIMIZETIME:-1s}
parallel=${FUZZPARALLEL:-$(nproc)}
pick=${1:-.}

while read -r file; do
	pkg=./$(dirname "${file#./}")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		[[ $target =~ $pick ]] || continue
		echo "== $pkg $target ($fuzztime, minimise $minimize)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" \
			-fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg"
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sort)
