#!/usr/bin/env bash
# The workflows' gate: actionlint on .github/workflows, then what only this repository knows.
#   - Every action is pinned to a full commit SHA with its version in a comment.
#   - Every `make TARGET` a workflow runs (in a run: line, or as a job's TARGET) is a target of
#     the GNUmakefile, and every scripts/ file it names exists and runs; together the jobs of
#     test.yml run every step of the full run (`scripts/test.sh all`).
# The CLI matrix needs no check: .github/cli-matrix.json is its one copy, which test.yml and
# the GNUmakefile (scripts/test.sh) both read.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
scripts/setup.sh actionlint >/dev/null
"$BIN_DIR/actionlint" .github/workflows/*.yml

problems=0
problem() { echo "check-workflows: $*" >&2; problems=$((problems + 1)); }
all=$(sed -n 's/^all=//p' scripts/test.sh)
[ -n "$all" ] || { echo "check-workflows: scripts/test.sh names no steps (all=...)" >&2; exit 1; }

# steps_of make TARGET | scripts/test.sh STEPS: the scripts/test.sh steps that it runs.
steps_of() {
  local recipe
  case "$1" in
    make)
      recipe=$(awk -v t="$2:" '$1 == t { found = 1; next } found && /^\t/ { print; next } { found = 0 }' GNUmakefile)
      sed -n 's#.*scripts/test\.sh \([a-z,]*\).*#\1#p' <<<"$recipe"
      ;;
    scripts/test.sh) echo "$2" ;;
  esac | sed "s/^all\$/$all/" | tr ',' '\n'
}

covered=()
for workflow in .github/workflows/*.yml; do
  commands=$(sed -n 's/^ *\(- \)\{0,1\}run: *//p' "$workflow")
  grep -qxE '[|>][-+]?' <<<"$commands" && problem "$workflow has a multi-line run: block; call a make target or a script in one line"
  while read -r target; do
    make -n "$target" >/dev/null 2>&1 || problem "$workflow runs make $target, which the GNUmakefile does not define"
    [ "$workflow" = .github/workflows/test.yml ] && covered+=($(steps_of make "$target"))
  done < <({ grep -oE '\bmake [a-z][a-z0-9-]*' <<<"$commands" | awk '{ print $2 }'
    sed -n 's/^ *TARGET: *\([a-z][a-z0-9-]*\) *$/\1/p' "$workflow"; } | sort -u)
  while read -r script; do
    [ -x "$script" ] || problem "$workflow runs $script, which is not an executable file"
  done < <(grep -oE '\bscripts/[A-Za-z0-9_.-]+' <<<"$commands" | sort -u)
  while read -r step; do
    [[ ",all,$all," == *",$step,"* ]] || problem "$workflow runs scripts/test.sh $step, which is not a step ($all)"
    [ "$workflow" = .github/workflows/test.yml ] && covered+=($(steps_of scripts/test.sh "$step"))
  done < <(grep -oE '\bscripts/test\.sh [a-z,]+' <<<"$commands" | awk '{ print $2 }' | sort -u)
  while read -r uses; do
    [[ "$uses" =~ ^uses:\ [^@\ ]+@[0-9a-f]{40}\ \#\ v[0-9][0-9.]*$ ]] \
      || problem "$workflow: '$uses' is not pinned to a full commit SHA with its version in a comment (uses: owner/action@SHA # vX.Y.Z)"
  done < <(grep -oE 'uses: .*' "$workflow" | sort -u)
done

for step in ${all//,/ }; do
  [[ " ${covered[*]} " == *" $step "* ]] || problem "no job of .github/workflows/test.yml runs the step '$step' of scripts/test.sh"
done

[ "$problems" = 0 ] || exit 1
echo "workflows: actionlint clean; $(ls .github/workflows/*.yml | wc -l | tr -d ' ') workflows call only targets and scripts that exist, pin every action, and test.yml runs every step ($all)"
