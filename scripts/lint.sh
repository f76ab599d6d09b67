#!/usr/bin/env bash
# `make lint`: golangci-lint with the committed .golangci.yml, installed when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh lint >/dev/null
"$BIN_DIR/golangci-lint" run ./...
