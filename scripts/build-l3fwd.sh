#!/usr/bin/env bash
# scripts/build-l3fwd.sh: builds DPDK's l3fwd example, the C reference that
# scripts/bench-switchd.sh runs beside switchd, into build/l3fwd/l3fwd/build/l3fwd.
# Copies examples/l3fwd and examples/common from the dpdk-doc package (installed
# through apt when missing and run as root), applies scripts/l3fwd/l3fwd.patch
# and builds with the example's own Makefile (pkg-config libdpdk), without
# l3fwd's RFC 1812 processing (TTL decrement and checksum update), as switchd's
# benchmark runs with decrement_ttl = false. The patch:
#   - asks only for the rx offloads a device has (l3fwd asks for checksum
#     offload, which virtual devices lack, and fails to configure them);
#   - makes DO_RFC_1812_CHECKS a build choice (-DL3FWD_NO_RFC_1812_CHECKS);
#   - adds bench.c: --seed PORT:FILE transmits a pcap's frames on a port once
#     the ports have started (looping net_ring vdevs get no traffic otherwise),
#     and --run-seconds S stops the loops after S seconds and prints the packets
#     forwarded, Mpps, TSC cycles and the main lcore thread's CPU time per
#     packet (one "l3fwd-bench:" line).
# Does nothing when the binary is newer than a build of the same patch, DPDK and
# flags. To change the patch: copy the examples twice (a/ and b/, each with
# l3fwd/ and common/), patch b/, edit it, and write `diff -ruN a b` over the
# patch file.
#   usage: scripts/build-l3fwd.sh
set -euo pipefail
cd "$(dirname "$0")/.."

examples=/usr/share/dpdk/examples
dir=build/l3fwd
bin=$dir/l3fwd/build/l3fwd
patchfile=scripts/l3fwd/l3fwd.patch
cflags=-DL3FWD_NO_RFC_1812_CHECKS

log() { printf 'build-l3fwd: %s\n' "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

pkg-config --exists libdpdk 2>/dev/null || die "DPDK is not installed (libdpdk-dev, pkg-config): run scripts/setup.sh"
for tool in make cc patch; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: apt-get install -y make gcc patch"
done
if [ ! -d "$examples/l3fwd" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "the DPDK examples are missing: apt-get install -y dpdk-doc (as root)"
	fi
	log "installing dpdk-doc (the DPDK examples, about 80 MB)"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dpdk-doc >/dev/null; then
		apt-get update -q >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dpdk-doc >/dev/null ||
			die "apt-get install dpdk-doc failed"
	fi
	[ -d "$examples/l3fwd" ] || die "dpdk-doc has no $examples/l3fwd"
fi

stamp="$(sha256sum "$patchfile" | cut -d' ' -f1) dpdk-$(pkg-config --modversion libdpdk) $cflags"
if [ -x "$bin" ] && [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ]; then
	exit 0
fi

log "building l3fwd (DPDK $(pkg-config --modversion libdpdk)) in $dir"
rm -rf "$dir"
mkdir -p "$dir"
cp -r "$examples/l3fwd" "$examples/common" "$dir/"
# Some packagings compress the example sources.
find "$dir" -name '*.gz' -exec gunzip -f {} +
patch -s -p1 -d "$dir" <"$patchfile" || die "$patchfile does not apply to $examples (DPDK $(pkg-config --modversion libdpdk))"
CFLAGS=$cflags make -s -C "$dir/l3fwd" >"$dir/make.log" 2>&1 || {
	tail -30 "$dir/make.log" >&2
	die "make failed (log: $dir/make.log)"
}
[ -x "$bin" ] || die "make made no $bin"
echo "$stamp" >"$dir/stamp"
log "built $bin"
