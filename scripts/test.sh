#!/usr/bin/env bash
# The runner behind `make testservers`, `make testacc`, `make testfaults`, `make chaos`,
# `make testregistry`, `make testmodules`, `make gates` and `make ci`: it builds the tools the
# chosen steps need (scripts/setup.sh, each only when missing; system packages are `make deps`'
# alone), runs the steps, and ends with one summary: each gate and each go test lane (one per
# server version and per CLI), with gotestsum's count of its tests and its time. gotestsum runs
# every go test lane and lists each skip with its reason in the lane's output. A failing step
# does not stop the later ones; any failure fails the run. Full logs are kept under build/
# (build/test-*.json: each lane's go test -json).
#
# Usage: scripts/test.sh STEPS [CLI...]
#   STEPS: comma-separated, in any order (they run in the order below), or all:
#     gates   gofmt and tofu fmt, go vet, golangci-lint, goreleaser (make release-check),
#             actionlint and the workflows, the cross-compiled provider and test binaries of
#             every release platform, docs up to date
#     unit    every package without TF_ACC: the unit tests and the server tests (real
#             valkey-server processes on loopback), once per word of VALKEY_VERSIONS
#     acc     TestAcc* and TestCLI* on each CLI (ONCE_TESTS on one), the fault matrix aside
#     faults  the fault matrix on the real CLI, on FAULT_MATRIX_CLI and CLI_VALKEY_VERSION
#     chaos   the randomized fault campaign (TestChaos) on FAULT_MATRIX_CLI and CLI_VALKEY_VERSION:
#             CHAOS_SEEDS, CHAOS_STEPS, CHAOS_MODES and CHAOS_ONLY when set (make chaos), else a
#             fixed set and the check that it catches each planted bug (TestChaosPlanted)
#     registry the signed snapshot of make release-check installed through the provider
#             registry protocol on each CLI of REGISTRY_CLIS, refused when tampered with
#     modules the module tests of examples/modules/stream-groups on each CLI of MODULE_TEST_CLIS
#     fuzz    each fuzz target for its base count of executions, and the planted-crasher check
#     perf    the perf gate (scripts/perfgate.sh), and the check that it fails on planted quadratic warnings
#   CLI:  terraform@VERSION | tofu@VERSION   the CLI of that version: TF_ACC_TERRAFORM_PATH or
#                                            the one on PATH when it reports VERSION, else from
#                                            HashiCorp's releases (Terraform, where reachable),
#                                            else built from the Go module proxy (setup.sh)
#         terraform@path | tofu@path          the binary on PATH (terraform >= 1.8, tofu >= 1.6)
#         Without CLIs: TF_ACC_TERRAFORM_PATH alone when it is set, else the acceptance CLIs of
#         .github/cli-matrix.json, which also gives the defaults of FAULT_MATRIX_CLI,
#         REGISTRY_CLIS and MODULE_TEST_CLIS.
#   VALKEY_VERSIONS     the server versions of the unit step (scripts/lib.sh): path (the
#                       server the tests find: $VALKEY_SERVER or valkey-server on PATH, the
#                       default), or X.Y (on PATH at that version, else the build of 8.1 or 9.1)
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
if [ ${#clis[@]} = 0 ]; then
  if [ -n "${TF_ACC_TERRAFORM_PATH:-}" ]; then clis=(env); else mapfile -t clis < <(cli_matrix acceptance); fi
fi
: "${FAULT_MATRIX_CLI:=$(cli_matrix faults | head -n 1)}" "${REGISTRY_CLIS:=$(cli_matrix registry | xargs)}" \
  "${MODULE_TEST_CLIS:=$(cli_matrix modules | xargs)}"
mapfile -t chaos_clis < <(cli_matrix chaos) # the fixed campaign's three lanes, below
read -ra valkey_versions <<<"${VALKEY_VERSIONS:-path}"
cli_valkey=${CLI_VALKEY_VERSION:-9.1}
wants() { [[ ",$steps," == *",$1,"* ]]; }
cli_steps() { wants acc || wants faults || wants chaos || wants registry || wants modules; }
# The servers first: without one, one message that says what to install here.
server_words=()
wants unit && server_words+=("${valkey_versions[@]}")
cli_steps && server_words+=("$cli_valkey")
for v in "${server_words[@]}"; do
  valkey_server_path "$v" >/dev/null && continue
  if [ "$v" = path ]; then
    echo "test.sh: the server tests need a valkey-server (Valkey 8.0 or later, or a redis-server 7 as VALKEY_SERVER) on PATH or as VALKEY_SERVER. Install it: $(install_hint valkey-server)" >&2
  else
    echo "test.sh: no valkey-server $v on PATH (or as VALKEY_SERVER), and scripts/setup.sh builds only 8.1 and 9.1: install Valkey $v ($(install_hint valkey-server)), or pick another version" >&2
  fi
  exit 2
done
# The fault matrix's test; the acceptance lanes leave it to the faults step. Likewise the
# registry install and the module tests, which have steps (and CLIs) of their own.
FAULT_MATRIX_TEST='^TestCLIReliability_faultMatrix$'
REGISTRY_TEST='^TestCLIRegistry_'
MODULE_TEST='^TestCLIModuleTests_'
# What cannot differ between CLIs (TESTING.md): the server's side of a connection (cluster,
# sentinel, TLS, ACL, IAM) and server faults mid-apply, where the CLI only plans and applies.
ONCE_TESTS='^TestAccProvider_(Cluster|SentinelFailover|MutualTLS|CertificateLogin|MinimalACL|ACLWithout|ConnectionRefused|AWSIAM|CloudIAM)'
ONCE_TESTS+='|^TestCLI(Cluster|MinimalACL|Managed)_|^TestCLIReliability_(restartStorm|serverKilled|sentinelFailover|clusterMaster)'
wants registry && : "${REGISTRY_CLIS:?REGISTRY_CLIS (set in the GNUmakefile) names the CLIs of the registry step}"
wants modules && : "${MODULE_TEST_CLIS:?MODULE_TEST_CLIS (set in the GNUmakefile) names the CLIs of the modules step}"

mkdir -p build
summary=build/test-summary.txt
: >"$summary"
failed=0
started=$SECONDS

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# duration SECONDS: "7 min 41 s" or "41 s".
duration() { if [ "$1" -ge 60 ]; then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$1 s"; fi; }
# record NAME STATUS [TIME]: one summary line for a step without test counts.
record() {
  local took=${3:+ ($3)}
  if [ "$2" = 0 ]; then echo "$1: ok$took" >>"$summary"; else echo "$1: FAILED$took" >>"$summary"; failed=1; fi
}
# step NAME COMMAND...: runs a gate and records its result and how long it took.
step() {
  local name=$1 status=0 begun=$SECONDS
  shift
  say "$name"
  "$@" || status=$?
  record "$name" "$status" "$(duration $((SECONDS - begun)))"
}
gotestsum=$(tool_path gotestsum "$GOTESTSUM_VERSION")
# gotest NAME LOG [ENV=VALUE...] -- ARGS...: one go test lane through gotestsum, which shows
# each package, each failure and each skip with its reason, keeps the -json stream in LOG's
# .json, and sums the lane up (its DONE line goes to the run's summary).
gotest() {
  local name=$1 log=$2 status=0 begun=$SECONDS
  shift 2
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  say "$name"
  # ARGS are go test's, or --raw-command -- and a command that prints go test -json.
  local args=(-- -count=1 -timeout "${GO_TEST_TIMEOUT:-40m}" "$@")
  [ "${1:-}" = --raw-command ] && args=("$@")
  env "${env[@]}" "$gotestsum" --format pkgname --format-hide-empty-pkg \
    --jsonfile "${log%.log}.json" "${args[@]}" 2>&1 | tee "$log" || status=$?
  echo "$name: $(grep -a '^DONE ' "$log" | tail -n 1) ($(duration $((SECONDS - begun))))" >>"$summary"
  [ "$status" = 0 ] || { failed=1; echo "  FAILED; full output: $log, ${log%.log}.json" >>"$summary"; }
}

# resolve_cli ENTRY sets cli_bin, cli_name and cli_host, or cli_skip with the reason.
resolve_cli() {
  local kind=${1%%@*} want=${1#*@} min v
  cli_bin='' cli_name='' cli_host='' cli_skip=''
  if [ "$1" = env ]; then # TF_ACC_TERRAFORM_PATH, as the user set it
    kind=terraform want=path
    [[ "$(basename "$TF_ACC_TERRAFORM_PATH")" == tofu* ]] && kind=tofu
  fi
  case "$kind" in
    terraform) min=1.8 ;;
    tofu) min=1.6 cli_host=registry.opentofu.org ;;
    *) cli_skip="unknown CLI $1 (use terraform@VERSION, tofu@VERSION, terraform@path or tofu@path)"; return 1 ;;
  esac
  if [ "$1" = env ]; then
    cli_bin=$TF_ACC_TERRAFORM_PATH
    v=$(cli_version "$cli_bin")
    [ -n "$v" ] || { cli_skip="TF_ACC_TERRAFORM_PATH=$cli_bin reports no version"; return 1; }
    cli_name="${kind^} $v (TF_ACC_TERRAFORM_PATH)"
  elif [ "$want" = path ]; then
    cli_bin=$(command -v "$kind") || { cli_skip="no $kind on PATH"; return 0; }
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
  elif cli_bin=$(found_cli "$kind" "$want"); then
    cli_name="${kind^} $want"
  else
    # From HashiCorp's releases where reachable, else built from the Go module proxy.
    scripts/setup.sh "$1" >/dev/null || { cli_skip="could not install $1 (see build/setup.log)"; return 1; }
    cli_bin=$(tool_path "$kind" "$want")
    cli_name="${kind^} $want"
  fi
  [ "$kind" = tofu ] && cli_name="OpenTofu ${cli_name#Tofu }"
  return 0
}

# found_cli KIND VERSION prints TF_ACC_TERRAFORM_PATH, or KIND on PATH, when it reports VERSION.
found_cli() {
  local bin
  for bin in "${TF_ACC_TERRAFORM_PATH:-}" "$(command -v "$1")"; do
    [ -n "$bin" ] && [[ "$(basename "$bin")" == "$1"* ]] && [ "$(cli_version "$bin")" = "$2" ] && { echo "$bin"; return 0; }
  done
  return 1
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
  provider_tests || { echo "$cli_name$name: FAILED: the test binary of internal/provider did not build" >>"$summary"; failed=1; return; }
  # The binary runs in its package's folder, as go test runs it; -run and -skip become its flags.
  local args=() a
  for a in "$@"; do case "$a" in -run | -skip) args+=("-test.${a#-}") ;; *) args+=("$a") ;; esac; done
  gotest "$cli_name$name" "build/test-${entry/@/-}$(tr ' ,' '--' <<<"${name,,}").log" "${env[@]}" -- \
    --raw-command -- sh -c 'cd "$0" && exec "$@"' internal/provider go tool test2json -t -p "$provider_pkg" \
    "$provider_test" -test.v=test2json -test.timeout "${GO_TEST_TIMEOUT:-40m}" "${args[@]}"
}

# provider_tests builds the test binary of internal/provider once, for every CLI lane: the
# lanes differ in their environment and flags, not in their code.
provider_pkg=github.com/echomq/terraform-provider-valkey/internal/provider
provider_test=$PWD/build/provider.test
provider_built=''
provider_tests() {
  if [ -z "$provider_built" ]; then
    say "the test binary of internal/provider (every CLI lane runs it)"
    local begun=$SECONDS
    go test -c -o "$provider_test" ./internal/provider && provider_built=ok || provider_built=failed
    record "build (internal/provider tests)" "$([ "$provider_built" = ok ] && echo 0 || echo 1)" "$(duration $((SECONDS - begun)))"
  fi
  [ "$provider_built" = ok ]
}

say "setup"
# gotestsum and the modules first (so that no lane's JSON stream carries the go command's
# download lines). What the gates and the lanes need builds in the background meanwhile:
# Terraform 1.16.4 alone downloads 2.4 GB of modules, which overlaps the gates and the unit
# tier instead of waiting in line. The docs gate and the lanes wait for it.
scripts/setup.sh gotestsum >/dev/null && go mod download
record "setup (gotestsum)" $? "$(duration $((SECONDS - started)))"
# The rest installs in three background streams, started now and each waited for once, when a
# step first needs it: the Valkey builds (beside the first server tier), the gates' tools
# (tofu: the gates' HCL format, and a CLI), and the CLIs and opa (beside the gates).
declare -A setup_pid=() setup_what=()
# start_setup NAME TARGET...: scripts/setup.sh TARGET... in the background (build/setup-NAME.log).
start_setup() {
  local name=$1
  shift
  [ $# -gt 0 ] || return 0
  setup_what[$name]="$*"
  { SETUP_LOG=$PWD/build/setup-$name.log scripts/setup.sh "$@" >/dev/null; status=$?
    echo "$((SECONDS - started))" >"build/setup-$name.done"; exit "$status"; } &
  setup_pid[$name]=$!
}
# wait_setup NAME...: waits for each stream still running and records it, with the time since
# the run started at which it was done.
wait_setup() {
  local name status
  for name in "$@"; do
    [ -n "${setup_pid[$name]:-}" ] || continue
    status=0
    wait "${setup_pid[$name]}" || status=$?
    record "setup (${setup_what[$name]})" "$status" "done at $(duration "$(cat "build/setup-$name.done" 2>/dev/null || echo 0)")"
    unset "setup_pid[$name]"
  done
}
builds=()
for v in "${server_words[@]}"; do
  b=$(valkey_build "$v")
  [ -n "$b" ] && [[ " ${builds[*]} " != *" $b "* ]] && builds+=("$b")
done
start_setup valkey "${builds[@]}"
gate_tools=()
wants gates && gate_tools+=(tofu lint goreleaser actionlint)
wants registry && ! wants gates && gate_tools+=(goreleaser)
start_setup tools "${gate_tools[@]}"
clis_setup=()
if wants acc || wants faults; then
  clis_setup+=(opa) # the policy test evaluates examples/policy
  clis_setup+=("${clis[@]}")
  wants faults && clis_setup+=("$FAULT_MATRIX_CLI")
fi
wants chaos && clis_setup+=("$FAULT_MATRIX_CLI" "${chaos_clis[@]}")
wants registry && clis_setup+=($REGISTRY_CLIS)
wants modules && clis_setup+=($MODULE_TEST_CLIS)
wants gates && clis_setup+=("terraform@1.16.4") # the docs' schema (scripts/generate.sh)
# Each once, and not what the tools stream installs; a CLI on PATH (or TF_ACC_TERRAFORM_PATH) of
# the version asked for is not installed.
mapfile -t clis_setup < <(for e in "${clis_setup[@]}"; do
  [[ "$e" == *@* && "$e" != *@path ]] && found_cli "${e%%@*}" "${e#*@}" >/dev/null && continue
  echo "$e"
done | awk -v tofu="${gate_tools[0]:-}@$TOFU_VERSION" 'NF && $0 != tofu && $0 != "env" && $0 !~ /@path$/ && !seen[$0]++')
start_setup clis "${clis_setup[@]}"

if wants unit; then
  # Every package; acceptance tests skip here (no TF_ACC) and run once per CLI below. The
  # variable makes a missing valkey-server a failure, not a skip.
  for v in "${valkey_versions[@]}"; do
    [ -z "$(valkey_build "$v")" ] || wait_setup valkey
    bin=$(valkey_server_path "$v")
    version=$(server_version "$bin")
    server=Valkey
    [[ "$("$bin" --version 2>/dev/null)" == Redis* ]] && server=Redis
    gotest "unit and server tests ($server ${version:-$v})" "build/test-unit-$v.log" \
      TF_ACC= VALKEYTEST_REQUIRED=1 "VALKEY_SERVER=$bin" -- ./...
  done
fi

# The cross-compile gate needs no tool and no server: it runs beside everything that follows
# (the CLI lanes wait on CLIs and servers more than on the CPU) and is recorded at the end.
cross_pid=''
if wants gates; then
  scripts/crosscheck.sh >build/crosscheck.log 2>&1 &
  cross_pid=$!
fi
# The server tier ran beside the builds (it waits on servers more than on the CPU); the gates
# come next, once their tools are there.
wait_setup tools
if wants gates; then
  step "gofmt" scripts/fmt.sh check
  step "go vet" go vet ./...
  step "golangci-lint" scripts/lint.sh
  step "goreleaser" scripts/release-check.sh
  step "actionlint, workflow targets" scripts/check-workflows.sh
fi

wait_setup clis valkey tools
if wants gates; then
  step "docs up to date" scripts/generate.sh check
fi

if wants acc; then
  # The acceptance and CLI tests alone (the unit tier ran the rest); ONCE_TESTS on one CLI:
  # FAULT_MATRIX_CLI when it is a lane, else the first.
  once=$FAULT_MATRIX_CLI
  [[ " ${clis[*]} " == *" $once "* ]] || once=${clis[0]}
  for entry in "${clis[@]}"; do
    skip="$FAULT_MATRIX_TEST|$REGISTRY_TEST|$MODULE_TEST"
    [ "$entry" = "$once" ] || skip+="|$ONCE_TESTS"
    cli_lane "" "$entry" -run '^Test(Acc|CLI)' -skip "$skip"
  done
fi

if wants faults; then
  cli_lane ", the fault matrix" "$FAULT_MATRIX_CLI" -run "$FAULT_MATRIX_TEST"
fi

if wants chaos; then
  # Chosen seeds (CHAOS_SEEDS: make chaos SEED=...) run on FAULT_MATRIX_CLI, with no time limit.
  # Without them (the full run, or make chaos with no SEED), the fixed set: seeds 1-2 of 60
  # steps in both modes, split across the three CLIs of cli-matrix.json's "chaos" so that each
  # runs a quarter to a half of it and the whole costs what it did on one CLI: seed 1 in both
  # modes on the first (Terraform 1.16.4), seed 2 standalone on the second (Terraform 1.5.7),
  # seed 2 in Cluster mode on the third (OpenTofu 1.12.6), and seed 1 in replicated mode (a
  # replica, min_replica_acks = 1) on the second. Then each planted bug must be caught
  # (CHAOS_PLANTED=1), on FAULT_MATRIX_CLI.
  # CHAOS_CAMPAIGN (make chaos: build/CAMPAIGN.md) gets the report: one section per lane, then the
  # plants. make chaos MODE=replicated with no SEED runs seeds 1-2 in replicated mode alone.
  export CHAOS_STEPS=${CHAOS_STEPS:-60} CHAOS_REPORT=${CHAOS_REPORT:-$PWD/build/chaos-report.jsonl}
  [ "${CHAOS_MODES:-}" = replicated ] && export CHAOS_SEEDS=${CHAOS_SEEDS:-1-2}
  if [ -n "${CHAOS_SEEDS:-}" ]; then
    CHAOS_MODES=${CHAOS_MODES:-standalone,cluster} GO_TEST_TIMEOUT=0 \
      cli_lane ", the fault campaign" "$FAULT_MATRIX_CLI" -run '^TestChaos$'
  else
    campaign=${CHAOS_CAMPAIGN:-}
    rm -f build/campaign-*.md
    [ ${#chaos_clis[@]} = 3 ] || { echo "test.sh: .github/cli-matrix.json's \"chaos\" must name three CLIs" >&2; exit 2; }
    chaos_lanes=("${chaos_clis[0]} standalone,cluster 1" "${chaos_clis[1]} standalone 2" "${chaos_clis[2]} cluster 2" "${chaos_clis[1]} replicated 1")
    for i in "${!chaos_lanes[@]}"; do
      read -r lane_cli lane_modes lane_seeds <<<"${chaos_lanes[$i]}"
      CHAOS_SEEDS=$lane_seeds CHAOS_MODES=$lane_modes FAULT_MATRIX_CLI=$lane_cli GO_TEST_TIMEOUT=0 \
        CHAOS_CAMPAIGN=${campaign:+$PWD/build/campaign-$i.md} \
        cli_lane ", the fault campaign (seed $lane_seeds, ${lane_modes/,/ and })" "$lane_cli" -run '^TestChaos$'
    done
    CHAOS_PLANTED=1 CHAOS_CAMPAIGN=${campaign:+$PWD/build/campaign-plants.md} GO_TEST_TIMEOUT=0 \
      cli_lane ", the fault campaign on planted bugs" "$FAULT_MATRIX_CLI" -run '^TestChaosPlanted$'
    [ -n "$campaign" ] && cat build/campaign-*.md >"$campaign"
  fi
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

if [ -n "$cross_pid" ]; then
  say "cross-compiled release platforms (build/crosscheck.log)"
  status=0
  wait "$cross_pid" || status=$?
  cat build/crosscheck.log
  record "cross-compiled release platforms" "$status"
fi

# Last, alone on the machine: the perf gate compares ours with the floor side by side.
if wants perf; then
  step "perf gate: ours within 1.3x of the plugin floor" scripts/perfgate.sh
  step "perf gate: the quadratic warnings fail it" scripts/perfgate.sh planted
fi

say "summary ($(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s; logs in build/)"
cat "$summary"
exit "$failed"
