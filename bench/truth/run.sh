#!/usr/bin/env bash
# bench/truth/run.sh — timing truth (issue 37): perfgate's client TTFT and ITL error
# against a ground-truth SSE server in the same process, which logs the time it emits
# each chunk, beside a minimal Go SSE client (net/http + bufio.Scanner) on the same
# server in the same run. A benchmark: it prints p50/p90/p99 of each error and
# perfgate − minimal as a markdown table with the target, and asserts nothing about the
# numbers (it fails only if a request cannot be matched to the server's log or a client
# saw a token before it was emitted: then the clocks are not one clock).
# docs/performance.md ("Timing truth") has the last table.
#
# Knobs: TRUTH_CONCURRENCY (200), TRUTH_REQUESTS (1000 per client), TRUTH_ARGS (more
# flags: -tokens 64, -ttft 20ms, -itl 5ms, -rounds 2, -clients perfgate,perfgate-app,minimal,
# -slack 50us). Quick check of the harness: TRUTH_REQUESTS=20 TRUTH_CONCURRENCY=4 bench/truth/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/truth.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/truth" ./bench/truth
# With sched autogroups (Linux's default on many VMs), CPU is shared between sessions
# before nice applies inside one: give the benchmark's session the priority `nice -15`
# is meant to give (best effort: it needs CAP_SYS_NICE), as bench/gate/run.sh does.
hi() {
  if command -v setsid >/dev/null && [ -e /proc/self/autogroup ]; then
    setsid --wait sh -c 'echo "$0" >/proc/self/autogroup 2>/dev/null || echo "bench/truth: could not raise the autogroup priority" >&2; exec "$@"' "${TRUTH_AUTOGROUP_NICE:--15}" "$@"
  else
    "$@"
  fi
}
# shellcheck disable=SC2086
hi "$TMP/truth" -concurrency "${TRUTH_CONCURRENCY:-200}" -requests "${TRUTH_REQUESTS:-1000}" ${TRUTH_ARGS:-} | tee "$OUT"
echo "bench/truth: table in $OUT" >&2
