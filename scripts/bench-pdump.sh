#!/usr/bin/env bash
# scripts/bench-pdump.sh: what hostd -pdump costs a loop per frame. hostd on
# hugepages, one loop on lcore 1 (CPU 1), port net_null0 (a full rx burst on
# every poll, counted and dropped as "other"), 3 s a run; CPU ns per received
# frame = the process's user+sys time / rx frames (counters.json). Three
# variants, interleaved in each round: no -pdump; -pdump with nobody
# capturing; -pdump while dpdk-dumpcap (taskset -c 0: its lcore is then 0,
# never the loop's) captures net_null0 for 2 s into a pcapng file, with its
# received/dropped line. Needs root, 64 MB of free hugepages, dpdk-dumpcap.
#
#   flock /tmp/ccbed-cpu.lock scripts/bench-pdump.sh [rounds]
set -euo pipefail
rounds=${1:-3}
dir=$(mktemp -d)
prefix=ccbpd$$
trap 'rm -rf "$dir" /var/run/dpdk/$prefix; rm -f /dev/hugepages/${prefix}map_*' EXIT
go build -o "$dir/hostd" ./cmd/hostd
cat > "$dir/host.toml" <<TOML
eal_args = ["-m", "64", "--no-pci", "--no-telemetry", "--lcores=1@1", "--file-prefix=$prefix", "--log-level=lib.eal:error", "--vdev=net_null0"]
port = "net_null0"
lcores = [1]
mbufs = 2047
results_dir = "$dir/res"

[host]
name = "h0"
ip = "10.0.0.1"
gateway_mac = "02:00:00:00:00:02"
link_gbps = 1
mtu_bytes = 1024
TOML
one() { # label, hostd flag, capture (0/1)
	rm -rf "$dir/res"
	/usr/bin/time -f "%U %S" -o "$dir/time" "$dir/hostd" -c "$dir/host.toml" -duration 3s $2 >"$dir/hostd.log" 2>&1 &
	local hp=$! capture=none
	if [ "$3" = 1 ]; then
		sleep 0.7
		timeout 10 taskset -c 0 dpdk-dumpcap --file-prefix $prefix -i net_null0 -a duration:2 -q -w "$dir/cap.pcapng" >"$dir/dumpcap.log" 2>&1 || true
		capture=$(grep -o "received/dropped.*" "$dir/dumpcap.log" | sed 's/.*: //')
		grep -q "failed" "$dir/dumpcap.log" && capture="$capture FAILED"
	fi
	wait $hp
	local frames u s
	frames=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rx']['frames'])" "$dir/res/counters.json")
	read -r u s <"$dir/time"
	python3 -c "import sys; c=float(sys.argv[2])+float(sys.argv[3]); f=int(sys.argv[4]); print('%-16s %11d frames %5.2f CPU s %6.1f ns/frame  capture %s' % (sys.argv[1], f, c, c*1e9/f, sys.argv[5]))" "$1" "$u" "$s" "$frames" "$capture"
	rm -f /dev/hugepages/${prefix}map_*
	rm -rf /var/run/dpdk/$prefix
}
for r in $(seq "$rounds"); do
	echo "round $r"
	one off "" 0
	one pdump-idle -pdump 0
	one pdump-capturing -pdump 1
done
