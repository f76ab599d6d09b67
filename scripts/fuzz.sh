#!/usr/bin/env bash
# `make fuzz`: each fuzz target for the given time (default 60s). `go test -fuzz` takes one
# package and one target at a time. The seed corpora (f.Add and testdata/fuzz/) also run in
# every plain `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-60s}
targets=(
  ./internal/provider:FuzzParseGroupID
  ./internal/valkey:FuzzParseURL
  ./internal/valkey:FuzzDoorOutcome
  ./internal/valkey:FuzzHashSlot
  ./internal/valkey:FuzzReplyReaders
)
for target in "${targets[@]}"; do
  echo "fuzz ${target##*:} for $time"
  go test -run '^$' -fuzz "^${target##*:}\$" -fuzztime "$time" "${target%%:*}"
done
