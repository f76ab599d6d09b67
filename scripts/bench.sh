#!/usr/bin/env bash
# `make bench`: ours against the plugin floor (bench/floor) and N terraform_data on one local
# valkey-server; writes BENCHMARKS.md. Flags go to the harness: -quick, -reps 5,
# -sizes 100,500,1000, -pprof.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh valkey terraform >/dev/null
go run ./bench/cmd/bench -terraform "$(tool_path terraform "$TERRAFORM_VERSION")" "$@"
