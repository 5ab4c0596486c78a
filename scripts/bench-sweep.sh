#!/usr/bin/env bash
# scripts/bench-sweep.sh: testbed sweep -j N against -j 1, the same 8 points
# (8 seeds of an experiment) one after the other, in one run of this script,
# and the check that both wrote the same results.
#
# Points: EXP (default the 128-host leaf-spine under web search at 30 %,
# configs/experiments/leafspine-websearch-virtual.toml) for DURATION (default
# 2ms: about 2 s of wall time a point here), seeds 1 to 8. Each round runs
# the sweep at -j 1, then at -j N (default 2), and prints both wall times (the
# whole command: runs, results, index, plots) and their ratio. ROUNDS rounds
# (default 3); the machine is shared, so report the range.
# Same results: every file of the two sweep directories is compared byte for
# byte, summary.json without its started_at line (the wall clock; machine and
# build are the same binary on the same machine here, so they are compared
# too).
#
# Run it alone: flock /tmp/ccbed-cpu.lock scripts/bench-sweep.sh
#   usage: [EXP=file] [DURATION=2ms] [JOBS=2] [ROUNDS=3] scripts/bench-sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exp=${EXP:-configs/experiments/leafspine-websearch-virtual.toml}
dur=${DURATION:-2ms}
jobs=${JOBS:-2}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testbed" ./cmd/testbed
name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$exp" | head -1)

# sweep J OUT: runs the sweep at -j J into OUT, prints its wall time and
# its CPU time (user + system) in s.
sweep() {
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" \
		"$tmp/testbed" sweep "$exp" -set experiment.seed=1,2,3,4,5,6,7,8 -duration "$dur" -j "$1" -results "$2" -q
	read -r wall user sys <"$tmp/time"
	echo "$wall $(echo "$user + $sys" | bc -l)"
}

# same A B: every file below sweep directories A and B is the same, summary.json
# but for started_at.
same() {
	local a=$1 b=$2 f
	(cd "$a" && find . -type f | sort) >"$tmp/files-a"
	(cd "$b" && find . -type f | sort) >"$tmp/files-b"
	cmp -s "$tmp/files-a" "$tmp/files-b" || { echo "different files"; return 1; }
	while read -r f; do
		if [[ $(basename "$f") == summary.json ]]; then
			cmp -s <(grep -v '"started_at"' "$a/$f") <(grep -v '"started_at"' "$b/$f") || { echo "$f differs"; return 1; }
		else
			cmp -s "$a/$f" "$b/$f" || { echo "$f differs"; return 1; }
		fi
	done <"$tmp/files-a"
	echo "same: $(wc -l <"$tmp/files-a") files"
}

echo "testbed sweep $exp -set experiment.seed=1,...,8 -duration $dur, on $(nproc) CPUs"
echo "wall and CPU (user + system) time of each sweep; ratio = wall at -j $jobs / wall at -j 1;"
echo "CPUs busy = CPU time / wall time of the -j $jobs sweep (what it got of the machine)"
printf '%-6s %10s %10s %10s %10s %7s %10s  %s\n' round "-j 1 wall" "-j 1 CPU" "-j $jobs wall" "-j $jobs CPU" ratio "CPUs busy" results
for r in $(seq "$rounds"); do
	read -r w1 c1 < <(sweep 1 "$tmp/j1-$r")
	read -r wn cn < <(sweep "$jobs" "$tmp/jn-$r")
	check=$(same "$tmp/j1-$r/$name-sweep/latest/" "$tmp/jn-$r/$name-sweep/latest/" || true)
	printf '%-6s %10.2f %10.2f %10.2f %10.2f %7.3f %10.2f  %s\n' "$r" "$w1" "$c1" "$wn" "$cn" \
		"$(echo "$wn / $w1" | bc -l)" "$(echo "$cn / $wn" | bc -l)" "$check"
	rm -rf "$tmp/j1-$r" "$tmp/jn-$r"
done
