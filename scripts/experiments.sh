#!/usr/bin/env bash
# Runs every virtual-time experiment (configs/experiments/*-virtual.toml) and
# prints the numbers docs/experiments.md quotes, one block per experiment:
# each flow's steady goodput, Jain's index, the busiest port's steady and p99
# queue and fair rate, PFC activations and drops over every port, and the FCT
# slowdown buckets. Virtual time is deterministic: the same file and seed give
# the same numbers on every machine. No DPDK, no root; a few minutes on 2
# cores. Results go under $OUT (default: a fresh temporary directory).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "experiments: needs jq (apt-get install jq)" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out" bin
go build -o bin/testbed ./cmd/testbed
for f in configs/experiments/*-virtual.toml; do
	name=$(basename "$f" .toml)
	bin/testbed run -q -results "$out" "$f" >/dev/null
	s="$out/$name/latest/summary.json"
	echo "== $name ($(jq -r .scheme "$s"), clock $(jq -r .clock "$s"), seed $(jq -r .seed "$s"), $(jq -r .topology "$s"))"
	echo "   command: bin/testbed run $f"
	jq -r '
		def r(x): (x * 1000 | round) / 1000;
		(if (.flows | length) <= 12 then
			"   flows (steady Gb/s of payload): " + ([.flows[] | "\(.id):\(r(.steady_gbps))"] | join(" "))
		else
			"   flows: \(.flows | length), steady Gb/s min \(r([.flows[].steady_gbps] | min)) max \(r([.flows[].steady_gbps] | max))"
		end),
		"   Jain \(r(.jain_index // 0))",
		(.ports | max_by(.steady_queue_bytes) |
			"   busiest port \(.name // .id): steady queue \(r(.steady_queue_bytes / 1000)) KB, p99 \(r(.p99_queue_bytes / 1000)) KB, fair rate \(r(.fair_rate_gbps)) Gb/s"),
		"   PFC activations \([.ports[].pfc_activations] | add), drops \([.ports[].drops] | add)",
		(.fct_buckets // [] | .[] |
			"   FCT [\(.lo_bytes), \(.hi_bytes)) B: \(.count) flows, slowdown median \(r(.median_slowdown)) p99 \(r(.p99_slowdown))")
	' "$s"
done
echo "results in $out"
