#!/usr/bin/env bash
# bench-switchd-ir.sh BIN... : instructions per frame (callgrind, which the
# machine's load does not change) of switchd's BenchmarkEngineStages, for
# each switchd test binary given (go test -c -o BIN ./switchd at the
# revisions to compare). Only the engine's entry points count (Classify,
# Enqueue, Service, Transmit and what they call): the benchmark's own loop
# and set-up do not, but for the Classify calls of its set-up (128 frames,
# constant). N frames a run (default 100000). STAGES narrows the benchmarks
# (default: every scheme, classify, queue and queue1500).
set -euo pipefail
cd "$(dirname "$0")/../switchd"
N=${N:-100000}
STAGES=${STAGES:-'none rocc dcqcn hpcc none+pfc dcqcn+pfc'}
for bin in "$@"; do
	[ -x "$bin" ] || { echo "bench-switchd-ir: $bin is not an executable test binary" >&2; exit 1; }
done
for scheme in $STAGES; do
	for stage in classify queue queue1500; do
		b="^BenchmarkEngineStages\$/^${scheme/+/\\+}\$/^$stage\$"
		line="$scheme/$stage"
		for bin in "$@"; do
			# Go's async preemption signals trip callgrind: off. Transmit is
			# a wrapper around transmit since issue 27 (inlined into the
			# benchmark): both count.
			ir=$(GODEBUG=asyncpreemptoff=1 flock /tmp/ccbed-cpu.lock valgrind --tool=callgrind \
				--toggle-collect='*switchd.(*Engine).Classify' --toggle-collect='*switchd.(*Engine).Enqueue' \
				--toggle-collect='*switchd.(*Engine).Service' --toggle-collect='*switchd.(*Engine).Transmit' \
				--toggle-collect='*switchd.(*Engine).transmit' --callgrind-out-file=/dev/null "$bin" -test.run '^$' \
				-test.bench "$b" -test.benchtime "${N}x" 2>&1 | sed -n 's/.*Collected : //p')
			[ -n "$ir" ] || { echo "bench-switchd-ir: no count for $line from $bin" >&2; exit 1; }
			line="$line $(basename "$bin" .test) $((ir / (N + 1)))"
		done
		echo "$line"
	done
done
