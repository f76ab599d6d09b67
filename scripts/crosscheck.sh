#!/usr/bin/env bash
# The cross-compile gate: on release platforms (the goos and goarch lists of .goreleaser.yml,
# less its ignore pairs) the provider builds, every package vets with its tests, the test
# binaries link (go test -c), and the bench module (bench/) vets. What cannot run here
# (Windows' Winsock errors, the plain process start of macOS and FreeBSD) compiles here, so a
# contributor on any of them can run `go test ./...`.
#
# Each platform compiles every dependency again (about 2 minutes of CPU, cold), so the gate
# (make gates) checks one platform per system of the release, with 32-bit ints where the
# release has a 32-bit build of it (386): what differs between platforms is the system's own
# files and the size of int. `all` checks each of the release's platforms.
#
# Usage: scripts/crosscheck.sh [all | GOOS/GOARCH...]   (default: one per system)
set -euo pipefail
cd "$(dirname "$0")/.."

# release_platforms prints GOOS/GOARCH for each build of .goreleaser.yml.
release_platforms() {
  local list goos goarch ignored
  list() { sed -n "s/^ *$1: *\[\(.*\)\]/\1/p" .goreleaser.yml | tr -d '" ' | tr ',' ' '; }
  goos=$(list goos) goarch=$(list goarch)
  # "- goos: darwin" then "goarch: arm" under ignore: one pair per entry.
  ignored=$(awk '/^ *ignore:/ { on = 1; next } on && /^ *- goos:/ { os = $3; next }
    on && /^ *goarch:/ { gsub(/"/, "", $2); print os "/" $2; next } on && !/^ *(- )?go/ { on = 0 }' .goreleaser.yml)
  [ -n "$goos" ] && [ -n "$goarch" ] || { echo "crosscheck: .goreleaser.yml names no goos or goarch list" >&2; return 1; }
  for os in $goos; do
    for arch in $goarch; do
      grep -qx "$os/$arch" <<<"$ignored" || echo "$os/$arch"
    done
  done
}

# per_system prints, of the platforms on stdin, one per system: its 386 build, else its first.
per_system() {
  awk -F/ '{ if (!($1 in pick) || $2 == "386") pick[$1] = $0; if (!seen[$1]++) order[++n] = $1 }
    END { for (i = 1; i <= n; i++) print pick[order[i]] }'
}

platforms=("$@")
if [ "${platforms[*]}" = all ]; then
  mapfile -t platforms < <(release_platforms)
elif [ ${#platforms[@]} = 0 ]; then
  mapfile -t platforms < <(release_platforms | per_system)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=()
for p in "${platforms[@]}"; do
  echo "crosscheck: $p"
  if ! (export GOOS=${p%/*} GOARCH=${p#*/} CGO_ENABLED=0
    go build -o "$out/provider" . && go vet ./... && go test -c -o "$out/" ./... >/dev/null && cd bench && go vet ./...); then
    failed+=("$p")
  fi
done
[ ${#failed[@]} = 0 ] || { echo "crosscheck: failed on ${failed[*]}" >&2; exit 1; }
echo "crosscheck: the provider builds, and the tests and the bench compile and vet, on ${#platforms[@]} platforms: ${platforms[*]}"
