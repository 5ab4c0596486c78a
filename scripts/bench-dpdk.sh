#!/usr/bin/env bash
# scripts/bench-dpdk.sh: the cost of ccbed's dpdk binding against DPDK's own
# dpdk-testpmd, same vdevs, same run, one forwarding lcore each:
#   1. io forwarding between two net_ring ports (near-free PMD: the worst case
#      for a binding, every cgo call shows), Go loop vs testpmd io;
#   2. mac-swap forwarding over 4 net_null ports paired 0-1, 2-3 (the PMD
#      allocates on rx and frees on tx, as a NIC driver's work), Go loop with
#      one cgo call for all rx and one for all tx vs testpmd mac.
# Prints Mpps and ratios. Needs root and scripts/setup.sh.
#   usage: scripts/bench-dpdk.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
eal=(--no-huge -m 512 --no-pci --no-shconf --no-telemetry -l 0-1)

out=$(go test -count=1 -run '^$' -bench 'IOForward|MacSwapNull' -benchtime "${secs}s" ./dpdk/)
echo "$out" | grep Benchmark
mpps() { echo "$out" | awk -v b="$1" '$1 ~ b {for (i=1;i<=NF;i++) if ($(i+1)=="Mpps") print $i}'; }
go_io=$(mpps BenchmarkIOForwardGo)
c_io=$(mpps BenchmarkIOForwardC)
go_mac=$(mpps BenchmarkMacSwapNull)

# testpmd, interactive: wait for init, forward for $secs, stop; the forward
# statistics printed at stop count packets since start.
testpmd_mpps() { # mode start-command vdevs...
	local mode=$1 start=$2 log pkts
	shift 2
	log=$(mktemp)
	{ sleep 2; echo "$start"; sleep "$secs"; echo "stop"; sleep 1; echo "quit"; } |
		timeout $((secs + 30)) dpdk-testpmd "${eal[@]}" "$@" -- -i --forward-mode="$mode" --total-num-mbufs=8192 >"$log" 2>&1 || true
	pkts=$(awk '/Accumulated forward statistics/ {acc=1} acc && /TX-packets:/ {print $2; exit}' "$log")
	if [ -z "$pkts" ]; then
		echo "bench-dpdk: testpmd produced no statistics; its output:" >&2
		tail -20 "$log" >&2
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
	awk -v p="$pkts" -v s="$secs" 'BEGIN {printf "%.1f", p / s / 1e6}'
}
tp_io=$(testpmd_mpps io "start tx_first" --vdev=net_ring0 --vdev=net_ring1)
tp_mac=$(testpmd_mpps mac start --vdev=net_null0 --vdev=net_null1 --vdev=net_null2 --vdev=net_null3)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf '\n1 lcore, %ss per point\n' "$secs"
printf '  io, 2 x net_ring:   dpdk-testpmd io   %7.1f Mpps\n' "$tp_io"
printf '                      Go loop (binding) %7.1f Mpps   ratio %s\n' "$go_io" "$(ratio "$go_io" "$tp_io")"
printf '                      C rx+tx (binding) %7.1f Mpps   ratio %s\n' "$c_io" "$(ratio "$c_io" "$tp_io")"
printf '  mac, 4 x net_null:  dpdk-testpmd mac  %7.1f Mpps\n' "$tp_mac"
printf '                      Go loop (binding) %7.1f Mpps   ratio %s\n' "$go_mac" "$(ratio "$go_mac" "$tp_mac")"
