# Shared by the scripts in this folder: `source scripts/lib.sh` from the repository root.
# It knows where the cached tools live and how to tell a CLI's version.

BIN_DIR=${TPV_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-valkey/bin}
# A CLI configuration we own: some machines point TF_CLI_CONFIG_FILE at a missing file, and
# OpenTofu then prints a warning that breaks version parsing.
mkdir -p "$BIN_DIR"
[ -f "$BIN_DIR/cli.tfrc" ] || : >"$BIN_DIR/cli.tfrc"
export TF_CLI_CONFIG_FILE=${TF_CLI_CONFIG_FILE_OVERRIDE:-$BIN_DIR/cli.tfrc}
export CHECKPOINT_DISABLE=1

# cli_version BIN prints the version a terraform or tofu binary reports, such as 1.11.4.
cli_version() {
  local out
  out=$("$1" version -json 2>/dev/null) || return 0
  sed -n 's/^.*"terraform_version": *"\([^"]*\)".*$/\1/p' <<<"$out" | sed -n 1p
}

# version_at_least HAVE WANT succeeds when HAVE >= WANT (both dotted versions).
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# The CLI versions built by default, and where a built tool lives.
TERRAFORM_VERSION=1.5.7
TOFU_VERSION=1.12.6
# goreleaser makes the releases; .goreleaser.yml says why this version. Set it in the
# environment only to run `make release-check` against another version.
GORELEASER_VERSION=${GORELEASER_VERSION:-2.17.0}
# gotestsum runs every go test lane of scripts/test.sh and sums each up.
GOTESTSUM_VERSION=1.13.0
tool_path() { printf '%s/%s-%s\n' "$BIN_DIR" "$1" "$2"; }

# changelog_version prints the next release named on the first "## " heading of CHANGELOG.md
# (its first vX.Y.Z, pre-release part included), without the v.
changelog_version() {
  sed -n '/^## /{p;q}' CHANGELOG.md | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?' | head -n 1 | sed 's/^v//'
}

# install_hint PROGRAM says how to install valkey (valkey-server and its tools) or redis
# (redis-server) on this system; the Go tests say the same (valkeytest.InstallHint).
install_hint() {
  local pkg=valkey id=''
  [[ "$1" == redis* ]] && pkg=redis
  case "$(uname -s)" in
    Darwin) echo "brew install $pkg" ;;
    FreeBSD) echo "pkg install $pkg" ;;
    MINGW* | MSYS* | CYGWIN*) echo "$pkg has no native Windows build: run the tests inside WSL, with $pkg installed there" ;;
    Linux)
      [ -r /etc/os-release ] && id=$(. /etc/os-release && echo "${ID:-} ${ID_LIKE:-}")
      case " $id " in
        *" debian "* | *" ubuntu "*)
          if [ "$pkg" = redis ]; then echo "make deps, or apt-get install redis-server"
          else echo "make deps, or apt-get install valkey-server valkey-tools valkey-sentinel (Debian bookworm: from bookworm-backports)"; fi ;;
        *" fedora "* | *" rhel "* | *" centos "*) echo "dnf install $pkg" ;;
        *" arch "*) echo "pacman -S $pkg" ;;
        *" alpine "*) echo "apk add $pkg" ;;
        *" suse "* | *" opensuse "*) echo "zypper install $pkg" ;;
        *) echo "install $pkg from your distribution's packages" ;;
      esac ;;
    *) echo "install $pkg from your system's packages" ;;
  esac
}

# The Valkey server versions the server tier runs on (VALKEY_VERSIONS), one word each:
#   path  the server the tests find by themselves: $VALKEY_SERVER, else valkey-server on PATH,
#         at whatever version it reports (8.0 and later are tested; a redis-server 7 as VALKEY_SERVER)
#   X.Y   that version: the server on PATH (or $VALKEY_SERVER) when its --version says X.Y,
#         else the build scripts/setup.sh valkey@X.Y makes into $BIN_DIR/valkey-RELEASE/ (8.0,
#         8.1 and 9.1, from Debian's source packages, or GitHub's with TPV_VALKEY_SOURCE=github)
# valkey_release X.Y prints "RELEASE SUITE" for a version setup.sh builds.
valkey_release() {
  case "$1" in
    8.0) echo "8.0.1 bookworm-backports" ;;
    8.1) echo "8.1.1 trixie" ;;
    9.1) echo "9.1.2 sid" ;;
    *) return 1 ;;
  esac
}

# server_version BIN prints the version a valkey-server (or redis-server) reports, such as 8.0.1.
server_version() {
  local out
  out=$("$1" --version 2>/dev/null) || return 0
  sed -n 's/^.* v=\([0-9][0-9.]*\) .*$/\1/p' <<<"$out" | sed -n 1p
}

# have PROGRAM prints the program PATH (or a path) names, when it is an executable file.
have() {
  local bin
  bin=$(command -v "$1") && [ -f "$bin" ] && [ -x "$bin" ] && echo "$bin"
}

# found_server prints the server the tests find by themselves ($VALKEY_SERVER, or valkey-server
# on PATH), or fails.
found_server() { have "${VALKEY_SERVER:-valkey-server}"; }

# valkey_server_path WORD prints the valkey-server of a VALKEY_VERSIONS word (the build's path
# may not exist yet: setup.sh valkey@X.Y makes it); it fails for a version neither found nor built.
valkey_server_path() {
  local bin release
  if [ "$1" = path ]; then found_server; return; fi
  if bin=$(found_server) && [[ "$(server_version "$bin")" == "$1".* ]]; then
    echo "$bin"
    return 0
  fi
  release=$(valkey_release "$1") || return 1
  printf '%s/valkey-%s/valkey-server\n' "$BIN_DIR" "${release%% *}"
}

# valkey_build WORD prints setup.sh's target when the word's server is a build (valkey@X.Y).
valkey_build() {
  local bin
  [ "$1" != path ] || return 0
  bin=$(found_server) && [[ "$(server_version "$bin")" == "$1".* ]] && return 0
  valkey_release "$1" >/dev/null && echo "valkey@$1"
}

# The CLI matrix, written once in .github/cli-matrix.json (the workflow reads it too): for each
# lane (acceptance, faults, registry, modules), the CLIs it runs on. A "path" version is the CLI
# on PATH (in the workflow, the latest release). cli_matrix LANE prints the lane's CLIs as
# words, terraform@VERSION or tofu@VERSION.
cli_matrix() {
  tr -d ' \t\n' <.github/cli-matrix.json | grep -o "\"$1\":\[[^]]*\]" \
    | grep -o '"cli":"[a-z]*","version":"[^"]*"' | sed 's/^"cli":"\([a-z]*\)","version":"\([^"]*\)"$/\1@\2/'
}
