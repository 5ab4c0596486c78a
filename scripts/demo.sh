#!/usr/bin/env bash
# scripts/demo.sh: the main job, with no NIC: run the RoCC 3-to-1 experiment
# (RoCC Section VI-B, Fig. 14) on DPDK virtual devices in one process, and print
# where its results and plots are. Needs root and scripts/setup.sh.
#   usage: scripts/demo.sh [EXPERIMENT.toml] [RESULTS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
exp=${1:-configs/experiments/rocc-3to1.toml}
out=${2:-results}
mkdir -p bin
go build -o bin/testbed ./cmd/testbed
bin/testbed run "$exp" -o "$out"
name=$(awk -F'"' '/^name *=/ {print $2; exit}' "$exp")
echo
echo "plots:"
ls -1 "$out/$name"/*.png
echo "summary: $out/$name/summary.json"
