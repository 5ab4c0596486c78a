#!/usr/bin/env bash
# scripts/bench-pktgen.sh: 64-byte generation rate of one lcore on net_null0,
# cmd/pktgen (Go loop, rate control and counters; frames built and sent by
# ccbed's binding, one cgo call a burst: dpdk.TxGen) beside dpdk-testpmd
# --forward-mode=txonly on the same device, in the same run. The same work:
# frames of 64 bytes without FCS (testpmd's default --txpkts=64) copied from a
# template and patched, one flow, bursts of 32, mbufs from a pool of 16383/16384
# with a per-lcore cache, one forwarding lcore (1). Needs root and setup.sh.
#
# The two run alternately, runs times each; the best run of each counts (on a
# shared machine the best run is the one least disturbed). Besides Mpps of
# wall time it prints Mpps per CPU-second of the forwarding lcore's thread
# (utime + stime from /proc, sampled every 50 ms): what the loop does with
# the CPU it gets, steadier when other processes take the cores. pktgen's CPU
# time includes the ~100 ms its loop idles after the stream's duration, so
# that figure is slightly conservative for it.
#
# With mode "replay" pktgen replays a 1000-frame capture of its own 64-byte
# stream (written by -dump-pcap) as fast as the port takes it, looping
# (-replay-timing fast -replay-loops -1): frames loaded into mbufs once and
# sent by reference, beside testpmd building its frames.
#   usage: scripts/bench-pktgen.sh [seconds] [runs] [build|replay]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
runs=${2:-3}
mode=${3:-build}
eal=(--no-huge -m 512 --no-pci --no-shconf --no-telemetry -l 0-1 --log-level=lib.eal:error --vdev=net_null0)
hz=$(getconf CLK_TCK)

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/pktgen" ./cmd/pktgen
pg_args=(-size 64)
case "$mode" in
build) ;;
replay)
	"$bin/pktgen" -ports net_null0 -size 64 -count 1000 -dump-pcap "$bin/cap.pcap" -q
	pg_args=(-replay "$bin/cap.pcap" -replay-timing fast -replay-loops -1)
	;;
*)
	echo "bench-pktgen: mode $mode: want build or replay" >&2
	exit 2
	;;
esac

# worker_ticks PID: CPU time (clock ticks) of PID's forwarding lcore thread.
worker_ticks() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = rte-worker-1 ]; then
			awk '{print $14 + $15}' "$t/stat" 2>/dev/null
			return
		fi
	done
}

# sample PID FILE: keep the worker's latest CPU ticks in FILE while PID lives.
sample() {
	local v
	while kill -0 "$1" 2>/dev/null; do
		v=$(worker_ticks "$1")
		[ -n "$v" ] && echo "$v" >"$2"
		sleep 0.05
	done
}

# rate PACKETS SECONDS: Mpps.
rate() { awk -v p="$1" -v s="$2" 'BEGIN {printf "%.2f", (s > 0 ? p / s / 1e6 : 0)}'; }

# run_pktgen: one loop on worker lcore 1, unlimited rate, JSON summary.
run_pktgen() {
	echo 0 >"$bin/pg.cpu"
	"$bin/pktgen" -eal-args "${eal[*]}" -ports net_null0 -lcores 1 "${pg_args[@]}" -burst 32 \
		-duration "${secs}s" -interval 0 -json "$bin/pg.json" >"$bin/pg.log" 2>&1 &
	local pid=$!
	sample "$pid" "$bin/pg.cpu" &
	local smp=$!
	if ! wait "$pid"; then
		echo "bench-pktgen: pktgen failed:" >&2
		tail -20 "$bin/pg.log" >&2
		exit 1
	fi
	wait "$smp" || true
	pg_pkts=$(awk -F'[:,]' '/"tx_packets"/ {gsub(/ /, "", $2); print $2; exit}' "$bin/pg.json")
	pg_mpps=$(awk -F'[:,]' '/"tx_mpps"/ {gsub(/ /, "", $2); print $2; exit}' "$bin/pg.json")
	pg_cpu=$(awk -v t="$(cat "$bin/pg.cpu")" -v hz="$hz" 'BEGIN {print t / hz}')
}

# run_testpmd: txonly, interactive: forwarding lcore 1, start, wait, stop; the
# forward statistics printed at stop count packets since start.
run_testpmd() {
	local log="$bin/tp.log"
	echo 0 >"$bin/tp.cpu"
	{ sleep 2; echo "start"; sleep "$secs"; echo "stop"; sleep 1; echo "quit"; } |
		dpdk-testpmd "${eal[@]}" -- -i --forward-mode=txonly --txpkts=64 --burst=32 \
			--total-num-mbufs=16384 >"$log" 2>&1 &
	local pid=$!
	(sleep $((secs + 30)) && kill "$pid" 2>/dev/null) &
	local dog=$!
	sample "$pid" "$bin/tp.cpu" &
	local smp=$!
	wait "$pid" || true
	kill "$dog" 2>/dev/null || true
	wait "$smp" || true
	tp_pkts=$(awk '/Accumulated forward statistics/ {acc=1} acc && /TX-packets:/ {print $2; exit}' "$log")
	if [ -z "$tp_pkts" ]; then
		echo "bench-pktgen: testpmd produced no statistics; its output:" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	tp_mpps=$(rate "$tp_pkts" "$secs")
	tp_cpu=$(awk -v t="$(cat "$bin/tp.cpu")" -v hz="$hz" 'BEGIN {print t / hz}')
}

best() { awk -v a="$1" -v b="$2" 'BEGIN {print (a + 0 > b + 0 ? a : b)}'; }

tp_best=0 tp_best_cpu=0 pg_best=0 pg_best_cpu=0
printf '64 B generation (pktgen: %s), net_null0, 1 lcore, %s s, %s runs each\n' "$mode" "$secs" "$runs"
printf '  %-22s %10s %12s %16s\n' "run" "Mpps" "lcore CPU s" "Mpps per CPU-s"
for r in $(seq "$runs"); do
	run_testpmd
	tp_c=$(rate "$tp_pkts" "$tp_cpu")
	printf '  %-22s %10.2f %12.2f %16.2f\n' "dpdk-testpmd txonly $r" "$tp_mpps" "$tp_cpu" "$tp_c"
	tp_best=$(best "$tp_best" "$tp_mpps") tp_best_cpu=$(best "$tp_best_cpu" "$tp_c")
	run_pktgen
	pg_c=$(rate "$pg_pkts" "$pg_cpu")
	printf '  %-22s %10.2f %12.2f %16.2f\n' "cmd/pktgen $r" "$pg_mpps" "$pg_cpu" "$pg_c"
	pg_best=$(best "$pg_best" "$pg_mpps") pg_best_cpu=$(best "$pg_best_cpu" "$pg_c")
done
grep -E '^loop' "$bin/pg.log" | sed 's/^/  last pktgen /'

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
printf '\n64 B generation, net_null0, 1 lcore, %s s, best of %s\n' "$secs" "$runs"
printf '  %-22s %10s %16s\n' "" "Mpps" "Mpps per CPU-s"
printf '  %-22s %10.2f %16.2f\n' "dpdk-testpmd txonly" "$tp_best" "$tp_best_cpu"
printf '  %-22s %10.2f %16.2f\n' "cmd/pktgen (Go)" "$pg_best" "$pg_best_cpu"
printf '  %-22s %10s %16s\n' "ratio" "$(ratio "$pg_best" "$tp_best")" "$(ratio "$pg_best_cpu" "$tp_best_cpu")"
