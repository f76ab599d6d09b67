#!/usr/bin/env bash
# Verifies a release in DIST the way `terraform init` does before the registries see it: the
# SHA256SUMS file lists exactly the zips and the registry manifest, every listed file matches
# its checksum, and the detached signature of SHA256SUMS verifies with the public key in KEY
# (ASCII-armoured) and nothing else. `make release-check` runs it on the snapshot it signs with
# a throwaway key; the release workflow runs it on the release before making it public.
#
# goreleaser 2.15.0 to 2.16.x wrote the signature's own entry into SHA256SUMS after signing it
# (goreleaser#6508, #6514), so the signature did not cover the file it was published with and
# `terraform init` refused the release ("openpgp: invalid signature"): both checks below fail
# on that.
#
# Usage: scripts/release-verify.sh DIST KEY   (from anywhere; the manifest is the repository's)
set -euo pipefail
manifest=$(realpath "$(dirname "$0")/../terraform-registry-manifest.json")
dist=${1:?usage: scripts/release-verify.sh DIST KEY}
key=$(realpath "${2:?usage: scripts/release-verify.sh DIST KEY}")
cd "$dist"

fail() { echo "release-verify: $*" >&2; exit 1; }
# problem records a failed check; the later checks still run, and the script fails at the end.
problems=0
problem() { echo "release-verify: $*" >&2; problems=$((problems + 1)); }

sums=(*_SHA256SUMS)
[ "${#sums[@]}" = 1 ] && [ -f "${sums[0]}" ] || fail "want one *_SHA256SUMS file in $dist, found: ${sums[*]}"
sums=${sums[0]}
[ -f "$sums.sig" ] || fail "$sums has no detached signature $sums.sig"

# What SHA256SUMS must list: every zip, and the manifest (uploaded from the repository's
# terraform-registry-manifest.json, so not in dist/).
manifest_name=${sums%_SHA256SUMS}_manifest.json
want=$( (ls -1 -- *.zip; echo "$manifest_name") | sort)
listed=$(awk '{ print $2 }' "$sums" | sort)
if grep -q '\.sig$' <<<"$listed"; then
  problem "$sums lists a signature ($(grep '\.sig$' <<<"$listed" | tr '\n' ' ')): goreleaser added it after signing (goreleaser#6508, #6514), so the signature cannot cover this file; use a goreleaser that excludes signatures from checksums (2.17.0 and later, or 2.14.3)"
elif [ "$listed" != "$want" ]; then
  problem "$sums lists
$listed
want the zips and the manifest:
$want"
fi
grep -v "  $manifest_name\$" "$sums" | sha256sum --quiet --strict -c - >/dev/null \
  || problem "a zip of $dist does not match $sums: $(grep -v "  $manifest_name\$" "$sums" | sha256sum --quiet -c - 2>&1 | head -n 3)"
[ "$(awk -v m="$manifest_name" '$2 == m { print $1 }' "$sums")" = "$(sha256sum <"$manifest" | awk '{ print $1 }')" ] \
  || problem "$sums does not hold the checksum of terraform-registry-manifest.json for $manifest_name"

# A keyring holding only KEY, so that no other key of the machine can vouch for the signature.
keyring=$(mktemp -d -t release-verify-XXXXXX)
trap 'gpgconf --homedir "$keyring" --kill all 2>/dev/null || true; rm -rf "$keyring"' EXIT
chmod 700 "$keyring"
gpg --homedir "$keyring" --batch --quiet --import "$key" 2>"$keyring/import.log" || fail "could not import $key: $(cat "$keyring/import.log")"
gpg --homedir "$keyring" --batch --quiet --export >"$keyring/trusted.gpg"
if ! out=$(gpgv --keyring "$keyring/trusted.gpg" "$sums.sig" "$sums" 2>&1); then
  problem "the signature $sums.sig does not verify $sums with $key, so terraform init would refuse the release:
$out"
fi
[ "$problems" = 0 ] || fail "$problems of the release's checks failed"
grep -o 'Good signature from .*' <<<"$out" | sed "s/^/$sums.sig: /"
echo "$sums: lists the $(wc -l <"$sums" | tr -d ' ') files of the release (zips and manifest), each matching"
