#!/usr/bin/env bash
# Installs what the tests, the gates and the demo need, only when it is missing, and caches it:
#   valkey      valkey-server 8.0.x (+ valkey-tools, valkey-sentinel) from Debian bookworm-backports
#   redis       redis-server 7.0 from bookworm (the door's compatibility check)
#   valkey@X.Y  Valkey 8.1.1 (8.1, trixie) or 9.1.2 (9.1, sid) built from Debian's source
#               package into $BIN_DIR/valkey-RELEASE/ (valkey-server, valkey-cli, and
#               valkey-sentinel, which is valkey-server under that name); valkey@8.0 is `valkey`
#   build-deps  what building Valkey takes (build-essential, libssl-dev, pkg-config)
#   terraform[@VERSION]  Terraform (default 1.5.7, the last MPL release), built from the Go
#                        module proxy into $BIN_DIR/terraform-VERSION; releases >= 1.6 with their
#                        nested modules at the release commit (build_terraform_nested; 1.16.4)
#   tofu[@VERSION]       OpenTofu (default 1.12.6), built likewise into $BIN_DIR/tofu-VERSION
#   lint        golangci-lint $GOLANGCI_LINT_VERSION
#   goreleaser  goreleaser $GORELEASER_VERSION (scripts/lib.sh) into $BIN_DIR/goreleaser-VERSION
#   actionlint  actionlint $ACTIONLINT_VERSION, the workflows' gate (scripts/check-workflows.sh)
#   opa         the Open Policy Agent that evaluates examples/policy in the tests
# Prints one progress line per install and the cache directory on stdout; the package
# managers' and the Go toolchain's own output goes to build/setup.log, whose path is printed
# when an install fails. Instant when everything is there.
#
# Usage: scripts/setup.sh TARGET...   (no target = valkey redis terraform tofu)
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
GOLANGCI_LINT_VERSION=2.15.0
ACTIONLINT_VERSION=1.7.12
LOG=${SETUP_LOG:-$PWD/build/setup.log} # a background install (scripts/test.sh) writes its own
mkdir -p build

log() { printf 'setup: %s\n' "$*" >&2; }

# quietly runs a command with its output appended to $LOG; on failure it shows the log's end.
quietly() {
  printf '\n$ %s\n' "$*" >>"$LOG"
  if ! "$@" >>"$LOG" 2>&1; then
    log "failed: $*"
    tail -n 20 "$LOG" | sed 's/^/  | /' >&2
    log "full log: $LOG"
    return 1
  fi
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

# without_service_start keeps a package from starting a system-wide server: tests start their own.
without_service_start() {
  local policy=/usr/sbin/policy-rc.d added=0 status=0
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy"
    added=1
  fi
  "$@" || status=$?
  if [ "$added" = 1 ]; then as_root rm -f "$policy"; fi
  return "$status"
}

install_valkey() {
  if command -v valkey-server >/dev/null && valkey-server --version | grep -q 'v=8\.' \
    && command -v valkey-cli >/dev/null && command -v valkey-sentinel >/dev/null; then
    return 0
  fi
  log "installing valkey-server 8.0 from bookworm-backports (about a minute)"
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  quietly as_root apt-get update
  quietly without_service_start as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -t bookworm-backports valkey-server valkey-tools valkey-sentinel
}

install_redis() {
  if command -v redis-server >/dev/null && redis-server --version | grep -q 'v=7\.'; then
    return 0
  fi
  log "installing redis-server 7.0 from bookworm (compatibility check)"
  quietly without_service_start as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server \
    || { quietly as_root apt-get update \
      && quietly without_service_start as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }
}

# install_build-deps installs what building Valkey takes: a C toolchain, OpenSSL's headers.
install_build-deps() {
  local deps=(build-essential libssl-dev pkg-config)
  dpkg -s "${deps[@]}" >/dev/null 2>&1 && return 0
  log "installing ${deps[*]} (to build Valkey)"
  quietly as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${deps[@]}" \
    || { quietly as_root apt-get update \
      && quietly as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${deps[@]}"; }
}

# install_valkey_built X.Y builds a Valkey release the machine's Debian has no binary package
# of (sid's and trixie's need a newer glibc). The upstream source (the .orig tarball, checked
# against the signed Sources index) comes through a private apt state, so the machine's own
# sources stay as they are. OPTIMIZATION=-O2 skips the LTO link, most of a default build's time.
install_valkey_built() {
  local release suite dir out
  read -r release suite <<<"$(valkey_release "$1")" || { log "no Valkey build known for $1 (known: 8.1, 9.1)"; return 2; }
  dir=$BIN_DIR/valkey-$release
  if [ -x "$dir/valkey-server" ] && [ -x "$dir/valkey-cli" ] && [ -L "$dir/valkey-sentinel" ] \
    && out=$("$dir/valkey-server" --version 2>/dev/null) && [[ "$out" == *" v=$release "* ]]; then
    return 0
  fi
  log "building Valkey $release from Debian $suite's source package (about a minute on two cores, cached afterwards)"
  install_build-deps || return 1
  local work status=0 apt uri name size hash
  work=$(mktemp -d)
  (
    set -euo pipefail
    cd "$work"
    mkdir -p lists/partial cache/archives/partial
    echo "deb-src http://deb.debian.org/debian $suite main" >sources.list
    apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
    quietly apt-get "${apt[@]}" update
    # 'URL' NAME SIZE SHA256:HASH, one line per file of the source package: take the upstream tarball.
    read -r uri name size hash < <(apt-get "${apt[@]}" source --print-uris "valkey/$suite" 2>>"$LOG" \
      | grep "^'[^']*/valkey_$release[%+~.][^']*orig\.tar\.[a-z]*'" || true)
    [ -n "${hash:-}" ] || { log "Debian $suite has no source of Valkey $release (it moved on?); see $LOG"; exit 1; }
    quietly /usr/lib/apt/apt-helper download-file "${uri//\'/}" "$name" "$hash"
    mkdir src && tar -xf "$name" -C src --strip-components=1
    quietly make -C src -j"$(nproc)" BUILD_TLS=yes MALLOC=libc OPTIMIZATION=-O2
    mkdir -p "$dir"
    cp src/src/valkey-server src/src/valkey-cli "$dir/"
    ln -sf valkey-server "$dir/valkey-sentinel"
  ) || status=$?
  rm -rf "$work"
  return "$status"
}

# has_version BIN VERSION: BIN runs and reports VERSION on its first line. (The output is
# captured first: under pipefail, a reader that stops early would fail the pipeline.)
has_version() {
  local out
  [ -x "$1" ] && out=$("$1" version 2>/dev/null) && [[ "${out%%$'\n'*}" == *"v$2"* ]]
}

install_terraform() {
  local version=${1:-$TERRAFORM_VERSION} bin
  bin=$(tool_path terraform "$version")
  has_version "$bin" "$version" && return 0
  if ! version_at_least "$version" 1.6; then
    log "building Terraform $version from the Go module proxy (2-3 minutes, cached afterwards)"
    local gobin
    gobin=$(mktemp -d)
    GOBIN="$gobin" GOFLAGS= quietly go install "github.com/hashicorp/terraform@v$version"
    mv "$gobin/terraform" "$bin" && rmdir "$gobin"
    return 0
  fi
  build_terraform_nested "$version" "$bin"
}

# build_terraform_nested VERSION BIN builds Terraform >= 1.6 unpatched. Its go.mod points ten
# nested modules (nine remote-state backends and internal/legacy) at folders the module zip
# lacks (`replace X => ./internal/...`); the proxy serves each of them as a module of its own at
# the pseudo-version of the release commit (v0.0.0-<commit time>-<hash[:12]>). The replaces are
# rewritten to those, and the binary is built with the release's own flags. Served this way:
# 1.16.4 (about 4 minutes on two cores and 2.4 GB of modules the first time).
build_terraform_nested() {
  local version=$1 bin=$2 json dir hash time pseudo src paths p
  log "building Terraform $version from the Go module proxy (about 4 minutes, cached afterwards)"
  json=$(cd /tmp && GOFLAGS= go mod download -json "github.com/hashicorp/terraform@v$version" 2>>"$LOG") \
    || { log "could not download github.com/hashicorp/terraform@v$version (see $LOG)"; return 1; }
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")
  hash=$(sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)",\{0,1\}$/\1/p' <<<"$json" | head -n 1)
  time=$(sed -n 's/^.*"Time":"\([^"]*\)".*$/\1/p' "$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' <<<"$json")")
  [ -n "$dir" ] && [ -n "$hash" ] && [ -n "$time" ] \
    || { log "could not read the release commit of Terraform $version (see $LOG)"; return 1; }
  # 2026-09-23T11:57:56Z -> 20260923115756
  pseudo="v0.0.0-$(tr -d -- '-:TZ' <<<"$time")-${hash:0:12}"
  src=$(mktemp -d)
  cp -r "$dir/." "$src" && chmod -R u+w "$src"
  paths=$(sed -n 's#^replace \([^ ]*\) => \./internal/.*#\1#p' "$src/go.mod")
  for p in $paths; do
    sed -i "s#^replace $p => \./internal/.*#replace $p => $p $pseudo#" "$src/go.mod"
  done
  printf '\n# nested modules of Terraform %s at %s:\n%s\n' "$version" "$pseudo" "$paths" >>"$LOG"
  local status=0
  (cd "$src" && GOFLAGS=-mod=mod quietly go mod download $(for p in $paths; do printf '%s@%s ' "$p" "$pseudo"; done) \
    && cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 quietly go build \
      -ldflags "-w -s -X 'github.com/hashicorp/terraform/version.dev=no'" -trimpath -buildvcs=false -o "$bin" .) || status=$?
  rm -rf "$src"
  return "$status"
}

install_tofu() {
  local version=${1:-$TOFU_VERSION} bin dir
  bin=$(tool_path tofu "$version")
  has_version "$bin" "$version" && return 0
  log "building OpenTofu $version from the Go module proxy (about 3 minutes, cached afterwards)"
  # `go install` refuses the module (it has replace directives); building inside it works.
  dir=$(cd /tmp && GOFLAGS= go mod download -json "github.com/opentofu/opentofu@v$version" 2>>"$LOG" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "could not download github.com/opentofu/opentofu@v$version (see $LOG)"; return 1; }
  (cd "$dir" && GOFLAGS= quietly go build -ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$bin" ./cmd/tofu)
}

install_lint() {
  local out
  [ -x "$BIN_DIR/golangci-lint" ] && out=$("$BIN_DIR/golangci-lint" version 2>/dev/null) \
    && [[ "$out" == *" $GOLANGCI_LINT_VERSION "* ]] && return 0
  log "building golangci-lint $GOLANGCI_LINT_VERSION from the Go module proxy (2-4 minutes, cached afterwards)"
  GOBIN="$BIN_DIR" GOFLAGS= quietly go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$GOLANGCI_LINT_VERSION"
}

install_goreleaser() {
  # The release check lists the zips it makes.
  command -v unzip >/dev/null || quietly as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y unzip \
    || { quietly as_root apt-get update && quietly as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y unzip; }
  local bin out gobin
  bin=$(tool_path goreleaser "$GORELEASER_VERSION")
  [ -x "$bin" ] && out=$("$bin" --version 2>/dev/null) \
    && grep -qE "GitVersion: +v?$GORELEASER_VERSION\$" <<<"$out" && return 0
  log "building goreleaser $GORELEASER_VERSION from the Go module proxy (3-6 minutes, cached afterwards)"
  gobin=$(mktemp -d)
  GOBIN="$gobin" GOFLAGS= quietly go install -ldflags "-X main.version=$GORELEASER_VERSION" \
    "github.com/goreleaser/goreleaser/v2@v$GORELEASER_VERSION"
  mv "$gobin/goreleaser" "$bin" && rmdir "$gobin"
}

install_actionlint() {
  local out
  [ -x "$BIN_DIR/actionlint" ] && out=$("$BIN_DIR/actionlint" -version 2>/dev/null) \
    && [[ "${out%%$'\n'*}" == "v$ACTIONLINT_VERSION" ]] && return 0
  log "building actionlint $ACTIONLINT_VERSION from the Go module proxy (under a minute, cached afterwards)"
  GOBIN="$BIN_DIR" GOFLAGS= quietly go install "github.com/rhysd/actionlint/cmd/actionlint@v$ACTIONLINT_VERSION"
}

# install_opa builds the Open Policy Agent that evaluates examples/policy in the tests.
install_opa() {
  local version=1.22.4 out
  [ -x "$BIN_DIR/opa" ] && out=$("$BIN_DIR/opa" version 2>/dev/null) \
    && grep -qx "Version: $version" <<<"$out" && return 0
  log "building OPA $version from the Go module proxy (3-5 minutes, cached afterwards)"
  GOBIN="$BIN_DIR" GOFLAGS= quietly go install "github.com/open-policy-agent/opa@v$version"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(valkey redis terraform tofu)
for t in "${targets[@]}"; do
  case "$t" in
    valkey | redis | terraform | tofu | lint | goreleaser | actionlint | opa | build-deps) "install_$t" ;;
    terraform@* | tofu@*) "install_${t%%@*}" "${t#*@}" ;;
    valkey@8.0) install_valkey ;;
    valkey@*) install_valkey_built "${t#*@}" ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done
echo "$BIN_DIR"
