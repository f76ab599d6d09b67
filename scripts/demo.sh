#!/usr/bin/env bash
# `make demo`: a throwaway valkey-server on loopback, the provider built from this tree, and
# examples/demo applied through a dev override. Shows the groups as the server sees them,
# destroys, and shows that the groups are still there. Cleans up after itself.
#
# On a fresh machine it first gets what it needs, saying what and how long:
#   - valkey-server and valkey-cli: $VALKEY_SERVER (valkey-cli beside it or on PATH), else on
#     PATH, else a Valkey build in the tool cache (scripts/lib.sh BIN_DIR), else installed as
#     `make deps` installs Valkey (scripts/setup.sh deps-valkey, as root: apt where the archive
#     has Valkey, else Valkey 9.1 built from source into the tool cache and used from there).
#     Where it cannot install (macOS without Homebrew's Valkey, Windows, Linux without apt),
#     it stops at once with the command to run.
#   - a terraform (>= 1.5) or tofu (>= 1.6) on PATH, else Terraform 1.5.7 from the tool cache,
#     installed there first when missing as `make testacc` does (scripts/setup.sh terraform).
#   - the provider, built from this tree.
# The builds run side by side. Their output goes to build/demo*.log. The last line gives the
# time to the first apply and of the whole run; DEMO_TIMES=FILE also writes them there
# (scripts/first-run.sh measures a fresh machine with it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD
mkdir -p build
log=$root/build/demo.log
: >"$log"
started=$SECONDS

progress() { printf 'demo: %s (%ds)\n' "$*" "$((SECONDS - started))"; }
# failed WHAT [LOG]: stops, showing the end of the log that says why.
failed() {
  local from=${2:-$log}
  printf 'demo: failed: %s\n' "$1" >&2
  tail -n 15 "$from" | sed 's/^/  | /' >&2
  printf 'demo: full log: %s\n' "$from" >&2
  exit 1
}
# stop SAYS: what the machine lacks and the command that installs it; nothing was started.
stop() { printf 'demo: %s\n' "$*" >&2; exit 1; }

work=$(mktemp -d -t valkey-demo-XXXXXX)
server_pid='' build_pid='' terraform_pid=''
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "$build_pid" ]; then kill "$build_pid" 2>/dev/null; fi
  if [ -n "$terraform_pid" ]; then kill "$terraform_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

command -v go >/dev/null || stop "no go on PATH: install Go $(sed -n 's/^go //p' go.mod) or later (https://go.dev/dl/), then run make demo again"

# valkey_found sets server and client to a valkey-server and valkey-cli, when there are some.
server='' client=''
valkey_found() {
  local dir release
  if [ -n "${VALKEY_SERVER:-}" ]; then
    server=$(have "$VALKEY_SERVER") || stop "VALKEY_SERVER=$VALKEY_SERVER is not an executable file"
    client=$(have "$(dirname "$server")/valkey-cli") || client=$(have valkey-cli) \
      || stop "no valkey-cli beside VALKEY_SERVER=$VALKEY_SERVER or on PATH"
    return 0
  fi
  server=$(have valkey-server) && client=$(have valkey-cli) && return 0
  for release in 9.1 8.1 8.0; do
    release=$(valkey_release "$release") && dir=$BIN_DIR/valkey-${release%% *}
    server=$(have "$dir/valkey-server") && client=$(have "$dir/valkey-cli") && return 0
  done
  server='' client=''
  return 1
}

# What cannot be installed here stops the demo before anything starts.
valkey_install=''
if ! valkey_found; then
  case "$(uname -s)" in
    Darwin)
      if command -v brew >/dev/null; then stop "no valkey-server on PATH: run brew install valkey, then make demo again"
      else stop "no valkey-server on PATH: install Homebrew (https://brew.sh), run brew install valkey, then make demo again"; fi ;;
    MINGW* | MSYS* | CYGWIN*)
      stop "Valkey has no native Windows build: run make demo inside WSL (wsl --install -d Ubuntu, then make demo in a clone there)" ;;
  esac
  command -v apt-get >/dev/null || stop "no valkey-server on PATH: $(install_hint valkey-server), then make demo again"
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
    stop "no valkey-server on PATH, and installing it takes root: run make deps as root (or scripts/setup.sh deps-valkey), then make demo again"
  fi
  valkey_install=yes
fi

# The provider's cold build is much of a first run: start it now, and get the rest meanwhile.
progress "building the provider (go build: 1-3 minutes the first time, seconds afterwards)"
mkdir -p "$work/plugins"
go build -o "$work/plugins/terraform-provider-valkey" . >>"$log" 2>&1 &
build_pid=$!

cli='' v=''
if bin=$(command -v terraform) && v=$(cli_version "$bin") && [ -n "$v" ] && version_at_least "$v" 1.5; then
  cli=$bin
elif bin=$(command -v tofu) && v=$(cli_version "$bin") && [ -n "$v" ] && version_at_least "$v" 1.6; then
  cli=$bin
else
  cli=$(tool_path terraform "$TERRAFORM_VERSION")
  v=$TERRAFORM_VERSION
  if [ "$(cli_version "$cli")" != "$v" ]; then
    progress "no terraform >= 1.5 or tofu >= 1.6 on PATH: getting Terraform $v into the tool cache as make testacc does (scripts/setup.sh terraform: downloaded where releases.hashicorp.com answers, else built from the Go module proxy: 4-8 minutes on two cores, once)"
    SETUP_LOG=$root/build/demo-terraform.log scripts/setup.sh terraform >/dev/null 2>>"$root/build/demo-terraform.log" &
    terraform_pid=$!
  fi
fi

if [ -n "$valkey_install" ]; then
  how="as make deps does (scripts/setup.sh deps-valkey): from apt where the archive has Valkey (under a minute), else Valkey 9.1 built from source into the tool cache (2-4 minutes on two cores, once)"
  [ "$(id -u)" = 0 ] || how+="; sudo may ask for your password"
  progress "no valkey-server and valkey-cli on PATH: installing them $how"
  SETUP_LOG=$root/build/demo-valkey.log scripts/setup.sh deps-valkey >/dev/null \
    || failed "installing Valkey (scripts/setup.sh deps-valkey)" "$root/build/demo-valkey.log"
  valkey_found || failed "scripts/setup.sh deps-valkey installed no valkey-server and valkey-cli" "$root/build/demo-valkey.log"
fi
progress "using $server ($(server_version "$server"))"

# A free loopback port: nothing answers a connection to it.
port=''
for _ in $(seq 50); do
  candidate=$((20000 + RANDOM % 25000))
  if ! (: >"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || failed "no free loopback port"
mkdir -p "$work/server"
"$server" --port "$port" --bind 127.0.0.1 --dir "$work/server" --save "" --appendonly no \
  --daemonize no --logfile "$work/server/valkey.log" &
server_pid=$!
cli() { "$client" -h 127.0.0.1 -p "$port" "$@"; }
for _ in $(seq 100); do cli ping >/dev/null 2>&1 && break; sleep 0.05; done
cli ping >/dev/null 2>&1 || { cp "$work/server/valkey.log" "$log"; failed "valkey-server did not start"; }

wait "$build_pid" || { build_pid=''; failed "go build"; }
build_pid=''
if [ -n "$terraform_pid" ]; then
  wait "$terraform_pid" || { terraform_pid=''; failed "getting Terraform $v (scripts/setup.sh terraform)" "$root/build/demo-terraform.log"; }
  terraform_pid=''
fi
progress "using $cli ($v)"
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

say "valkey-server $(server_version "$server") on 127.0.0.1:$port; two orders already queued"
cli XADD "$stream" '*' order 1001 >/dev/null
cli XADD "$stream" '*' order 1002 >/dev/null
say "An ops script created 'audit' by hand before Terraform"
cli XGROUP CREATE "$stream" audit '$'

say "$(basename "$cli") plan: what a reviewer sees before approving"
tf plan -no-color -out=tfplan 2>&1 | quiet_overrides

first_apply=$((SECONDS - started))
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
total=$((SECONDS - started))
printf 'demo: done: the first apply started after %ds, the whole run took %ds\n' "$first_apply" "$total"
[ -z "${DEMO_TIMES:-}" ] || printf 'first_apply=%s\ntotal=%s\n' "$first_apply" "$total" >"$DEMO_TIMES"
