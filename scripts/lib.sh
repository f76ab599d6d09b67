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
tool_path() { printf '%s/%s-%s\n' "$BIN_DIR" "$1" "$2"; }

# changelog_version prints the next release named on the first "## " heading of CHANGELOG.md
# (its first vX.Y.Z, pre-release part included), without the v.
changelog_version() {
  sed -n '/^## /{p;q}' CHANGELOG.md | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?' | head -n 1 | sed 's/^v//'
}

# The Valkey server versions the server tier runs on (VALKEY_VERSIONS, words like 8.0 8.1 9.1).
# 8.0 is the installed package (bookworm-backports, /usr/bin); the others are built from
# Debian's source packages by `scripts/setup.sh valkey@X.Y` into $BIN_DIR/valkey-RELEASE/.
# valkey_release X.Y prints "RELEASE SUITE" for a built version.
valkey_release() {
  case "$1" in
    8.1) echo "8.1.1 trixie" ;;
    9.1) echo "9.1.2 sid" ;;
    *) return 1 ;;
  esac
}

# valkey_server_path X.Y prints the valkey-server binary of that version, installed or built.
valkey_server_path() {
  [ "$1" = 8.0 ] && { echo /usr/bin/valkey-server; return 0; }
  local release
  release=$(valkey_release "$1") || return 1
  printf '%s/valkey-%s/valkey-server\n' "$BIN_DIR" "${release%% *}"
}
