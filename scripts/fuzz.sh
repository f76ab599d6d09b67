#!/usr/bin/env bash
# `make fuzz`: each fuzz target for a number of executions, never for a time. Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" and no crasher when a
# duration budget (-fuzztime 10s) ends (golang/go#75804, fixed in Go 1.27); a count budget
# (-fuzztime 5000x) sets no deadline, so a fuzz step fails only when an input fails the target,
# and go test then writes that input under testdata/fuzz/ and names it.
#
# Usage: scripts/fuzz.sh [SCALE]       each target runs SCALE times its base count (default 10)
#        scripts/fuzz.sh planted       proves that a crasher found while fuzzing fails this script
# The base counts take about 5 s per target on two busy cores (the full run uses SCALE=1).
# `go test -fuzz` takes one package and one target at a time. The seed corpora (f.Add and
# testdata/fuzz/) also run in every plain `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

# fuzz_target PACKAGE TARGET EXECS: the one way a target is fuzzed here.
fuzz_target() {
  echo "fuzz $2 for $3 executions"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$3x" "$1"
}

if [ "${1:-}" = planted ]; then
  # A module of its own, outside the repository, whose target fails on every input but the
  # empty seed: the first mutation is a crasher. This script must fail on it, and go test must
  # have written the input it found.
  work=$(mktemp -d -t valkey-fuzz-planted-XXXXXX)
  trap 'rm -rf "$work"' EXIT
  printf 'module planted\n\ngo 1.26\n' >"$work/go.mod"
  cat >"$work/planted_test.go" <<'GO'
package planted

import "testing"

func FuzzPlanted(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 {
			t.Fatalf("planted crasher: %q", b)
		}
	})
}
GO
  if (cd "$work" && fuzz_target . FuzzPlanted 2000) >"$work/out.log" 2>&1; then
    cat "$work/out.log"
    echo "fuzz: the planted crasher did not fail the fuzz step"
    exit 1
  fi
  if ! grep -q 'Failing input written to testdata/fuzz/FuzzPlanted/' "$work/out.log" \
    || [ -z "$(ls "$work/testdata/fuzz/FuzzPlanted" 2>/dev/null)" ]; then
    cat "$work/out.log"
    echo "fuzz: the planted crasher failed the step but no failing input was written"
    exit 1
  fi
  echo "fuzz: a planted crasher fails the step and its input is written"
  exit 0
fi

scale=${1:-10}
[[ "$scale" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SCALE must be a whole number, not '$scale' (the budgets are counts: see the top of $0)"; exit 2; }
# PACKAGE:TARGET:BASE. FuzzReplyReaders and FuzzHashSlot ask a server on loopback per input
# (one connection per reader, and one round trip, per input); the others are pure functions.
targets=(
  ./internal/provider:FuzzParseGroupID:20000
  ./internal/valkey:FuzzParseURL:50000
  ./internal/valkey:FuzzEnsureOutcome:50000
  ./internal/valkey:FuzzHashSlot:30000
  ./internal/valkey:FuzzReplyReaders:3000
)
for target in "${targets[@]}"; do
  IFS=: read -r pkg name base <<<"$target"
  fuzz_target "$pkg" "$name" $((base * scale))
done
