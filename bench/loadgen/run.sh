#!/usr/bin/env bash
# bench/loadgen/run.sh — perfgate's load generator against peers, in one run on one
# machine, printing ratios (a ratio from the same run is meaningful on a shared box;
# absolute numbers are not).
#
#   1. non-streaming req/s against one trivial local server (200-byte JSON): wrk, a bare
#      fasthttp client loop, vegeta (library, capped workers; built in a temporary
#      module so perfgate never depends on it) and perfgate loadgen with recording on
#      (a fixed payload as wrk sends, and synthetic prompts). Rounds are interleaved and
#      the median of each is reported.
#   2. timing accuracy as load rises (go test -bench TimingAccuracy).
#   3. concurrent SSE streams at 1 token/s (memory per stream, ITL error against the
#      server's own emission log, CPU per token). LG_STREAMS=18000 for the full scale run
#      (needs `ulimit -n` >= 20000 in both processes).
#
# Knobs: LG_DURATION (3s), LG_CONC (64), LG_ROUNDS (3), LG_STREAMS (2000), LG_PORT (18080),
# LG_PHASES (phases to run, default "123").
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/loadgen.txt
: > "$OUT"
D=${LG_DURATION:-3s}; C=${LG_CONC:-64}; ROUNDS=${LG_ROUNDS:-3}; STREAMS=${LG_STREAMS:-2000}
PORT=${LG_PORT:-18080}; SPORT=$((PORT + 1)); PHASES=${LG_PHASES:-123}
phase() { [[ "$PHASES" == *"$1"* ]]; }
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

go build -o "$TMP/lgbench" ./bench/loadgen
VEGETA=""
if mkdir -p "$TMP/vegeta" && cp bench/loadgen/vegeta_peer.go.txt "$TMP/vegeta/main.go" &&
   (cd "$TMP/vegeta" && go mod init vegetapeer >/dev/null 2>&1 &&
    GOFLAGS=-mod=mod go get github.com/tsenart/vegeta/v12@v12.13.0 >/dev/null 2>&1 &&
    go build -o vegeta-peer . >/dev/null 2>&1); then
  VEGETA="$TMP/vegeta/vegeta-peer"
else
  echo "loadgen bench: vegeta not fetchable; skipping that peer" >&2
fi
WRK=$(command -v wrk || true)
[ -z "$WRK" ] && echo "loadgen bench: wrk not installed (apt-get install -y wrk); skipping that peer" >&2

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$TMP/lgbench" server -addr "127.0.0.1:$PORT" 2>/dev/null & PIDS+=($!)
sleep 0.5
URL="http://127.0.0.1:$PORT"
cat > "$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = '{"model":"m","messages":[{"role":"user","content":"hello"}]}'
wrk.headers["Content-Type"] = "application/json"
LUA

if phase 1; then
declare -A R
add() { R[$1]="${R[$1]:-} $2"; }
for round in $(seq "$ROUNDS"); do
  if [ -n "$WRK" ]; then
    add wrk "$("$WRK" -t2 -c"$C" -d"$D" -s "$TMP/post.lua" "$URL/v1/chat/completions" | awk '/Requests\/sec/ {print int($2)}')"
  fi
  add bare "$("$TMP/lgbench" bare -url "$URL/v1/chat/completions" -c "$C" -d "$D" | awk '{print $2}')"
  [ -n "$VEGETA" ] && add vegeta "$("$VEGETA" -url "$URL/v1/chat/completions" -c "$C" -d "$D" | awk '{print $2}')"
  add loadgen "$("$TMP/lgbench" loadgen -payloads -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')"
  add loadgen_synthetic "$("$TMP/lgbench" loadgen -url "$URL" -c "$C" -d "$D" -record "$TMP/rec.jsonl" | awk '{print $2}')"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
{
  echo "== non-streaming req/s, concurrency $C, $ROUNDS rounds of $D (median; all rounds in brackets)"
  for k in wrk bare vegeta loadgen loadgen_synthetic; do
    [ -n "${R[$k]:-}" ] || continue
    printf "%-18s %8s   [%s ]\n" "$k" "$(echo "${R[$k]}" | median)" "${R[$k]}"
  done
  lg=$(echo "${R[loadgen]}" | median)
  for k in wrk bare vegeta; do
    [ -n "${R[$k]:-}" ] || continue
    printf "ratio loadgen/%-8s %.2f\n" "$k" "$(awk -v a="$lg" -v b="$(echo "${R[$k]}" | median)" 'BEGIN {print (b ? a/b : 0)}')"
  done
} | tee -a "$OUT"
fi

if phase 2; then
echo "== timing accuracy vs load (client − server emission, |error|)" | tee -a "$OUT"
go test -run '^$' -bench TimingAccuracy -benchtime 1x ./loadgen 2>&1 | grep -E 'Benchmark' | tee -a "$OUT"
fi

if phase 3; then
echo "== $STREAMS concurrent SSE streams at 1 token/s (4 source addresses)" | tee -a "$OUT"
"$TMP/lgbench" server -addr "127.0.0.1:$SPORT" -stream -itl 1s -tokens "${LG_STREAM_TOKENS:-10}" 2>/dev/null & PIDS+=($!)
sleep 0.5
"$TMP/lgbench" streams -url "http://127.0.0.1:$SPORT" -n "$STREAMS" -sources 4 -ramp "${LG_RAMP:-5s}" | tee -a "$OUT"
fi
