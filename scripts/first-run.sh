#!/usr/bin/env bash
# Measures `make demo` as a newcomer meets it on a fresh Debian or Ubuntu machine, without
# changing this one, and writes the figures, with the date, the commit and this command, to
# the demo's section of TIMINGS.md (the one file that holds them; other files link to it).
# What runs is HEAD's tree (git archive) in a scratch folder: the commit named is the code
# measured, whatever the working tree holds.
#
# Usage: scripts/first-run.sh demo              a fresh machine whose apt has Valkey (Debian
#                                               bookworm: Valkey from bookworm-backports)
#        scripts/first-run.sh demo no-package   one whose apt has none (as Ubuntu 24.04): Valkey
#                                               9.1 is built from source into the tool cache
#
# Linux, as root, with unshare(1). The runs happen in a mount namespace of their own: /usr, /etc
# and /var are overlays whose writes land in a scratch folder that is removed afterwards, so
# the machine outside is untouched. Inside, Valkey's packages are purged, apt's package lists
# and the bookworm-backports source are removed, terraform and tofu are hidden, and the tool
# cache (TPV_BIN_DIR), the Go module cache and the Go build cache are empty folders: what is
# left is Go and the checkout. `make demo` then runs twice, cold and warm. (no-package also
# makes /etc/os-release say Ubuntu 24.04, so the apt path finds no Valkey.)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "${1:-}" = --inside ]; then
  scratch=$2 variant=$3
  for d in usr etc var; do
    mkdir -p "$scratch/$d/upper" "$scratch/$d/work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/$d/upper,workdir=$scratch/$d/work" "/$d"
  done
  {
    if dpkg -s valkey-server >/dev/null 2>&1 || dpkg -s valkey-tools >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive dpkg --purge valkey-server valkey-tools valkey-sentinel
    fi
    rm -f /etc/apt/sources.list.d/bookworm-backports.sources
    sed -i '/bookworm-backports/d' /etc/apt/sources.list 2>/dev/null || true
    find /var/lib/apt/lists -maxdepth 1 -type f ! -name lock -delete
    if [ "$variant" = no-package ]; then
      rm -f /etc/os-release
      printf '%s\n' 'PRETTY_NAME="Ubuntu 24.04 LTS (simulated by scripts/first-run.sh)"' ID=ubuntu ID_LIKE=debian \
        VERSION_ID=24.04 VERSION_CODENAME=noble >/etc/os-release
    fi
    # Under the overlays a program is removed; elsewhere /dev/null is mounted over it, in this
    # namespace only (not executable, so no longer found on PATH).
    for tool in terraform tofu valkey-server valkey-cli; do
      while bin=$(command -v "$tool"); do
        case "$(readlink -f "$bin")" in
          /usr/* | /etc/* | /var/*) rm -f "$bin" ;;
          *) mount --bind /dev/null "$bin" ;;
        esac
        hash -r
      done
    done
  } >"$scratch/prepare.log" 2>&1
  mkdir -p "$scratch/bin" "$scratch/gomodcache" "$scratch/gocache"
  export TPV_BIN_DIR=$scratch/bin GOMODCACHE=$scratch/gomodcache GOCACHE=$scratch/gocache
  unset VALKEY_SERVER TF_CLI_CONFIG_FILE
  for run in cold warm; do
    printf '\n==== make demo, %s ====\n' "$run"
    begun=$SECONDS
    DEMO_TIMES=$scratch/$run.times make -C "$scratch/src" demo
    echo "make=$((SECONDS - begun))" >>"$scratch/$run.times"
  done
  exit 0
fi

[ "${1:-}" = demo ] || { echo "usage: scripts/first-run.sh demo [no-package]" >&2; exit 2; }
variant=${2:-package}
case "$variant" in package | no-package) ;; *) echo "first-run: the variant is no-package, or none" >&2; exit 2 ;; esac
[ "$(uname -s)" = Linux ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null \
  || { echo "first-run: needs Linux, root and unshare (a mount namespace of its own)" >&2; exit 2; }
scratch=$(mktemp -d -t first-run-XXXXXX)
# A build killed on the way out may still be writing to its cache for a moment.
trap 'rm -rf "$scratch" 2>/dev/null || { sleep 3; rm -rf "$scratch"; }' EXIT
mkdir "$scratch/src"
commit=$(git rev-parse --short HEAD)
git archive "$commit" | tar -x -C "$scratch/src"
load=$(cut -d' ' -f1-3 /proc/loadavg)
unshare -m --propagation private "$0" --inside "$scratch" "$variant"
load="$load before the run, $(cut -d' ' -f1-3 /proc/loadavg) after"

read_time() { sed -n "s/^$2=//p" "$scratch/$1.times"; }
# mmss SECONDS: "4 min 12 s".
mmss() { if [ "$1" -ge 60 ]; then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$1 s"; fi; }
case "$variant" in
  package) machine="Debian bookworm: Valkey from bookworm-backports with apt" ;;
  no-package) machine="no Valkey in apt (as on Ubuntu 24.04): Valkey 9.1 built from source into the tool cache" ;;
esac
row="| $machine | $(mmss "$(read_time cold first_apply)") | $(mmss "$(read_time cold make)") | $(mmss "$(read_time warm first_apply)") | $(mmss "$(read_time warm make)") | $(date -u +%Y-%m-%d), $commit, $(nproc) cores, load $load |"

# The row of this variant replaces the one before it, between the section's markers.
file=TIMINGS.md
[ -f "$file" ] && grep -q '^<!-- demo rows -->$' "$file" || { echo "first-run: $file has no '<!-- demo rows -->' marker" >&2; exit 1; }
awk -v row="$row" -v key="| $machine |" '
  /^<!-- demo rows -->$/ { inside = 1; print; next }
  /^<!-- \/demo rows -->$/ { if (!done) print row; inside = 0; print; next }
  inside && index($0, key) == 1 { print row; done = 1; next }
  { print }' "$file" >"$file.new" && mv "$file.new" "$file"
echo "first-run: $row"
echo "first-run: written to $file"
