# Shared by the scripts in this folder (`source scripts/lib.sh` from the repository root), and
# by the GNUmakefile (`scripts/lib.sh FUNCTION ARG...`): where the tool cache is, the CLI
# matrix, and the servers of VALKEY_VERSIONS.

BIN_DIR=${TPV_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-valkey/bin}
# A CLI configuration we own: some machines point TF_CLI_CONFIG_FILE at a missing file, and
# OpenTofu then prints a warning that breaks version parsing.
mkdir -p "$BIN_DIR"
[ -f "$BIN_DIR/cli.tfrc" ] || : >"$BIN_DIR/cli.tfrc"
export TF_CLI_CONFIG_FILE=${TF_CLI_CONFIG_FILE_OVERRIDE:-$BIN_DIR/cli.tfrc} CHECKPOINT_DISABLE=1

# The CLI versions built by default; goreleaser's version is the one .goreleaser.yml names.
TERRAFORM_VERSION=1.5.7
TOFU_VERSION=1.12.6
GORELEASER_VERSION=${GORELEASER_VERSION:-2.17.0}
GOTESTSUM_VERSION=1.13.0
tool_path() { printf '%s/%s-%s\n' "$BIN_DIR" "$1" "$2"; }

# cli_version BIN prints the version a terraform or tofu binary reports, such as 1.11.4.
cli_version() {
  local out
  out=$("$1" version -json 2>/dev/null) || return 0
  sed -n 's/^.*"terraform_version": *"\([^"]*\)".*$/\1/p' <<<"$out" | sed -n 1p
}

# version_at_least HAVE WANT succeeds when HAVE >= WANT (dotted versions).
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

# changelog_version prints the next release named on CHANGELOG.md's first "## " heading.
changelog_version() {
  sed -n '/^## /{p;q}' CHANGELOG.md | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?' | head -n 1 | sed 's/^v//'
}

# install_hint PROGRAM says how to install valkey or redis here (valkeytest.InstallHint, which
# the tests use, knows more systems).
install_hint() {
  local pkg=valkey id=''
  [[ "$1" == redis* ]] && pkg=redis
  case "$(uname -s)" in
    Darwin) echo "brew install $pkg" ;;
    MINGW* | MSYS* | CYGWIN*) echo "$pkg has no native Windows build: run the tests inside WSL, with $pkg installed there" ;;
    Linux)
      [ -r /etc/os-release ] && id=$(. /etc/os-release && echo "${ID:-} ${ID_LIKE:-}")
      case " $id " in
        *" debian "* | *" ubuntu "*) echo "make deps" ;;
        *" fedora "* | *" rhel "*) echo "dnf install $pkg" ;;
        *) echo "install $pkg from your distribution's packages" ;;
      esac ;;
    *) echo "install $pkg from your system's packages" ;;
  esac
}

# The server versions (VALKEY_VERSIONS, CLI_VALKEY_VERSION), one word each: path, the server
# the tests find ($VALKEY_SERVER, else valkey-server on PATH); or X.Y, the server found when it
# reports X.Y, else the build setup.sh valkey@X.Y makes into $BIN_DIR/valkey-RELEASE/.
# valkey_release X.Y prints "RELEASE SUITE" (Debian's suite with its source) of a build.
valkey_release() {
  case "$1" in
    8.0) echo "8.0.1 bookworm-backports" ;;
    8.1) echo "8.1.1 trixie" ;;
    9.1) echo "9.1.2 sid" ;;
    *) return 1 ;;
  esac
}

# VALKEY_FALLBACK is the version make deps builds into the tool cache where apt has no Valkey.
VALKEY_FALLBACK=9.1

# server_version BIN prints the version a valkey-server (or redis-server) reports, e.g. 8.0.1.
server_version() { "$1" --version 2>/dev/null | sed -n 's/^.* v=\([0-9][0-9.]*\) .*$/\1/p' | sed -n 1p; }

# have PROGRAM prints the executable file PROGRAM names on PATH (or as a path).
have() { local bin; bin=$(command -v "$1") && [ -f "$bin" ] && [ -x "$bin" ] && echo "$bin"; }

# valkey_server WORD prints the valkey-server of a version word, building it first when it is
# a build not made yet; it fails, saying what to install, when there is none.
valkey_server() {
  local bin release
  bin=$(have "${VALKEY_SERVER:-valkey-server}") || bin=''
  if [ "$1" = path ]; then # where apt has no Valkey, make deps builds 9.1 into the tool cache
    release=$(valkey_release "$VALKEY_FALLBACK")
    [ -n "$bin" ] || bin=$(have "$BIN_DIR/valkey-${release%% *}/valkey-server") || bin=''
    [ -n "$bin" ] && { echo "$bin"; return; }
    echo "no valkey-server on PATH or as VALKEY_SERVER: $(install_hint valkey-server)" >&2
    return 1
  fi
  [ -n "$bin" ] && [[ "$(server_version "$bin")" == "$1".* ]] && { echo "$bin"; return; }
  release=$(valkey_release "$1") || { echo "no valkey-server $1 found, and none is built here (8.0, 8.1, 9.1)" >&2; return 1; }
  scripts/setup.sh "valkey@$1" >/dev/null || return
  printf '%s/valkey-%s/valkey-server\n' "$BIN_DIR" "${release%% *}"
}

# cli_matrix LANE prints the CLIs of a lane of .github/cli-matrix.json (acceptance, faults,
# chaos, registry, modules) as words, terraform@VERSION or tofu@VERSION.
cli_matrix() {
  tr -d ' \t\n' <.github/cli-matrix.json | grep -o "\"$1\":\[[^]]*\]" \
    | grep -o '"cli":"[a-z]*","version":"[^"]*"' | sed 's/^"cli":"\([a-z]*\)","version":"\([^"]*\)"$/\1@\2/'
}

# gotest NAME ARG...: gotestsum (installed when missing) with its go test -json stream in
# build/test-NAME.json and its output in .log; the DONE line and the time go to build/summary.txt.
gotest() {
  local name=$1 log status=0 begun=$SECONDS
  shift
  scripts/setup.sh gotestsum >/dev/null
  log=build/test-${name//[^A-Za-z0-9.@-]/-}
  "$(tool_path gotestsum "$GOTESTSUM_VERSION")" --format pkgname --format-hide-empty-pkg --jsonfile "$log.json" "$@" 2>&1 \
    | tee "$log.log" || status=${PIPESTATUS[0]}
  echo "$name: $([ "$status" = 0 ] && echo ok || echo "FAILED ($log.log)"): $(grep -a '^DONE ' "$log.log" | tail -n 1) ($((SECONDS - begun)) s)" \
    >>build/summary.txt
  return "$status"
}

# Run as a command: the function its arguments name.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -o pipefail
  cd "$(dirname "$0")/.." && mkdir -p build && "$@"
fi
