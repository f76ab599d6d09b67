#!/usr/bin/env bash
# The workflows' gate: actionlint on .github/workflows, then what only this repository knows:
# every action is pinned to a full commit SHA with its version in a comment; every `make
# TARGET` a workflow runs (in a run: line, or as a job's TARGET) is a target of the GNUmakefile,
# and every scripts/ file it names is executable; and test.yml's jobs together run every step
# of make ci (CI_STEPS in the GNUmakefile).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(scripts/setup.sh actionlint)/actionlint" .github/workflows/*.yml

problems=0
problem() { echo "check-workflows: $*" >&2; problems=$((problems + 1)); }
covered=' '
for workflow in .github/workflows/*.yml; do
  commands=$(sed -n 's/^ *\(- \)\{0,1\}run: *//p' "$workflow")
  grep -qxE '[|>][-+]?' <<<"$commands" && problem "$workflow has a multi-line run: block; call a make target or a script in one line"
  while read -r target; do
    make -n "$target" >/dev/null 2>&1 || problem "$workflow runs make $target, which the GNUmakefile does not define"
    [ "$workflow" = .github/workflows/test.yml ] && covered+="$target "
  done < <({ grep -oE '\bmake [a-z][a-z0-9-]*' <<<"$commands" | awk '{ print $2 }'
    sed -n 's/^ *TARGET: *\([a-z][a-z0-9-]*\) *$/\1/p' "$workflow"; } | sort -u)
  while read -r script; do
    [ -x "$script" ] || problem "$workflow runs $script, which is not an executable file"
  done < <(grep -oE '\bscripts/[A-Za-z0-9_.-]+' <<<"$commands" | sort -u)
  while read -r uses; do
    [[ "$uses" =~ ^uses:\ [^@\ ]+@[0-9a-f]{40}\ \#\ v[0-9][0-9.]*$ ]] \
      || problem "$workflow: '$uses' is not pinned to a full commit SHA with its version in a comment (uses: owner/action@SHA # vX.Y.Z)"
  done < <(grep -oE 'uses: .*' "$workflow" | sort -u)
done
steps=$(sed -n 's/^CI_STEPS := //p' GNUmakefile)
[ -n "$steps" ] || { echo "check-workflows: the GNUmakefile names no CI_STEPS" >&2; exit 1; }
for step in $steps; do
  [[ "$covered" == *" $step "* ]] || problem "no job of .github/workflows/test.yml runs the step '$step' of make ci"
done
[ "$problems" = 0 ] || exit 1
echo "workflows: actionlint clean; the workflows call only targets and scripts that exist, pin every action, and test.yml runs every step of make ci ($steps)"
