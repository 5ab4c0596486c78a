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
#
# Go before 1.27 can fail a duration-bounded run that found nothing: when the
# -fuzztime deadline fires, its coordinator may read the deadline on its own
# context before the workers' child context is cancelled, and report it as
# the target's failure, a bare "context deadline exceeded" with no input
# written (internal/fuzz CoordinateFuzzing's stop; Go issue 75804, fixed in
# Go 1.27). A loaded machine widens that window. Such a run fuzzed for the
# whole FUZZTIME and no input failed: the script says so and goes on. Any
# other failure, or that message from a Go that has the fix, stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

# coordinator_deadline_only LOG: LOG is a failed fuzz run's output whose only
# failure is the coordinator's own deadline (above), on a Go without the fix.
coordinator_deadline_only() {
	local minor
	minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
	[[ -n $minor && $minor -lt 27 ]] || return 1
	[[ $(grep -c -- '--- FAIL' "$1") -eq 1 ]] || return 1
	grep -A1 -- '--- FAIL: Fuzz' "$1" | tail -n1 | grep -qx '    context deadline exceeded' || return 1
	! grep -qE 'Failing input written|panic:|fuzzing process hung|testing.go:[0-9]+: ' "$1"
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fuzztime=${FUZZTIME:-30s}
minimize=${FUZZMINIMIZETIME:-1s}
parallel=${FUZZPARALLEL:-$(nproc)}
pick=${1:-.}

while read -r file; do
	pkg=./$(dirname "${file#./}")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		[[ $target =~ $pick ]] || continue
		echo "== $pkg $target ($fuzztime, minimise $minimize)"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" \
			-fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg" 2>&1 | tee "$log"; then
			coordinator_deadline_only "$log" || exit 1
			echo "fuzz.sh: $target: Go's fuzzing coordinator reported its own -fuzztime deadline (Go issue 75804): the run fuzzed for $fuzztime and no input failed"
		fi
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sort)
