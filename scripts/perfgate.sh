#!/usr/bin/env bash
# `make perfgate` (the perf step of `make ci`): the quick perf gate. Ours with a warning per group
# against the plugin floor (bench/floor), side by side, at 250 and 1,000 groups in both shapes,
# on one CLI; it fails when any command of ours (plan, apply, no-change plan, destroy) takes
# more than 1.3x the floor's. The harness is bench/cmd/bench -gate (bench/cmd/bench/gate.go);
# its table is printed and written to build/perfgate.md, every timed run to build/perfgate.json.
#
# Usage: scripts/perfgate.sh            the gate
#        scripts/perfgate.sh planted    proves that the gate fails on last round's quadratic
#                                       warnings: bench/testdata/quadratic-warnings.patch applied
#                                       to a copy of the working tree, 250 groups in blocks
# PERFGATE_TERRAFORM: the CLI (default: the fault matrix's CLI of .github/cli-matrix.json, from
# PATH at that version or built). PERFGATE_FLAGS: more flags for the harness, such as
# "-reps 3" or "-gate-sizes 250" (`cd bench && go run ./cmd/bench -h` lists the -gate-* ones).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

valkey_server path >/dev/null
terraform=${PERFGATE_TERRAFORM:-}
if [ -z "$terraform" ]; then
  # The fault matrix's CLI of .github/cli-matrix.json: the one on PATH at that version (a setup
  # action's), else built from the Go module proxy.
  entry=$(cli_matrix faults | head -n 1)
  scripts/setup.sh "$entry" >/dev/null
  terraform=$(tool_path "${entry%%@*}" "${entry#*@}")
fi
# The verdict is CPU's (-gate-busy-load 0: wall time is shown, never counted): on two shared
# cores a wall ratio of 1.34x was measured for a command whose CPU ratio was 1.10x, while the
# planted quadratic warnings are 1.9x to 5.6x in CPU. PERFGATE_FLAGS may set it back.
read -ra flags <<<"-gate-busy-load 0 ${PERFGATE_FLAGS:-}"
root=$PWD
mkdir -p build
# Built, then run: `go run` turns every failing exit status into 1, and 3 (a command over the
# floor) must stay apart from 1 (the harness could not measure).
harness=$root/build/perfgate-bench
(cd bench && go build -o "$harness" ./cmd/bench)

if [ "${1:-}" = planted ]; then
  # The provider as it is, the patch applied, in a copy of its own: the planted build never
  # touches the working tree. The gate must fail on it with its own status (3: a command over),
  # not with a harness error.
  work=$(mktemp -d -t valkey-perfgate-planted-XXXXXX)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/src"
  git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$work/src"
  (cd "$work/src" && git apply "$root/bench/testdata/quadratic-warnings.patch")
  status=0
  # One cell, one run, no warm-up and no confirming runs: the planted warnings are over in every run.
  (cd bench && "$harness" -gate -terraform "$terraform" -provider "$work/src" -out "$work/out" \
    -gate-out "$work/gate" -gate-sizes 250 -gate-shapes blocks -gate-confirm 0 -gate-warm-up=false "${flags[@]}") || status=$?
  [ -f "$work/gate/perfgate.md" ] && cp "$work/gate/perfgate.md" build/perfgate-planted.md
  if [ "$status" != 3 ]; then
    echo "perfgate: the quadratic warnings did not fail the gate (status $status; 3 is a command over the floor)"
    exit 1
  fi
  echo "perfgate: the quadratic warnings fail the gate (build/perfgate-planted.md)"
  exit 0
fi

cd bench
"$harness" -gate -terraform "$terraform" -gate-out "$root/build" "${flags[@]}"
