#!/usr/bin/env bash
# scripts/bench-dpdk.sh: io forwarding between two net_ring ports on one lcore,
# Go loop over ccbed's dpdk binding vs dpdk-testpmd --forward-mode=io, same
# ports, same run. Prints Mpps of each and the ratio. Needs root and setup.sh.
#   usage: scripts/bench-dpdk.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
eal=(--no-huge -m 512 --no-pci --no-shconf --no-telemetry -l 0-1 --vdev=net_ring0 --vdev=net_ring1)

out=$(go test -count=1 -run '^$' -bench 'IOForward' -benchtime "${secs}s" ./dpdk/)
echo "$out" | grep Benchmark
go_mpps=$(echo "$out" | awk '/BenchmarkIOForwardGo/ {for (i=1;i<=NF;i++) if ($(i+1)=="Mpps") print $i}')
c_mpps=$(echo "$out" | awk '/BenchmarkIOForwardC/ {for (i=1;i<=NF;i++) if ($(i+1)=="Mpps") print $i}')

# testpmd, interactive: wait for init, forward for $secs, stop; the forward
# statistics printed at stop count packets since start.
log=$(mktemp)
{ sleep 2; echo "start tx_first"; sleep "$secs"; echo "stop"; sleep 1; echo "quit"; } |
	timeout $((secs + 30)) dpdk-testpmd "${eal[@]}" -- -i --forward-mode=io --total-num-mbufs=4096 >"$log" 2>&1 || true
tp_pkts=$(awk '/Accumulated forward statistics/ {acc=1} acc && /TX-packets:/ {print $2; exit}' "$log")
if [ -z "$tp_pkts" ]; then
	echo "bench-dpdk: testpmd produced no statistics; its output:" >&2
	tail -20 "$log" >&2
	rm -f "$log"
	exit 1
fi
rm -f "$log"
tp_mpps=$(awk -v p="$tp_pkts" -v s="$secs" 'BEGIN {printf "%.1f", p / s / 1e6}')

printf '\nio forward, 2 x net_ring, 1 lcore, %ss\n' "$secs"
printf '  dpdk-testpmd io        %8.1f Mpps\n' "$tp_mpps"
printf '  Go loop (binding)      %8.1f Mpps   ratio %.2f\n' "$go_mpps" "$(awk -v a="$go_mpps" -v b="$tp_mpps" 'BEGIN {print a / b}')"
printf '  C rx+tx via binding    %8.1f Mpps   ratio %.2f\n' "$c_mpps" "$(awk -v a="$c_mpps" -v b="$tp_mpps" 'BEGIN {print a / b}')"
