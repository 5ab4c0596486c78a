#!/usr/bin/env bash
# scripts/bench-pktgen.sh: 64-byte generation rate of one lcore on net_null0,
# cmd/pktgen (Go, ccbed's binding) beside dpdk-testpmd --forward-mode=txonly on
# the same device, in the same run. Prints Mpps of each and the ratio. Needs root
# and setup.sh. Frames are 64 bytes without FCS (testpmd's default --txpkts=64),
# one flow, burst 32 in both.
#   usage: scripts/bench-pktgen.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
eal=(--no-huge -m 512 --no-pci --no-shconf --no-telemetry -l 0-1 --log-level=lib.eal:error --vdev=net_null0)

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/pktgen" ./cmd/pktgen

# pktgen: one loop on worker lcore 1, unlimited rate, JSON summary.
"$bin/pktgen" -eal-args "${eal[*]}" -ports net_null0 -lcores 1 -size 64 -burst 32 \
	-duration "${secs}s" -interval 0 -json "$bin/pg.json" >"$bin/pg.log" 2>&1 || {
	echo "bench-pktgen: pktgen failed:" >&2
	tail -20 "$bin/pg.log" >&2
	exit 1
}
grep -E '^(loop|port)' "$bin/pg.log"
pg_mpps=$(awk -F'[:,]' '/"tx_mpps"/ {gsub(/ /, "", $2); print $2; exit}' "$bin/pg.json")

# testpmd txonly, interactive: forwarding lcore 1, start, wait, stop; the
# forward statistics printed at stop count packets since start.
log="$bin/tp.log"
{ sleep 2; echo "start"; sleep "$secs"; echo "stop"; sleep 1; echo "quit"; } |
	timeout $((secs + 30)) dpdk-testpmd "${eal[@]}" -- -i --forward-mode=txonly --txpkts=64 --burst=32 \
		--total-num-mbufs=16384 >"$log" 2>&1 || true
tp_pkts=$(awk '/Accumulated forward statistics/ {acc=1} acc && /TX-packets:/ {print $2; exit}' "$log")
if [ -z "$tp_pkts" ]; then
	echo "bench-pktgen: testpmd produced no statistics; its output:" >&2
	tail -20 "$log" >&2
	exit 1
fi
tp_mpps=$(awk -v p="$tp_pkts" -v s="$secs" 'BEGIN {printf "%.2f", p / s / 1e6}')

printf '\n64 B generation, net_null0, 1 lcore, %ss\n' "$secs"
printf '  dpdk-testpmd txonly    %8.2f Mpps\n' "$tp_mpps"
printf '  cmd/pktgen (Go)        %8.2f Mpps   ratio %.2f\n' "$pg_mpps" "$(awk -v a="$pg_mpps" -v b="$tp_mpps" 'BEGIN {print a / b}')"
