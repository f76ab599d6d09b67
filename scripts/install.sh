#!/usr/bin/env bash
# `make install`: the provider in the implied local mirror of terraform init and tofu init (both
# paths printed). PLUGINS_DIR (~/.terraform.d/plugins), VERSION (the next release of CHANGELOG.md)
# and GOOS/GOARCH change where and what.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
version=${VERSION:-$(changelog_version || true)} && version=${version#v}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] \
  || { echo "install: VERSION '$version' is not a semantic version (MAJOR.MINOR.PATCH); set VERSION or name the next release on the first heading of CHANGELOG.md" >&2; exit 2; }
binary=terraform-provider-valkey_v$version$([ "$(go env GOOS)" != windows ] || echo .exe)
work=$(mktemp -d -t valkey-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Without -trimpath, so that `go version -m` on the binary shows the version it carries.
CGO_ENABLED=0 go build -ldflags "-s -w -X main.version=$version" -o "$work/$binary" .
for host in registry.terraform.io registry.opentofu.org; do
  dir=${PLUGINS_DIR:-$HOME/.terraform.d/plugins}/$host/echomq/valkey/$version/$(go env GOOS)_$(go env GOARCH)
  # Copied in through a temporary name, so that a running init never sees half a file.
  mkdir -p "$dir" && cp "$work/$binary" "$dir/.$binary.tmp" && mv -f "$dir/.$binary.tmp" "$dir/$binary"
  echo "$dir/$binary"
done
