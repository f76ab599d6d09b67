#!/usr/bin/env bash
# `make generate`: docs/ from templates/ and examples/ with tfplugindocs. The schema comes from
# OpenTofu's `providers schema -json` (Terraform 1.5.7 does not export provider functions),
# keyed by the short name tfplugindocs looks up.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=$(scripts/setup.sh terraform tofu)
work=$(mktemp -d -t valkey-docs-XXXXXX)
trap 'rm -rf "$work"' EXIT

go build -o "$work/plugins/terraform-provider-valkey" .
cat >"$work/cli.tfrc" <<CFG
provider_installation {
  dev_overrides {
    "registry.opentofu.org/echomq/valkey" = "$work/plugins"
  }
  direct {}
}
CFG
mkdir -p "$work/config"
printf 'terraform {\n  required_providers {\n    valkey = { source = "echomq/valkey" }\n  }\n}\n' >"$work/config/main.tf"
TF_CLI_CONFIG_FILE="$work/cli.tfrc" "$BIN_DIR/tofu" -chdir="$work/config" providers schema -json \
  | sed 's#"registry.opentofu.org/echomq/valkey"#"valkey"#' >"$work/schema.json"

PATH="$BIN_DIR:$PATH" go tool tfplugindocs generate --provider-name valkey --rendered-provider-name Valkey \
  --providers-schema "$work/schema.json"
