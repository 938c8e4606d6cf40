#!/usr/bin/env bash
# bench/shard/run.sh — perfgate's scale-out, measured. A benchmark: it prints numbers,
# it asserts nothing.
#
#  1. streams per shard × shards: SHARD_PROCS shard processes (profile --shards,
#     JOB_COMPLETION_INDEX set as a Kubernetes Indexed Job sets it, shard 0 serving the
#     start barrier), each holding SHARD_STREAMS closed-loop streams through its own
#     source address (127.0.0.(10+I)), against one fast mock process; then
#     perfgate merge, printing the merged request count, throughput and merge time.
#  2. merge time and memory for SHARD_MERGE_RECORDS records in synthetic shard
#     directories (bench/shard gen), merged by scenario.Merge.
#
# Knobs: SHARD_PROCS (4), SHARD_STREAMS (1000), SHARD_SECONDS (20),
#   SHARD_MERGE_RECORDS (1000000), SHARD_PORT (18190).
# Quick check: SHARD_STREAMS=50 SHARD_SECONDS=3 SHARD_MERGE_RECORDS=20000 bench/shard/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/out
OUT=bench/out/shard.txt
: > "$OUT"
TMP=$(mktemp -d)
PG=$TMP/perfgate
go build -o "$PG" ./cmd/perfgate
go build -o "$TMP/bench" ./bench/shard
PROCS=${SHARD_PROCS:-4}
STREAMS=${SHARD_STREAMS:-1000}
SECS=${SHARD_SECONDS:-20}
PORT=${SHARD_PORT:-18190}
COORD=$((PORT + 1))
MOCK=
cleanup() { [ -n "$MOCK" ] && kill "$MOCK" 2>/dev/null || true; [ -n "${SHARD_KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true

"$PG" mock --host 127.0.0.1 --port "$PORT" --fast >/dev/null 2>&1 &
MOCK=$!
for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
pids=()
for i in $(seq 0 $((PROCS - 1))); do
  cat >"$TMP/sc-$i.json" <<JSON
{"source_addrs": ["127.0.0.$((10 + i))"]}
JSON
  JOB_COMPLETION_INDEX=$i "$PG" profile --config "$TMP/sc-$i.json" --url "http://127.0.0.1:$PORT" \
    --concurrency $((STREAMS * PROCS)) --benchmark-duration "$SECS" --osl 64 --random-seed 1 \
    --shards "$PROCS" --coordinator "http://127.0.0.1:$COORD" --coordinator-listen "127.0.0.1:$COORD" \
    --coordinator-margin 1s --artifact-dir "$TMP/run" --quiet >"$TMP/shard-$i.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "a shard exited $?" | tee -a "$OUT"; done
start=$(date +%s.%N)
"$PG" merge --artifact-dir "$TMP/merged" "$TMP/run" >"$TMP/merge.log" 2>&1 || { echo "merge exited $?"; cat "$TMP/merge.log"; }
end=$(date +%s.%N)
reqs=$(wc -l <"$TMP/merged/client.jsonl")
printf 'streams: %d shards x %d streams = %d concurrent, %ss: %d requests merged (%.0f req/s), merge %.2fs\n' \
  "$PROCS" "$STREAMS" $((PROCS * STREAMS)) "$SECS" "$reqs" "$(echo "$reqs / $SECS" | bc -l)" "$(echo "$end - $start" | bc -l)" | tee -a "$OUT"
grep -h "offset" "$TMP"/shard-*.log | tee -a "$OUT" || true

"$TMP/bench" gen -dir "$TMP/synth" -shards 4 -records "${SHARD_MERGE_RECORDS:-1000000}"
"$TMP/bench" merge -dir "$TMP/synth" -out "$TMP/synth-merged" | tee -a "$OUT"
echo "written to $OUT"
