#!/usr/bin/env bash
# scripts/demo.sh: the main job, with no NIC. Runs RoCC 3-to-1 (RoCC Section
# VI-B, Fig. 14) twice: at the paper's scale (10 Gb/s, T = 100 us) in virtual
# time, where the real switchd and hostd engines run under a discrete-event
# clock, exactly; and scaled to 1 Gb/s on DPDK virtual devices in one process,
# in real time. Then it draws both runs' queue and fair rate (normalised to C,
# time scaled to 10 Gb/s) on shared axes. The DPDK run needs root and
# scripts/setup.sh; with DEMO_CLOCKS=virtual only the virtual run is made.
#   usage: scripts/demo.sh [RESULTS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results}
clocks=${DEMO_CLOCKS:-virtual dpdk}
mkdir -p bin
go build -o bin/testbed ./cmd/testbed
runs=()
for clock in $clocks; do
	case $clock in
	virtual) exp=configs/experiments/rocc-3to1-virtual.toml ;;
	dpdk) exp=configs/experiments/rocc-3to1.toml ;;
	*) echo "demo.sh: unknown clock $clock" >&2; exit 2 ;;
	esac
	echo "== $clock: $exp"
	bin/testbed run "$exp" -clock "$clock" -results "$out"
	name=$(awk -F'"' '/^name *=/ {print $2; exit}' "$exp")
	runs+=("$clock=$out/$name")
	echo
done
bin/testbed compare -o "$out/compare" -port 3 "${runs[@]}"
echo "summaries: ${runs[*]#*=}"
