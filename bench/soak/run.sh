#!/usr/bin/env bash
# bench/soak/run.sh — long runs of perfgate's load generator against the fast mock,
# in-process and as a separate process, printing RSS over the run (10/50/100%), bytes
# per request and per token in RAM and on disk, CPU per token and export time.
# A benchmark: it prints numbers and ratios, it asserts nothing.
#
# Knobs (full sizes by default; small values check the harness):
#   SOAK_CASES ("a b c d"), SOAK_MODES ("inproc process"), SOAK_CONC (64),
#   SOAK_A_REQUESTS (1000000), SOAK_B_STREAMS (20000), SOAK_B_TOKENS (512),
#   SOAK_C_TOKENS (100000000), SOAK_D_DURATION (10m), SOAK_D_RATE (5000),
#   SOAK_PORT (18090).
# Quick check: SOAK_A_REQUESTS=20000 SOAK_B_STREAMS=200 SOAK_C_TOKENS=1000000 SOAK_D_DURATION=5s bench/soak/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/soak.txt
: > "$OUT"
BIN=$(mktemp -d)/soak
go build -o "$BIN" ./bench/soak
PORT=${SOAK_PORT:-18090}
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null || true; }
trap cleanup EXIT
for mode in ${SOAK_MODES:-inproc process}; do
  url=
  if [ "$mode" = process ]; then
    "$BIN" serve -addr "127.0.0.1:$PORT" >/dev/null &
    SRV=$!
    for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
    url="http://127.0.0.1:$PORT"
  fi
  for c in ${SOAK_CASES:-a b c d}; do
    if [ -n "$url" ]; then "$BIN" run -case "$c" -url "$url"; else "$BIN" run -case "$c"; fi | tee -a "$OUT"
  done
  cleanup; SRV=
done
echo "written to $OUT"
