#!/usr/bin/env bash
# Runs every fuzz target of the module (each func FuzzXxx in a _test.go file) for
# FUZZTIME each (default 2s: `make test` runs them so, `make fuzz` longer). A failing
# input is written by go test to the package's testdata/fuzz/FuzzXxx/ (commit it: it
# is then a seed that every `go test` runs). FUZZ narrows to the targets whose name
# matches a grep pattern, e.g. FUZZ=FuzzDecodeFile.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
time="${FUZZTIME:-2s}"
failed=()
n=0
while read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
    if [ -n "${FUZZ:-}" ] && ! grep -q -- "$FUZZ" <<<"$target"; then continue; fi
    n=$((n + 1))
    echo "== fuzz $pkg $target ($time)"
    out=$(mktemp)
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg" 2>&1 | tee "$out"; then
      # Go's fuzzing engine can report its own -fuzztime deadline as a failure
      # ("context deadline exceeded") when it ends mid-exchange with a worker; that is
      # no finding: a real one writes "Failing input written to testdata/fuzz/…".
      if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
        echo "fuzz: $pkg $target: the engine's deadline, not a finding"
      else
        failed+=("$pkg $target")
      fi
    fi
    rm -f "$out"
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' --exclude-dir=testmod --exclude-dir=node_modules . | sed 's|^\./||' | sort)
echo "fuzz: $n targets for $time each; ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
