#!/usr/bin/env bash
# scripts/setup.sh: prepare a fresh Debian 12 machine (run as root) for ccbed.
# Installs DPDK 22.11 and the tools the tests use through apt, fetches the Go
# modules through the Go module proxy, and sets up hugepages where it can.
# Idempotent: run it again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

# ansible and openssh-server: the real-node playbook and its netns cluster test
# (testbed/cluster_test.go: each namespace runs its own sshd); ansible-lint:
# the playbook's lint test; parallel: GNU parallel, which runs a planned
# sweep's commands in cmd/testbed's TestSweepPlanUnderParallel.
PKGS=(libdpdk-dev dpdk-dev dpdk pkg-config gcc tshark iperf3 iproute2 iputils-ping ethtool libpcap-dev jq ansible ansible-lint openssh-server parallel)

log() { printf 'setup: %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
	log "not root: using sudo for apt and hugepages (DPDK tests also need root)"
else
	SUDO=
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	$SUDO apt-get update -q
	# tshark asks whether non-root users may capture: answer no, non-interactively.
	echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	log "apt packages present"
fi
log "DPDK $(pkg-config --modversion libdpdk)"

if ! command -v go >/dev/null 2>&1; then
	log "ERROR: Go is not installed. Install Go 1.26 from https://go.dev/dl/, or any Go >= 1.21"
	log "  (it fetches the toolchain go.mod asks for through the module proxy); Debian 12's golang-go is 1.19, too old"
	exit 1
fi
gover=$(go env GOVERSION 2>/dev/null || true)
case "$gover" in
go1.1[0-9] | go1.1[0-9].* | go1.20 | go1.20.* | "")
	log "ERROR: $(go version 2>/dev/null || echo 'go'): need Go >= 1.21 (https://go.dev/dl/), which fetches Go 1.26 itself"
	exit 1
	;;
esac
log "$(go version)"
go mod download
log "Go modules downloaded"

# Hugepages: optional (tests and the virtual testbed run with --no-huge); net_memif
# between processes needs them.
if [ -z "$SUDO" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
	mkdir -p /dev/hugepages
	if ! mountpoint -q /dev/hugepages; then
		mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
	fi
	cur=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$cur" -lt 256 ]; then
		echo 256 >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
	got=$(cat /proc/sys/vm/nr_hugepages)
	if mountpoint -q /dev/hugepages && [ "$got" -gt 0 ]; then
		log "hugepages: $got x $(awk '/Hugepagesize/ {print $2 $3}' /proc/meminfo) mounted on /dev/hugepages"
	else
		log "hugepages: could not be set up here (nr_hugepages=$got); ccbed runs with --no-huge, net_memif is unavailable"
	fi
else
	log "hugepages: not set up (needs root); ccbed runs with --no-huge, net_memif is unavailable"
fi
log "done"
