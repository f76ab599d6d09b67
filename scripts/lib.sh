# Shared by the scripts here (`source scripts/lib.sh` from the repository root) and callable from
# the GNUmakefile (`scripts/lib.sh FUNCTION ARG...`): the tool cache, the CLI matrix, the servers.

BIN_DIR=${TPV_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-valkey/bin}
# A CLI configuration we own: some machines point TF_CLI_CONFIG_FILE at a missing file, and
# OpenTofu then prints a warning that breaks version parsing.
mkdir -p "$BIN_DIR" && touch "$BIN_DIR/cli.tfrc"
export TF_CLI_CONFIG_FILE=${TF_CLI_CONFIG_FILE_OVERRIDE:-$BIN_DIR/cli.tfrc} CHECKPOINT_DISABLE=1

TERRAFORM_VERSION=1.5.7 TOFU_VERSION=1.12.6 GOTESTSUM_VERSION=1.13.0 # built by default
GORELEASER_VERSION=${GORELEASER_VERSION:-2.17.0}                      # the one .goreleaser.yml names
VALKEY_FALLBACK=9.1 # what make deps builds into the tool cache where apt has no Valkey
tool_path() { printf '%s/%s-%s\n' "$BIN_DIR" "$1" "$2"; }

# cli_version BIN: the version a terraform or tofu binary reports, such as 1.11.4.
cli_version() { { "$1" version -json 2>/dev/null || :; } | sed -n 's/^.*"terraform_version": *"\([^"]*\)".*$/\1/p' | sed -n 1p; }
# server_version BIN: the version a valkey-server (or redis-server) reports, such as 8.0.1.
server_version() { "$1" --version 2>/dev/null | sed -n 's/^.* v=\([0-9][0-9.]*\) .*$/\1/p' | sed -n 1p; }
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; } # HAVE WANT
# changelog_version: the next release named on CHANGELOG.md's first "## " heading.
changelog_version() { sed -n '/^## /{p;q}' CHANGELOG.md | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?' | sed 's/^v//;q'; }
# have PROGRAM: the executable file PROGRAM names on PATH (or as a path).
have() { local bin; bin=$(command -v "$1") && [ -f "$bin" ] && [ -x "$bin" ] && echo "$bin"; }
os_ids() { [ -r /etc/os-release ] && (. /etc/os-release && echo "${ID:-} ${ID_LIKE:-} ${VERSION_CODENAME:-}"); }

# install_hint PROGRAM: how to install valkey (or redis) here; CONTRIBUTING.md has the table, and
# valkeytest.InstallHint tells the tests the same.
install_hint() {
  local pkg=valkey && [[ "$1" != redis* ]] || pkg=redis
  case "$(uname -s) $(os_ids) " in
    Darwin*) echo "brew install $pkg" ;;
    *" debian "* | *" ubuntu "*) echo "make deps" ;;
    *) echo "install $pkg from your system's packages (CONTRIBUTING.md lists the commands)" ;;
  esac
}

# valkey_release X.Y: "RELEASE SUITE" of a build (SUITE: Debian's suite with its source).
valkey_release() { case "$1" in 8.0) echo "8.0.1 bookworm-backports" ;; 8.1) echo "8.1.1 trixie" ;; 9.1) echo "9.1.2 sid" ;; *) return 1 ;; esac; }

# valkey_server WORD: the valkey-server of a version word (VALKEY_VERSIONS, CLI_VALKEY_VERSION).
# path is the one the tests find ($VALKEY_SERVER, on PATH, else make deps' build); X.Y is the
# one found when it reports X.Y, else the build of setup.sh valkey@X.Y, made when missing.
valkey_server() {
  local bin release
  bin=$(have "${VALKEY_SERVER:-valkey-server}") || bin=''
  if [ "$1" = path ]; then
    release=$(valkey_release "$VALKEY_FALLBACK")
    [ -n "$bin" ] || bin=$(have "$BIN_DIR/valkey-${release%% *}/valkey-server") \
      || { echo "no valkey-server on PATH or as VALKEY_SERVER: $(install_hint valkey-server)" >&2; return 1; }
  elif ! { [ -n "$bin" ] && [[ "$(server_version "$bin")" == "$1".* ]]; }; then
    release=$(valkey_release "$1") || { echo "no valkey-server $1 found, and none is built here (8.0, 8.1, 9.1)" >&2; return 1; }
    scripts/setup.sh "valkey@$1" >/dev/null && bin=$BIN_DIR/valkey-${release%% *}/valkey-server || return
  fi
  echo "$bin"
}

# cli_matrix LANE: the CLIs of a lane of .github/cli-matrix.json, as terraform@X.Y.Z or tofu@X.Y.Z.
cli_matrix() {
  tr -d ' \t\n' <.github/cli-matrix.json | grep -o "\"$1\":\[[^]]*\]" \
    | grep -o '"cli":"[a-z]*","version":"[^"]*"' | sed 's/^"cli":"\([a-z]*\)","version":"\([^"]*\)"$/\1@\2/'
}

# gotest NAME ARG...: gotestsum, its go test -json stream in build/test-NAME.json and its output
# in .log; the DONE line and the time go to build/summary.txt.
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

if [ "${BASH_SOURCE[0]}" = "$0" ]; then # run as a command: the function its arguments name
  set -o pipefail
  cd "$(dirname "$0")/.." && mkdir -p build && "$@"
fi
