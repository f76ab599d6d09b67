#!/usr/bin/env bash
# `make demo`: a throwaway valkey-server on loopback, the provider built from this tree, and
# examples/demo applied through a dev override. Shows the groups as the server sees them,
# destroys, and shows that the groups are still there. Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
BIN_DIR=$(scripts/setup.sh valkey terraform)
terraform="$BIN_DIR/terraform"

[ -x terraform-provider-valkey ] || go build -o terraform-provider-valkey .

work=$(mktemp -d -t valkey-demo-XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# A free loopback port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
  || echo $((20000 + RANDOM % 20000)))
mkdir -p "$work/server"
valkey-server --port "$port" --bind 127.0.0.1 --dir "$work/server" --save "" --appendonly no \
  --daemonize no --logfile "$work/server/valkey.log" &
server_pid=$!
for _ in $(seq 100); do valkey-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
cli() { valkey-cli -h 127.0.0.1 -p "$port" "$@"; }
stream='emq:{orders}:stream:main'

mkdir -p "$work/plugins" "$work/config"
ln -s "$root/terraform-provider-valkey" "$work/plugins/terraform-provider-valkey"
cat >"$work/cli.tfrc" <<CFG
provider_installation {
  dev_overrides {
    "echomq/valkey" = "$work/plugins"
  }
  direct {}
}
CFG
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" TF_IN_AUTOMATION=1 TF_VAR_url="valkey://127.0.0.1:$port/0"
cp examples/demo/main.tf "$work/config/"
tf() { "$terraform" -chdir="$work/config" "$@"; }

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

say "terraform apply"
tf apply -auto-approve -no-color 2>&1 | grep -v -e 'Provider development overrides' -e 'dev_overrides' -e '^ - echomq/valkey' \
  -e 'The behavior may therefore' -e 'plugin stable' -e 'published releases' -e '^│ *$' || true

say "The groups as the server sees them (XINFO GROUPS $stream)"
show_groups

say "terraform destroy"
tf destroy -auto-approve -no-color 2>&1 | grep -E 'Warning:|forgets|Destroy complete|Destruction complete' || true

say "After destroy, the groups and entries are still there"
show_groups
echo "  XLEN $stream = $(cli XLEN "$stream")"
