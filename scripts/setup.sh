#!/usr/bin/env bash
# scripts/setup.sh TARGET...: what the tests, gates and demo need, each only when missing, into
# the tool cache ($BIN_DIR); prints it. Only deps and deps-valkey install system packages.
# Targets: deps, deps-valkey, valkey@X.Y, terraform[@V], tofu[@V] and Go tools (the case below);
# CONTRIBUTING.md says what each installs where. Output of the installers: build/setup.log.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
LOG=${SETUP_LOG:-$PWD/build/setup.log} # make demo gives each install its own

log() { printf 'setup: %s\n' "$*" >&2; }

# quietly runs a command with its output appended to $LOG; on failure it shows the log's end.
quietly() {
  printf '\n$ %s\n' "$*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 && return
  log "failed: $*"
  tail -n 20 "$LOG" | sed 's/^/  | /' >&2
  log "full log: $LOG"
  return 1
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

# apt_get ARG...: apt-get as root, without starting a system-wide server (tests start their own).
apt_get() {
  local policy=/usr/sbin/policy-rc.d added=0 status=0
  [ -e "$policy" ] || { as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy" && added=1; }
  quietly as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@" || status=$?
  [ "$added" = 0 ] || as_root rm -f "$policy"
  return "$status"
}

# apt_install PACKAGE...: the packages that are missing (SUITE/PACKAGE from a suite).
apt_install() {
  local p target=() names=()
  for p in "$@"; do
    dpkg -s "${p#*/}" >/dev/null 2>&1 && continue
    [[ "$p" == */* ]] && target=(-t "${p%%/*}")
    names+=("${p#*/}")
  done
  [ ${#names[@]} -gt 0 ] || return 0
  log "installing ${names[*]}"
  apt_get install -y "${target[@]}" "${names[@]}" || { apt_get update && apt_get install -y "${target[@]}" "${names[@]}"; }
}

apt_system() { [[ " $(os_ids) " == *" debian "* || " $(os_ids) " == *" ubuntu "* ]] && command -v apt-get >/dev/null; }

install_deps() {
  if ! apt_system; then
    local p missing=0
    for p in valkey-server valkey-cli valkey-sentinel redis-server; do
      have "$p" >/dev/null || { log "no $p on PATH: $(install_hint "$p")"; missing=1; }
    done
    return "$missing"
  fi
  # debian-archive-keyring: the Valkey builds fetch Debian's source packages (on Ubuntu too).
  apt_install redis-server python3-botocore build-essential libssl-dev pkg-config debian-archive-keyring
  install_deps_valkey
}

install_deps_valkey() {
  apt_system || { log "no apt-get here: $(install_hint valkey-server)"; return 1; }
  local valkey=(valkey-server valkey-tools valkey-sentinel)
  dpkg -s "${valkey[@]}" >/dev/null 2>&1 && return 0
  if [[ " $(os_ids) " == *" bookworm "* ]]; then # bookworm's Valkey is in bookworm-backports only
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding bookworm-backports to the apt sources (Valkey)"
      printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' 'Components: main' \
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' | as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
      apt_get update
    fi
    apt_install "${valkey[@]/#/bookworm-backports/}"
  elif apt-cache show valkey-server >/dev/null 2>&1 || { apt_get update && apt-cache show valkey-server >/dev/null 2>&1; }; then
    apt_install "${valkey[@]}"
  else # an archive frozen before Valkey was forked (Ubuntu 24.04 and earlier, Debian bullseye)
    log "this system's apt has no valkey-server: building Valkey $VALKEY_FALLBACK into the tool cache instead"
    apt_install build-essential libssl-dev pkg-config unzip debian-archive-keyring
    install_valkey_built "$VALKEY_FALLBACK" && log "the tests find it as $(valkey_server path)"
  fi
}

# install_valkey_built X.Y builds a release the machine's Debian has no binary package of (sid's
# and trixie's need a newer glibc): the upstream tarball of Debian's source package, checked
# against the signed Sources index through a private apt state (the machine's sources stay as
# they are), or GitHub's. OPTIMIZATION=-O2 skips the LTO link, most of a default build's time.
install_valkey_built() {
  local release suite dir source=${TPV_VALKEY_SOURCE:-debian}
  read -r release suite <<<"$(valkey_release "$1")" || { log "no Valkey build known for $1 (known: 8.0, 8.1, 9.1)"; return 2; }
  dir=$BIN_DIR/valkey-$release
  [[ -x "$dir/valkey-cli" && -L "$dir/valkey-sentinel" && "$(server_version "$dir/valkey-server")" == "$release" ]] && return 0
  case "$source" in
    debian) command -v apt-get >/dev/null || { log "building Valkey from Debian's source takes apt-get: set TPV_VALKEY_SOURCE=github, or install Valkey $1 and set VALKEY_SERVER"; return 1; } ;;
    github) command -v curl >/dev/null || { log "fetching Valkey from GitHub takes curl"; return 1; } ;;
    *) log "TPV_VALKEY_SOURCE is debian (the default) or github, not $source"; return 2 ;;
  esac
  command -v make >/dev/null && command -v cc >/dev/null && command -v pkg-config >/dev/null \
    || { log "building Valkey $release takes a C toolchain and OpenSSL's headers: make deps installs them"; return 1; }
  log "building Valkey $release from $([ "$source" = github ] && echo "GitHub's tarball" || echo "Debian $suite's source package") (about a minute on two cores, cached afterwards)"
  local work status=0 apt uri name=valkey-$release.tar.gz size hash
  work=$(mktemp -d)
  (
    cd "$work" || exit
    if [ "$source" = github ]; then
      quietly curl -fsSL --retry 3 -o "$name" "${TPV_VALKEY_GITHUB:-https://github.com/valkey-io/valkey/archive/refs/tags}/$release.tar.gz" || exit
    else
      mkdir -p lists/partial cache/archives/partial
      echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >sources.list
      apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
      quietly apt-get "${apt[@]}" update || exit
      # 'URL' NAME SIZE SHA256:HASH, one line per file of the source package: the upstream tarball.
      read -r uri name size hash < <(apt-get "${apt[@]}" source --print-uris "valkey/$suite" 2>>"$LOG" \
        | grep "^'[^']*/valkey_$release[%+~.][^']*orig\.tar\.[a-z]*'" || true)
      [ -n "${hash:-}" ] || { log "Debian $suite has no source of Valkey $release: TPV_VALKEY_SOURCE=github builds GitHub's; see $LOG"; exit 1; }
      quietly /usr/lib/apt/apt-helper download-file "${uri//\'/}" "$name" "$hash" || exit
    fi
    mkdir src && tar -xf "$name" -C src --strip-components=1 && quietly make -C src -j"$(nproc)" BUILD_TLS=yes MALLOC=libc OPTIMIZATION=-O2 \
      && mkdir -p "$dir" && cp src/src/valkey-server src/src/valkey-cli "$dir/" && ln -sf valkey-server "$dir/valkey-sentinel"
  ) || status=$?
  rm -rf "$work"
  return "$status"
}

# cached BIN VERSION: BIN reports VERSION, or the program of its name on PATH (a setup action's,
# in the workflows) does and becomes BIN.
cached() {
  local name path
  name=$(basename "$1") && name=${name%-"$2"}
  reports "$1" "$2" && return
  path=$(command -v "$name") && [ ! "$path" -ef "$1" ] && reports "$path" "$2" && ln -sf "$path" "$1"
}
reports() { local out; [ -x "$1" ] && { out=$("$1" --version 2>&1) || out=$("$1" version 2>&1); } && [[ "$out" == *"$2"* ]]; }

# go_tool BIN VERSION PACKAGE [FLAG...]: BIN, cached, or built by go install PACKAGE@vVERSION.
go_install() {
  local bin=$1 version=$2 package=$3 gobin && shift 3
  log "building $package $version from the Go module proxy (1-6 minutes, cached afterwards)"
  gobin=$(mktemp -d)
  GOBIN="$gobin" GOFLAGS= quietly go install -trimpath "$@" "$package@v$version" && mv "$gobin"/* "$bin" && rmdir "$gobin"
}

go_tool() { cached "$1" "$2" || go_install "$@"; }

# terraform|tofu [VERSION]: tools/installcli (Terraform from HashiCorp's releases where they
# answer, else built from the Go module proxy).
install_cli() {
  local version=${2:-$TERRAFORM_VERSION} bin
  [ "$1" = terraform ] || version=${2:-$TOFU_VERSION}
  bin=$(tool_path "$1" "$version")
  cached "$bin" "$version" && return
  log "getting $1 $version into the tool cache (downloaded, or built from the Go module proxy: 3-6 minutes on two cores, once)"
  GOFLAGS= quietly go run ./tools/installcli "$1" "$version" "$bin"
}

[ $# -gt 0 ] || set -- terraform tofu
for t in "$@"; do
  case "$t" in
    deps) install_deps ;;
    deps-valkey) install_deps_valkey ;;
    terraform | tofu) install_cli "$t" ;;
    terraform@* | tofu@*) install_cli "${t%%@*}" "${t#*@}" ;;
    valkey@*) install_valkey_built "${t#*@}" ;;
    lint) go_tool "$BIN_DIR/golangci-lint" 2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
    goreleaser) go_tool "$(tool_path goreleaser "$GORELEASER_VERSION")" "$GORELEASER_VERSION" github.com/goreleaser/goreleaser/v2 \
      -ldflags "-X main.version=$GORELEASER_VERSION" ;;
    actionlint) go_tool "$BIN_DIR/actionlint" 1.7.12 github.com/rhysd/actionlint/cmd/actionlint ;;
    act) go_tool "$BIN_DIR/act" 0.2.89 github.com/nektos/act -ldflags "-X main.version=0.2.89" ;; # tools/actlocal
    opa) go_tool "$BIN_DIR/opa" 1.22.4 github.com/open-policy-agent/opa ;; # evaluates examples/policy in the tests
    gotestsum) go_tool "$(tool_path gotestsum "$GOTESTSUM_VERSION")" "$GOTESTSUM_VERSION" gotest.tools/gotestsum ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done
echo "$BIN_DIR"
