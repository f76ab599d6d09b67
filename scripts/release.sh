#!/usr/bin/env bash
# The release (RELEASING.md), from anywhere: scripts/release.sh COMMAND (the usage at the end).
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
source scripts/lib.sh
command=${1:-all}
fail() { echo "release $command: $*" >&2; exit 1; }
goreleaser() { scripts/setup.sh goreleaser >/dev/null && "$(tool_path goreleaser "$GORELEASER_VERSION")" "$@"; }
tag_at_head() { git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null; }

# notes [--release] X.Y.Z: its section of CHANGELOG.md, "## vX.Y.Z" ("## Unreleased (vX.Y.Z)" too without --release).
notes() {
  local release=0 v text
  if [ "${1:-}" = --release ]; then release=1; shift; fi
  v=${1:?usage: scripts/release.sh notes [--release] VERSION} && v=v${v#v}
  # A heading naming v as a whole word; the section without its opening and closing blank lines.
  text=$(awk -v v="$v" -v release="$release" '
    /^## / { if (found) exit
      words = " " substr($0, 4) " "; gsub(/[(),]/, " ", words)
      found = index(words, " " v " ") && ($2 == "Unreleased" ? !release : index($0, "## " v) == 1); next }
    found && NF { printf "%s%s\n", gap, $0; gap = ""; begun = 1; next }
    found && begun { gap = gap "\n" }' CHANGELOG.md)
  [ -z "$text" ] || { echo "$text"; return; }
  [ "$release" = 0 ] || fail "CHANGELOG.md has no section headed \"## $v\"; before tagging $v, rename its \"## Unreleased\" heading to \"## $v ($(date +%F))\" (RELEASING.md)"
  fail "CHANGELOG.md has no section for $v: name it on the \"## Unreleased\" heading, as in \"## Unreleased ($v)\", or head a section \"## $v\""
}

# verify DIST KEY: as terraform init checks it (tools/verifyrelease).
verify() {
  local usage='usage: scripts/release.sh verify DIST KEY'
  go run ./tools/verifyrelease "$(cd "$caller" && realpath "${1:?$usage}")" "$(cd "$caller" && realpath "${2:?$usage}")"
}

# check (make release-check): the v* tag at HEAD (else the next release CHANGELOG.md names) built for
# linux/amd64 and darwin/arm64, signed with a throwaway key and verified, into dist/; the key in $out.
check() {
  local out=$PWD/build/release-check version tag mode=--release
  local log=$out/goreleaser.log config=$out/goreleaser-ci.yml
  rm -rf "$out" && mkdir -p "$out"
  goreleaser check
  tag=$(tag_at_head) || { tag=v$(changelog_version || true) mode=''; }
  [ "$tag" != v ] || fail "the first heading of CHANGELOG.md names no next release (vX.Y.Z)"
  version=${tag#v}
  notes ${mode:+"$mode"} "$version" >"$out/release-notes.md"
  echo "release-check: v$version, with $(wc -l <"$out/release-notes.md" | tr -d ' ') lines of release notes from CHANGELOG.md"
  # Two targets, not thirteen (make crosscheck compiles them all), versioned as the release.
  awk '/^    goos:/ { print "    targets: [linux_amd64_v1, darwin_arm64_v8.0]"; next }
    /^    ignore:/ { skip = 1; next }
    /^    goarch:/ || skip && /^      - goos:|^        goarch:/ { next }
    { skip = 0; print }' .goreleaser.yml >"$config"
  grep -q 'targets:' "$config" || fail "could not limit the targets of .goreleaser.yml"
  printf '\nsnapshot:\n  version_template: "%s"\n' "$version" >>"$config"
  # A throwaway RSA key, as the Terraform Registry requires; GPG's socket path must stay short.
  export GNUPGHOME GPG_FINGERPRINT
  GNUPGHOME=$(mktemp -d /tmp/release-check-gpg-XXXXXX)
  trap 'gpgconf --homedir "$GNUPGHOME" --kill all 2>/dev/null || true; rm -rf "$GNUPGHOME"' EXIT
  gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
    --quick-generate-key "terraform-provider-valkey release check <release-check@example.invalid>" rsa3072 sign 1d 2>>"$log"
  GPG_FINGERPRINT=$(gpg --batch --with-colons --list-secret-keys 2>>"$log" | awk -F: '$1 == "fpr" { print $10; exit }')
  gpg --batch --armor --export "$GPG_FINGERPRINT" >"$out/signing-key.asc" 2>>"$log"
  goreleaser release --snapshot --clean --skip=publish,before --config "$config" --release-notes "$out/release-notes.md" >>"$log" 2>&1 \
    || { tail -n 30 "$log"; fail "goreleaser snapshot release failed; full log: $log"; }
  local zips=(dist/*_"$version"_*.zip)
  [ "${#zips[@]}" = 2 ] || fail "want 2 zips of v$version in dist/, found: $(ls dist)"
  verify "$PWD/dist" "$out/signing-key.asc"
  echo "goreleaser $GORELEASER_VERSION: configuration valid; v$version snapshot for linux/amd64 and darwin/arm64 signed with key $GPG_FINGERPRINT and verified"
}

# prepare|build|publish (none: all three) the v* tag at HEAD: notes and public key into build/release;
# goreleaser builds, signs, drafts (the workflow: goreleaser-action); verify, publish.
release() {
  : "${GPG_FINGERPRINT:?set GPG_FINGERPRINT to the fingerprint of the signing key}" "${GITHUB_TOKEN:?set GITHUB_TOKEN}"
  local tag out=build/release
  tag=$(tag_at_head) || fail "HEAD carries no v* tag (RELEASING.md)"
  if [[ $1 == prepare || $1 == all ]]; then
    mkdir -p "$out" && notes --release "${tag#v}" >"$out/notes.md"
    gpg --batch --armor --export "$GPG_FINGERPRINT" >"$out/signing-key.asc"
    [ -s "$out/signing-key.asc" ] || fail "gpg has no public key $GPG_FINGERPRINT"
  fi
  if [[ $1 == build || $1 == all ]]; then goreleaser release --clean --release-notes "$out/notes.md"; fi
  if [[ $1 == publish || $1 == all ]]; then
    verify "$PWD/dist" "$PWD/$out/signing-key.asc"
    GH_TOKEN=$GITHUB_TOKEN gh release edit "$tag" --draft=false
    echo "release: $tag published"
  fi
}

case "$command" in
  check) check ;;
  notes | verify) shift && "$command" "$@" ;;
  prepare | build | publish | all) release "$command" ;;
  *) fail "usage: scripts/release.sh check | notes [--release] VERSION | verify DIST KEY | [prepare|build|publish]" ;;
esac
