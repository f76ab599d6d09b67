#!/usr/bin/env bash
# Makes and publishes the release of the v* tag at HEAD, in three phases (none: all three):
#   prepare  its notes, the version's section of CHANGELOG.md (scripts/release-notes.sh
#            --release), into build/release/notes.md, and the public key of GPG_FINGERPRINT
#   build    goreleaser (the version of scripts/lib.sh) builds every platform, signs SHA256SUMS
#            with the key of GPG_FINGERPRINT, and uploads a draft release (.goreleaser.yml); the
#            release workflow runs goreleaser-action instead, with the same arguments
#   publish  scripts/release-verify.sh verifies what goreleaser made with the exported public
#            key alone; the GitHub CLI then publishes the draft, and the registries pick it up.
# Needs GPG_FINGERPRINT (the key imported into gpg) and GITHUB_TOKEN.
#
# Usage: scripts/release.sh [prepare|build|publish]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
: "${GPG_FINGERPRINT:?set GPG_FINGERPRINT to the fingerprint of the signing key}" "${GITHUB_TOKEN:?set GITHUB_TOKEN}"
tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null) \
  || { echo "release: HEAD carries no v* tag (RELEASING.md)" >&2; exit 1; }
out=build/release
phase=${1:-all}

if [ "$phase" = prepare ] || [ "$phase" = all ]; then
  mkdir -p "$out"
  scripts/release-notes.sh --release "${tag#v}" >"$out/notes.md"
  gpg --batch --armor --export "$GPG_FINGERPRINT" >"$out/signing-key.asc"
  [ -s "$out/signing-key.asc" ] || { echo "release: gpg has no public key $GPG_FINGERPRINT" >&2; exit 1; }
fi
if [ "$phase" = build ] || [ "$phase" = all ]; then
  scripts/setup.sh goreleaser >/dev/null
  "$(tool_path goreleaser "$GORELEASER_VERSION")" release --clean --release-notes "$out/notes.md"
fi
if [ "$phase" = publish ] || [ "$phase" = all ]; then
  scripts/release-verify.sh dist "$out/signing-key.asc"
  GH_TOKEN=$GITHUB_TOKEN gh release edit "$tag" --draft=false
  echo "release: $tag published"
fi
