#!/usr/bin/env bash
# scripts/lane.sh NAME CLI [-run|-skip RE...]: the acceptance and system tests of LANE_PACKAGES
# (default provider systemtest; binaries in build/test/) on one CLI, through gotestsum, on the
# server of CLI_VALKEY_VERSION. CLI: terraform@VERSION, tofu@VERSION, terraform@path, tofu@path,
# or env (TF_ACC_TERRAFORM_PATH); a missing version is installed (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
name=$1 entry=$2
shift 2
kind=${entry%%@*} want=${entry#*@}
skip() { echo "$name: NOT RUN: $*" | tee -a build/summary.txt; exit 0; }
case "$entry" in
  env) bin=$TF_ACC_TERRAFORM_PATH kind=terraform
    [[ "$(basename "$bin")" == tofu* ]] && kind=tofu ;;
  terraform@path | tofu@path) # the CLI on PATH, unless the matrix runs its version already
    min=1.8 && [ "$kind" = tofu ] && min=1.6
    bin=$(have "$kind") || skip "no $kind on PATH"
    v=$(cli_version "$bin")
    version_at_least "${v:-0}" "$min" || skip "the $kind on PATH is ${v:-of unknown version}, under $min"
    ! cli_matrix acceptance | grep -qx "$kind@$v" || skip "the $kind on PATH is $v, which the matrix runs already" ;;
  terraform@* | tofu@*) scripts/setup.sh "$entry" >/dev/null && bin=$(tool_path "$kind" "$want") ;;
  *) echo "lane.sh: unknown CLI $entry (terraform@VERSION, tofu@VERSION, terraform@path, tofu@path, env)" >&2; exit 2 ;;
esac
env=(TF_ACC=1 VALKEYTEST_REQUIRED=1 "TF_ACC_TERRAFORM_PATH=$bin" "VALKEY_SERVER=$(valkey_server "${CLI_VALKEY_VERSION:-9.1}")")
[ "$kind" = tofu ] && env+=(TF_ACC_PROVIDER_HOST=registry.opentofu.org)
# Each binary runs in its package's folder, as go test runs it; go test's flags become its own.
flags=(-test.v=test2json -test.count=1 -test.timeout "${GO_TEST_TIMEOUT:-40m}")
for a in "$@"; do case "$a" in -run | -skip) flags+=("-test.${a#-}") ;; *) flags+=("$a") ;; esac; done
run='s=0'
for pkg in ${LANE_PACKAGES:-provider systemtest}; do
  run+="; (cd internal/$pkg && exec go tool test2json -t -p github.com/echomq/terraform-provider-valkey/internal/$pkg $PWD/build/test/$pkg.test \"\$@\") || s=1"
done
export "${env[@]}"
gotest "$name" --raw-command -- bash -c "$run; exit \$s" lane "${flags[@]}"
