#!/usr/bin/env bash
# Hunts flaky tests: runs the whole suite (`go test ./...` and testmod/external, as
# `make test` does, uncached) RUNS times (default 3) on a fresh clone of the committed
# HEAD (after .ci/deps installs the Debian packages the tests need, as CI does), then
# LOADED more times (default 1) beside a CPU burner that takes every CPU but one, in a
# session of its own (with sched autogroups, a neighbour as another CI job would be). It then prints, per test, how many quiet and loaded runs it failed, and the
# 20 slowest tests, and exits 1 if any test failed in any run.
#
#   bash scripts/flakehunt.sh            # or: make flakehunt
#   RUNS=5 LOADED=2 bash scripts/flakehunt.sh
#   KEEP=1 ...                            # keep the clone and the runs' JSON (always kept on failure)
#
# Each run's `go test -json` output is kept as quiet-N.json / loaded-N.json in the
# work directory it names; `go run ./scripts/flakehunt FILE...` tallies them again.
set -uo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 2
runs=${RUNS:-3}
loaded=${LOADED:-1}
W=$(mktemp -d "${TMPDIR:-/tmp}/flakehunt.XXXXXX")
git clone -q "$repo" "$W/src" || exit 2
cd "$W/src" || exit 2
export CI=true PERFGATE_CACHE="${PERFGATE_CACHE:-$HOME/.cache/perfgate}"
echo "flakehunt: $runs quiet + $loaded loaded runs of $(git rev-parse --short HEAD) in $W"
bash .ci/deps >"$W/deps.log" 2>&1 || { echo "flakehunt: .ci/deps failed (log: $W/deps.log)"; exit 2; }
make -s fixtures >"$W/fixtures.log" 2>&1 || { echo "flakehunt: make fixtures failed (log: $W/fixtures.log)"; exit 2; }

burner_pids=()
stop_burner() {
  for p in "${burner_pids[@]}"; do kill -- "-$p" 2>/dev/null; done
  burner_pids=()
}
trap 'stop_burner; exit 130' INT TERM
trap stop_burner EXIT

# suite KIND N: one uncached run of the whole suite into $W/KIND-N.json.
suite() {
  local out="$W/$1-$2.json" start
  start=$(date +%s)
  go test -json -count=1 ${TESTFLAGS:--timeout 30m} ./... >"$out" 2>"$W/$1-$2.stderr"
  (cd testmod/external && go test -json -count=1 ${TESTFLAGS:--timeout 30m} ./...) >>"$out" 2>>"$W/$1-$2.stderr"
  echo "flakehunt: $1 run $2: $(($(date +%s) - start)) s, $(grep -c '"Action":"fail","Package":"[^"]*","Test"' "$out") failed test events"
}

for i in $(seq 1 "$runs"); do suite quiet "$i"; done
if [ "$loaded" -gt 0 ]; then
  n=$(($(nproc) - 1))
  [ "$n" -lt 1 ] && n=1
  for i in $(seq 1 "$loaded"); do
    for _ in $(seq 1 "$n"); do
      setsid sh -c 'while :; do :; done' &
      burner_pids+=($!)
    done
    echo "flakehunt: $n CPU burner(s) in their own session(s)"
    suite loaded "$i"
    stop_burner
  done
fi
files=()
for f in "$W"/quiet-*.json "$W"/loaded-*.json; do [ -e "$f" ] && files+=("$f"); done
go run ./scripts/flakehunt -slowest 20 "${files[@]}" | tee "$W/table.md"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && [ -z "${KEEP:-}" ]; then
  rm -rf "$W/src"
fi
echo "flakehunt: exit $rc (runs and table: $W)"
exit "$rc"
