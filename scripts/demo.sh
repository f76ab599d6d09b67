#!/usr/bin/env bash
# `make demo` (README.md): examples/demo applied to a throwaway valkey-server on loopback, after
# getting what is missing (Valkey as make deps does, a terraform >= 1.5 or tofu >= 1.6, else
# Terraform 1.5.7). Logs: build/demo*.log. DEMO_TIMES=FILE gets the times.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD log=$PWD/build/demo.log started=$SECONDS
work=$(mktemp -d -t valkey-demo-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$work"' EXIT
mkdir -p build "$work/plugins" "$work/server" "$work/config" && : >"$log"
progress() { printf 'demo: %s (%ds)\n' "$*" "$((SECONDS - started))"; }
stop() { printf 'demo: %s\n' "$*" >&2; exit 1; } # what the machine lacks, before anything starts
failed() { # failed WHAT [LOG]
  { echo "demo: failed: $1"; tail -n 15 "${2:-$log}" | sed 's/^/  | /'; echo "demo: full log: ${2:-$log}"; } >&2; exit 1; }
have go >/dev/null || stop "no go on PATH: install Go $(sed -n 's/^go //p' go.mod) or later (https://go.dev/dl/), then run make demo again"

# valkey_found sets server, the one the tests find ($VALKEY_SERVER, on PATH, or make deps' build),
# and client, the valkey-cli beside it or on PATH.
valkey_found() { server=$(valkey_server path 2>/dev/null) && client=$(have "${server%/*}/valkey-cli" || have valkey-cli); }
if [ -n "${VALKEY_SERVER:-}" ]; then
  have "$VALKEY_SERVER" >/dev/null || stop "VALKEY_SERVER=$VALKEY_SERVER is not an executable file"
  valkey_found || stop "no valkey-cli beside VALKEY_SERVER=$VALKEY_SERVER or on PATH"
fi
if ! valkey_found; then # stop at once where Valkey cannot be installed
  case "$(uname -s)" in
    Darwin) stop "no valkey-server on PATH: $(have brew >/dev/null || echo 'install Homebrew (https://brew.sh), ')run brew install valkey, then make demo again" ;;
    MINGW* | MSYS* | CYGWIN*) stop "Valkey has no native Windows build: run make demo inside WSL (wsl --install -d Ubuntu, then make demo in a clone there)" ;;
  esac
  have apt-get >/dev/null || stop "no valkey-server on PATH: $(install_hint valkey-server), then make demo again"
  [ "$(id -u)" = 0 ] || have sudo >/dev/null \
    || stop "no valkey-server on PATH, and installing it takes root: run make deps as root (or scripts/setup.sh deps-valkey), then make demo again"
fi

# The provider's cold build is much of a first run: the rest is fetched meanwhile.
progress "building the provider (go build: 1-3 minutes the first time, seconds afterwards)"
go build -o "$work/plugins/terraform-provider-valkey" . >>"$log" 2>&1 &
build=$! fetch='' cli=''
for want in terraform@1.5 tofu@1.6; do
  bin=$(have "${want%@*}") && v=$(cli_version "$bin") && version_at_least "$v" "${want#*@}" && { cli=$bin; break; }
done
[ -n "$cli" ] || cli=$(tool_path terraform "$TERRAFORM_VERSION") v=$TERRAFORM_VERSION
if [ "$(cli_version "$cli")" != "$v" ]; then
  progress "no terraform >= 1.5 or tofu >= 1.6 on PATH: getting Terraform $v into the tool cache as make testacc does (scripts/setup.sh terraform: downloaded where releases.hashicorp.com answers, else built from the Go module proxy: 4-8 minutes on two cores, once)"
  SETUP_LOG=$root/build/demo-terraform.log scripts/setup.sh terraform >/dev/null 2>>"$root/build/demo-terraform.log" &
  fetch=$!
fi
if ! valkey_found; then
  progress "no valkey-server and valkey-cli on PATH: installing them as make deps does (scripts/setup.sh deps-valkey): from apt where the archive has Valkey (under a minute), else Valkey 9.1 built from source into the tool cache (2-4 minutes on two cores, once)$([ "$(id -u)" = 0 ] || echo '; sudo may ask for your password')"
  SETUP_LOG=$root/build/demo-valkey.log scripts/setup.sh deps-valkey >/dev/null || failed "installing Valkey (scripts/setup.sh deps-valkey)" "$root/build/demo-valkey.log"
  valkey_found || failed "scripts/setup.sh deps-valkey installed no valkey-server and valkey-cli" "$root/build/demo-valkey.log"
fi
progress "using $server ($(server_version "$server"))"

# A free loopback port: nothing answers a connection to it.
for _ in $(seq 50); do port=$((20000 + RANDOM % 25000)); (: >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break; port=''; done
[ -n "$port" ] || failed "no free loopback port"
"$server" --port "$port" --bind 127.0.0.1 --dir "$work/server" --save "" --appendonly no --daemonize no --logfile "$work/server/valkey.log" &
cli() { "$client" -h 127.0.0.1 -p "$port" "$@"; }
for _ in $(seq 100); do cli ping >/dev/null 2>&1 && break; sleep 0.05; done
cli ping >/dev/null 2>&1 || { cp "$work/server/valkey.log" "$log"; failed "valkey-server did not start"; }
wait "$build" || failed "go build"
[ -z "$fetch" ] || wait "$fetch" || failed "getting Terraform $v (scripts/setup.sh terraform)" "$root/build/demo-terraform.log"
progress "using $cli ($v)"
progress "ready"

printf 'provider_installation {\n  dev_overrides {\n    "registry.terraform.io/echomq/valkey" = "%s"\n    "registry.opentofu.org/echomq/valkey" = "%s"\n  }\n  direct {}\n}\n' \
  "$work/plugins" "$work/plugins" >"$work/cli.tfrc"
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" TF_IN_AUTOMATION=1 TF_VAR_url="valkey://127.0.0.1:$port/0"
cp examples/demo/main.tf "$work/config/"
# The CLI's output, without the dev-override notice (it is for provider developers).
tf() { "$cli" -chdir="$work/config" "$@" 2>&1 | awk '/Provider development overrides are in effect/ { skip = 1 } !skip && !/^│ *$/ { print } skip && /releases\.$/ { skip = 0 }'; }
stream='emq:{orders}:stream:main'
show_groups() { # one line per group (raw replies come 12 lines per group)
  cli XINFO GROUPS "$stream" | paste -d'|' - - - - - - - - - - - - |
    awk -F'|' '{printf "  group %-9s last-delivered-id %-18s lag %s\n", $2, $8, ($12 == "" ? "unknown" : $12)}'
}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "valkey-server $(server_version "$server") on 127.0.0.1:$port; two orders already queued"
cli XADD "$stream" '*' order 1001 >/dev/null && cli XADD "$stream" '*' order 1002 >/dev/null
say "An ops script created 'audit' by hand before Terraform"
cli XGROUP CREATE "$stream" audit '$'
say "$(basename "$cli") plan: what a reviewer sees before approving"
tf plan -no-color -out=tfplan
first_apply=$((SECONDS - started))
say "$(basename "$cli") apply tfplan: what apply did"
# Apply plans each resource again and repeats the plan's warnings: only apply's own are shown.
tf apply -no-color tfplan | awk '/^Warning: (Group ".*" of ".*" Will |Stream ".*" Will Be|Replay Check|Plan-Time)/ { skip = 1; next }
  /^(Warning|Error):|^Apply complete|^Outputs:|^valkey_stream_group/ { skip = 0 } !skip'
say "The groups as the server sees them (XINFO GROUPS $stream)"
show_groups
say "$(basename "$cli") destroy"
tf destroy -auto-approve -no-color | awk '/^Warning: Group ".*" of ".*" (Left|Will Stay) On Server/ { w = 1 } w || /Destroy complete|Destruction complete/ { print } /^$/ && w && ++blank == 2 { w = 0; blank = 0 }'
say "After destroy, the groups and entries are still there"
show_groups
echo "  XLEN $stream = $(cli XLEN "$stream")"
total=$((SECONDS - started))
printf 'demo: done: the first apply started after %ds, the whole run took %ds\n' "$first_apply" "$total"
[ -z "${DEMO_TIMES:-}" ] || printf 'first_apply=%s\ntotal=%s\n' "$first_apply" "$total" >"$DEMO_TIMES"
