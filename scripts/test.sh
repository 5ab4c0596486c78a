#!/usr/bin/env bash
# scripts/test.sh: the project's test command. Static checks, then every test,
# including the DPDK tests on virtual devices (needs root and scripts/setup.sh).
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "test.sh: $*" >&2; exit 1; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt needed: $unformatted"

# The repository stands on its own: code, configs and docs cite papers and
# standards by title and section, never the maintainers' workspace files.
outside=$(grep -rnE 'shared/|DESIGN\.md|papers/[a-z0-9-]+\.md|specs/[a-z0-9-]+\.md' \
	--include='*.go' --include='*.md' --include='*.toml' --include='*.sh' --include='*.py' --include='*.yml' . |
	grep -v '^./scripts/test.sh:' || true)
[ -z "$outside" ] || fail "citations of files outside the repository: $outside"

# cgo lives in dpdk/ alone: every other package is plain Go (see dpdk/dpdk.go).
cgo=$(grep -rl --include='*.go' '^import "C"' . | grep -v '^./dpdk/' || true)
[ -z "$cgo" ] || fail "import \"C\" outside dpdk/: $cgo"

# scripts/build-l3fwd.sh's patch still applies to the installed DPDK examples
# (where dpdk-doc is installed; a dry run writes nothing).
if [ -d /usr/share/dpdk/examples/l3fwd ] && command -v patch >/dev/null 2>&1; then
	patch -s -f --dry-run -p1 -d /usr/share/dpdk/examples <scripts/l3fwd/l3fwd.patch >/dev/null ||
		fail "scripts/l3fwd/l3fwd.patch does not apply to /usr/share/dpdk/examples"
fi

go vet ./...
# -p 1: one test binary at a time. DPDK tests busy-poll lcores pinned to the
# CPUs; run side by side they would starve each other (and the testbed's
# emulated links, which drain only while their lcore runs).
go test -p 1 -count=1 -timeout 30m "$@" ./...
# The parallel virtual-time driver under the race detector, at a small size:
# a leaf-spine and a star with failures, every node a partition, 1 and 3
# workers (a few seconds once built).
go test -race -short -count=1 -timeout 10m -run 'TestParallelDigest/(leafspine-dcqcn|star-dcqcn-failures)' ./fabric/
