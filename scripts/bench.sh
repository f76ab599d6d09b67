#!/usr/bin/env bash
# `make bench`: ours against the plugin floor (bench/floor) and N terraform_data on one local
# valkey-server; writes bench/BENCHMARKS.md. The harness is its own Go module (bench/go.mod)
# and runs from bench/. Flags go to the harness (BENCH_FLAGS="..."): -quick, -reps 5 (-reps 0
# skips the timed runs), -sizes 100,500,1000, -rss-sizes 1000,2500 (empty skips the peak-RSS
# series), -pprof. `cd bench && go run ./cmd/bench -h` lists them all.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh valkey terraform >/dev/null
terraform=$(tool_path terraform "$TERRAFORM_VERSION")
cd bench
go run ./cmd/bench -terraform "$terraform" "$@"
