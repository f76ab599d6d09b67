#!/usr/bin/env bash
# `make bench` (BENCH_FLAGS go to the harness; `cd bench && go run ./cmd/bench -h` lists them):
# ours against the plugin floor (bench/floor) on one local valkey-server, into bench/BENCHMARKS.md.
# The groups scenario runs on Terraform 1.5.7 and 1.16.4, the query scenario on 1.16.4, which
# scripts/setup.sh builds (about 4 minutes, once); without it the harness stops before measuring.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
valkey_server path >/dev/null && scripts/setup.sh terraform >/dev/null
CURRENT_TERRAFORM_VERSION=1.16.4 && current=$(tool_path terraform "$CURRENT_TERRAFORM_VERSION")
scripts/setup.sh "terraform@$CURRENT_TERRAFORM_VERSION" >/dev/null || echo "bench: Terraform $CURRENT_TERRAFORM_VERSION could not be built (see above)" >&2
cd bench && go run ./cmd/bench -terraform "$(tool_path terraform "$TERRAFORM_VERSION"),$current" -query-terraform "$current" "$@"
