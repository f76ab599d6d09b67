#!/usr/bin/env bash
# `make demo`: a throwaway valkey-server on loopback, the provider built from this tree, and
# examples/demo applied through a dev override. Shows the groups as the server sees them,
# destroys, and shows that the groups are still there. Cleans up after itself.
#
# It uses what the machine has: a terraform (>= 1.5) or tofu (>= 1.6) on PATH, else Terraform
# 1.5.7 built once into the cache; valkey-server from PATH, else installed from
# bookworm-backports. The Go toolchain's output goes to build/demo.log.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD
mkdir -p build
log=$root/build/demo.log
: >"$log"
started=$SECONDS

progress() { printf 'demo: %s (%ds)\n' "$*" "$((SECONDS - started))"; }
failed() {
  printf 'demo: failed: %s\n' "$*" >&2
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  printf 'demo: full log: %s\n' "$log" >&2
  exit 1
}

work=$(mktemp -d -t valkey-demo-XXXXXX)
server_pid='' build_pid=''
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "$build_pid" ]; then kill "$build_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The provider's cold build is most of a first run: start it now, and find the rest meanwhile.
progress "building the provider (go build; the first build takes 1-3 minutes)"
mkdir -p "$work/plugins"
go build -o "$work/plugins/terraform-provider-valkey" . >>"$log" 2>&1 &
build_pid=$!

cli=''
if bin=$(command -v terraform) && v=$(cli_version "$bin") && [ -n "$v" ] && version_at_least "$v" 1.5; then
  cli=$bin
elif bin=$(command -v tofu) && v=$(cli_version "$bin") && [ -n "$v" ] && version_at_least "$v" 1.6; then
  cli=$bin
else
  progress "no terraform >= 1.5 or tofu >= 1.6 on PATH: building Terraform $TERRAFORM_VERSION (2-3 minutes, once)"
  scripts/setup.sh terraform >/dev/null 2>>"$log" || failed "building Terraform $TERRAFORM_VERSION"
  cli=$(tool_path terraform "$TERRAFORM_VERSION")
  v=$TERRAFORM_VERSION
fi
progress "using $cli ($v)"

if ! command -v valkey-server >/dev/null || ! command -v valkey-cli >/dev/null; then
  failed "finding valkey-server and valkey-cli on PATH: install them ($(install_hint valkey-server))"
fi

# A free loopback port: nothing answers a connection to it.
port=''
for _ in $(seq 50); do
  candidate=$((20000 + RANDOM % 25000))
  if ! (: >"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || failed "no free loopback port"
mkdir -p "$work/server"
valkey-server --port "$port" --bind 127.0.0.1 --dir "$work/server" --save "" --appendonly no \
  --daemonize no --logfile "$work/server/valkey.log" &
server_pid=$!
cli() { valkey-cli -h 127.0.0.1 -p "$port" "$@"; }
for _ in $(seq 100); do cli ping >/dev/null 2>&1 && break; sleep 0.05; done
cli ping >/dev/null 2>&1 || { cp "$work/server/valkey.log" "$log"; failed "valkey-server did not start"; }

wait "$build_pid" || { build_pid=''; failed "go build"; }
build_pid=''
progress "ready"

stream='emq:{orders}:stream:main'
cat >"$work/cli.tfrc" <<CFG
provider_installation {
  dev_overrides {
    "registry.terraform.io/echomq/valkey" = "$work/plugins"
    "registry.opentofu.org/echomq/valkey" = "$work/plugins"
  }
  direct {}
}
CFG
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" TF_IN_AUTOMATION=1 TF_VAR_url="valkey://127.0.0.1:$port/0"
mkdir -p "$work/config"
cp examples/demo/main.tf "$work/config/"
tf() { "$cli" -chdir="$work/config" "$@"; }
# The dev-override notice is for provider developers; the rest of the CLI's output is the demo.
quiet_overrides() {
  awk '/Provider development overrides are in effect/ { skip = 1 } !skip && !/^│ *$/ { print } skip && /releases\.$/ { skip = 0 }'
}

# One line per group: name, last-delivered-id, lag (raw replies come 12 lines per group).
show_groups() {
  cli XINFO GROUPS "$stream" | paste -d'|' - - - - - - - - - - - - |
    awk -F'|' '{printf "  group %-9s last-delivered-id %-18s lag %s\n", $2, $8, ($12 == "" ? "unknown" : $12)}'
}

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "valkey-server $(valkey-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on 127.0.0.1:$port; two orders already queued"
cli XADD "$stream" '*' order 1001 >/dev/null
cli XADD "$stream" '*' order 1002 >/dev/null
say "An ops script created 'audit' by hand before Terraform"
cli XGROUP CREATE "$stream" audit '$'

say "$(basename "$cli") plan: what a reviewer sees before approving"
tf plan -no-color -out=tfplan 2>&1 | quiet_overrides

say "$(basename "$cli") apply tfplan: what apply did"
# Terraform plans each resource again during apply and prints that plan's warnings a second
# time; the demo shows the plan once (above) and here what apply did, with apply's own warnings.
tf apply -no-color tfplan 2>&1 | quiet_overrides | awk '
  /^Warning: (Group ".*" of ".*" Will |Stream ".*" Will Be|Replay Check|Plan-Time)/ { skip = 1; next }
  /^(Warning|Error):|^Apply complete|^Outputs:|^valkey_stream_group/               { skip = 0 }
  !skip'

say "The groups as the server sees them (XINFO GROUPS $stream)"
show_groups

say "$(basename "$cli") destroy"
tf destroy -auto-approve -no-color 2>&1 | quiet_overrides | awk '/^Warning: Group ".*" of ".*" (Left|Will Stay) On Server/ { w = 1 } w || /Destroy complete|Destruction complete/ { print } /^$/ && w && ++blank == 2 { w = 0; blank = 0 }'

say "After destroy, the groups and entries are still there"
show_groups
echo "  XLEN $stream = $(cli XLEN "$stream")"
progress "done"
