#!/usr/bin/env bash
# Runs ccbed and the HPCC-lineage ns-3 RDMA simulator (inet-tub/ns3-datacenter
# on ns-3.39) side by side on the same inputs and prints the table of
# cmd/crosscheck: flows completed, FCT slowdown p50/p95/p99 by size bucket
# (recomputed for both from the raw FCTs with one formula: ideal = the pair's
# base RTT + size / line rate), the spread of the per-flow FCT ratio, and CPU
# and wall time of each run (both single-threaded: ccbed with -workers 1).
#
# usage: scripts/crosscheck-ns3.sh NS3_DIR [OUT_DIR]
#
# NS3_DIR is the simulator/ns-3.39 directory of an ns3-datacenter checkout
# that you have already built by its own instructions (its README: configure
# with ./ns3 configure --build-profile=optimized --enable-examples, then build
# the example powertcp-evaluation-burst). This script never downloads or
# builds the simulator; it runs the built program
# build/examples/PowerTCP/ns3.39-powertcp-evaluation-burst-optimized, the
# one of its programs that reads FLOW_FILE, with --algorithm equal to
# CC_MODE, --wien=false (else CC_MODE 3 runs PowerTCP, not HPCC) and
# --windowCheck equal to HAS_WIN (the program overrides both HAS_WIN and
# VAR_WIN with it; the values are its own script-burst.sh's: no window for
# DCQCN and TIMELY, a window for HPCC and DCTCP).
#
# The inputs, written by ccbed to OUT_DIR (default: a fresh temporary
# directory): topology.txt (ns3-datacenter's 4-field header: 8 leaves of 16
# hosts, 8 spines, every link 100 Gb/s and 1 us), one flow.txt per load
# (testbed export-flows: the web-search workload, Poisson arrivals to
# uniformly random other hosts for ARRIVALS_US: a host draws no flow to
# itself, which ns-3's format cannot hold), and one config.txt per scheme
# and load: ns3-datacenter's examples/PowerTCP/config-burst.txt with the
# files, CC_MODE, HAS_WIN and SIMULATOR_STOP_TIME set and the traces off.
# ccbed reads the same three files unchanged (topology.ns3_config).
#
# Environment: LOADS (default "0.3 0.5"), MODES (CC_MODEs, default
# "1 3 7 8"), ARRIVALS_US (5000), STOP_S (0.01), SEED (1); CPU_LOCK, a lock
# file taken around each run (flock) when the machine is shared.
set -euo pipefail
shopt -s inherit_errexit
[[ $# -ge 1 && $# -le 2 ]] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
ns3=$(cd "$1" && pwd)
peer=$ns3/build/examples/PowerTCP/ns3.39-powertcp-evaluation-burst-optimized
[[ -x $peer ]] || { echo "crosscheck-ns3: $peer is not built: build the simulator by its own instructions first" >&2; exit 1; }
cd "$(dirname "$0")/.."
out=${2:-$(mktemp -d)}
mkdir -p "$out" bin
out=$(cd "$out" && pwd)
loads=${LOADS:-0.3 0.5}
modes=${MODES:-1 3 7 8}
arrivals_us=${ARRIVALS_US:-5000}
stop_s=${STOP_S:-0.01}
seed=${SEED:-1}
# the revision the binaries are built from, read now: the tree may move
# during the runs
rev=$(git describe --always --dirty --abbrev=40 2>/dev/null || echo "revision unknown")
go build -o bin/testbed ./cmd/testbed
go build -o bin/crosscheck ./cmd/crosscheck

# timed DIR NAME CMD...: runs CMD with its output in DIR/NAME.log and bash's
# user, system and real seconds in DIR/NAME.time, holding CPU_LOCK (if set)
# from before the clock starts.
timed() {
	local dir=$1 name=$2 lock
	shift 2
	if [[ -n ${CPU_LOCK:-} ]]; then
		exec {lock}>"$CPU_LOCK"
		flock "$lock"
	fi
	local TIMEFORMAT='%U %S %R'
	{ time "$@" >"$dir/$name.log" 2>&1; } 2>"$dir/$name.time"
	if [[ -n ${lock:-} ]]; then exec {lock}>&-; fi
}

# The leaf-spine, as ns3-datacenter's topology.txt: hosts 0-127, leaves
# 128-135, spines 136-143.
hosts=128 leaves=8 spines=8 per=16
{
	echo "$((hosts + leaves + spines)) $((leaves + spines)) $leaves $((hosts + leaves * spines))"
	seq -s ' ' $hosts $((hosts + leaves + spines - 1))
	for ((h = 0; h < hosts; h++)); do echo "$h $((hosts + h / per)) 100Gbps 1us 0"; done
	for ((l = 0; l < leaves; l++)); do
		for ((s = 0; s < spines; s++)); do echo "$((hosts + l)) $((hosts + leaves + s)) 100Gbps 1us 0"; done
	done
} >"$out/topology.txt"

all=$(seq -s ', ' 0 $((hosts - 1)))
declare -A scheme=([1]=dcqcn [3]=hpcc [7]=timely [8]=dctcp)
declare -A window=([1]=0 [3]=1 [7]=0 [8]=1)
cases=()
for load in $loads; do
	pct=$(awk -v l="$load" 'BEGIN { printf "%d", l * 100 + 0.5 }')
	gen=$out/flows-$pct
	mkdir -p "$gen"
	cat >"$gen/gen.toml" <<-EOF
		[experiment]
		name = "crosscheck-flows"
		duration_ms = $(awk -v s="$stop_s" 'BEGIN { print s * 1000 }')
		clock = "virtual"
		seed = $seed
		[topology]
		kind = "ns3"
		ns3_topology = "$out/topology.txt"
		mtu_bytes = 1000
		[cc]
		scheme = "dcqcn"
		[[workloads]]
		id_base = 1_000_000
		cdf = "$PWD/configs/workloads/websearch.cdf"
		senders = [$all]
		dsts = [$all]
		load = $load
		stop_us = $arrivals_us
	EOF
	bin/testbed export-flows "$gen/gen.toml" -q -o "$gen"
	for mode in $modes; do
		[[ -n ${scheme[$mode]:-} ]] || { echo "crosscheck-ns3: CC_MODE $mode: want 1, 3, 7 or 8" >&2; exit 2; }
		c=$out/${scheme[$mode]}-load$pct
		mkdir -p "$c"
		cp "$gen/flow.txt" "$c/flow.txt"
		cat >"$c/config.txt" <<-EOF
			ENABLE_QCN 1
			USE_DYNAMIC_PFC_THRESHOLD 1
			PACKET_PAYLOAD_SIZE 1000
			TOPOLOGY_FILE $out/topology.txt
			FLOW_FILE $c/flow.txt
			TRACE_FILE $c/trace.txt
			TRACE_OUTPUT_FILE $c/mix.tr
			FCT_OUTPUT_FILE $c/ns3-fct.txt
			PFC_OUTPUT_FILE $c/ns3-pfc.txt
			SIMULATOR_STOP_TIME $stop_s
			CC_MODE $mode
			ALPHA_RESUME_INTERVAL 1
			RATE_DECREASE_INTERVAL 4
			CLAMP_TARGET_RATE 0
			RP_TIMER 900
			EWMA_GAIN 0.00390625
			FAST_RECOVERY_TIMES 1
			RATE_AI 50Mb/s
			RATE_HAI 100Mb/s
			MIN_RATE 100Mb/s
			DCTCP_RATE_AI 1000Mb/s
			ERROR_RATE_PER_LINK 0.0000
			L2_CHUNK_SIZE 4000
			L2_ACK_INTERVAL 1
			L2_BACK_TO_ZERO 0
			HAS_WIN ${window[$mode]}
			GLOBAL_T 1
			VAR_WIN ${window[$mode]}
			FAST_REACT 1
			U_TARGET 0.95
			MI_THRESH 5
			INT_MULTI 1
			MULTI_RATE 0
			SAMPLE_FEEDBACK 0
			PINT_LOG_BASE 1.05
			PINT_PROB 1.0
			RATE_BOUND 1
			ACK_HIGH_PRIO 0
			LINK_DOWN 0 0 0
			ENABLE_TRACE 0
			KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600
			KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400
			PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2
			BUFFER_SIZE 4
			QLEN_MON_FILE $c/qlen.txt
			QLEN_MON_START 2000000000
			QLEN_MON_END 2010000000
		EOF
		cat >"$c/run.toml" <<-EOF
			[experiment]
			name = "crosscheck-${scheme[$mode]}-load$pct"
			clock = "virtual"
			seed = $seed
			[topology]
			kind = "ns3"
			ns3_config = "config.txt"
		EOF
		(cd "$ns3" && timed "$c" ns3 "$peer" --conf="$c/config.txt" --algorithm="$mode" \
			--wien=false --delayWien=false --windowCheck="${window[$mode]}")
		timed "$c" ccbed bin/testbed run "$c/run.toml" -workers 1 -q -run-dir "$c/ccbed"
		cases+=("$c")
	done
done
echo "ns-3: $(git -C "$ns3" rev-parse HEAD 2>/dev/null || echo "revision unknown") ($ns3)"
echo "ccbed: $rev"
echo "inputs and runs in $out"
bin/crosscheck -topology "$out/topology.txt" -mtu 1000 "${cases[@]}"
