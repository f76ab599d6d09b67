#!/usr/bin/env bash
# `make fmt` formats Go code and the examples' HCL; `scripts/fmt.sh check` fails, naming the
# files, when either needs formatting. HCL goes through OpenTofu, because Terraform 1.5 cannot
# parse the provider-function calls in the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh tofu >/dev/null
tofu=$(tool_path tofu "$TOFU_VERSION")
if [ "${1:-}" = check ]; then
  unformatted=$(gofmt -l .)
  [ -z "$unformatted" ] || { echo "gofmt needed on:"; echo "$unformatted"; exit 1; }
  "$tofu" fmt -check -recursive examples/ || { echo "tofu fmt needed on the files above (make fmt)"; exit 1; }
  echo "gofmt and tofu fmt: nothing to change"
else
  gofmt -w .
  "$tofu" fmt -recursive examples/
fi
