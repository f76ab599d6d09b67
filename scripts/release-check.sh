#!/usr/bin/env bash
# `make release-check`: proves .goreleaser.yml can make a release. `goreleaser check`
# validates the file; a snapshot release (nothing signed or published) for linux/amd64 and
# darwin/arm64 proves that it builds, and each zip is checked for the binary and the LICENSE.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh goreleaser >/dev/null
goreleaser="$BIN_DIR/goreleaser"
log=$PWD/build/goreleaser.log
mkdir -p build
: >"$log"

"$goreleaser" check

# The same configuration, limited to two targets so that the gate takes a minute, not ten.
ci_config=build/goreleaser-ci.yml
awk '
  /^    goos:/   { print "    targets: [linux_amd64_v1, darwin_arm64_v8.0]"; next }
  /^    goarch:/ { next }
  /^    ignore:/ { skip = 1; next }
  skip && /^      - goos:|^        goarch:/ { next }
  { skip = 0; print }
' .goreleaser.yml >"$ci_config"
grep -q 'targets:' "$ci_config" || { echo "could not limit the targets of .goreleaser.yml"; exit 1; }

if ! "$goreleaser" release --snapshot --clean --skip=publish,sign,before --config "$ci_config" >>"$log" 2>&1; then
  tail -n 30 "$log"
  echo "goreleaser snapshot release failed; full log: $log"
  exit 1
fi
zips=(dist/*.zip)
[ "${#zips[@]}" = 2 ] || { echo "want 2 zips in dist/, found: ${zips[*]}"; exit 1; }
for zip in "${zips[@]}"; do
  listing=$(unzip -Z1 "$zip")
  grep -qx 'LICENSE' <<<"$listing" || { echo "$zip has no LICENSE: $listing"; exit 1; }
  grep -qx 'terraform-provider-valkey_v.*' <<<"$listing" || { echo "$zip has no provider binary: $listing"; exit 1; }
  echo "$zip: $(tr '\n' ' ' <<<"$listing")"
done
# The registry needs the manifest (protocol 6.0) among the checksummed files.
grep -q '_manifest.json$' dist/*_SHA256SUMS || { echo "the SHA256SUMS file does not cover the registry manifest"; exit 1; }
echo "goreleaser: configuration valid; snapshot zips for linux/amd64 and darwin/arm64 carry the binary and LICENSE"
