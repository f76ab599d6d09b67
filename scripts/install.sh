#!/usr/bin/env bash
# `make install`: builds the provider and puts it where `terraform init` and `tofu init` find
# it with no CLI configuration, Terraform's implied local mirror:
#   $PLUGINS_DIR/registry.terraform.io/echomq/valkey/$VERSION/${GOOS}_$GOARCH/terraform-provider-valkey_v$VERSION
# and its twin under registry.opentofu.org, where OpenTofu resolves "echomq/valkey".
#
#   PLUGINS_DIR  the plugins directory (default ~/.terraform.d/plugins, the implied local
#                mirror of Terraform and OpenTofu on Linux and macOS); point it at a folder to
#                build a filesystem_mirror for a CI image
#   VERSION      the provider version (default: the next release named on the first "## "
#                heading of CHANGELOG.md); the binary reports it to Terraform (main.version)
#   GOOS/GOARCH  the platform to build for (default: this machine's)
#
# Prints the path of the installed binary for each host.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

version=${VERSION:-$(changelog_version)}
version=${version#v}
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "install: VERSION '${version}' is not a semantic version (MAJOR.MINOR.PATCH); set VERSION or name the next release on the first heading of CHANGELOG.md" >&2
  exit 2
fi
plugins=${PLUGINS_DIR:-$HOME/.terraform.d/plugins}
platform="$(go env GOOS)_$(go env GOARCH)"
binary="terraform-provider-valkey_v$version"
[ "$(go env GOOS)" = windows ] && binary+=.exe

work=$(mktemp -d -t valkey-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Without -trimpath, so that `go version -m` on the binary shows the version it carries.
CGO_ENABLED=0 go build -ldflags "-s -w -X main.version=$version" -o "$work/$binary" .

for host in registry.terraform.io registry.opentofu.org; do
  dir="$plugins/$host/echomq/valkey/$version/$platform"
  mkdir -p "$dir"
  # Through a temporary name in the same folder, so that a running init never sees half a file.
  cp "$work/$binary" "$dir/.$binary.tmp"
  mv -f "$dir/.$binary.tmp" "$dir/$binary"
  echo "$dir/$binary"
done
