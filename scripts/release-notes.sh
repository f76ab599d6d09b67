#!/usr/bin/env bash
# Prints the release notes of a version: its section of CHANGELOG.md, without the heading.
#
# Usage: scripts/release-notes.sh VERSION            the section for a snapshot of VERSION
#        scripts/release-notes.sh --release VERSION  the section for the tag vVERSION
#
# A released version's section is headed "## vX.Y.Z" (a date may follow, "## v0.1.0
# (2026-10-01)"). Before the tag, the next release is named on the "## Unreleased" heading
# ("## Unreleased (the first release, v0.1.0)"); a snapshot takes that section, a release does
# not: rename the heading before tagging (RELEASING.md). Fails, saying so, when there is no such
# section or it is empty.
set -euo pipefail
cd "$(dirname "$0")/.."

release=0
if [ "${1:-}" = --release ]; then release=1; shift; fi
version=${1:?usage: scripts/release-notes.sh [--release] VERSION}
version=${version#v}

notes=$(awk -v v="v$version" -v release="$release" '
  # the heading names v as a whole word: "## v0.1.0", "## v0.1.0 (date)", "## Unreleased (..., v0.1.0)"
  function names(line,   rest) {
    rest = " " substr(line, 4) " "
    gsub(/[(),]/, " ", rest)
    return index(rest, " " v " ") > 0
  }
  /^## / {
    if (found) exit
    unreleased = ($2 == "Unreleased")
    if (names($0) && (unreleased ? !release : index($0, "## " v) == 1)) { found = 1; next }
  }
  found { print }
' CHANGELOG.md)

if [ -z "$(tr -d '[:space:]' <<<"$notes")" ]; then
  if [ "$release" = 1 ]; then
    echo "release-notes: CHANGELOG.md has no section headed \"## v$version\"; before tagging v$version, rename its \"## Unreleased\" heading to \"## v$version ($(date +%F))\" (RELEASING.md)" >&2
  else
    echo "release-notes: CHANGELOG.md has no section for v$version: name it on the \"## Unreleased\" heading, as in \"## Unreleased (v$version)\", or head a section \"## v$version\"" >&2
  fi
  exit 1
fi
# Without the blank lines that open and close the section.
sed -e '/./,$!d' <<<"$notes" | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'
