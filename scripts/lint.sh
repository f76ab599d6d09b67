#!/usr/bin/env bash
# `make lint`: golangci-lint with the committed .golangci.yml, installed when missing, on the
# provider's module and then on bench/, which is a module of its own (bench/go.mod) that
# `./...` at the root does not reach. Both runs use the same .golangci.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh lint >/dev/null
"$BIN_DIR/golangci-lint" run ./...
(cd bench && "$BIN_DIR/golangci-lint" run ./...)
