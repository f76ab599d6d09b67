#!/usr/bin/env bash
# `make bench`: ours against the plugin floor (bench/floor) on one local valkey-server; writes
# bench/BENCHMARKS.md. The harness is its own Go module (bench/go.mod) and runs from bench/.
# Flags go to the harness (BENCH_FLAGS="..."): -quick, -reps 5, -sizes 250,1000,2500,
# -query-sizes 2500,10000 (empty leaves the `terraform query` scenario out), -only groups|cluster|query|rpcrss
# (that scenario alone, its section of bench/BENCHMARKS.md replaced). `cd bench && go run
# ./cmd/bench -h` lists them all. The groups scenario runs on Terraform 1.5.7 and 1.16.4, and the
# query scenario needs 1.14 or later: scripts/setup.sh builds both (1.16.4 takes about 4 minutes
# the first time); when 1.16.4 cannot be built, the harness stops before measuring and says so.
# The quick gate that make ci runs is scripts/perfgate.sh (make perfgate), on the same harness.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh valkey terraform >/dev/null
terraform=$(tool_path terraform "$TERRAFORM_VERSION")
CURRENT_TERRAFORM_VERSION=1.16.4
scripts/setup.sh "terraform@$CURRENT_TERRAFORM_VERSION" >/dev/null \
  || echo "bench: Terraform $CURRENT_TERRAFORM_VERSION could not be built (see above)" >&2
current=$(tool_path terraform "$CURRENT_TERRAFORM_VERSION")
cd bench
go run ./cmd/bench -terraform "$terraform,$current" -query-terraform "$current" "$@"
