#!/usr/bin/env bash
# `make bench`: ours against the plugin floor (bench/floor) and N terraform_data on one local
# valkey-server; writes bench/BENCHMARKS.md. The harness is its own Go module (bench/go.mod)
# and runs from bench/. Flags go to the harness (BENCH_FLAGS="..."): -quick, -reps 5 (-reps 0
# skips the timed runs), -sizes 100,500,1000, -rss-sizes 1000,2500 (empty skips the peak-RSS
# series), -query-sizes 2500,10000 (empty skips the `terraform query` scenario), -only query (that
# scenario alone, its section of bench/BENCHMARKS.md replaced), -pprof. `cd bench && go run
# ./cmd/bench -h` lists them all. The query scenario needs Terraform 1.14 or later: the
# Terraform 1.16.4 that scripts/setup.sh builds (about 4 minutes the first time); when it cannot be
# built, the harness stops before measuring and says what to do.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh valkey terraform >/dev/null
terraform=$(tool_path terraform "$TERRAFORM_VERSION")
QUERY_TERRAFORM_VERSION=1.16.4
scripts/setup.sh "terraform@$QUERY_TERRAFORM_VERSION" >/dev/null \
  || echo "bench: Terraform $QUERY_TERRAFORM_VERSION, which the query scenario needs, could not be built (see above)" >&2
query_terraform=$(tool_path terraform "$QUERY_TERRAFORM_VERSION")
cd bench
go run ./cmd/bench -terraform "$terraform" -query-terraform "$query_terraform" "$@"
