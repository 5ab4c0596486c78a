#!/usr/bin/env bash
# Runs every virtual-time experiment (configs/experiments/*-virtual.toml) over
# several seeds with pacing jitter, and prints the numbers docs/experiments.md
# quotes as bands (min-max over the seeds), one block per experiment: each
# flow's steady goodput, Jain's index, the busiest port's steady and p99 queue
# and fair rate, PFC activations and drops over every port, and the FCT
# slowdown buckets. A value that is the same for every seed is printed once.
#
#   SEEDS=5      seeds 1..SEEDS (default 5)
#   JITTER=0.1   topology.pacing_jitter for every run (default 0.1: each QP's
#                packet spacing drawn from [0.9, 1.1] of its gap, so that
#                seeds differ even where the workload is fixed flows)
#   ONLY=regex   only the experiments whose file name matches
#   OUT=dir      where the runs go (default: a fresh temporary directory)
#
# SEEDS=1 JITTER=0 gives each file's own single run. Virtual time is
# deterministic: the same file, seed and jitter give the same numbers on every
# machine. No DPDK, no root; about ten minutes on 2 cores at the defaults.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "experiments: needs jq (apt-get install jq)" >&2; exit 1; }
seeds=${SEEDS:-5}
jitter=${JITTER:-0.1}
only=${ONLY:-.}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out" bin
go build -o bin/testbed ./cmd/testbed
echo "seeds 1..$seeds, topology.pacing_jitter = $jitter; bands are min-max over the seeds"
for f in configs/experiments/*-virtual.toml; do
	name=$(basename "$f" .toml)
	[[ $name =~ $only ]] || continue
	sums=()
	for seed in $(seq 1 "$seeds"); do
		dir="$out/$name/seed-$seed"
		bin/testbed run -q -seed "$seed" -set "topology.pacing_jitter=$jitter" -run-dir "$dir" "$f" >/dev/null
		sums+=("$dir/summary.json")
	done
	s=${sums[0]}
	echo "== $name ($(jq -r .scheme "$s"), clock $(jq -r .clock "$s"), $(jq -r .topology "$s"))"
	echo "   command: bin/testbed run -seed N -set topology.pacing_jitter=$jitter $f  (N = 1..$seeds)"
	jq -rs '
		def r(x): (x * 1000 | round) / 1000;
		# band(xs): "v" when every seed gave v, "lo-hi" otherwise, "null" when none has a value.
		def band(xs): [xs[] | select(. != null)] as $v |
			if ($v | length) == 0 then "null"
			elif r($v | min) == r($v | max) then "\(r($v[0]))"
			else "\(r($v | min))-\(r($v | max))" end;
		def busiest: .ports | max_by(.steady_queue_bytes);
		. as $runs |
		(if ($runs[0].flows | length) <= 12 then
			"   flows (steady Gb/s of payload): " + ([$runs[0].flows[].id as $id |
				"\($id):" + band([$runs[] | .flows[] | select(.id == $id) | .steady_gbps])] | join(" "))
		else
			"   flows: \(band([$runs[] | .flows | length])), steady Gb/s min \(band([$runs[] | [.flows[].steady_gbps | select(. != null)] | min])) max \(band([$runs[] | [.flows[].steady_gbps | select(. != null)] | max]))"
		end),
		"   Jain \(band([$runs[].jain_index]))",
		band([$runs[] | busiest | .fair_rate_gbps]) as $fair |
		"   busiest port \([$runs[] | busiest | (.name // .id | tostring)] | unique | join(" or ")): steady queue \(band([$runs[] | busiest | .steady_queue_bytes / 1000])) KB, p99 \(band([$runs[] | busiest | .p99_queue_bytes / 1000])) KB" + (if $fair == "null" then "" else ", fair rate \($fair) Gb/s" end),
		"   PFC activations \(band([$runs[] | [.ports[].pfc_activations] | add])), drops \(band([$runs[] | [.ports[].drops] | add]))",
		([$runs[] | .fct_buckets // [] | .[] | [.lo_bytes, .hi_bytes]] | unique | .[] as [$lo, $hi] |
			[$runs[] | .fct_buckets // [] | .[] | select(.lo_bytes == $lo and .hi_bytes == $hi)] as $b |
			"   FCT [\($lo), \($hi)) B: \(band([$b[].count])) flows, slowdown median \(band([$b[].median_slowdown])) p99 \(band([$b[].p99_slowdown]))")
	' "${sums[@]}"
done
echo "results in $out"
