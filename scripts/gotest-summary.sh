#!/usr/bin/env bash
# Reads `go test -v` output on stdin, keeps all of it in $1, and prints what a reader needs:
# each skipped or failed test with its messages, and the per-package result lines. Skips are
# shown on purpose: a test that cannot run here (a CLI too old for provider functions) says so.
set -uo pipefail
log=${1:?usage: gotest-summary.sh LOGFILE}
mkdir -p "$(dirname "$log")"
tee "$log" | awk '
  # go test -v streams a test'"'"'s messages under its === RUN/CONT/NAME line, before its
  # result, so messages are kept per test and printed with a SKIP or FAIL result.
  /^=== (RUN|PAUSE|CONT|NAME) / { cur = $3; after = 0; next }
  /^ *--- (SKIP|FAIL): /        { name = $3; print; printf "%s", msgs[name]; delete msgs[name]; after = 1; next }
  /^ *--- PASS: /               { delete msgs[$3]; after = 0; next }
  /^(ok|FAIL|panic:|\?)/        { after = 0; print; next }
  /^PASS$/                      { next }
  /^    /                       { if (after) print; else msgs[cur] = msgs[cur] $0 "\n"; next }
                                { after = 0 }
'
