#!/usr/bin/env bash
# Installs what the tests and the demo need when it is missing, and caches it:
#   valkey-server 8.0.x (+ valkey-tools, valkey-sentinel) from Debian bookworm-backports,
#   redis-server 7.0 from bookworm (compatibility check),
#   Terraform 1.5.7 and OpenTofu 1.12.6 built from the Go module proxy.
# Prints nothing but progress; safe to run again (instant when everything is there).
#
# Usage: scripts/setup.sh [valkey] [redis] [terraform] [tofu]   (no argument = all)
set -euo pipefail

BIN_DIR=${TPV_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-valkey/bin}
TERRAFORM_VERSION=1.5.7
TOFU_VERSION=1.12.6
mkdir -p "$BIN_DIR"

log() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

install_valkey() {
  if command -v valkey-server >/dev/null && valkey-server --version | grep -q 'v=8\.' \
    && command -v valkey-cli >/dev/null && command -v valkey-sentinel >/dev/null; then
    return 0
  fi
  log "installing valkey-server 8.0 from bookworm-backports"
  local src=/etc/apt/sources.list.d/bookworm-backports.sources
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    as_root tee "$src" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  # Keep the package from starting a system-wide server: tests start their own.
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy"
    added_policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports \
    valkey-server valkey-tools valkey-sentinel >/dev/null
  if [ "$added_policy" = 1 ]; then as_root rm -f "$policy"; fi
  valkey-server --version >&2
}

# Redis 7.0 from plain bookworm, for the compatibility check of the door.
install_redis() {
  if command -v redis-server >/dev/null && redis-server --version | grep -q 'v=7\.'; then
    return 0
  fi
  log "installing redis-server 7.0 from bookworm (compatibility check)"
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy"
    added_policy=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null \
    || { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
  if [ "$added_policy" = 1 ]; then as_root rm -f "$policy"; fi
  redis-server --version >&2
}

install_terraform() {
  if [ -x "$BIN_DIR/terraform" ] && "$BIN_DIR/terraform" version 2>/dev/null | grep -q "v$TERRAFORM_VERSION"; then
    return 0
  fi
  log "building Terraform $TERRAFORM_VERSION from the Go module proxy (2-3 minutes, cached afterwards)"
  GOBIN="$BIN_DIR" GOFLAGS= go install "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
}

install_tofu() {
  if [ -x "$BIN_DIR/tofu" ] && "$BIN_DIR/tofu" version 2>/dev/null | grep -q "v$TOFU_VERSION"; then
    return 0
  fi
  log "building OpenTofu $TOFU_VERSION from the Go module proxy (about 3 minutes, cached afterwards)"
  local dir
  dir=$(cd /tmp && GOFLAGS= go mod download -json "github.com/opentofu/opentofu@v$TOFU_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "could not download github.com/opentofu/opentofu@v$TOFU_VERSION"; return 1; }
  (cd "$dir" && GOFLAGS= go build -ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$BIN_DIR/tofu" ./cmd/tofu)
}

# An empty CLI configuration: some machines point TF_CLI_CONFIG_FILE at a missing file, and
# OpenTofu then prints a warning that breaks terraform-exec's version parsing.
[ -f "$BIN_DIR/cli.tfrc" ] || : >"$BIN_DIR/cli.tfrc"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(valkey redis terraform tofu)
for t in "${targets[@]}"; do
  case "$t" in
    valkey) install_valkey ;;
    redis) install_redis ;;
    terraform) install_terraform ;;
    tofu) install_tofu ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done
echo "$BIN_DIR"
