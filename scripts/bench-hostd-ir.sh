#!/usr/bin/env bash
# bench-hostd-ir.sh BIN... : instructions per frame (callgrind, which the
# machine's load does not change) in the timed loops of hostd's hot
# benchmarks, for each hostd test binary given (go test -c -o BIN ./hostd at
# the revisions to compare). ReceiveData, AckPath and NextData count inside
# timeCPU (the timed loop only); TxPath counts every poll, the 4,000 frames
# of its set-up included. N frames a run (default 400000).
set -euo pipefail
cd "$(dirname "$0")/../hostd"
N=${N:-400000}
for b in '^BenchmarkReceiveData$' '^BenchmarkAckPath$' '^BenchmarkNextData$' \
	'^BenchmarkTxPath$/^dcqcn$/^sum=100G$' '^BenchmarkTxPath$/^none$/^sum=90G$'; do
	line="$b"
	tog='*hostd.timeCPU'
	case $b in *TxPath*) tog='*hostd.(*txBench).poll' ;; esac
	for bin in "$@"; do
		# Go's async preemption signals trip callgrind: off.
		ir=$(GODEBUG=asyncpreemptoff=1 flock /tmp/ccbed-cpu.lock valgrind --tool=callgrind \
			--toggle-collect="$tog" --callgrind-out-file=/dev/null "$bin" -test.run '^$' \
			-test.bench "$b" -test.benchtime "${N}x" 2>&1 | sed -n 's/.*Collected : //p')
		line="$line $(basename "$bin" .test) $((ir / (N + 1)))"
	done
	echo "$line"
done
