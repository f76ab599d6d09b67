#!/usr/bin/env bash
# make crosscheck: on release platforms (.goreleaser.yml's goos x goarch, less its ignore pairs)
# the provider builds, every package vets with its tests, the test binaries link, and bench/
# vets: what cannot run here (Windows' Winsock errors, macOS' and FreeBSD's process start)
# compiles here. Each platform compiles every dependency again (about 2 minutes of CPU, cold),
# so by default one per system: its 386 build where it has one (32-bit ints), else its first.
# Usage: scripts/crosscheck.sh [all | GOOS/GOARCH...]
set -euo pipefail
cd "$(dirname "$0")/.."
platforms=("$@")
if [ ${#platforms[@]} = 0 ] || [ "${platforms[*]}" = all ]; then
  mapfile -t platforms < <(awk -v all="${1:-}" '
    /^ *goos: *\[/ { gsub(/.*\[|\].*|[" ]/, ""); n = split($0, oses, ",") }
    /^ *goarch: *\[/ { gsub(/.*\[|\].*|[" ]/, ""); m = split($0, arches, ",") }
    /^ *- goos:/ { os = $3 }
    /^ *goarch: *[^[ ]/ && os != "" { gsub(/"/, "", $2); ignored[os "/" $2] = 1 }
    END { for (i = 1; i <= n; i++) { pick = ""
        for (j = 1; j <= m; j++) { p = oses[i] "/" arches[j]
          if (p in ignored) continue; if (all == "all") print p; else if (pick == "" || arches[j] == "386") pick = p }
        if (pick != "") print pick } }' .goreleaser.yml)
  [ ${#platforms[@]} -gt 0 ] || { echo "crosscheck: .goreleaser.yml names no goos or goarch list" >&2; exit 1; }
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=()
for p in "${platforms[@]}"; do
  echo "crosscheck: $p"
  (export GOOS=${p%/*} GOARCH=${p#*/} CGO_ENABLED=0
    go build -o "$out/provider" . && go vet ./... && go test -c -o "$out/" ./... >/dev/null && cd bench && go vet ./...) || failed+=("$p")
done
[ ${#failed[@]} = 0 ] || { echo "crosscheck: failed on ${failed[*]}" >&2; exit 1; }
echo "crosscheck: the provider builds, and the tests and the bench compile and vet, on ${#platforms[@]} platforms: ${platforms[*]}"
