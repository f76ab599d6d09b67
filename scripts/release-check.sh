#!/usr/bin/env bash
# `make release-check`: proves .goreleaser.yml makes a release that the registries accept.
#   - `goreleaser check` validates the file;
#   - the version built is the tag at HEAD (v*) or else the next release named in CHANGELOG.md,
#     and CHANGELOG.md must hold its section (the release notes, scripts/release-notes.sh);
#   - a snapshot release for linux/amd64 and darwin/arm64, signed like a release with a throwaway
#     key made for the run (a temporary GNUPGHOME, no passphrase), nothing published;
#   - each zip holds the binary and the LICENSE, and scripts/release-verify.sh verifies
#     SHA256SUMS and its signature with the public key alone.
# It leaves the release in dist/ and the public key in build/release-check/signing-key.asc, where
# the registry install test (`make testregistry`) serves them from.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh goreleaser >/dev/null
goreleaser=$(tool_path goreleaser "$GORELEASER_VERSION")
out=$PWD/build/release-check
log=$out/goreleaser.log
rm -rf "$out"
mkdir -p "$out"

"$goreleaser" check

# The version, and its release notes.
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
  version=${tag#v}
  scripts/release-notes.sh --release "$version" >"$out/release-notes.md"
else
  version=$(changelog_version)
  [ -n "$version" ] || { echo "release-check: the first heading of CHANGELOG.md names no next release (vX.Y.Z)"; exit 1; }
  scripts/release-notes.sh "$version" >"$out/release-notes.md"
fi
echo "release-check: v$version, with $(wc -l <"$out/release-notes.md" | tr -d ' ') lines of release notes from CHANGELOG.md"

# The same configuration, limited to two targets so that the gate links two release binaries,
# not thirteen (scripts/crosscheck.sh builds the provider for each system of the release), and
# versioned as the release it stands for (a snapshot would be 0.0.0-SNAPSHOT-<commit>).
ci_config=$out/goreleaser-ci.yml
awk '
  /^    goos:/   { print "    targets: [linux_amd64_v1, darwin_arm64_v8.0]"; next }
  /^    goarch:/ { next }
  /^    ignore:/ { skip = 1; next }
  skip && /^      - goos:|^        goarch:/ { next }
  { skip = 0; print }
' .goreleaser.yml >"$ci_config"
grep -q 'targets:' "$ci_config" || { echo "could not limit the targets of .goreleaser.yml"; exit 1; }
printf '\nsnapshot:\n  version_template: "%s"\n' "$version" >>"$ci_config"

# A throwaway signing key, RSA as the Terraform Registry requires. The GPG socket path must
# stay short, so the home lives in /tmp.
export GNUPGHOME
GNUPGHOME=$(mktemp -d /tmp/release-check-gpg-XXXXXX)
trap 'gpgconf --homedir "$GNUPGHOME" --kill all 2>/dev/null || true; rm -rf "$GNUPGHOME"' EXIT
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-generate-key "terraform-provider-valkey release check <release-check@example.invalid>" rsa3072 sign 1d 2>>"$log"
GPG_FINGERPRINT=$(gpg --batch --with-colons --list-secret-keys 2>>"$log" | awk -F: '$1 == "fpr" { print $10; exit }')
export GPG_FINGERPRINT
gpg --batch --armor --export "$GPG_FINGERPRINT" >"$out/signing-key.asc" 2>>"$log"

if ! "$goreleaser" release --snapshot --clean --skip=publish,before --config "$ci_config" \
  --release-notes "$out/release-notes.md" >>"$log" 2>&1; then
  tail -n 30 "$log"
  echo "goreleaser snapshot release failed; full log: $log"
  exit 1
fi
zips=(dist/*.zip)
[ "${#zips[@]}" = 2 ] || { echo "want 2 zips in dist/, found: ${zips[*]}"; exit 1; }
for zip in "${zips[@]}"; do
  listing=$(unzip -Z1 "$zip")
  grep -qx 'LICENSE' <<<"$listing" || { echo "$zip has no LICENSE: $listing"; exit 1; }
  grep -qx "terraform-provider-valkey_v$version" <<<"$listing" || { echo "$zip has no provider binary for v$version: $listing"; exit 1; }
  echo "$zip: $(tr '\n' ' ' <<<"$listing")"
done
# The registry needs the manifest (protocol 6.0) among the checksummed files.
grep -q '_manifest.json$' dist/*_SHA256SUMS || { echo "the SHA256SUMS file does not cover the registry manifest"; exit 1; }
scripts/release-verify.sh dist "$out/signing-key.asc"
echo "goreleaser $GORELEASER_VERSION: configuration valid; v$version snapshot for linux/amd64 and darwin/arm64 signed with key $GPG_FINGERPRINT and verified"
