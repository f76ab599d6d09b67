#!/usr/bin/env bash
# Installs what the tests, the gates and the demo need, each only when missing, into the tool
# cache ($BIN_DIR, scripts/lib.sh). Only deps and deps-valkey install system packages.
#   deps         make deps: on Debian and Ubuntu, what building Valkey takes, redis-server (the
#                compatibility check), python3-botocore (the AWS tokens' check) and unzip, then
#                deps-valkey; elsewhere it says what to install
#   deps-valkey  valkey-server, valkey-tools and valkey-sentinel from apt where the archive has
#                them (bookworm: from bookworm-backports), else valkey@9.1 (make demo runs it)
#   valkey@X.Y   Valkey 8.0, 8.1 or 9.1 built into $BIN_DIR/valkey-RELEASE/ from Debian's source
#                package, or with TPV_VALKEY_SOURCE=github from GitHub's release tarball
#   terraform[@VERSION] tofu[@VERSION]  from a binary on PATH of that version, else HashiCorp's
#                releases where reachable (Terraform), else built from the Go module proxy
#   lint goreleaser actionlint opa gotestsum   Go tools at the versions below, likewise
# Progress goes to stderr, the package managers' and the Go toolchain's output to build/setup.log.
# Usage: scripts/setup.sh TARGET...   (no target = terraform tofu)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
LOG=${SETUP_LOG:-$PWD/build/setup.log} # make demo gives each install its own
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

# os_ids prints the ID, ID_LIKE and VERSION_CODENAME words of /etc/os-release.
os_ids() {
  [ -r /etc/os-release ] && (. /etc/os-release && echo "${ID:-} ${ID_LIKE:-} ${VERSION_CODENAME:-}")
}

# apt_install PACKAGE...: installs the packages that are missing (SUITE/PACKAGE from a suite),
# without starting a service.
apt_install() {
  local p target=() names=()
  for p in "$@"; do
    dpkg -s "${p#*/}" >/dev/null 2>&1 && continue
    [[ "$p" == */* ]] && target=(-t "${p%%/*}")
    names+=("${p#*/}")
  done
  [ ${#names[@]} -gt 0 ] || return 0
  log "installing ${names[*]}"
  quietly without_service_start as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${target[@]}" "${names[@]}" \
    || { quietly as_root apt-get update \
      && quietly without_service_start as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${target[@]}" "${names[@]}"; }
}

# install_deps installs the system packages the tests and the builds need, on Debian and
# Ubuntu, then Valkey (install_deps_valkey); elsewhere it checks that the servers are there
# and says what to install if not.
install_deps() {
  if ! apt_system; then
    local p missing=0
    for p in valkey-server valkey-cli valkey-sentinel redis-server; do
      have "$p" >/dev/null || { log "no $p on PATH: $(install_hint "$p")"; missing=1; }
    done
    [ "$missing" = 0 ] || log "make deps installs packages on Debian and Ubuntu only: install the above yourself"
    return "$missing"
  fi
  # debian-archive-keyring: the Valkey builds fetch Debian's source packages (on Ubuntu too).
  apt_install redis-server python3-botocore build-essential libssl-dev pkg-config unzip debian-archive-keyring
  install_deps_valkey
}

# apt_system succeeds on Debian and Ubuntu (and their derivatives) with apt-get.
apt_system() {
  local ids
  ids=" $(os_ids) "
  [[ "$ids" == *" debian "* || "$ids" == *" ubuntu "* ]] && command -v apt-get >/dev/null
}

# install_deps_valkey installs valkey-server, valkey-tools and valkey-sentinel from apt where
# the archive has them, else builds Valkey $VALKEY_FALLBACK into the tool cache. Elsewhere it
# says what to install and fails.
install_deps_valkey() {
  if ! apt_system; then
    log "no apt-get here: $(install_hint valkey-server)"
    return 1
  fi
  local ids valkey=(valkey-server valkey-tools valkey-sentinel)
  ids=" $(os_ids) "
  dpkg -s "${valkey[@]}" >/dev/null 2>&1 && return 0
  if [[ "$ids" == *" bookworm "* ]]; then
    # Bookworm's Valkey is in bookworm-backports only.
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding bookworm-backports to the apt sources (Valkey)"
      as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
      quietly as_root apt-get update
    fi
    valkey=("${valkey[@]/#/bookworm-backports/}")
  fi
  if [[ "$ids" == *" bookworm "* ]] || apt-cache show valkey-server >/dev/null 2>&1 \
    || { quietly as_root apt-get update && apt-cache show valkey-server >/dev/null 2>&1; }; then
    apt_install "${valkey[@]}"
    return
  fi
  # An archive frozen before Valkey was forked (Ubuntu 24.04 and earlier, Debian bullseye):
  # the build of 9.1, which the tests use as VALKEY_SERVER (or VALKEY_VERSIONS=9.1).
  local release
  release=$(valkey_release "$VALKEY_FALLBACK") && release=${release%% *}
  log "this system's apt has no valkey-server: building Valkey $release into the tool cache instead"
  apt_install build-essential libssl-dev pkg-config debian-archive-keyring
  install_valkey_built "$VALKEY_FALLBACK" || return
  log "Valkey $release is in $BIN_DIR/valkey-$release: the tests use it with VALKEY_SERVER=$BIN_DIR/valkey-$release/valkey-server (or VALKEY_VERSIONS=$VALKEY_FALLBACK)"
}

# install_valkey_built X.Y builds a Valkey release the machine's Debian has no binary package
# of (sid's and trixie's need a newer glibc). By default the upstream source (the .orig
# tarball, checked against the signed Sources index) comes through a private apt state, so the
# machine's own sources stay as they are. With TPV_VALKEY_SOURCE=github it is the release's
# tarball from GitHub (TPV_VALKEY_GITHUB: a mirror of .../archive/refs/tags), over HTTPS.
# OPTIMIZATION=-O2 skips the LTO link, most of a default build's time.
install_valkey_built() {
  local release suite dir out source=${TPV_VALKEY_SOURCE:-debian}
  read -r release suite <<<"$(valkey_release "$1")" || { log "no Valkey build known for $1 (known: 8.0, 8.1, 9.1)"; return 2; }
  dir=$BIN_DIR/valkey-$release
  if [ -x "$dir/valkey-server" ] && [ -x "$dir/valkey-cli" ] && [ -L "$dir/valkey-sentinel" ] \
    && out=$("$dir/valkey-server" --version 2>/dev/null) && [[ "$out" == *" v=$release "* ]]; then
    return 0
  fi
  case "$source" in
    debian)
      log "building Valkey $release from Debian $suite's source package (about a minute on two cores, cached afterwards)"
      command -v apt-get >/dev/null || { log "building Valkey $release from Debian's source takes apt-get (Debian, Ubuntu); elsewhere set TPV_VALKEY_SOURCE=github, or install Valkey $1 and set VALKEY_SERVER"; return 1; } ;;
    github)
      log "building Valkey $release from its release tarball on GitHub (about a minute on two cores, cached afterwards)"
      command -v curl >/dev/null || { log "fetching Valkey $release from GitHub takes curl"; return 1; } ;;
    *) log "TPV_VALKEY_SOURCE is debian (the default) or github, not $source"; return 2 ;;
  esac
  command -v make >/dev/null && command -v cc >/dev/null && command -v pkg-config >/dev/null \
    || { log "building Valkey $release takes a C toolchain and OpenSSL's headers: make deps installs them"; return 1; }
  local work status=0 apt uri name size hash
  work=$(mktemp -d)
  (
    set -euo pipefail
    cd "$work"
    if [ "$source" = github ]; then
      name=valkey-$release.tar.gz
      quietly curl -fsSL --retry 3 -o "$name" "${TPV_VALKEY_GITHUB:-https://github.com/valkey-io/valkey/archive/refs/tags}/$release.tar.gz"
    else
      mkdir -p lists/partial cache/archives/partial
      # Debian's archive key (on Ubuntu from its debian-archive-keyring package, make deps) signs the index.
      local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=''
      [ -r "$keyring" ] && signed="[signed-by=$keyring] "
      echo "deb-src ${signed}http://deb.debian.org/debian $suite main" >sources.list
      apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
      quietly apt-get "${apt[@]}" update
      # 'URL' NAME SIZE SHA256:HASH, one line per file of the source package: take the upstream tarball.
      read -r uri name size hash < <(apt-get "${apt[@]}" source --print-uris "valkey/$suite" 2>>"$LOG" \
        | grep "^'[^']*/valkey_$release[%+~.][^']*orig\.tar\.[a-z]*'" || true)
      [ -n "${hash:-}" ] || { log "Debian $suite has no source of Valkey $release (it moved on?): TPV_VALKEY_SOURCE=github builds GitHub's; see $LOG"; exit 1; }
      quietly /usr/lib/apt/apt-helper download-file "${uri//\'/}" "$name" "$hash"
    fi
    mkdir src && tar -xf "$name" -C src --strip-components=1
    quietly make -C src -j"$(nproc)" BUILD_TLS=yes MALLOC=libc OPTIMIZATION=-O2
    mkdir -p "$dir"
    cp src/src/valkey-server src/src/valkey-cli "$dir/"
    ln -sf valkey-server "$dir/valkey-sentinel"
  ) || status=$?
  rm -rf "$work"
  return "$status"
}

# from_path NAME BIN VERSION: NAME on PATH (a setup action's, in the workflows) reports VERSION:
# it becomes the cached BIN, and nothing is built.
from_path() {
  local path
  path=$(command -v "$1") && [ ! "$path" -ef "$2" ] && has_version "$path" "$3" && ln -sf "$path" "$2"
}

# has_version BIN VERSION: BIN runs and reports VERSION on its first line. (The output is
# captured first: under pipefail, a reader that stops early would fail the pipeline.)
has_version() {
  local out
  [ -x "$1" ] && out=$("$1" version 2>/dev/null) && [[ "${out%%$'\n'*}" == *"v$2"* ]]
}

# hashicorp_releases succeeds when HashiCorp's release site answers.
hashicorp_releases() {
  command -v curl >/dev/null && curl -fsS -o /dev/null --max-time 10 https://releases.hashicorp.com/terraform/ 2>/dev/null
}

# install_terraform [VERSION]: from HashiCorp's releases where the machine reaches them, with
# hc-install, the installer (and version, go.mod) terraform-plugin-testing downloads with, which
# verifies HashiCorp's signature; else built from the Go module proxy.
install_terraform() {
  local version=${1:-$TERRAFORM_VERSION} bin
  bin=$(tool_path terraform "$version")
  has_version "$bin" "$version" && return 0
  from_path terraform "$bin" "$version" && return 0
  if hashicorp_releases; then
    log "downloading Terraform $version from releases.hashicorp.com (hc-install)"
    local dir status=0
    dir=$(mktemp -d)
    quietly go build -trimpath -o "$dir/hc-install" github.com/hashicorp/hc-install/cmd/hc-install \
      && quietly "$dir/hc-install" install -version "$version" -path "$dir" terraform \
      && mv "$dir/terraform" "$bin" || status=$?
    rm -rf "$dir"
    return "$status"
  fi
  if ! version_at_least "$version" 1.6; then
    log "building Terraform $version from the Go module proxy (2-3 minutes, cached afterwards)"
    local gobin
    gobin=$(mktemp -d)
    GOBIN="$gobin" GOFLAGS= quietly go install -trimpath "github.com/hashicorp/terraform@v$version"
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
  from_path tofu "$bin" "$version" && return 0
  log "building OpenTofu $version from the Go module proxy (about 3 minutes, cached afterwards)"
  # `go install` refuses the module (it has replace directives); building inside it works.
  dir=$(cd /tmp && GOFLAGS= go mod download -json "github.com/opentofu/opentofu@v$version" 2>>"$LOG" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "could not download github.com/opentofu/opentofu@v$version (see $LOG)"; return 1; }
  (cd "$dir" && GOFLAGS= quietly go build -trimpath -ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$bin" ./cmd/tofu)
}

# install_go_tool BIN VERSION PACKAGE [FLAG...]: BIN when it reports VERSION; else the program
# of BIN's name on PATH (a setup action's, in the workflows) when it does; else built from the
# Go module proxy (go install PACKAGE@vVERSION FLAG...).
install_go_tool() {
  local bin=$1 version=$2 package=$3 name path gobin
  shift 3
  name=$(basename "$bin")
  name=${name%-"$version"}
  reports "$bin" "$version" && return 0
  path=$(command -v "$name") && [ ! "$path" -ef "$bin" ] && reports "$path" "$version" && { ln -sf "$path" "$bin"; return 0; }
  log "building $name $version from the Go module proxy (1-6 minutes, cached afterwards)"
  gobin=$(mktemp -d)
  GOBIN="$gobin" GOFLAGS= quietly go install -trimpath "$@" "$package@v$version"
  mv "$gobin/$name" "$bin" && rmdir "$gobin"
}

# reports BIN VERSION: BIN runs and names VERSION in its --version (or version) output.
reports() {
  local out
  [ -x "$1" ] && { out=$("$1" --version 2>&1) || out=$("$1" version 2>&1); } && [[ "$out" == *"$2"* ]]
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(terraform tofu)
for t in "${targets[@]}"; do
  case "$t" in
    deps | terraform | tofu) "install_$t" ;;
    deps-valkey) install_deps_valkey ;;
    lint) install_go_tool "$BIN_DIR/golangci-lint" 2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
    goreleaser) install_go_tool "$(tool_path goreleaser "$GORELEASER_VERSION")" "$GORELEASER_VERSION" \
      github.com/goreleaser/goreleaser/v2 -ldflags "-X main.version=$GORELEASER_VERSION" ;;
    actionlint) install_go_tool "$BIN_DIR/actionlint" 1.7.12 github.com/rhysd/actionlint/cmd/actionlint ;;
    opa) install_go_tool "$BIN_DIR/opa" 1.22.4 github.com/open-policy-agent/opa ;; # evaluates examples/policy in the tests
    gotestsum) install_go_tool "$(tool_path gotestsum "$GOTESTSUM_VERSION")" "$GOTESTSUM_VERSION" gotest.tools/gotestsum ;;
    terraform@* | tofu@*) "install_${t%%@*}" "${t#*@}" ;;
    valkey@*) install_valkey_built "${t#*@}" ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done
echo "$BIN_DIR"
