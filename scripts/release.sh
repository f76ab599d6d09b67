#!/usr/bin/env bash
# Makes and publishes the release of the v* tag at HEAD; the release workflow runs it.
#   - its notes are the version's section of CHANGELOG.md (scripts/release-notes.sh --release);
#   - goreleaser (the version of scripts/lib.sh) builds every platform, signs SHA256SUMS with
#     the key of GPG_FINGERPRINT, and uploads a draft release (.goreleaser.yml);
#   - scripts/release-verify.sh verifies what it made with the exported public key alone;
#   - the GitHub CLI then publishes the draft, and the registries pick the release up.
# Needs GPG_FINGERPRINT (the key imported into gpg) and GITHUB_TOKEN.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
: "${GPG_FINGERPRINT:?set GPG_FINGERPRINT to the fingerprint of the signing key}" "${GITHUB_TOKEN:?set GITHUB_TOKEN}"
tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null) \
  || { echo "release: HEAD carries no v* tag (RELEASING.md)" >&2; exit 1; }
out=build/release
mkdir -p "$out"
scripts/release-notes.sh --release "${tag#v}" >"$out/notes.md"
gpg --batch --armor --export "$GPG_FINGERPRINT" >"$out/signing-key.asc"
[ -s "$out/signing-key.asc" ] || { echo "release: gpg has no public key $GPG_FINGERPRINT" >&2; exit 1; }

scripts/setup.sh goreleaser >/dev/null
"$(tool_path goreleaser "$GORELEASER_VERSION")" release --clean --release-notes "$out/notes.md"
scripts/release-verify.sh dist "$out/signing-key.asc"
GH_TOKEN=$GITHUB_TOKEN gh release edit "$tag" --draft=false
echo "release: $tag published"
