#!/usr/bin/env bash
# scripts/bench-switchd.sh: switchd forwarding rate in rtc mode, 4 ports on
# looping net_ring vdevs (each port's tx comes back on its rx), 64 B and 1500 B
# frames, with no CC and with the RoCC, HPCC and DCQCN congestion points on every
# port, beside dpdk-testpmd --forward-mode=mac on the same vdevs in the same run.
# Prints Mpps and the ratio to testpmd. Needs root and scripts/setup.sh.
#   usage: scripts/bench-switchd.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
eal=(--no-huge -m 512 --no-pci --no-shconf --no-telemetry -l 0-1
	--vdev=net_ring0 --vdev=net_ring1 --vdev=net_ring2 --vdev=net_ring3)

out=$(go test -count=1 -run '^$' -bench 'ForwardRTC' -benchtime "${secs}s" ./switchd/dataplane/)
echo "$out" | grep Benchmark

# testpmd, interactive: 16 bursts per port to start, forward for $secs, stop;
# "Accumulated forward statistics" counts packets since start.
testpmd() { # $1 = frame size
	local log
	log=$(mktemp)
	{ sleep 2; echo "start tx_first 16"; sleep "$secs"; echo "stop"; sleep 1; echo "quit"; } |
		timeout $((secs + 30)) dpdk-testpmd "${eal[@]}" -- -i --forward-mode=mac \
			--txpkts="$1" --total-num-mbufs=8192 >"$log" 2>&1 || true
	local p
	p=$(awk '/Accumulated forward statistics/ {acc=1} acc && /TX-packets:/ {print $2; exit}' "$log")
	if [ -z "$p" ]; then
		echo "bench-switchd: testpmd produced no statistics; its output:" >&2
		tail -20 "$log" >&2
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
	awk -v p="$p" -v s="$secs" 'BEGIN {printf "%.2f", p / s / 1e6}'
}
tp64=$(testpmd 64)
tp1500=$(testpmd 1500)

printf '\nrtc forwarding, 4 x net_ring (looping), 1 core, %ss per point\n' "$secs"
printf '  %-26s %8.2f Mpps\n' "dpdk-testpmd mac 64 B" "$tp64"
printf '  %-26s %8.2f Mpps\n' "dpdk-testpmd mac 1500 B" "$tp1500"
for scheme in none rocc hpcc dcqcn; do
	for size in 64 1500; do
		m=$(echo "$out" | awk -v n="BenchmarkForwardRTC/$scheme/${size}B" '$1 ~ "^"n"(-[0-9]+)?$" {for (i=1;i<=NF;i++) if ($(i+1)=="Mpps") print $i}')
		tp=$tp64
		[ "$size" = 1500 ] && tp=$tp1500
		printf '  %-26s %8.2f Mpps   ratio %.2f\n' "switchd $scheme ${size} B" "$m" "$(awk -v a="$m" -v b="$tp" 'BEGIN {print a / b}')"
	done
done
