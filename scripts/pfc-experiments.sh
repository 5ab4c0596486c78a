#!/usr/bin/env bash
# The PFC experiments of docs/experiments.md, in virtual time (no DPDK, no
# root; a few minutes on 2 cores at the defaults):
#  1. configs/experiments/pfc-victim-virtual.toml under every scheme, and with
#     PFC alone and the victim in a lossy priority of its own: the victim
#     flow's steady goodput against its fair share (3.6 Gb/s of payload at
#     best, 6 Gb/s of frames), and PFC activations at s0's port to the
#     victim's host and s1's port to the trunk;
#  2. configs/experiments/rocc-pfc-websearch-virtual.toml with DCQCN and RoCC
#     at three loads: PFC activations over every port, and the ratio.
# Each figure is a band, min-max over seeds 1..SEEDS (default 5) with
# topology.pacing_jitter = JITTER (default 0.1); the ratio's band is over
# the seeds' own ratios. SEEDS=1 JITTER=0 gives the files' single runs.
# Results go under $OUT (default: a fresh temporary directory).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "pfc-experiments: needs jq (apt-get install jq)" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
seeds=${SEEDS:-5}
jitter=${JITTER:-0.1}
mkdir -p "$out" bin
go build -o bin/testbed ./cmd/testbed
exp=configs/experiments
wl=$(cd configs/workloads && pwd)

# run SEED FILE SCHEME [SED]: runs a copy of FILE with SCHEME (and the extra
# sed script SED) at SEED with the jitter, prints the summary's path.
run() {
	local seed=$1 file=$2 scheme=$3 extra=${4:-} name
	name=$(basename "$file" .toml)
	local tmp="$out/$name-$scheme-seed$seed-$RANDOM.toml"
	sed -e "s/^scheme = .*/scheme = \"$scheme\"/" -e "s#\"\.\./workloads/#\"$wl/#" ${extra:+-e "$extra"} "$file" >"$tmp"
	local dir="$out/$(basename "$tmp" .toml)"
	bin/testbed run -q -seed "$seed" -set "topology.pacing_jitter=$jitter" -run-dir "$dir" "$tmp" >/dev/null
	echo "$dir/summary.json"
}

# band FORMAT VALUE...: "v" when every value is the same under FORMAT, else
# "lo-hi".
band() {
	local fmt=$1
	shift
	printf '%s\n' "$@" | awk -v f="$fmt" 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
		END { a = sprintf(f, lo); b = sprintf(f, hi); print (a == b ? a : a "-" b) }'
}

echo "seeds 1..$seeds, topology.pacing_jitter = $jitter; bands are min-max over the seeds"
echo "== PFC congestion spreading: the victim flow (flow 100, fair share 6 Gb/s of frames)"
printf '%-24s %14s %16s %16s %8s\n' scheme "victim Gb/s" "victim-host XOFF" "trunk XOFF" drops
victim() {
	local label=$1 s seed g=() v=() t=() d=()
	for seed in $(seq 1 "$seeds"); do
		s=$(run "$seed" $exp/pfc-victim-virtual.toml "${@:2}")
		g+=("$(jq '.flows[] | select(.id==100) | .steady_gbps' "$s")")
		v+=("$(jq '.ports[] | select(.name=="s0.p2") | .pfc_activations' "$s")")
		t+=("$(jq '.ports[] | select(.name=="s1.p5") | .pfc_activations' "$s")")
		d+=("$(jq '[.ports[].drops] | add' "$s")")
	done
	printf '%-24s %14s %16s %16s %8s\n' "$label" "$(band %.3f "${g[@]}")" \
		"$(band %d "${v[@]}")" "$(band %d "${t[@]}")" "$(band %d "${d[@]}")"
}
victim "none (PFC only)" none
victim "none, victim priority 1" none '/^# \[\[host_priority/,/^# priority/ s/^# //'
for s in dcqcn dctcp rocc hpcc acc p4qcn qcn timely rcc; do
	victim "$s" "$s"
done

echo
echo "== RoCC vs DCQCN: PFC activations under web-search load (45 hosts, 40/100 Gb/s)"
printf '%-6s %12s %12s %12s\n' load dcqcn rocc ratio
for load in 0.175 0.35 0.7; do
	nd=() nr=() ratio=()
	for seed in $(seq 1 "$seeds"); do
		d=$(run "$seed" $exp/rocc-pfc-websearch-virtual.toml dcqcn "s/^load = .*/load = $load/")
		r=$(run "$seed" $exp/rocc-pfc-websearch-virtual.toml rocc "s/^load = .*/load = $load/")
		nd+=("$(jq '[.ports[].pfc_activations] | add' "$d")")
		nr+=("$(jq '[.ports[].pfc_activations] | add' "$r")")
		# A seed where RoCC triggered no PFC has no finite ratio; it is left
		# out of the band and the count of such seeds is printed.
		ratio+=("$(awk -v a="${nd[-1]}" -v b="${nr[-1]}" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }')")
	done
	finite=($(printf '%s\n' "${ratio[@]}" | grep -v inf || true))
	inf=$(( ${#ratio[@]} - ${#finite[@]} ))
	printf '%-6s %12s %12s %12s%s\n' "$load" "$(band %d "${nd[@]}")" "$(band %d "${nr[@]}")" \
		"$( ((${#finite[@]} > 0)) && band %.1f "${finite[@]}" || echo -)" "$( ((inf > 0)) && echo " ($inf seeds: RoCC 0)" || true)"
done
echo "results in $out"
