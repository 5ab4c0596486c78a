#!/usr/bin/env bash
# pgo.sh: regenerates cmd/testbed/default.pgo, the profile that go build
# uses for profile-guided optimisation of the testbed binary (docs/perf.md,
# "The agenda (issue 22)"). The profile is the CPU profile of two
# virtual-time runs, merged: the 128-host leaf-spine of
# configs/experiments/leafspine-websearch-virtual.toml (web search at 30 %,
# DCQCN, PFC; 10 ms, the ns-3 cross-check's input) and the same fabric with
# 16 leaves (256 hosts, every host a sender and a destination) for 3 ms.
# Both run the engines (switchd, hostd, ccalgo, pacer, wire) that the DPDK
# dataplane runs too; code that only the dataplane runs is cold in the
# profile and compiled as without one. Run it when the engines or the
# driver change much (a stale profile costs the gain, not correctness: the
# results are the same with and without it), on a machine to yourself or
# under the CPU lock: CPU_LOCK=/tmp/ccbed-cpu.lock scripts/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lock=()
if [ -n "${CPU_LOCK:-}" ]; then
	lock=(flock "$CPU_LOCK")
fi
go build -pgo=off -o "$tmp/testbed" ./cmd/testbed
cfg=configs/experiments/leafspine-websearch-virtual.toml
all=$(seq -s ', ' 0 255)
sed -e 's/^leaves = 8$/leaves = 16/' -e "s/^senders = .*/senders = [$all]/" -e "s/^dsts = .*/dsts = [$all]/" \
	-e 's|^cdf = "\.\./|cdf = "'"$PWD"'/configs/|' "$cfg" >"$tmp/ls256.toml"
grep -q '^leaves = 16$' "$tmp/ls256.toml" || { echo "pgo: $cfg no longer has 'leaves = 8'" >&2; exit 1; }
"${lock[@]}" "$tmp/testbed" run -q -workers 1 -cpuprofile "$tmp/ls128.pprof" -run-dir "$tmp/ls128" "$cfg" >"$tmp/ls128.log"
"${lock[@]}" "$tmp/testbed" run -q -workers 1 -duration 3ms -cpuprofile "$tmp/ls256.pprof" -run-dir "$tmp/ls256" "$tmp/ls256.toml" >"$tmp/ls256.log"
go tool pprof -proto "$tmp/ls128.pprof" "$tmp/ls256.pprof" >cmd/testbed/default.pgo
echo "pgo: wrote cmd/testbed/default.pgo ($(wc -c <cmd/testbed/default.pgo) bytes)"
