#!/usr/bin/env bash
# The PFC experiments of docs/experiments.md, in virtual time (no DPDK, no
# root; about a minute on 2 cores):
#  1. configs/experiments/pfc-victim-virtual.toml under every scheme, and with
#     PFC alone and the victim in a lossy priority of its own: the victim
#     flow's steady goodput against its fair share (3.6 Gb/s of payload at
#     best, 6 Gb/s of frames), and PFC activations at s0's port to the
#     victim's host and s1's port to the trunk;
#  2. configs/experiments/rocc-pfc-websearch-virtual.toml with DCQCN and RoCC
#     at three loads: PFC activations over every port, and the ratio.
# Results go under $OUT (default: a fresh temporary directory).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "pfc-experiments: needs jq (apt-get install jq)" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out" bin
go build -o bin/testbed ./cmd/testbed
exp=configs/experiments
wl=$(cd configs/workloads && pwd)

# run FILE SCHEME [SED]: runs a copy of FILE with SCHEME (and the extra sed
# script SED), prints the summary's path.
run() {
	local file=$1 scheme=$2 extra=${3:-} name
	name=$(basename "$file" .toml)
	local tmp="$out/$name-$scheme-$RANDOM.toml"
	sed -e "s/^scheme = .*/scheme = \"$scheme\"/" -e "s#\"\.\./workloads/#\"$wl/#" ${extra:+-e "$extra"} "$file" >"$tmp"
	local dir="$out/$(basename "$tmp" .toml)"
	bin/testbed run -q -results "$dir" "$tmp" >/dev/null
	echo "$dir/$name/latest/summary.json"
}

echo "== PFC congestion spreading: the victim flow (flow 100, fair share 6 Gb/s of frames)"
printf '%-24s %12s %16s %16s %8s\n' scheme "victim Gb/s" "victim-host XOFF" "trunk XOFF" drops
victim() {
	local label=$1 s
	s=$(run $exp/pfc-victim-virtual.toml "${@:2}")
	printf '%-24s %12.3f %16d %16d %8d\n' "$label" \
		"$(jq '.flows[] | select(.id==100) | .steady_gbps' "$s")" \
		"$(jq '.ports[] | select(.name=="s0.p2") | .pfc_activations' "$s")" \
		"$(jq '.ports[] | select(.name=="s1.p5") | .pfc_activations' "$s")" \
		"$(jq '[.ports[].drops] | add' "$s")"
}
victim "none (PFC only)" none
victim "none, victim priority 1" none '/^# \[\[host_priority/,/^# priority/ s/^# //'
for s in dcqcn dctcp rocc hpcc acc p4qcn qcn timely rcc; do
	victim "$s" "$s"
done

echo
echo "== RoCC vs DCQCN: PFC activations under web-search load (45 hosts, 40/100 Gb/s)"
printf '%-6s %12s %12s %8s\n' load dcqcn rocc ratio
for load in 0.175 0.35 0.7; do
	d=$(run $exp/rocc-pfc-websearch-virtual.toml dcqcn "s/^load = .*/load = $load/")
	r=$(run $exp/rocc-pfc-websearch-virtual.toml rocc "s/^load = .*/load = $load/")
	nd=$(jq '[.ports[].pfc_activations] | add' "$d")
	nr=$(jq '[.ports[].pfc_activations] | add' "$r")
	printf '%-6s %12d %12d %8s\n' "$load" "$nd" "$nr" "$(awk -v a="$nd" -v b="$nr" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }')"
done
echo "results in $out"
