#!/usr/bin/env bash
# Runs the long tests at full size (`make test-long`): every Test function that calls
# testutil.Long or testutil.Short, directly or through a helper of its package, as
# `go run ./scripts/longtests` lists them. `make test` runs the suite with -short, where
# those tests skip or run trimmed; CI runs both targets, so nothing is lost.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
dirs=()
pats=()
while read -r dir pat; do
  dirs+=("$dir")
  pats+=("${pat#^(}")
done < <(go run ./scripts/longtests)
if [ "${#dirs[@]}" -eq 0 ]; then
  echo "test-long: no long tests"
  exit 0
fi
# One pattern over every listed package: a test of the same name in another of them
# runs too, which costs a little time and loses nothing.
union=$(IFS='|'; echo "${pats[*]%)\$}")
union="^(${union//)\$|/|})\$"
echo "test-long: ${#dirs[@]} packages, pattern $union"
go tool gotestsum --format pkgname-and-test-fails --junitfile "${JUNIT_LONG_FILE:-/dev/null}" -- ${TESTFLAGS:--timeout 30m} -run "$union" "${dirs[@]}"
