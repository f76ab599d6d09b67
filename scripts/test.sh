#!/usr/bin/env bash
# The runner behind `make test`, `make testacc`, `make gates` and `make ci`: it installs what
# the chosen steps need, only when it is missing, runs the steps, and ends with one summary:
# each gate, the unit and server tier, one line per CLI of the matrix (passed, skipped with
# each reason, failed), the fault matrix, and fuzzing. A failing step does not stop the later
# ones; any failure fails the run. Full logs are kept under build/.
#
# Usage: scripts/test.sh STEPS [CLI...]
#   STEPS: comma-separated, in any order (they run in the order below), or all:
#     gates   gofmt and tofu fmt, go vet, golangci-lint, goreleaser, docs up to date
#     unit    every package without TF_ACC: the unit tests and the server tests (real
#             valkey-server processes on loopback)
#     acc     the acceptance suite once per CLI, the fault matrix aside
#     faults  the fault matrix on the real CLI, on FAULT_MATRIX_CLI
#     chaos   the randomized fault campaign (TestChaos) on FAULT_MATRIX_CLI: CHAOS_SEEDS,
#             CHAOS_STEPS, CHAOS_MODES and CHAOS_ONLY when set (make chaos), else a fixed set
#             and the check that it catches each planted bug (TestChaosPlanted)
#     fuzz    each fuzz target for its base count of executions, and the planted-crasher check
#   CLI:  terraform@VERSION | tofu@VERSION   built from the Go module proxy and cached
#         terraform@path | tofu@path          the binary on PATH (terraform >= 1.8, tofu >= 1.6)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

all=gates,unit,acc,faults,chaos,fuzz
steps=${1:?usage: scripts/test.sh STEPS [CLI...] (STEPS: all, or some of $all)}
shift
[ "$steps" = all ] && steps=$all
for s in ${steps//,/ }; do
  [[ ",$all," == *",$s,"* ]] || { echo "test.sh: unknown step '$s' (steps: all, or some of $all)" >&2; exit 2; }
done
clis=("$@")
wants() { [[ ",$steps," == *",$1,"* ]]; }
# The fault matrix's test; the acceptance lanes leave it to the faults step.
FAULT_MATRIX_TEST='^TestCLIReliability_faultMatrix$'

mkdir -p build
summary=build/test-summary.txt
: >"$summary"
failed=0
started=$SECONDS

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# record NAME STATUS: one summary line for a step without test counts.
record() {
  if [ "$2" = 0 ]; then echo "$1: ok" >>"$summary"; else echo "$1: FAILED" >>"$summary"; failed=1; fi
}
# step NAME COMMAND...: runs a gate and records its result.
step() {
  local name=$1 status=0
  shift
  say "$name"
  "$@" || status=$?
  record "$name" "$status"
}
# gotest NAME LOG [ENV=VALUE...] -- ARGS...: `go test -json` through scripts/testsummary.
gotest() {
  local name=$1 log=$2 status=0
  shift 2
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  say "$name"
  env "${env[@]}" go test -json -count=1 -timeout "${GO_TEST_TIMEOUT:-40m}" "$@" 2>&1 \
    | go run ./scripts/testsummary -name "$name" -log "$log" -summary "$summary" || status=$?
  [ "$status" = 0 ] || failed=1
}

# resolve_cli ENTRY sets cli_bin, cli_name and cli_host, or cli_skip with the reason.
resolve_cli() {
  local kind=${1%%@*} want=${1#*@} min
  cli_bin='' cli_name='' cli_host='' cli_skip=''
  case "$kind" in
    terraform) min=1.8 ;;
    tofu) min=1.6 cli_host=registry.opentofu.org ;;
    *) cli_skip="unknown CLI $1 (use terraform@VERSION, tofu@VERSION, terraform@path or tofu@path)"; return 1 ;;
  esac
  if [ "$want" = path ]; then
    cli_bin=$(command -v "$kind") || { cli_skip="no $kind on PATH"; return 0; }
    local v
    v=$(cli_version "$cli_bin")
    if [ -z "$v" ] || ! version_at_least "$v" "$min"; then
      cli_skip="the $kind on PATH is ${v:-of unknown version}; the matrix takes a $kind on PATH from $min on"
      return 0
    fi
    if [[ " ${clis[*]} " == *" $kind@$v "* ]]; then
      cli_skip="the $kind on PATH is $v, which the matrix runs already"
      return 0
    fi
    cli_name="${kind^} $v (on PATH)"
  else
    scripts/setup.sh "$1" >/dev/null || { cli_skip="could not build $1"; return 1; }
    cli_bin=$(tool_path "$kind" "$want")
    cli_name="${kind^} $want"
  fi
  [ "$kind" = tofu ] && cli_name="OpenTofu ${cli_name#Tofu }"
  return 0
}

# cli_lane NAME ENTRY [ARGS...]: the provider's acceptance tests on one CLI of the matrix.
cli_lane() {
  local name=$1 entry=$2
  shift 2
  if ! resolve_cli "$entry"; then
    echo "$name ($entry): FAILED: $cli_skip" >>"$summary"
    failed=1
    return
  fi
  if [ -n "$cli_skip" ]; then
    echo "$name ($entry): NOT RUN: $cli_skip" >>"$summary"
    return
  fi
  local env=(TF_ACC=1 VALKEYTEST_REQUIRED=1 "TF_ACC_TERRAFORM_PATH=$cli_bin")
  [ -n "$cli_host" ] && env+=("TF_ACC_PROVIDER_HOST=$cli_host")
  gotest "$cli_name$name" "build/test-${entry/@/-}$(tr ' ,' '--' <<<"${name,,}").log" "${env[@]}" -- "$@" ./internal/provider/...
}

say "setup"
# The servers and the modules first (so that no lane's JSON stream carries the go command's
# download lines). What the gates and the lanes need builds in the background meanwhile:
# Terraform 1.16.4 alone downloads 2.4 GB of modules, which overlaps the gates and the unit
# tier instead of waiting in line. The docs gate and the lanes wait for it.
scripts/setup.sh valkey redis >/dev/null && go mod download
record setup $?
background=()
if wants acc || wants faults; then
  background+=(opa) # the policy test evaluates examples/policy
  for entry in "${clis[@]}"; do
    [[ "$entry" == *@path || "$entry" == "tofu@$TOFU_VERSION" ]] || background+=("$entry")
  done
  wants faults && background+=("$FAULT_MATRIX_CLI")
fi
wants chaos && [[ " ${background[*]} " != *" $FAULT_MATRIX_CLI "* ]] && background+=("$FAULT_MATRIX_CLI")
wants gates && background+=("terraform@1.16.4") # the docs' schema (scripts/generate.sh)
background_pid=''
if [ ${#background[@]} -gt 0 ]; then
  SETUP_LOG=$PWD/build/setup-background.log scripts/setup.sh "${background[@]}" >/dev/null &
  background_pid=$!
fi
if wants gates || wants acc || wants faults; then
  scripts/setup.sh tofu lint goreleaser >/dev/null # tofu: the gates' HCL format, and a CLI lane
  record "setup (gates' tools, OpenTofu)" $?
fi
# wait_background records the background installs once, when something first needs them.
wait_background() {
  if [ -n "$background_pid" ]; then
    local status=0
    wait "$background_pid" || status=$?
    record "setup (${background[*]})" "$status"
    background_pid=''
  fi
}

if wants gates; then
  step "gofmt" scripts/fmt.sh check
  step "go vet" go vet ./...
  step "golangci-lint" scripts/lint.sh
  step "goreleaser" scripts/release-check.sh
fi

if wants unit; then
  # Every package; acceptance tests skip here (no TF_ACC) and run once per CLI below. The
  # variable makes a missing valkey-server a failure, not a skip.
  gotest "unit and server tests" build/test-unit.log TF_ACC= VALKEYTEST_REQUIRED=1 -- ./...
fi

wait_background
if wants gates; then
  step "docs up to date" scripts/generate.sh check
fi

if wants acc; then
  for entry in "${clis[@]}"; do
    cli_lane "" "$entry" -skip "$FAULT_MATRIX_TEST"
  done
fi

if wants faults; then
  cli_lane ", the fault matrix" "$FAULT_MATRIX_CLI" -run "$FAULT_MATRIX_TEST"
fi

if wants chaos; then
  # Without CHAOS_SEEDS (the full run, or make chaos with no SEED): seeds 1-3 of 60 steps in both
  # modes, then each planted bug must be caught. A run of chosen seeds has no time limit.
  fixed_set=${CHAOS_SEEDS:+no}
  export CHAOS_SEEDS=${CHAOS_SEEDS:-1-3} CHAOS_STEPS=${CHAOS_STEPS:-60} CHAOS_MODES=${CHAOS_MODES:-standalone,cluster} \
    CHAOS_REPORT=${CHAOS_REPORT:-$PWD/build/chaos-report.jsonl}
  GO_TEST_TIMEOUT=0 cli_lane ", the fault campaign" "$FAULT_MATRIX_CLI" -run '^TestChaos$'
  [ -z "$fixed_set" ] && CHAOS_PLANTED=resent-create,state-dropped-on-failed-refresh,adopted-after-lost-reply \
    cli_lane ", the fault campaign on planted bugs" "$FAULT_MATRIX_CLI" -run '^TestChaosPlanted$'
fi

if wants fuzz; then
  step "fuzz (base counts)" scripts/fuzz.sh 1
  step "fuzz: a planted crasher fails" scripts/fuzz.sh planted
fi

say "summary ($(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s; logs in build/)"
cat "$summary"
exit "$failed"
