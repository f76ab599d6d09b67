#!/usr/bin/env bash
# `make generate`: docs/ by tfplugindocs, and templates/index.md.tmpl's table of environment
# variables from settings_table.go; `check` (make docs-check) fails if either would change. The
# schema is Terraform 1.16.4's: 1.5.7 exports no functions, identities or list resources.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh terraform@1.16.4 >/dev/null && terraform=$(tool_path terraform 1.16.4)
work=$(mktemp -d -t valkey-docs-XXXXXX)
trap 'rm -rf "$work"' EXIT
update_table=-update-docs && [ "${1:-}" != check ] || update_table=
go test ./internal/provider -run '^TestSettings_DocumentationTableIsCurrent$' -count=1 $update_table >"$work/table.log" 2>&1 \
  || { cat "$work/table.log"; exit 1; }
go build -o "$work/plugins/terraform-provider-valkey" .
printf 'provider_installation {\n  dev_overrides { "registry.terraform.io/echomq/valkey" = "%s" }\n  direct {}\n}\n' "$work/plugins" >"$work/cli.tfrc"
mkdir -p "$work/config" "$work/bin" && cp -r docs "$work/docs-before"
printf 'terraform {\n  required_providers {\n    valkey = { source = "echomq/valkey" }\n  }\n}\n' >"$work/config/main.tf"
TF_CLI_CONFIG_FILE="$work/cli.tfrc" "$terraform" -chdir="$work/config" providers schema -json \
  | sed 's#"registry.terraform.io/echomq/valkey"#"valkey"#' >"$work/schema.json"

# tfplugindocs looks for a terraform on PATH even with a schema file; give it the cached one.
ln -s "$terraform" "$work/bin/terraform"
PATH="$work/bin:$PATH" go tool tfplugindocs generate --provider-name valkey --rendered-provider-name Valkey \
  --providers-schema "$work/schema.json" >"$work/generate.log" 2>&1 \
  || { cat "$work/generate.log"; exit 1; }
go tool tfplugindocs validate --provider-name valkey >"$work/validate.log" 2>&1 \
  || { grep -v '\[DEBUG\]' "$work/validate.log"; exit 1; }

if [ "${1:-}" = check ]; then
  if ! diff -ru "$work/docs-before" docs >"$work/docs.diff"; then
    echo "docs/ is not what make generate produces from templates/, examples/ and the schema:"
    head -n 40 "$work/docs.diff"
    echo "docs/ now holds the generated pages: review and commit them."
    exit 1
  fi
  echo "docs/ matches make generate"
fi
