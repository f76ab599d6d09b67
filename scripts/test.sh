#!/usr/bin/env bash
# The runner behind `make test`, `make testacc`, `make gates`, `make testregistry`,
# `make testmodules` and `make ci`: it installs what the chosen steps need, only when it is
# missing, runs the steps, and ends with one summary: each gate, the unit and server tier, one
# line per CLI of the matrix (passed, skipped with each reason, failed), the fault matrix, the
# registry install, the module tests, and fuzzing. A failing step does not stop the later ones;
# any failure fails the run. Full logs are kept under build/.
#
# Usage: scripts/test.sh STEPS [CLI...]
#   STEPS: comma-separated, in any order (they run in the order below), or all:
#     gates   gofmt and tofu fmt, go vet, golangci-lint, goreleaser (make release-check),
#             actionlint and the workflows' targets, docs up to date
#     unit    every package without TF_ACC: the unit tests and the server tests (real
#             valkey-server processes on loopback), once per Valkey version of VALKEY_VERSIONS
#     acc     the acceptance suite once per CLI, the fault matrix aside, on CLI_VALKEY_VERSION
#     faults  the fault matrix on the real CLI, on FAULT_MATRIX_CLI and CLI_VALKEY_VERSION
#     chaos   the randomized fault campaign (TestChaos) on FAULT_MATRIX_CLI and CLI_VALKEY_VERSION:
#             CHAOS_SEEDS, CHAOS_STEPS, CHAOS_MODES and CHAOS_ONLY when set (make chaos), else a
#             fixed set and the check that it catches each planted bug (TestChaosPlanted)
#     registry the signed snapshot of make release-check installed through the provider
#             registry protocol on each CLI of REGISTRY_CLIS, refused when tampered with
#     modules the module tests of examples/modules/stream-groups on each CLI of MODULE_TEST_CLIS
#     fuzz    each fuzz target for its base count of executions, and the planted-crasher check
#     perf    the perf gate (scripts/perfgate.sh), and the check that it fails on planted quadratic warnings
#   CLI:  terraform@VERSION | tofu@VERSION   built from the Go module proxy and cached
#         terraform@path | tofu@path          the binary on PATH (terraform >= 1.8, tofu >= 1.6)
#   VALKEY_VERSIONS     the server versions of the unit step, words of 8.0 (the installed
#                       package), 8.1, 9.1 (built by scripts/setup.sh valkey@X.Y); default 8.0
#   CLI_VALKEY_VERSION  the one server version the CLI lanes run on; default 9.1
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

all=gates,unit,acc,faults,chaos,registry,modules,fuzz,perf
steps=${1:?usage: scripts/test.sh STEPS [CLI...] (STEPS: all, or some of $all)}
shift
[ "$steps" = all ] && steps=$all
for s in ${steps//,/ }; do
  [[ ",$all," == *",$s,"* ]] || { echo "test.sh: unknown step '$s' (steps: all, or some of $all)" >&2; exit 2; }
done
clis=("$@")
read -ra valkey_versions <<<"${VALKEY_VERSIONS:-8.0}"
cli_valkey=${CLI_VALKEY_VERSION:-9.1}
for v in "${valkey_versions[@]}" "$cli_valkey"; do
  valkey_server_path "$v" >/dev/null || { echo "test.sh: unknown Valkey version '$v' (known: 8.0 8.1 9.1)" >&2; exit 2; }
done
wants() { [[ ",$steps," == *",$1,"* ]]; }
# The fault matrix's test; the acceptance lanes leave it to the faults step. Likewise the
# registry install and the module tests, which have steps (and CLIs) of their own.
FAULT_MATRIX_TEST='^TestCLIReliability_faultMatrix$'
REGISTRY_TEST='^TestCLIRegistry_'
MODULE_TEST='^TestCLIModuleTests_'
wants registry && : "${REGISTRY_CLIS:?REGISTRY_CLIS (set in the GNUmakefile) names the CLIs of the registry step}"
wants modules && : "${MODULE_TEST_CLIS:?MODULE_TEST_CLIS (set in the GNUmakefile) names the CLIs of the modules step}"

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
  local env=(TF_ACC=1 VALKEYTEST_REQUIRED=1 "TF_ACC_TERRAFORM_PATH=$cli_bin" "VALKEY_SERVER=$(valkey_server_path "$cli_valkey")")
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
# The Valkey builds (about a minute each, cold) run beside the gates and the first server tier.
builds=()
if wants unit; then
  for v in "${valkey_versions[@]}"; do [ "$v" = 8.0 ] || builds+=("valkey@$v"); done
fi
# Every CLI lane (acc, faults, chaos, registry, modules) starts CLI_VALKEY_VERSION.
if { wants acc || wants faults || wants chaos || wants registry || wants modules; } && [ "$cli_valkey" != 8.0 ] && [[ " ${builds[*]} " != *" valkey@$cli_valkey "* ]]; then
  builds+=("valkey@$cli_valkey")
fi
builds_pid=''
if [ ${#builds[@]} -gt 0 ]; then
  scripts/setup.sh build-deps >/dev/null # apt, before any other install may hold its lock
  SETUP_LOG=$PWD/build/setup-valkey.log scripts/setup.sh "${builds[@]}" >/dev/null &
  builds_pid=$!
fi
# wait_builds records the Valkey builds once, when a step first needs one.
wait_builds() {
  if [ -n "$builds_pid" ]; then
    local status=0
    wait "$builds_pid" || status=$?
    record "setup (${builds[*]})" "$status"
    builds_pid=''
  fi
}
background=()
if wants acc || wants faults; then
  background+=(opa) # the policy test evaluates examples/policy
  background+=("${clis[@]}")
  wants faults && background+=("$FAULT_MATRIX_CLI")
fi
wants chaos && [[ " ${background[*]} " != *" $FAULT_MATRIX_CLI "* ]] && background+=("$FAULT_MATRIX_CLI")
wants registry && background+=($REGISTRY_CLIS)
wants modules && background+=($MODULE_TEST_CLIS)
wants gates && background+=("terraform@1.16.4") # the docs' schema (scripts/generate.sh)
# Each once; OpenTofu builds in the foreground, below, and a CLI on PATH is not built.
mapfile -t background < <(printf '%s\n' "${background[@]}" \
  | awk -v tofu="tofu@$TOFU_VERSION" 'NF && $0 != tofu && $0 !~ /@path$/ && !seen[$0]++')
background_pid=''
if [ ${#background[@]} -gt 0 ]; then
  SETUP_LOG=$PWD/build/setup-background.log scripts/setup.sh "${background[@]}" >/dev/null &
  background_pid=$!
fi
if wants gates || wants acc || wants faults; then
  scripts/setup.sh tofu lint goreleaser actionlint >/dev/null # tofu: the gates' HCL format, and a CLI lane
  record "setup (gates' tools, OpenTofu)" $?
elif wants registry || wants modules; then
  scripts/setup.sh tofu goreleaser >/dev/null
  record "setup (OpenTofu, goreleaser)" $?
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
  step "actionlint, workflow targets" scripts/check-workflows.sh
fi

if wants unit; then
  # Every package; acceptance tests skip here (no TF_ACC) and run once per CLI below. The
  # variable makes a missing valkey-server a failure, not a skip.
  for v in "${valkey_versions[@]}"; do
    [ "$v" = 8.0 ] || wait_builds
    bin=$(valkey_server_path "$v")
    release=$("$bin" --version 2>/dev/null | sed -n 's/^.* v=\([0-9.]*\) .*$/\1/p')
    gotest "unit and server tests (Valkey ${release:-$v})" "build/test-unit-$v.log" \
      TF_ACC= VALKEYTEST_REQUIRED=1 "VALKEY_SERVER=$bin" -- ./...
  done
fi

wait_background
wait_builds
if wants gates; then
  step "docs up to date" scripts/generate.sh check
fi

if wants acc; then
  for entry in "${clis[@]}"; do
    cli_lane "" "$entry" -skip "$FAULT_MATRIX_TEST|$REGISTRY_TEST|$MODULE_TEST"
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

if wants registry; then
  # The signed snapshot of the goreleaser gate, made here when the gates do not run.
  wants gates || step "goreleaser" scripts/release-check.sh
  export TPV_RELEASE_DIST=$PWD/dist TPV_RELEASE_KEY=$PWD/build/release-check/signing-key.asc
  for entry in $REGISTRY_CLIS; do
    cli_lane ", the signed release from a registry" "$entry" -run "$REGISTRY_TEST"
  done
fi

if wants modules; then
  for entry in $MODULE_TEST_CLIS; do
    cli_lane ", the module tests" "$entry" -run "$MODULE_TEST"
  done
fi

if wants fuzz; then
  step "fuzz (base counts)" scripts/fuzz.sh 1
  step "fuzz: a planted crasher fails" scripts/fuzz.sh planted
fi

if wants perf; then
  step "perf gate: ours within 1.3x of the plugin floor" scripts/perfgate.sh
  step "perf gate: the quadratic warnings fail it" scripts/perfgate.sh planted
fi

say "summary ($(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s; logs in build/)"
cat "$summary"
exit "$failed"
