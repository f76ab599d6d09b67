#!/usr/bin/env bash
# scripts/first-run.sh demo [no-package] | ci [warm]: the README's two commands as a newcomer meets
# them, on a clone of HEAD, the figures written to TIMINGS.md (which says how). Linux, as root: a
# cold run is in a mount namespace whose /usr, /etc and /var are overlays, so the machine outside
# stays as it is; inside, Valkey, apt's lists, the tool cache and Go's caches are gone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# measure COMMAND RUN: make COMMAND in the clone, its times in RUN.times; make ci's logs are
# kept in build/first-run-RUN, and a failed make ci is measured too (the row says it failed).
measure() {
  local begun=$SECONDS status=0
  printf '\n==== make %s, %s ====\n' "$1" "$2"
  DEMO_TIMES=$scratch/$2.times make -C "$scratch/src" "$1" || status=$?
  printf 'make=%s\nstatus=%s\n' "$((SECONDS - begun))" "$status" >>"$scratch/$2.times"
  [ "$1" = demo ] || { rm -rf "$root/build/first-run-$2" && mkdir -p "$root/build" && cp -r "$scratch/src/build" "$root/build/first-run-$2"; }
  [ "$1" = ci ] || [ "$status" = 0 ]
}

if [ "${1:-}" = --inside ]; then
  scratch=$2 command=$3 variant=$4
  for d in usr etc var; do
    mkdir -p "$scratch/$d/upper" "$scratch/$d/work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/$d/upper,workdir=$scratch/$d/work" "/$d"
  done
  {
    DEBIAN_FRONTEND=noninteractive dpkg --purge valkey-server valkey-tools valkey-sentinel || true
    rm -f /etc/apt/sources.list.d/bookworm-backports.sources
    sed -i '/bookworm-backports/d' /etc/apt/sources.list 2>/dev/null || true
    find /var/lib/apt/lists -maxdepth 1 -type f ! -name lock -delete
    if [ "$variant" = no-package ]; then
      printf '%s\n' 'PRETTY_NAME="Ubuntu 24.04 LTS (simulated by scripts/first-run.sh)"' ID=ubuntu ID_LIKE=debian \
        VERSION_ID=24.04 VERSION_CODENAME=noble >/etc/os-release.new && mv /etc/os-release.new /etc/os-release
    fi
    # Removed under the overlays; elsewhere /dev/null, not executable, is mounted over it.
    hidden=(valkey-server valkey-cli) && [ "$command" = ci ] || hidden+=(terraform tofu)
    for tool in "${hidden[@]}"; do
      while bin=$(command -v "$tool"); do
        case "$(readlink -f "$bin")" in /usr/* | /etc/* | /var/*) rm -f "$bin" ;; *) mount --bind /dev/null "$bin" ;; esac
        hash -r
      done
    done
  } >"$scratch/prepare.log" 2>&1
  mkdir -p "$scratch/bin" "$scratch/gomodcache" "$scratch/gocache"
  export TPV_BIN_DIR=$scratch/bin GOMODCACHE=$scratch/gomodcache GOCACHE=$scratch/gocache
  unset VALKEY_SERVER TF_CLI_CONFIG_FILE
  measure "$command" cold
  [ "$command" = ci ] || measure "$command" warm
  exit 0
fi

command=${1:-} variant=${2:-}
case "$command $variant" in
  "demo ") key="Debian bookworm: Valkey from bookworm-backports with apt" ;;
  "demo no-package") key="no Valkey in apt (as on Ubuntu 24.04): Valkey 9.1 built from source into the tool cache" ;;
  "ci ") key="cold: empty tool and Go caches" run=cold ;;
  "ci warm") key="warm: this machine's tool and Go caches" run=warm ;;
  *) echo "usage: scripts/first-run.sh demo [no-package] | ci [warm]" >&2; exit 2 ;;
esac
[ "$(uname -s)" = Linux ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null \
  || { echo "first-run: needs Linux, root and unshare (a mount namespace of its own)" >&2; exit 2; }
scratch=$(mktemp -d -t first-run-XXXXXX)
trap 'rm -rf "$scratch" 2>/dev/null || { sleep 3; rm -rf "$scratch"; }' EXIT # a killed build may still write
commit=$(git rev-parse --short HEAD)
git clone -q "$root" "$scratch/src" # a clone: make ci's release check reads its tags
load=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "$variant" = warm ]; then
  measure ci warm
else
  unshare -m --propagation private "$0" --inside "$scratch" "$command" "$variant"
fi

read_time() { sed -n "s/^$2=//p" "$scratch/$1.times" 2>/dev/null; }
mmss() { if [ -z "$1" ]; then echo -; elif [ "$1" -ge 60 ]; then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$1 s"; fi; }
measured="$(date -u +%Y-%m-%d), $commit, $(nproc) cores, load $load before the run, $(cut -d' ' -f1-3 /proc/loadavg) after"
if [ "$command" = demo ]; then
  row="| $key | $(mmss "$(read_time cold first_apply)") | $(mmss "$(read_time cold make)") | $(mmss "$(read_time warm first_apply)") | $(mmss "$(read_time warm make)") | $measured |"
else
  result=passed
  [ "$(read_time $run status)" = 0 ] || result="FAILED: $(grep -a ': FAILED' "$root/build/first-run-$run/summary.txt" | cut -d: -f1 | paste -sd';' -)"
  row="| $key | $(mmss "$(read_time $run make)") | $result | $measured |"
fi
# The row replaces the one with its key, between the section's markers.
grep -q "^<!-- $command rows -->\$" TIMINGS.md || { echo "first-run: TIMINGS.md has no '<!-- $command rows -->' marker" >&2; exit 1; }
awk -v row="$row" -v key="| $key |" -v begin="<!-- $command rows -->" -v end="<!-- /$command rows -->" '
  $0 == begin { inside = 1; print; next }
  $0 == end { if (!done) print row; inside = 0; print; next }
  inside && index($0, key) == 1 { print row; done = 1; next }
  { print }' TIMINGS.md >TIMINGS.md.new && mv TIMINGS.md.new TIMINGS.md
echo "first-run: $row (written to TIMINGS.md)"
